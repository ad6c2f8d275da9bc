"""Queries, keys and values: x times W_Q, W_K, W_V, split into heads."""

import numpy as np
import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.explain import affine_terms, dot_terms
from lens import blocks, chrome, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.walk import qkv as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg = ctx.cfg
    d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
    T = cfg.seq_len  # rows of x, Q, K, V: the patches and a ViT's prefix tokens (CLS, …)
    st.write(ctx.t("intro", d=d, h=h, dh=dh, dh1=dh - 1, N=T))
    st.caption(ctx.t("note_slip", N=T))
    if cfg.norm_first:
        st.info(ctx.t("pre_norm"))
    widgets.note_original(ctx)

    top_left, top_right = st.columns(2)
    with top_left:
        sel_layer, sel_head = st.columns(2)
        with sel_layer:
            l = widgets.layer_selector(ctx)
        with sel_head:
            hd = widgets.head_selector(ctx)
        ctx = ctx.choose(layer=l + 1, head=hd + 1)
        projection_formulas(ctx, l, hd)
    input_box = top_right.container()  # filled once the patch i is chosen below
    weights_box = st.container()
    results_box = st.container()
    i, which, j = one_entry(ctx, l, hd)
    ctx = ctx.choose(query=i - ctx.cfg.n_prefix)  # the patch of row i: the pictures name it
    # the layer's input, then two rows of three: the weight slices and the results
    with input_box:
        layer_input(ctx, l, i)
    with weights_box:
        weight_slices(ctx, l, hd, which, j)
    with results_box:
        results(ctx, l, hd, i, which, j)
    chrome.footer(ctx)


def projection_input(ctx: PageContext, l: int) -> np.ndarray:
    """What the projections of layer l read [T, d]: the layer's input x, or LN_1(x) in
    pre-norm."""
    tr = ctx.trace
    if ctx.cfg.norm_first:  # pre-norm: the projections read LN_1(x)
        return tr.layers[l].ln_1.out
    return tr.x0 if l == 0 else tr.layers[l - 1].out


def biases(ctx: PageContext, l: int) -> dict[str, np.ndarray | None]:
    """b_Q, b_K, b_V of layer l by name ([d] each), None where the model has none."""
    lp = ctx.trace.params.layers[l]
    return {"Q": lp.b_Q, "K": lp.b_K, "V": lp.b_V}


def projection_formulas(ctx: PageContext, l: int, hd: int) -> None:
    """Q, K, V = x · W with their shapes, and head hd's slice of them."""
    bias = biases(ctx, l)
    for tex in walk.formulas(ctx.cfg, hd, {n: b is not None for n, b in bias.items()}):
        st.latex(tex)  # the handout's sheet shows the same
    st.caption(ctx.t("same_kv", hh=hd + 1))
    if bias["Q"] is not None:
        d, dh = ctx.cfg.d_model, ctx.cfg.d_head
        st.caption(ctx.t("biases", d=d, hh=hd + 1, a=hd * dh, b=(hd + 1) * dh - 1))


def one_entry(ctx: PageContext, l: int, hd: int) -> tuple[int, str, int]:
    """One entry of Q, K or V written out as its sum of products; returns the query's row i,
    the matrix ("Q", "K", "V") and the column j chosen."""
    cfg = ctx.cfg
    d, dh, T = cfg.d_model, cfg.d_head, cfg.seq_len
    layer, lp = ctx.trace.layers[l], ctx.trace.params.layers[l]
    x = projection_input(ctx, l)  # [T, d]
    xs = r"\tilde{x}" if cfg.norm_first else "x"
    st.subheader(ctx.t("one_entry"))
    st.write(ctx.t("one_entry_intro", d=d))
    pick_col, math_col = st.columns([2, 3])
    with pick_col:
        query = widgets.query_picker(ctx)
    ctx = ctx.choose(query=query)
    i = ctx.row(query)  # the query patch's row of x, Q, K, V
    with math_col:
        if cfg.n_prefix:
            st.caption(ctx.t("prefix_rows", first=prefix_names(cfg)[0], k=cfg.n_prefix, T=T,
                             i=query, r=i))
        c1, c2 = st.columns(2)
        which = c1.radio(ctx.t("which"), ["Q", "K", "V"], horizontal=True, key="qkv_which")
        j = c2.number_input(ctx.t("pick_j"), 0, dh - 1, 0, step=1, key="qkv_j")
        W = {"Q": lp.W_Q, "K": lp.W_K, "V": lp.W_V}[which]
        stored = {"Q": layer.q, "K": layer.k, "V": layer.v}[which][hd, i, j]
        col = hd * dh + j  # the column of the full d_model × d_model matrix
        b_W = biases(ctx, l)[which]  # [d] or None
        terms = (dot_terms(x[i], W[:, col]) if b_W is None
                 else affine_terms(x[i], W[:, col], b_W[col]))
        low = which.lower()
        lhs = rf"{low}^{{(\text{{head}}_{{{hd + 1}}})}}_{{{i},{j}}}"  # head_h, as the paper
        plus = rf" + b_{which}[{col}]" if b_W is not None else ""
        st.latex(lhs + rf" = {xs}_{{{i}}}\cdot W_{which}[:,\, {col}]{plus} = "
                 rf"\sum_{{k=0}}^{{{d - 1}}} {xs}[{i}, k]\; W_{which}[k, {col}]{plus}")
        blocks.dot_product(ctx, lhs, terms, stored, f"layers[{l}].{low}[{hd}, {i}, {j}]")
        xname = "x̃" if cfg.norm_first else "x"
        blocks.largest_products(ctx, terms, f"{xname}[{i}, k]", f"W_{which}[k, {col}]")
    return i, which, j


