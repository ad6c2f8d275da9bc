"""The input embedding: every flattened patch times W_E."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.explain import dot_terms
from lens import blocks, chrome, figures, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.walk import embedding as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg, tr = ctx.cfg, ctx.trace
    P, C, N, D, d = cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.patch_dim, cfg.d_model
    st.write(ctx.t("intro", D=D, P=P, C=C, d=d, N=N))
    bias = cfg.patch_bias  # a ViT's b_E; the note has none
    emb, pat = ctx.t("tex_embedded"), ctx.t("word_patches")  # the formulas' names, worded
    for tex in walk.formulas(cfg, emb, pat):  # the handout's sheet shows the same
        st.latex(tex)
    st.caption(ctx.t("with_bias", d=d, P=P) if bias else ctx.t("no_bias"))
    widgets.note_original(ctx)
    matrices = st.container()  # filled once i and j are chosen below

    st.subheader(ctx.t("one_entry"))
    st.write(ctx.t("one_entry_intro", D=D))
    pick_left, pick_right = st.columns([1, 2])
    with pick_left:
        i = widgets.query_picker(ctx)
    ctx = ctx.choose(query=i)
    with pick_right:
        j = st.number_input(ctx.t("pick_j"), 0, d - 1, 0, step=1, key="emb_j")
        terms = dot_terms(tr.patches[i], tr.params.W_E[:, j])
        lhs = rf"\text{{{emb}}}[{i}, {j}]"
        b_j = float(tr.params.b_E[j]) if bias else None
        st.latex(lhs + rf" = \sum_{{k=0}}^{{{D - 1}}} \text{{{pat}}}[{i}, k]\cdot W_E[k, {j}]"
                 + (rf" + b_E[{j}]" if bias else ""))
        blocks.dot_product(ctx, lhs, terms, tr.embedded[i, j], f"embedded[{i}, {j}]", bias=b_j,
                           bias_tex=f"b_E[{j}]")

    table_col, bars_col = st.columns(2)
    blocks.largest_products(ctx, terms, "patches[i, k]", "W_E[k, j]", where=table_col, extra={
        ctx.t("pixel_of_k"): lambda k: str((k // (P * C), k // C % P, k % C))})
    with bars_col:
        widgets.picture(ctx, figures.bars, [terms.a, terms.b, terms.products],
                        [ctx.t("terms_a", i=i), ctx.t("terms_b", j=j),
                         ctx.t("terms_ab_bias" if bias else "terms_ab", i=i, j=j)],
                        "k", [ctx.t("word_patches"), "W_E", ctx.t("product_axis")],
                        ctx.t("terms_title", i=i, j=j),
                        key="emb_terms")

    with matrices:
        weights_and_result(ctx, i, j)
    if cfg.n_prefix:  # [CLS] (and DIST, registers): learned rows before the patches
        prefix_tokens(ctx, i, j)

    chrome.footer(ctx)


def weights_and_result(ctx: PageContext, i: int, j: int) -> None:
    """W_E (and b_E) beside the embedded patches, entry (i, j) highlighted."""
    cfg, tr = ctx.cfg, ctx.trace
    d, bias = cfg.d_model, cfg.patch_bias
    left, right = st.columns(2)
    with left:
        st.subheader(ctx.t("W_E_title"))
        widgets.matrix(ctx, tr.params.W_E, "W_E", key="W_E", xlabel=ctx.t("column_j"),
                       ylabel=ctx.t("pixel_k"), highlight_col=j)
        if ctx.model is not None:
            st.caption(ctx.t("we_caption_model", name=ctx.model.name, j=j))
        elif ctx.weights == "trained":
            st.caption(ctx.t("we_caption_trained", j=j))
        else:
            st.caption(ctx.t("we_caption", seed=cfg.seed, j=j))
        if bias:  # b_E under W_E: the other parameter of this step
            st.markdown(f"**{ctx.t('b_E_title')}**")
            widgets.picture(ctx, figures.bars, [tr.params.b_E], [f"b_E  [{d}]"], ctx.t("dim_j"),
                            ["b_E"], ctx.t("b_E_bars", j=j), highlight=j, key="b_E")
    with right:
        st.subheader(ctx.t("result"))
        widgets.matrix(ctx, tr.embedded,
                       ctx.t("embedded_name") + (" + b_E" if bias else ""),
                       key="embedded", xlabel=ctx.t("column_j"), highlight_row=i,
                       highlight_col=j)
        st.caption(ctx.t("emb_caption", i=i, j=j))


def prefix_tokens(ctx: PageContext, i: int, j: int) -> None:
    """[CLS] (and DIST, registers): learned rows before the embedded patches."""
    cfg, tr = ctx.cfg, ctx.trace
    d = cfg.d_model
    names = ", ".join(prefix_names(cfg))
    st.subheader(ctx.t("cls_title"))
    st.write(ctx.t("cls_text", k=cfg.n_prefix, N=cfg.n_tokens, names=names, S=cfg.seq_len))
    left, right = st.columns(2)
    with left:
        if tr.params.cls is not None:
            widgets.picture(ctx, figures.bars, [tr.params.cls[0]], [f"CLS  [{d}]"],
                            ctx.t("dim_j"), ["CLS"], ctx.t("cls_bars", d=d), highlight=j,
                            key="cls_vector")
    with right:
        widgets.matrix(ctx, tr.tokens, ctx.t("tokens_name", names=names), key="tokens",
                       xlabel=ctx.t("column_j"), highlight_row=ctx.row(i), highlight_col=j,
                       tokens="rows")
        st.caption(ctx.t("tokens_caption", names=names, i=i, row=ctx.row(i)))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
