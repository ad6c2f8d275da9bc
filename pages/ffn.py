"""The position-wise feed-forward network and the second Add & Norm."""

import streamlit as st

from encoder_core.views.analysis import relu_zero_share
from encoder_core.views.explain import hidden_unit_terms
from encoder_core.views.vit_steps import activation_curve
from lens import blocks, chrome, figures, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.walk import ffn as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg = ctx.cfg
    widgets.note_original(ctx)
    for tex in walk.formulas(cfg):  # the handout's sheet shows the same
        st.latex(tex)
    if cfg.use_ffn:
        ffn_on(ctx)
    else:
        ffn_off(ctx)
    chrome.footer(ctx)


def ffn_on(ctx: PageContext) -> None:
    """The sub-layer on: its hidden units, its weights, back to d_model, one unit by hand,
    then the second residual add (pre-norm) or the second Add & Norm (post-norm)."""
    cfg = ctx.cfg
    intro(ctx)
    if cfg.activation != "relu":
        gelu_curve(ctx)
    top_left, top_right = st.columns([2, 3], gap="large")
    with top_left:
        layer = widgets.layer_selector(ctx)
        query = widgets.query_picker(ctx)
    ctx = ctx.choose(layer=layer + 1, query=query)
    row = ctx.row(query)  # the query's row: after CLS in a ViT
    with top_right:
        ffn_formulas(ctx, layer, row)
    hidden_activations(ctx, layer, row)  # --- 1
    ffn_weights(ctx, layer)
    back_to_d_model(ctx, layer, row)  # --- 2
    hidden_unit_by_hand(ctx, layer, query, row)  # --- 3
    if cfg.norm_first:  # --- 4 · the second residual add (pre-norm)
        second_residual(ctx, layer, row)
    else:  # --- 4 · the second Add & Norm (post-norm)
        second_add_norm(ctx, layer, row)


def is_vit(ctx: PageContext) -> bool:
    """A ViT's block: pre-norm, GELU or prefix tokens."""
    cfg = ctx.cfg
    return cfg.norm_first or cfg.activation != "relu" or cfg.n_prefix > 0


def ffn_off(ctx: PageContext) -> None:
    """The feed-forward sub-layer switched off: what it would compute."""
    N, d, dff = ctx.cfg.n_tokens, ctx.cfg.d_model, ctx.cfg.d_ff
    st.info(ctx.t("no_ffn"))
    st.write(ctx.t("off_what", N=N, d=d, dff=dff))
    st.latex(r"(%d \times %d) \cdot (%d \times %d) \rightarrow %d \times %d \rightarrow"
             r" (%d \times %d) \cdot (%d \times %d) = %d \times %d"
             % (N, d, d, dff, N, dff, N, dff, dff, d, N, d))


def intro(ctx: PageContext) -> None:
    """The page's opening paragraph, a ViT's or the note's."""
    cfg = ctx.cfg
    if is_vit(ctx):
        st.write(ctx.t("vit_intro", S=cfg.seq_len, d=cfg.d_model, dff=cfg.d_ff,
                       act=ctx.t(f"act_{cfg.activation}"),
                       pre=ctx.t("vit_pre") if cfg.norm_first else ""))
    else:
        st.write(ctx.t("intro", N=cfg.n_tokens, d=cfg.d_model, dff=cfg.d_ff))


def gelu_curve(ctx: PageContext) -> None:
    """GELU beside ReLU, and its formula."""
    activation = ctx.cfg.activation
    st.subheader(ctx.t("gelu_title"))
    left, right = st.columns([3, 2], gap="large")
    z, act = activation_curve(activation)
    _, relu_z = activation_curve("relu")
    name = {"gelu": "GELU", "gelu_tanh": "GELU (tanh)"}[activation]
    widgets.picture(ctx, figures.lines, z, [act, relu_z], [name, "ReLU"],
                    ctx.t("gelu_curve"), "z", "f(z)", key="gelu_curve", where=left)
    with right:  # page-only: KaTeX's \tfrac and \big, which mathtext lacks
        st.latex(r"\mathrm{GELU}(z) = z\,%s" % blocks.GATE_TEX[activation]
                 if activation == "gelu_tanh" else
                 r"\mathrm{GELU}(z) = z\,\Phi(z) = \tfrac12\, z\,\big(1 + "
                 r"\mathrm{erf}(z/\sqrt{2})\big)")
        st.write(ctx.t("gelu_text"))


