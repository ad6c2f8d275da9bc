"""Add & Norm: the residual sum, then layer normalisation of each position."""

import numpy as np
import streamlit as st

from encoder_core import prefix_names
from encoder_core.trace import EncoderTrace
from encoder_core.views.analysis import row_moments
from encoder_core.views.explain import layer_norm_terms
from encoder_core.views.vit_steps import residual_entry
from lens import blocks, blocks_rows, chrome, figures, widgets
from lens.context import PageContext
from lens.latex import num, term
from lens.runner import run_page
from lens.sections import meaning
from lens.walk import addnorm as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    if ctx.cfg.norm_first:  # a ViT: Norm first, Add after
        pre_norm(ctx)
    else:  # the note's encoder: Add, then Norm
        post_norm(ctx)
    chrome.footer(ctx)


def layer_input(ctx: PageContext, layer: int) -> tuple[np.ndarray, str]:
    """The layer's input x [T, d] (not normalised) and its name in the trace."""
    tr = ctx.trace
    x = tr.x0 if layer == 0 else tr.layers[layer - 1].out
    return x, "x0" if layer == 0 else f"out (layer {layer})"


def ln_1_by_hand(ctx: PageContext, x_row, x_name: str, row: int, k: int, title: str,
                 layer: int) -> None:
    """LN_1 of layer `layer` on one row [d], written out (mean, variance, x̂, γ, β against the
    trace, entry k highlighted), and the row before and after normalising as bars."""
    cfg, tr, d = ctx.cfg, ctx.trace, ctx.cfg.d_model
    lt, lp = tr.layers[layer], tr.params.layers[layer]
    terms = layer_norm_terms(x_row, lp.gamma_1, lp.beta_1, cfg.ln_eps)
    blocks_rows.layer_norm_row(ctx, terms, lp.gamma_1, lp.beta_1, cfg.ln_eps, k, lt.ln_1, row,
                               f"layers[{layer}].ln_1")
    widgets.picture(ctx, figures.bars, [terms.x, terms.normed],
                    [f"{x_name}[{row}]  [{d}]", f"ln_1.normed[{row}] = x̂  [{d}]"],
                    ctx.t("feature_k"), ["x", "x̂"], title,
                    highlight=k, key="row")


def formulas_and_selectors(ctx: PageContext) -> tuple[PageContext, int, int, widgets.Where]:
    """The step's formulas (the handout's sheet shows the same), the note, then the layer and
    the query chosen in the left column: (the context with them chosen, layer, query, the
    right column)."""
    for tex in walk.formulas(ctx.cfg):
        st.latex(tex)
    widgets.note_original(ctx)
    top_left, top_right = st.columns([2, 3], gap="large")
    with top_left:
        layer = widgets.layer_selector(ctx)
        query = widgets.query_picker(ctx)
    return ctx.choose(layer=layer + 1, query=query), layer, query, top_right


# --- pre-norm (a ViT) -------------------------------------------------------------------------

def pre_norm(ctx: PageContext) -> None:
    """Pre-norm (a ViT): LN_1 of x, the sub-layer on the normalised copy, x + attn_out; the
    final LayerNorm."""
    cfg = ctx.cfg
    st.write(ctx.t("pre_intro", eps=cfg.ln_eps))
    ctx, layer, query, top_right = formulas_and_selectors(ctx)
    row = ctx.row(query)
    with top_right:
        pre_norm_formulas(ctx, layer, row)
    pre_norm_first(ctx, layer, row)  # --- 1
    widgets.section(ctx, "normalise", lambda: pre_normalised(ctx, layer, row))
    pre_sublayer(ctx, layer, row)  # --- 2
    k = pre_add(ctx, layer, row)  # --- 3
    widgets.section(ctx, "by_hand", lambda: pre_by_hand(ctx, layer, query, row, k))  # --- 4
    final_layer_norm(ctx, query, row, k)  # --- 5


def row_axis(ctx: PageContext) -> str:
    """The label of the sequence axis, its prefix tokens (CLS, …) named."""
    k0 = ctx.cfg.n_prefix
    return ctx.t("row_axis", first=prefix_names(ctx.cfg)[0], k=k0) if k0 else ctx.t("position")


def pre_norm_formulas(ctx: PageContext, layer: int, row: int) -> None:
    """What x is, LN_1 and the residual add with their shapes."""
    what = ctx.t("pre_x_is_x0") if layer == 0 else ctx.t("x_is_prev", l=layer, l1=layer + 1)
    st.markdown(ctx.t("x_is", what=what))
    for tex in walk.norm_formulas(ctx.cfg):  # the handout's sheet shows the same
        st.latex(tex)
    st.caption(ctx.t("pre_pos_hint", row=row))


