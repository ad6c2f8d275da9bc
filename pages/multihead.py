"""The h heads side by side, concatenated and projected: attn_out = concat · W_O."""

import numpy as np
import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.analysis import (
    head_sum_gap,
    prefix_share,
)
from encoder_core.views.explain import affine_terms, dot_terms
from lens import blocks, chrome, explorer, widgets
from lens.context import PageContext
from lens.latex import dims
from lens.runner import run_page
from lens.sections import meaning
from lens.walk import multihead as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    tr = ctx.trace
    st.write(ctx.t("intro"))
    widgets.note_original(ctx)
    meaning.trained_attention_control(ctx)
    left, right = st.columns([1, 2])
    with left:
        query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer below
    r = ctx.row(query)  # the query patch's row of every per-token array
    with right:
        l = widgets.layer_selector(ctx)
        ctx = ctx.choose(layer=l + 1)
        where_text(ctx, l, query, r)
    formulas(ctx, tr.params.layers[l].b_O is not None)
    heads_grid(ctx, l, query, r)
    j = concat_and_W_O(ctx, l, r)
    contrib = head_contributions_section(ctx, l, query, j)
    entry_arithmetic(ctx, l, r, j, contrib)
    chrome.footer(ctx)


def where_text(ctx: PageContext, l: int, query: int, r: int) -> None:
    """The layer, the heads and the query, in one line (the query's row in a ViT)."""
    cfg = ctx.cfg
    st.markdown("**" + ctx.t("where", l=l + 1, h=cfg.n_heads, dh=cfg.d_head, i=query) + "**")
    if cfg.n_prefix:
        st.caption(ctx.t("vit_row", names=", ".join(prefix_names(cfg)), N=cfg.n_tokens,
                         T=cfg.seq_len, first=prefix_names(cfg)[0], k=cfg.n_prefix,
                         i=query, r=r))


def formulas(ctx: PageContext, has_bias: bool) -> None:
    """head_h, concat and attn_out with their shapes, at the page's full width (in the column
    they were drawn at half size on a tablet)."""
    for tex in walk.formulas(ctx.cfg, has_bias):  # the handout's sheet shows the same
        st.latex(tex)


def heads_grid(ctx: PageContext, l: int, query: int, r: int) -> None:
    """Every head's attention over the image, one figure: live in the explorer when it fits,
    drawn by the server otherwise."""
    cfg, tr = ctx.cfg, ctx.trace
    N, h, G, kp = cfg.n_tokens, cfg.n_heads, cfg.grid_size, cfg.n_prefix
    layer = tr.layers[l]
    names = ", ".join(prefix_names(cfg))
    st.subheader(ctx.t("grid"))
    k = min(h, walk.MAX_MAPS)
    shares = prefix_share(layer.attn[:, r, :], kp)  # [h] the query row's weight on CLS, …
    share_text = ", ".join(ctx.t("share_of", n=n + 1, p=100 * shares[n]) for n in range(h))
    ncols = min(k, 4)
    if explorer.fits(h, N):  # every head's map of every query: the maps follow the pointer
        widgets.query_explorer(ctx, lambda: walk.heads_maps(ctx, l), maps_key=f"multihead/{l}")
        st.caption(ctx.t("n_maps", h=h))
        st.write(ctx.t("grid_text", G=G))
        if kp:
            st.info(ctx.t("left_out", names=names, i=query, shares=share_text))
    else:  # too many values to send: the picture picks, the maps are drawn by the server
        widgets.query_explorer(ctx)
        st.caption(ctx.t("live_off", mb=explorer.map_bytes(h, N) / 2**20,
                         cap=explorer.MAX_BYTES / 2**20))
        c1, c2 = st.columns([max(ncols, 2), 5 - min(ncols, 3)])
        widgets.show(ctx, walk.heads_grid(ctx, l, query), where=c1)
        with c2:
            st.caption(ctx.t("n_maps", h=h) if h <= walk.MAX_MAPS
                       else ctx.t("n_maps_first", h=h, k=k))
            st.write(ctx.t("grid_text", G=G))
            if kp:
                st.info(ctx.t("left_out_static", names=names, i=query, shares=share_text))
    if ctx.weights == "random":
        st.caption(ctx.t("grid_random"))


def concat_and_W_O(ctx: PageContext, l: int, r: int) -> int:
    """concat, W_O and attn_out side by side, the column j picked; returns j."""
    cfg = ctx.cfg
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    lp = ctx.trace.params.layers[l]
    st.subheader(ctx.t("concat"))
    j = int(st.number_input(ctx.t("col_j"), 0, d - 1, 0, step=1, key="mh_col"))
    c1, c2, c3 = st.columns(3)
    concat, W_O, attn_out = walk.concat_matrices(ctx, l, r, j)
    widgets.show_matrix(ctx, concat, where=c1)
    head_cols = [ctx.t("head_cols", n=n + 1, a=n * dh, b=(n + 1) * dh - 1) for n in range(h)]
    if h > 4:
        head_cols = head_cols[:2] + ["…"] + head_cols[-1:]
    c1.caption(ctx.t("boundaries", blocks=", ".join(head_cols)) + " " + ctx.t("concat_stripes"))
    widgets.show_matrix(ctx, W_O, where=c2)
    c2.caption(ctx.t("W_O_caption", j=j) if ctx.model is None else
               ctx.t("W_O_caption_model", j=j, name=ctx.model.id))
    widgets.show_matrix(ctx, attn_out, where=c3)
    c3.caption(ctx.t("attn_out_caption", i=r, j=j))
    if lp.b_O is not None:
        st.caption(ctx.t("bias_O", d=d))
    return j


