"""Scores = Q·Kᵀ / s and the softmax of each row, for one layer and one head."""

import numpy as np
import streamlit as st

from encoder_core import patch_rows, prefix_names
from encoder_core.trace import EncoderTrace, LayerTrace
from encoder_core.views.analysis import (
    SWEEP_D_HEADS,
    attention_entropy,
    divisor_sweep,
    prefix_share,
    scaling_demo,
    score_divisor,
    uniform_attention_reference,
)
from encoder_core.views.explain import dot_terms, softmax_terms
from lens import blocks, blocks_rows, chrome, figures, keys, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.sections import meaning
from lens.walk import scores as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    tr, kp = ctx.trace, ctx.cfg.n_prefix
    st.write(ctx.t("intro"))
    widgets.note_original(ctx)
    meaning.trained_attention_control(ctx)
    left, right = st.columns([1, 2])
    with left:
        query = widgets.query_picker(ctx)
    ctx = ctx.choose(query=query)
    i = ctx.row(query)  # the query patch's row of the sequence (after CLS, …)
    with right:
        c1, c2 = st.columns(2)
        l = widgets.layer_selector(ctx, c1)
        head = widgets.head_selector(ctx, c2)
    ctx = ctx.choose(layer=l + 1, head=head + 1)
    layer = tr.layers[l]
    j = formulas_with_key(ctx, right, l, head, query, i)
    widgets.section(ctx, "matrices", lambda: matrices(ctx, layer, l, head, i, j))
    if kp:
        widgets.section(ctx, "grid", lambda: on_grid(ctx, layer, l, head, query, i))
    widgets.section(ctx, "row", lambda: one_row(ctx, layer, l, head, i))
    widgets.section(ctx, "arith", lambda: arithmetic(ctx, layer, head, i, j))
    widgets.section(ctx, "scaling", lambda: scaling(ctx, layer, l, head, i))

    chrome.footer(ctx)


def divisor_word(ctx: PageContext) -> str:
    """The divisor s in words: √d_k (√64), √d_model, …"""
    return ctx.t(f"word_divisor_{ctx.cfg.scale}", **score_divisor(ctx.cfg))


def key_axis(ctx: PageContext) -> str:
    """The label of the key axis, its prefix tokens (CLS, …) named."""
    kp = ctx.cfg.n_prefix
    return (ctx.t("key_axis_vit", first=prefix_names(ctx.cfg)[0], k=kp) if kp
            else ctx.t("key_axis"))


def formulas_with_key(ctx: PageContext, right: widgets.Where, l: int, head: int, query: int,
                      i: int) -> int:
    """The formulas in `right`, with the input of the key j; j as that input holds it, or as
    the session holds it while the lesson withholds the formulas."""
    held = int(st.session_state.get(keys.SCORES_KEY_J, 0)) % ctx.cfg.seq_len
    picked: list[int] = []
    widgets.section(ctx, "scores_formulas",
                    lambda: picked.append(formulas(ctx, l, head, query, i)), where=right)
    return picked[0] if picked else held


def formulas(ctx: PageContext, l: int, head: int, query: int, i: int) -> int:
    """The key j's input, the scores and softmax formulas, the divisor; returns j."""
    cfg, tr = ctx.cfg, ctx.trace
    T, kp, dk = cfg.seq_len, cfg.n_prefix, cfg.d_head
    key_label = (ctx.t("key_j_vit", first=prefix_names(cfg)[0], k=kp) if kp
                 else ctx.t("key_j"))
    # the key starts at the row's largest weight
    j = widgets.index_input(key_label, T, key=keys.SCORES_KEY_J,
                            start=int(np.argmax(tr.layers[l].attn[head, i])),
                            help=ctx.t("key_j_help"))
    st.markdown("**" + ctx.t("where", l=l + 1, hd=head + 1, h=cfg.n_heads, N=T) + "**")
    for tex in walk.formulas(cfg):  # the handout's sheet shows the same
        st.latex(tex)
    if kp:
        st.caption(ctx.t("prefix_rows", T=T, names=", ".join(prefix_names(cfg)),
                         N=cfg.n_tokens, i=query, r=i))
    st.caption(ctx.t(f"divisor_{cfg.scale}", dk=dk) + " "
               + ctx.t("divisor_now", which=divisor_word(ctx)))
    return j


def matrices(ctx: PageContext, layer: LayerTrace, l: int, head: int, i: int, j: int) -> None:
    """The two matrices."""
    st.subheader(ctx.t("matrices", hd=head + 1))
    c1, c2 = st.columns(2)
    widgets.matrix(ctx, layer.scores[head], ctx.t("scores_name", l=l + 1, hd=head + 1),
                   key="scores",
                   signed=True, xlabel=ctx.t("keys"), ylabel=ctx.t("queries"), where=c1,
                   colorbar_label=ctx.t("score"), highlight_row=i, highlight_col=j,
                   size=(5.0, 4.4), tokens="both")
    widgets.matrix(ctx, layer.attn[head], ctx.t("attn_name", l=l + 1, hd=head + 1),
                   key="attn", signed=False, xlabel=ctx.t("keys"), ylabel=ctx.t("queries"),
                   where=c2, colorbar_label=ctx.t("weight"), highlight_row=i,
                   highlight_col=j, size=(5.0, 4.4), tokens="both")
    st.caption(ctx.t("matrices_caption", i=i, j=j))