def pre_norm_first(ctx: PageContext, layer: int, row: int) -> None:
    """Norm first: x and the moments LN_1 takes of its rows."""
    S_ = ctx.cfg.seq_len
    lt = ctx.trace.layers[layer]
    x, x_name = layer_input(ctx, layer)
    st.subheader(ctx.t("pre_norm"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, x, x_name, key="x", where=left, highlight_row=row, tokens="rows")
    widgets.picture(ctx, figures.bars, [lt.ln_1.mean, lt.ln_1.var],
                    [f"ln_1.mean = μ  [{S_}]", f"ln_1.var = σ²  [{S_}]"], row_axis(ctx),
                    ["μ", "σ²"], ctx.t("pre_moments_title"), highlight=row, width=3.7,
                    key="moments", where=right)


def pre_normalised(ctx: PageContext, layer: int, row: int) -> None:
    """LN_1's output, and the γ, β it scales and shifts by."""
    d = ctx.cfg.d_model
    lt, lp = ctx.trace.layers[layer], ctx.trace.params.layers[layer]
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.ln_1.out, "ln_1.out", key="ln_1_out", where=left,
                   highlight_row=row, tokens="rows")
    with right:
        st.write(ctx.t("pre_normed_text"))
        widgets.picture(ctx, figures.bars, [lp.gamma_1, lp.beta_1],
                        [f"gamma_1 = γ  [{d}]", f"beta_1 = β  [{d}]"],
                        ctx.t("feature_k"), ["γ", "β"], ctx.t("gb_title", l=layer + 1),
                        width=3.7, key="gamma_beta")
        st.caption(ctx.t("gb_model") if ctx.model is not None else ctx.t("gb_random"))


def pre_sublayer(ctx: PageContext, layer: int, row: int) -> None:
    """The sub-layer on the normalised copy: attn_out."""
    st.subheader(ctx.t("pre_sublayer"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, ctx.trace.layers[layer].attn_out, "attn_out = MultiHead(ln_1.out)",
                   key="attn_out", where=left, highlight_row=row, tokens="rows", window=False)
    right.write(ctx.t("pre_sublayer_text"))


def pre_add(ctx: PageContext, layer: int, row: int) -> int:
    """Add: x, not its normalised copy; one entry of resid_1 against the trace. Returns the
    feature k picked."""
    cfg = ctx.cfg
    lt, lp = ctx.trace.layers[layer], ctx.trace.params.layers[layer]
    x, _ = layer_input(ctx, layer)
    st.subheader(ctx.t("pre_add"))
    ls_text = "ls_1 ⊙ " if cfg.layer_scale else ""
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.resid_1, "resid_1", key="resid_1", where=left, highlight_row=row,
                   tokens="rows")
    k = int(right.number_input(ctx.t("pick_k"), 0, cfg.d_model - 1, 0, step=1,
                               key="ln_feature"))
    with right:
        st.write(ctx.t("pre_add_text", ls=ls_text))
        st.markdown(f"**{ctx.t('pre_add_entry', row=row, k=k, ls=ls_text)}**")
        ls_k = float(lp.ls_1[k]) if cfg.layer_scale else None
        mine = residual_entry(x[row, k], lt.attn_out[row, k], ls_k)
        st.latex(r"%s %s%s = %s" % (num(float(x[row, k])), "+ " if ls_k is None else
                                    rf"+ {term(ls_k)} \cdot ",
                                    term(float(lt.attn_out[row, k])), num(mine)))
        blocks.stored_check(ctx, mine, lt.resid_1[row, k],
                            f"layers[{layer}].resid_1[{row}, {k}]")
    return k


def pre_by_hand(ctx: PageContext, layer: int, query: int, row: int, k: int) -> None:
    """One row of LN_1 by hand."""
    x, _ = layer_input(ctx, layer)
    st.subheader(ctx.t("pre_by_hand", i=query, row=row, l=layer + 1))
    ln_1_by_hand(ctx, x[row], "x", row, k, ctx.t("pre_row_title", row=row), layer)