def ffn_formulas(ctx: PageContext, layer: int, row: int) -> None:
    """What x is, ffn_hidden and ffn_out with their shapes, and the residual after them."""
    cfg = ctx.cfg
    st.markdown(ctx.t("vit_input_is", l=layer + 1) if cfg.norm_first
                else ctx.t("input_is", l=layer + 1))
    for tex in walk.sublayer_formulas(cfg):  # the handout's sheet shows the same
        st.latex(tex)
    st.caption(ctx.t("vit_pos_hint", row=row) if cfg.norm_first or cfg.n_prefix
               else ctx.t("pos_hint"))


def hidden_activations(ctx: PageContext, layer: int, row: int) -> None:
    """ffn_hidden (an exact slice of at most 256 units), and the share of units at or below 0
    in each layer."""
    cfg, tr = ctx.cfg, ctx.trace
    dff, gelu = cfg.d_ff, cfg.activation != "relu"
    lt = tr.layers[layer]
    st.subheader(ctx.t("vit_hidden") if gelu else ctx.t("hidden"))
    left, right = st.columns([3, 2], gap="large")
    with left:  # an exact slice of at most 256 units: block-averaging would hide the zeros
        start = 0
        if dff > figures.MAX_SIDE:
            starts = list(range(0, dff, figures.MAX_SIDE))
            unit_ends = {a: min(a + figures.MAX_SIDE, dff) - 1 for a in starts}
            start = st.select_slider(ctx.t("unit_slice"), starts, key="ffn_unit_slice",
                                     format_func=lambda a: f"{a} … {unit_ends[a]}")
        stop = min(start + figures.MAX_SIDE, dff)
        widgets.matrix(ctx, lt.ffn_hidden[:, start:stop], f"ffn_hidden[:, {start}:{stop}]",
                       key="ffn_hidden", signed=gelu, xlabel=ctx.t("hidden_unit_from", a=start),
                       colorbar_label=ctx.t("activation_signed" if gelu else "activation"),
                       highlight_row=row, tokens="rows" if cfg.n_prefix else "")
        if dff > figures.MAX_SIDE:
            st.caption(ctx.t("unit_slice_caption", n=stop - start, dff=dff))
    shares = [relu_zero_share(layer_trace.ffn_hidden) for layer_trace in tr.layers]  # ≤ 0
    with right:
        if gelu:
            st.metric(ctx.t("neg_share"), f"{shares[layer]:.1%}",
                      help=ctx.t("neg_help", S=cfg.seq_len))
            st.write(ctx.t("neg_text"))
        else:
            st.metric(ctx.t("zero_share"), f"{shares[layer]:.1%}", help=ctx.t("zero_help"))
            st.write(ctx.t("zero_text"))
        widgets.picture(ctx, figures.bar_panels, [shares],
                        [f"ffn_hidden ≤ 0  [{cfg.n_layers}]" if gelu else
                         f"{ctx.t('share')}  [{cfg.n_layers}]"], ctx.t("layer_axis"),
                        ctx.t("share_neg" if gelu else "share"),
                        ctx.t("neg_title" if gelu else "zero_title"),
                        highlight=layer, tick_labels=[str(l + 1) for l in range(cfg.n_layers)],
                        size=(3.7, 2.8), key="zero_share")


def ffn_weights(ctx: PageContext, layer: int) -> None:
    """W_1, W_2 and the biases, folded away."""
    lp = ctx.trace.params.layers[layer]
    with st.expander(ctx.t("ffn_weights")):
        c1, c2 = st.columns(2)
        widgets.matrix(ctx, lp.W_1, "W_1", key="W_1", where=c1, xlabel=ctx.t("hidden_unit"),
                       ylabel=ctx.t("in_feature"), window=False, size=(2.9, 2.6))
        widgets.matrix(ctx, lp.W_2, "W_2", key="W_2", where=c2, xlabel=ctx.t("out_feature"),
                       ylabel=ctx.t("hidden_unit"), window=False, size=(2.9, 2.6))
        if ctx.model is not None:
            st.caption(ctx.t("bias_model"))
            widgets.picture(ctx, figures.bars, [lp.b_1, lp.b_2],
                            [f"b_1  [{ctx.cfg.d_ff}]", f"b_2  [{ctx.cfg.d_model}]"],
                            "j", ["b_1", "b_2"], ctx.t("biases_title", l=layer + 1),
                            key="ffn_biases")
        else:
            st.caption(ctx.t("bias_trained") if ctx.weights == "trained" else ctx.t("bias_random"))


