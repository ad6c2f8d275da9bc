"""Step 3 of 10 — the input embedding: every flattened patch times W_E."""

import streamlit as st

from encoder_core.explain import dot_terms
from lens import blocks, chrome, widgets
from lens.context import page

TEXT = {
    "intro": (
        "Each flattened patch (a row of {D} = {P}·{P}·{C} pixel values) is multiplied by one "
        "weight matrix W_E of shape {D} × {d}. Every column j of W_E is one trainable pattern "
        "over the pixels of a patch; entry j of a patch's embedding says how "
        "much the patch matches that pattern. The result is one vector of width d_model = {d} "
        "per patch: {N} rows, one per patch, in the row-major order of the previous step.",
        "每个展平的图像块（一行 {D} = {P}·{P}·{C} 个像素值）都乘以同一个形状为 {D} × {d} 的"
        "权重矩阵 W_E。W_E 的每一列 j 都是图像块像素上的一个可训练的模式；"
        "图像块嵌入的第 j 个分量表示该图像块与这个模式有多吻合。结果是每个图像块得到一个"
        "宽度为 d_model = {d} 的向量："
        "共 {N} 行，每行一个图像块，顺序与上一步的行优先编号相同。"),
    "no_bias": (
        "No bias and no √d_model factor, as in the note and ViT (the 2017 paper scales its "
        "word embeddings by √d_model because they share weights with its output layer).",
        "没有偏置，也不乘 √d_model，与笔记和 ViT 一致（2017 年的论文把词嵌入乘以 √d_model，"
        "因为它们与输出层共享权重）。"),
    "W_E_title": ("The weight matrix W_E", "权重矩阵 W_E"),
    "result": ("The embedded patches", "嵌入后的图像块"),
    "pixel_k": ("pixel value k of a patch", "图像块中的像素序号 k"),
    "column_j": ("embedding dimension j", "嵌入维度 j"),
    "we_caption": (
        "Glorot-uniform random weights (seed {seed}); column j = {j} is outlined.",
        "Glorot 均匀分布的随机权重（种子 {seed}）；第 j = {j} 列已框出。"),
    "we_caption_trained": ("The trained weights; column j = {j} is outlined.",
                           "训练好的权重；第 j = {j} 列已框出。"),
    "emb_caption": ("Row i = {i} and column j = {j} are outlined: their crossing is the entry "
                    "worked out below.",
                    "已框出第 i = {i} 行和第 j = {j} 列：它们的交点就是下面逐项计算的那个数。"),
    "one_entry": ("One entry, written out", "逐项写出一个数"),
    "one_entry_intro": (
        "Pick a patch i (click the image or set its row and column) and an embedding "
        "dimension j. The entry embedded[i, j] is the dot product of patch row i with "
        "column j of W_E: {D} products added up.",
        "选择一个图像块 i（点击图像，或设置行和列）和一个嵌入维度 j。embedded[i, j] 就是"
        "图像块第 i 行与 W_E 第 j 列的点积：{D} 个乘积相加。"),
    "pick_j": ("Embedding dimension j (column of W_E)", "嵌入维度 j（W_E 的列）"),
    "pixel_of_k": ("pixel (p₁, p₂, c)", "像素 (p₁, p₂, c)"),
    "terms_title": ("patches[{i}, k] · W_E[k, {j}] for every k",
                    "对每个 k：patches[{i}, k] · W_E[k, {j}]"),
    "terms_a": ("patch {i}: patches[{i}, k]", "图像块 {i}：patches[{i}, k]"),
    "terms_b": ("column {j} of W_E: W_E[k, {j}]", "W_E 的第 {j} 列：W_E[k, {j}]"),
    "terms_ab": ("products (they sum to embedded[{i}, {j}])",
                 "乘积（相加得到 embedded[{i}, {j}]）"),
}


ctx = page("embedding", TEXT)

cfg, tr = ctx.cfg, ctx.trace
P, C, N, D, d = cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.patch_dim, cfg.d_model
st.write(ctx.t("intro", D=D, P=P, C=C, d=d, N=N))
st.latex(rf"\underbrace{{\text{{embedded}}}}_{{{N} \times {d}}} \;=\; "
         rf"\underbrace{{\text{{patches}}}}_{{{N} \times {D}}}\;\cdot\;"
         rf"\underbrace{{W_E}}_{{{D} \times {d}}}")
st.latex(r"(N \times P\!\cdot\!P\!\cdot\!C)\cdot(P\!\cdot\!P\!\cdot\!C \times d_{model}) = "
         rf"N \times d_{{model}}:\quad ({N} \times {D})\cdot({D} \times {d}) = {N} \times {d}")
st.caption(ctx.t("no_bias"))
widgets.note_original(ctx)
matrices = st.container()  # filled once i and j are chosen below

st.subheader(ctx.t("one_entry"))
st.write(ctx.t("one_entry_intro", D=D))
pick_left, pick_right = st.columns([1, 2])
with pick_left:
    i = widgets.query_picker(ctx)
with pick_right:
    j = st.number_input(ctx.t("pick_j"), 0, d - 1, 0, step=1, key="emb_j")
    terms = dot_terms(tr.patches[i], tr.params.W_E[:, j])
    lhs = rf"\text{{embedded}}[{i}, {j}]"
    st.latex(lhs + rf" = \sum_{{k=0}}^{{{D - 1}}} \text{{patches}}[{i}, k]\cdot W_E[k, {j}]")
    blocks.dot_product(ctx, lhs, terms, tr.embedded[i, j], f"embedded[{i}, {j}]")

table_col, bars_col = st.columns(2)
blocks.largest_products(ctx, terms, "patches[i, k]", "W_E[k, j]", where=table_col, extra={
    ctx.t("pixel_of_k"): lambda k: str((k // (P * C), k // C % P, k % C))})
with bars_col:
    widgets.picture(ctx, "bars", [terms.a, terms.b, terms.products],
                    [ctx.ft("terms_a", i=i), ctx.ft("terms_b", j=j), ctx.ft("terms_ab", i=i, j=j)],
                    "k", ["patches", "W_E", "·"], ctx.ft("terms_title", i=i, j=j),
                    key="emb_terms")

with matrices:
    left, right = st.columns(2)
    with left:
        st.subheader(ctx.t("W_E_title"))
        widgets.matrix(ctx, tr.params.W_E, "W_E", key="W_E", xlabel=ctx.t("column_j"),
                       ylabel=ctx.t("pixel_k"), highlight_col=j)
        if ctx.weights == "trained":
            st.caption(ctx.t("we_caption_trained", j=j))
        else:
            st.caption(ctx.t("we_caption", seed=cfg.seed, j=j))
    with right:
        st.subheader(ctx.t("result"))
        widgets.matrix(ctx, tr.embedded, "embedded = patches · W_E", key="embedded",
                       xlabel=ctx.t("column_j"), highlight_row=i, highlight_col=j)
        st.caption(ctx.t("emb_caption", i=i, j=j))

chrome.footer(ctx)