def final_layer_norm(ctx: PageContext, query: int, row: int, k: int) -> None:
    """The final LayerNorm after the last layer (if the model has one), one row by hand."""
    cfg, tr = ctx.cfg, ctx.trace
    S_, d = cfg.seq_len, cfg.d_model
    st.subheader(ctx.t("final_title"))
    if tr.final_ln is None:
        st.write(ctx.t("no_final"))
        return
    L = cfg.n_layers
    st.write(ctx.t("final_text" if cfg.cls_token else "final_text_no_cls", L=L))
    # page-only: its name in the page's words (mathtext cannot draw 中文)
    st.latex(r"\underset{%d \times %d}{\text{%s}} = \gamma \odot"
             r" \frac{\text{out}_{%d} - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta"
             % (S_, d, ctx.t("word_output"), L))
    last = tr.layers[-1].out
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, tr.output, f"{ctx.t('word_output')} = final_ln.out", key="final_out",
                   where=left, highlight_row=row, tokens="rows")
    widgets.picture(ctx, figures.bars, [tr.final_ln.mean, tr.final_ln.var],
                    [f"final_ln.mean = μ  [{S_}]", f"final_ln.var = σ²  [{S_}]"], row_axis(ctx),
                    ["μ", "σ²"], ctx.t("final_moments", L=L), highlight=row, width=3.7,
                    key="final_moments", where=right)
    st.markdown(f"**{ctx.t('final_by_hand', row=row, i=query)}**")
    final = layer_norm_terms(last[row], tr.params.norm_gamma, tr.params.norm_beta, cfg.ln_eps)
    blocks_rows.layer_norm_row(ctx, final, tr.params.norm_gamma, tr.params.norm_beta,
                               cfg.ln_eps, k, tr.final_ln, row, "final_ln")


# --- post-norm (the note's encoder) -----------------------------------------------------------

def post_norm(ctx: PageContext) -> None:
    """Post-norm (the note's encoder): x + attn_out, then LN_1 of the sum, row by row."""
    st.write(ctx.t("intro"))
    ctx, layer, query, top_right = formulas_and_selectors(ctx)
    with top_right:
        post_norm_formulas(ctx, layer)
    add(ctx, layer, query)  # --- 1
    moments(ctx, layer, query)  # --- 2
    widgets.section(ctx, "normalise", lambda: normalise(ctx, layer, query))  # --- 3
    widgets.section(ctx, "scale_shift", lambda: scale_shift(ctx, layer, query))  # --- 4
    widgets.section(ctx, "by_hand", lambda: by_hand(ctx, layer, query))  # --- 5


def post_norm_formulas(ctx: PageContext, layer: int) -> None:
    """What x is; resid_1, the moments, x̂ and ln_1.out with their shapes."""
    what = ctx.t("x_is_x0") if layer == 0 else ctx.t("x_is_prev", l=layer, l1=layer + 1)
    st.markdown(ctx.t("x_is", what=what))
    for tex in walk.norm_formulas(ctx.cfg):  # the handout's sheet shows the same
        st.latex(tex)
    st.caption(ctx.t("pos_hint"))


def add(ctx: PageContext, layer: int, query: int) -> None:
    """Add: x + attn_out = resid_1."""
    lt = ctx.trace.layers[layer]
    x, x_name = layer_input(ctx, layer)
    st.subheader(ctx.t("add"))
    c1, c2 = st.columns(2)
    widgets.matrix(ctx, x, x_name, key="x", where=c1, window=False)
    widgets.matrix(ctx, lt.attn_out, "attn_out", key="attn_out", where=c2, window=False)
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.resid_1, "resid_1", key="resid_1", where=left, highlight_row=query)
    with right:
        st.latex(r"\text{resid\_1}_{ik} = x_{ik} + \text{attn\_out}_{ik}")
        st.caption(ctx.t("add_caption"))


def moments(ctx: PageContext, layer: int, query: int) -> None:
    """The mean and variance of each row of resid_1."""
    N, d = ctx.cfg.n_tokens, ctx.cfg.d_model
    lt = ctx.trace.layers[layer]
    st.subheader(ctx.t("moments"))
    left, right = st.columns([3, 2], gap="large")
    with left:
        widgets.picture(ctx, figures.bars, [lt.ln_1.mean, lt.ln_1.var],
                        [f"ln_1.mean = μ  [{N}]", f"ln_1.var = σ²  [{N}]"], ctx.t("position"),
                        ["μ", "σ²"], ctx.t("moments_title"), highlight=query, key="moments")
    with right:
        st.write(ctx.t("moments_text", d=d))
    st.latex(r"\mu_i = \frac{x_{i,0} + x_{i,1} + \cdots + x_{i,%d}}{%d}" % (d - 1, d))
    st.latex(r"\sigma_i^2 = \frac{(x_{i,0} - \mu_i)^2 + \cdots + (x_{i,%d} - \mu_i)^2}{%d}"
             % (d - 1, d))