def on_grid(ctx: PageContext, layer: LayerTrace, l: int, head: int, query: int, i: int) -> None:
    """The query's row on the image: the patch keys only, the prefix's share said."""
    cfg, G = ctx.cfg, ctx.cfg.grid_size
    row_attn = layer.attn[head, i]  # [T]
    st.subheader(ctx.t("on_grid", r=i))
    c1, c2 = st.columns([2, 3])
    share = float(prefix_share(row_attn, cfg.n_prefix))
    widgets.picture(ctx, figures.attention_grid, ctx.trace.image,
                    patch_rows(row_attn, cfg).reshape(1, G, G),
                    [ctx.t("on_grid_panel", N=cfg.n_tokens)],
                    ctx.t("on_grid_title", r=i, i=query, l=l + 1, hd=head + 1), ncols=1,
                    query=query, colorbar_label=ctx.t("weight"), uniform=1 / cfg.seq_len,
                    width=3.9, key="scores_grid", where=c1)
    c2.info(ctx.t("on_grid_caption", names=", ".join(prefix_names(cfg)), G=G, p=100 * share,
                  q=100 * (1 - share)))


def one_row(ctx: PageContext, layer: LayerTrace, l: int, head: int, i: int) -> None:
    """One row before and after the softmax."""
    st.subheader(ctx.t("row"))
    c1, c2 = st.columns([3, 2])
    widgets.picture(ctx, figures.bars, [layer.scores[head, i], layer.attn[head, i]],
                    [ctx.t("row_before", i=i), ctx.t("row_after", i=i)],
                    key_axis(ctx), [ctx.t("score"), ctx.t("weight")],
                    ctx.t("row_suptitle", i=i, l=l + 1, hd=head + 1),
                    highlight=i, key="row_bars", where=c1)
    with c2:
        st.write(ctx.t("row_caption", i=i))


def arithmetic(ctx: PageContext, layer: LayerTrace, head: int, i: int, j: int) -> None:
    """The arithmetic of one score and of one softmax row."""
    dk = ctx.cfg.d_head
    st.subheader(ctx.t("arith"))
    st.markdown("**" + ctx.t("arith_score", i=i, j=j) + "**")
    c1, c2 = st.columns([3, 2])
    q_i, k_j = layer.q[head, i], layer.k[head, j]  # [d_k] each
    blocks.dot_listing(ctx, f"q_{i} · k_{j} = Σ_k q_{i}[k] · k_{j}[k]",
                       dot_terms(q_i, k_j, divisor=ctx.cfg.score_scale),
                       layer.scores[head, i, j], f"scores[{i}, {j}]", size="d_k",
                       divisor=divisor_word(ctx), where=c1)
    with c2:
        st.latex(r"\text{scores}[i, j] = \frac{1}{s}\sum_{k=0}^{d_k - 1} q_i[k]\,k_j[k]")
        st.caption(ctx.t("arith_score_note", h=head + 1, c0=head * dk,
                         c1=(head + 1) * dk - 1))

    st.markdown("**" + ctx.t("arith_softmax", i=i) + "**")
    c1, c2 = st.columns([3, 2])
    blocks_rows.softmax_row(ctx, softmax_terms(layer.scores[head, i]), layer.attn[head, i],
                            i, j, where=c1)
    with c2:
        st.latex(r"\text{attn}[i, j] = \frac{e^{\,s_{ij} - m}}{\sum_k e^{\,s_{ik} - m}},"
                 r"\quad m = \max_k s_{ik}")
        st.caption(ctx.t("softmax_why_max"))