def back_to_d_model(ctx: PageContext, layer: int, row: int) -> None:
    """ffn_out: back to d_model."""
    S_, d, dff = ctx.cfg.seq_len, ctx.cfg.d_model, ctx.cfg.d_ff
    st.subheader(ctx.t("out"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, ctx.trace.layers[layer].ffn_out, "ffn_out", key="ffn_out", where=left,
                   highlight_row=row, tokens="rows" if ctx.cfg.n_prefix else "")
    with right:
        st.latex(r"(%d \times %d) \cdot (%d \times %d) = %d \times %d" % (S_, dff, dff, d, S_, d))
        st.write(ctx.t("out_text", d=d))


def hidden_unit_by_hand(ctx: PageContext, layer: int, query: int, row: int) -> None:
    """One hidden activation of the query's row by hand."""
    cfg = ctx.cfg
    lt, lp = ctx.trace.layers[layer], ctx.trace.params.layers[layer]
    x_in = lt.ln_2.out if cfg.norm_first else lt.ln_1.out  # what the FFN reads
    x_field = "ln_2.out" if cfg.norm_first else "ln_1.out"
    st.subheader(ctx.t("by_hand", i=query, l=layer + 1))
    left, _ = st.columns(2)
    j = int(left.number_input(ctx.t("pick_j"), 0, cfg.d_ff - 1, 0, step=1, key="ffn_unit"))
    unit = hidden_unit_terms(x_in[row], lp.W_1, lp.b_1, j, cfg.activation)
    blocks.hidden_unit(ctx, unit, lt.ffn_hidden[row, j], row, j,
                       f"layers[{layer}].ffn_hidden[{row}, {j}]")
    if is_vit(ctx):
        st.caption(f"x = {x_field}[{row}]")


def where_to(ctx: PageContext, layer: int) -> str:
    """Where the layer's output goes: the next layer, or the encoder's output."""
    return ctx.t("goes_final") if layer == ctx.cfg.n_layers - 1 else ctx.t("goes_next")


def second_residual(ctx: PageContext, layer: int, row: int) -> None:
    """Pre-norm: the second residual add, resid_2 = resid_1 + ffn_out."""
    cfg = ctx.cfg
    S_, d = cfg.seq_len, cfg.d_model
    lt = ctx.trace.layers[layer]
    last_layer = layer == cfg.n_layers - 1
    st.subheader(ctx.t("vit_addnorm"))
    ls = "ls_2 ⊙ " if cfg.layer_scale else ""
    st.write(ctx.t("vit_addnorm_text", ls=ls, where=where_to(ctx, layer),
                   next=ctx.t("next_final") if last_layer and cfg.final_norm
                   else ctx.t("next_ln")))
    st.latex(r"\underset{%d \times %d}{\text{resid\_2}} = \underset{%d \times %d}"
             r"{\text{resid\_1}} + %s\underset{%d \times %d}{\text{ffn\_out}}"
             % (S_, d, S_, d, r"\mathrm{ls}_2 \odot " if ls else "", S_, d))
    c1, c2 = st.columns(2)
    widgets.matrix(ctx, lt.resid_1, "resid_1", key="resid_1", where=c1, highlight_row=row,
                   tokens="rows")
    widgets.matrix(ctx, lt.resid_2, ctx.t("resid_2_name"), key="resid_2", where=c2,
                   highlight_row=row, tokens="rows")


def second_add_norm(ctx: PageContext, layer: int, row: int) -> None:
    """Post-norm: the second Add & Norm, ln_2.out = LayerNorm(x + ffn_out)."""
    cfg = ctx.cfg
    S_, d = cfg.seq_len, cfg.d_model
    lt = ctx.trace.layers[layer]
    st.subheader(ctx.t("addnorm"))
    st.write(ctx.t("addnorm_text", eps=cfg.ln_eps))
    st.latex(r"\underset{%d \times %d}{\text{resid\_2}} = \underset{%d \times %d}{x} + "
             r"\underset{%d \times %d}{\text{ffn\_out}}" % (S_, d, S_, d, S_, d))
    st.latex(r"\text{ln\_2.out} = \gamma_2 \odot \frac{\text{resid\_2} - \mu}"
             r"{\sqrt{\sigma^2 + \varepsilon}} + \beta_2")
    c1, c2 = st.columns(2)
    tokens = "rows" if cfg.n_prefix else ""
    widgets.matrix(ctx, lt.resid_2, "resid_2", key="resid_2", where=c1, highlight_row=row,
                   tokens=tokens)
    widgets.matrix(ctx, lt.ln_2.out, "ln_2.out", key="ln_2_out", where=c2, highlight_row=row,
                   tokens=tokens)
    left, right = st.columns([3, 2], gap="large")
    widgets.picture(ctx, figures.bars, [lt.ln_2.mean, lt.ln_2.var],
                    [f"ln_2.mean = μ  [{S_}]", f"ln_2.var = σ²  [{S_}]"], ctx.t("position"),
                    ["μ", "σ²"], ctx.t("moments_title"), highlight=row, key="ln_2_moments",
                    where=left)
    right.write(ctx.t("layer_out", l=layer + 1, where=where_to(ctx, layer)))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