def layer_input(ctx: PageContext, l: int, i: int) -> None:
    """The projections' input: x, or LN_1(x) in pre-norm, and where it comes from."""
    cfg = ctx.cfg
    x = projection_input(ctx, l)
    if cfg.norm_first:
        st.markdown(f"**{ctx.t('input_pre')}**")
        widgets.matrix(ctx, x, "x̃ = LN₁(x)", key="qkv_x", highlight_row=i, size=(5.0, 3.4),
                       tokens="rows")
        what = (ctx.t("what_prev", p=l) if l else
                ctx.t("what_x0") if cfg.use_pe else ctx.t("what_x0_nope"))
        st.caption(ctx.t("input_pre_caption", l=l + 1, l0=l, what=what))
    else:
        st.markdown(f"**{ctx.t('input')}**")
        widgets.matrix(ctx, x, "x", key="qkv_x", highlight_row=i, size=(5.0, 3.4),
                       tokens="rows")
        if l == 0:
            st.caption(ctx.t("input_0") if cfg.use_pe else ctx.t("input_0_nope"))
        else:
            st.caption(ctx.t("input_l", l=l + 1, p=l))


def weight_slices(ctx: PageContext, l: int, hd: int, which: str, j: int) -> None:
    """Head hd's columns of W_Q, W_K, W_V."""
    d, dh = ctx.cfg.d_model, ctx.cfg.d_head
    lp = ctx.trace.params.layers[l]
    cols = slice(hd * dh, (hd + 1) * dh)  # head hd's columns of W_Q, W_K, W_V
    a, b = hd * dh, (hd + 1) * dh - 1
    st.subheader(ctx.t("weight_slices", hh=hd + 1))
    for name, where in zip(("Q", "K", "V"), st.columns(3), strict=True):
        W_slice = {"Q": lp.W_Q, "K": lp.W_K, "V": lp.W_V}[name][:, cols]  # [d, d_head]
        widgets.matrix(ctx, W_slice, f"W_{name}[:, {a}:{b + 1}]", key=f"qkv_W{name}",
                       where=where, xlabel=ctx.t("head_dim"), ylabel=ctx.t("in_dim"),
                       size=(3.3, 3.0), highlight_col=j if name == which else None)
    st.caption(ctx.t("weights_caption", a=a, b=b, d=d) if ctx.model is None else
               ctx.t("weights_caption_model", a=a, b=b, d=d, name=ctx.model.id))


def results(ctx: PageContext, l: int, hd: int, i: int, which: str, j: int) -> None:
    """Head hd's Q, K and V."""
    cfg = ctx.cfg
    dh, layer, bias = cfg.d_head, ctx.trace.layers[l], biases(ctx, l)
    a, b = hd * dh, (hd + 1) * dh - 1
    st.subheader(ctx.t("results", hh=hd + 1))
    for name, where in zip(("Q", "K", "V"), st.columns(3), strict=True):
        result = {"Q": layer.q, "K": layer.k, "V": layer.v}[name][hd]  # [N, d_head]
        plus = f" + b_{name}" if bias[name] is not None else ""
        xname = "x̃" if cfg.norm_first else "x"
        widgets.matrix(ctx, result, f"{name}_{hd + 1} = {xname}·W_{name}[:, {a}:{b + 1}]{plus}",
                       key=f"qkv_{name}", where=where, xlabel=ctx.t("head_dim"),
                       size=(3.3, 3.0), highlight_row=i if name == which else None,
                       highlight_col=j if name == which else None, tokens="rows")
    st.caption(ctx.t("results_caption_vit", first=prefix_names(cfg)[0], k=cfg.n_prefix)
               if cfg.n_prefix else ctx.t("results_caption"))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