def head_contributions_section(ctx: PageContext, l: int, query: int, j: int) -> np.ndarray:
    """Each head's contribution to the query's row of attn_out, and the check that they sum
    to it; returns the contributions [h, 1, d]."""
    cfg = ctx.cfg
    T, d, h, dh = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.d_head
    r = ctx.row(query)
    layer, lp = ctx.trace.layers[l], ctx.trace.params.layers[l]
    W_O, b_O = lp.W_O, lp.b_O
    st.subheader(ctx.t("contrib"))
    st.write(ctx.t("contrib_text"))
    st.latex(r"\text{concat} \cdot W_O = \sum_{h=1}^{" + str(h) + r"} \text{head}_h \cdot "
             r"W_O[(h-1)\,d_\text{head} : h\,d_\text{head},\ :\,]:\quad "
             + str(h) + r" \times \big(" + dims(T, dh) + r" \cdot " + dims(dh, d) + " = "
             + dims(T, d) + r"\big)")
    contrib = walk.query_contributions(ctx, l, r)  # [h, 1, d] at the query's row
    norms, rows = walk.contribution_pictures(ctx, l, query, j, contrib)
    c1, c2 = st.columns(2)
    widgets.show(ctx, norms, where=c1)
    widgets.show(ctx, rows, where=c2)
    widgets.number_window(ctx, contrib[:, 0, :], ctx.t("contrib_name", i=query), key="contrib",
                          where=c2)
    st.caption(ctx.t("norms_caption", i=query))
    st.success(ctx.t("check_head_sum" if b_O is None else "check_head_sum_bias", N=T, d=d,
                     gap=ctx.derived(f"head_sum_gap/{l}",
                                     lambda: head_sum_gap(layer.heads, W_O, layer.attn_out, b_O))))
    return contrib


def entry_arithmetic(ctx: PageContext, l: int, r: int, j: int, contrib: np.ndarray) -> None:
    """The arithmetic of one attn_out entry: over the features of concat, and over the
    heads."""
    cfg = ctx.cfg
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    layer, lp = ctx.trace.layers[l], ctx.trace.params.layers[l]
    W_O, b_O = lp.W_O, lp.b_O
    st.subheader(ctx.t("arith", i=r, j=j))
    c1, c2 = st.columns([3, 2])
    plus_b = r" + b_O[j]" if b_O is not None else ""
    with c1:
        st.markdown("**" + ctx.t("arith_dot") + "**")
        st.latex(r"\text{attn\_out}[i, j] = \sum_{k=0}^{d_\text{model} - 1} \text{concat}[i, k]\,"
                 r"W_O[k, j]" + plus_b)
        notes = [ctx.t("head_n", n=k // dh + 1) for k in range(d)]
        if b_O is None:
            sum_text = f"concat_{r} · W_O[:, {j}] = Σ_k concat[{r}, k] · W_O[k, {j}]"
            terms, size = dot_terms(layer.concat[r], W_O[:, j]), "d_model"
        else:  # the bias as one more product: 1 × b_O[j] (k = d_model)
            sum_text = (f"concat_{r} · W_O[:, {j}] + b_O[{j}] = Σ_k concat[{r}, k] · W_O[k, {j}]"
                        f" + 1 × b_O[{j}]")
            terms, size = affine_terms(layer.concat[r], W_O[:, j], b_O[j]), "d_model + 1"
            notes.append(ctx.t("bias_term", j=j))
        blocks.dot_listing(ctx, sum_text, terms, layer.attn_out[r, j], f"attn_out[{r}, {j}]",
                           size=size, notes=notes)
    with c2:
        st.markdown("**" + ctx.t("arith_heads") + "**")
        st.latex(r"\text{attn\_out}[i, j] = \sum_{h=1}^{" + str(h) + r"} "
                 r"\big(\text{head}_h \cdot W_O^{(h)}\big)[i, j]" + plus_b)
        st.caption(ctx.t("W_O_h", dh=dh))
        w, wk = len(str(h)), len(str(d))
        values = contrib[:, 0, j]  # [h] each head's term
        labels = [f"{ctx.t('head_n', n=f'{n + 1:>{w}}')} "
                  f"(k = {n * dh:>{wk}}…{(n + 1) * dh - 1:>{wk}})" for n in range(h)]
        if b_O is not None:  # the bias belongs to no head: one more term
            values, labels = np.append(values, b_O[j]), [*labels, ctx.t("bias_term", j=j)]
        blocks.sum_listing(ctx, values, labels, layer.attn_out[r, j], f"attn_out[{r}, {j}]",
                           first=walk.MAX_MAPS + 1, unit="heads")


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