def scaling(ctx: PageContext, layer: LayerTrace, l: int, head: int, i: int) -> None:
    """Scaling: √d_k vs √d_model vs 1, for this head's row, then for random q, k."""
    cfg = ctx.cfg
    T = cfg.seq_len
    ln_N = uniform_attention_reference(cfg.grid_size, cfg.patch_size, cfg.n_prefix)[1]  # ln T
    st.subheader(ctx.t("scaling"))
    cases = ctx.derived(f"scaling/{l}/{head}",  # this head only
                        lambda: scaling_demo(layer.q[head:head + 1], layer.k[head:head + 1],
                                             cfg.d_model))
    head_entropy = [float(attention_entropy(c.attn)[0]) for c in cases]
    titles = [ctx.t(f"case_{c.name}", s=c.divisor) + "\n"
              + ctx.t("entropy_line", e=float(c.entropy[0, i])) for c in cases]
    widgets.wide_or_tall(ctx, figures.bar_panels, np.stack([c.attn[0, i] for c in cases]),
                         titles, key_axis(ctx), ctx.t("weight"),
                         ctx.t("scaling_suptitle", i=i, l=l + 1, hd=head + 1), highlight=i,
                         uniform_line=True, size=(10.0, 3.4), key="scaling")
    rows = [{ctx.t("col_scaling"): ctx.t(f"case_{c.name}", s=c.divisor),
             ctx.t("col_s"): round(c.divisor, 4),
             ctx.t("col_row_h"): round(float(c.entropy[0, i]), 3),
             ctx.t("col_head_h"): round(e, 3),
             ctx.t("col_now"): ctx.t("yes") if c.name == cfg.scale else ""}
            for c, e in zip(cases, head_entropy, strict=True)]
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption(ctx.t("entropy_caption", lnN=ln_N, N=T) + " "
               + ctx.t("scaling_shared_y", N=T))
    st.markdown(ctx.t("scaling_why", dk=cfg.d_head))
    divisor_sweep_panels(ctx, ln_N)
    st.markdown(ctx.t("scaling_note", d=cfg.d_model, dk=cfg.d_head, h=cfg.n_heads))
    if cfg.n_heads == 1:
        st.info(ctx.t("scaling_one_head"))
    if ctx.weights == "random":
        st.caption(ctx.t("scaling_random"))
        beside = ctx.trained_beside()  # where √d_k and √d_model differ: trained
        if beside is not None:
            widgets.section(ctx, "scaling_trained",
                            lambda: trained_scaling(ctx, beside, l, head, i, head_entropy,
                                                    ln_N))


def divisor_sweep_panels(ctx: PageContext, ln_N: float) -> None:
    """Why divide at all, at any width: random q, k of variance 1 (the argument's
    assumption), the entropy without and with √d_k over the widths."""
    T, dk = ctx.cfg.seq_len, ctx.cfg.d_head
    sweep = ctx.derived(f"scores/sweep/{T}/{dk}",
                        lambda: divisor_sweep(T, (*SWEEP_D_HEADS, dk)))
    at = int(np.searchsorted(sweep.d_head, dk))  # this model's d_k among the widths
    widgets.wide_or_tall(ctx, figures.bar_panels,
                         np.stack([sweep.entropy_none, sweep.entropy_d_k]),
                         [ctx.t("sweep_none"), ctx.t("sweep_d_k")], ctx.t("sweep_x", dk=dk),
                         ctx.t("sweep_y"), ctx.t("sweep_title", N=T), highlight=at,
                         tick_labels=[str(w) for w in sweep.d_head], size=(8.0, 3.4),
                         key="scaling_sweep")
    st.markdown(ctx.t("sweep_text", s0=float(sweep.score_std[0]),
                      s1=float(sweep.score_std[-1]), dmax=int(sweep.d_head[-1]), dk=dk,
                      top=100 * float(sweep.top_none[at]), e=float(sweep.entropy_none[at]),
                      top2=100 * float(sweep.top_d_k[at]),
                      e2=float(sweep.entropy_d_k[at]), lnN=ln_N))


def trained_scaling(ctx: PageContext, trained: EncoderTrace, l: int, head: int, i: int,
                    random_entropy: list[float], ln_N: float) -> None:
    """The trained model's row at the three divisors, beside this model's mean entropies
    (`random_entropy`: √d_k, √d_model, none, of the head shown)."""
    tc = trained.config
    tl, th = min(l, tc.n_layers - 1), min(head, tc.n_heads - 1)
    ti = min(i, tc.seq_len - 1)
    tlayer = trained.layers[tl]
    tcases = ctx.derived(f"scaling/trained/{ctx.settings.sample_seed}/{tl}/{th}",
                         lambda: scaling_demo(tlayer.q[th:th + 1], tlayer.k[th:th + 1],
                                              tc.d_model))
    t_entropy = [float(attention_entropy(c.attn)[0]) for c in tcases]
    t_ln_N = uniform_attention_reference(tc.grid_size, tc.patch_size, tc.n_prefix)[1]
    st.markdown("**" + ctx.t("trained_scaling_title") + "**")
    widgets.wide_or_tall(ctx, figures.bar_panels, np.stack([c.attn[0, ti] for c in tcases]),
                         [ctx.t(f"case_{c.name}", s=c.divisor) + "\n"
                          + ctx.t("entropy_line", e=float(c.entropy[0, ti])) for c in tcases],
                         ctx.t("key_axis"), ctx.t("weight"),
                         ctx.t("trained_scaling_suptitle", i=ti, l=tl + 1, hd=th + 1),
                         highlight=ti, uniform_line=True, size=(8.0, 3.4),
                         key="scaling_trained")
    st.markdown(ctx.t("trained_scaling_text", r_dk=random_entropy[0],
                      r_dm=random_entropy[1], lnN=ln_N, l=tl + 1, hd=th + 1,
                      t_dk=t_entropy[0], t_dm=t_entropy[1], t_none=t_entropy[2],
                      sh=tc.n_heads ** 0.5, h=tc.n_heads, tlnN=t_ln_N))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