def normalise(ctx: PageContext, layer: int, query: int) -> None:
    """x̂: each row centred and scaled, its moments before and after on one axis."""
    N = ctx.cfg.n_tokens
    lt = ctx.trace.layers[layer]
    st.subheader(ctx.t("normalise"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.ln_1.normed, "ln_1.normed", key="normed", where=left,
                   highlight_row=query)
    with right:
        st.latex(r"\hat{x}_{ik} = \frac{x_{ik} - \mu_i}{\sqrt{\sigma_i^2 + \varepsilon}}")
        st.write(ctx.t("normalise_text", eps=ctx.cfg.ln_eps))
    # the heatmaps alone hide the change when resid_1's rows are near mean 0, variance 1: the
    # rows' moments before and after, on one axis
    (mean_0, var_0), (mean_1, var_1) = ctx.derived(
        f"addnorm/moments/{layer}",
        lambda: (row_moments(lt.resid_1), row_moments(lt.ln_1.normed)))
    st.write(ctx.t("moments_both_text", m0=float(np.min(mean_0)), m1=float(np.max(mean_0)),
                   v0=float(np.min(var_0)), v1=float(np.max(var_0))))
    widgets.picture(ctx, figures.lines, np.arange(N), [mean_0, var_0, mean_1, var_1],
                    [ctx.t("line_mean_before"), ctx.t("line_var_before"),
                     ctx.t("line_mean_after"), ctx.t("line_var_after")],
                    ctx.t("moments_both_title"), ctx.t("position"), ctx.t("moment_value"),
                    key="moments_both")  # the full width: its legend stays legible
    if ctx.weights == "random":
        st.caption(ctx.t("moments_both_random"))


def scale_shift(ctx: PageContext, layer: int, query: int) -> None:
    """γ and β (the trained model's beside random weights' 1 and 0), and ln_1.out."""
    cfg = ctx.cfg
    N, d = cfg.n_tokens, cfg.d_model
    lt, lp = ctx.trace.layers[layer], ctx.trace.params.layers[layer]
    st.subheader(ctx.t("scale_shift"))
    left, right = st.columns(2, gap="large")
    widgets.picture(ctx, figures.bars, [lp.gamma_1, lp.beta_1], [f"gamma_1 = γ  [{d}]",
                    f"beta_1 = β  [{d}]"], ctx.t("feature_k"), ["γ", "β"],
                    ctx.t("gb_title", l=layer + 1), key="gamma_beta", where=left)
    # random weights hold γ = 1, β = 0: the trained model's, beside them, show what they do
    beside = ctx.trained_beside() if ctx.weights == "random" else None
    if beside is not None:
        trained_gamma_beta(ctx, beside, layer, right)
    else:
        with right:
            st.latex(r"\text{out}_{ik} = \gamma_k\,\hat{x}_{ik} + \beta_k")
            st.write(ctx.t("gb_trained") if ctx.weights == "trained" else ctx.t("gb_random"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.ln_1.out, "ln_1.out", key="ln_1_out", where=left, highlight_row=query)
    with right:
        st.latex(r"\underset{%d \times %d}{\text{ln\_1.out}}" % (N, d))
        st.write(ctx.t("next_ffn") if cfg.use_ffn else ctx.t("next_layer"))


def trained_gamma_beta(ctx: PageContext, beside: EncoderTrace, layer: int,
                       right: widgets.Where) -> None:
    """The trained model's γ and β in `right`, and what they do, beside random weights'."""
    bl = min(layer, beside.config.n_layers - 1)
    bp, bd = beside.params.layers[bl], beside.config.d_model
    widgets.picture(ctx, figures.bars, [bp.gamma_1, bp.beta_1],
                    [f"gamma_1 = γ  [{bd}]", f"beta_1 = β  [{bd}]"], ctx.t("feature_k"),
                    ["γ", "β"], ctx.t("gb_trained_title", l=bl + 1),
                    key="gamma_beta_trained", where=right)
    left, right = st.columns(2, gap="large")
    with left:
        st.latex(r"\text{out}_{ik} = \gamma_k\,\hat{x}_{ik} + \beta_k")
        st.write(ctx.t("gb_random"))
    with right:
        st.write(ctx.t("gb_beside", l=bl + 1, L=beside.config.n_layers, d=bd,
                       g0=float(np.min(bp.gamma_1)), g1=float(np.max(bp.gamma_1)),
                       b0=float(np.min(bp.beta_1)), b1=float(np.max(bp.beta_1))))
        meaning.trained_attention_control(ctx)


def by_hand(ctx: PageContext, layer: int, query: int) -> None:
    """One position's LN_1 by hand."""
    st.subheader(ctx.t("by_hand", i=query, l=layer + 1))
    left, _ = st.columns([1, 1])
    k = int(left.number_input(ctx.t("pick_k"), 0, ctx.cfg.d_model - 1, 0, step=1,
                              key="ln_feature"))
    ln_1_by_hand(ctx, ctx.trace.layers[layer].resid_1[query], "resid_1", query, k,
                 ctx.t("row_title", i=query), layer)


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
