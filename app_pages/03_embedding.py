"""Step 3 of 10 — the input embedding: every flattened patch times W_E."""

import streamlit as st

from encoder_core import prefix_names
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
    "terms_ab_bias": ("products (their sum + b_E[{j}] is embedded[{i}, {j}])",
                      "乘积（其和 + b_E[{j}] 即 embedded[{i}, {j}]）"),
    # a checkpoint: the bias b_E and the [CLS] token
    "with_bias": (
        "Plus a bias b_E of d_model = {d} values, one per column, added to every patch's row: "
        "a ViT's patch embedding is a {P} × {P} convolution with stride {P} and a bias, which "
        "is exactly this product. No √d_model factor.",
        "再加上一个偏置 b_E，共 d_model = {d} 个值，每列一个，加到每个图像块的行上：ViT 的图像块"
        "嵌入是一个步长为 {P} 的 {P} × {P} 卷积（带偏置），与这个乘法完全相同。不乘 √d_model。"),
    "we_caption_model": ("The checkpoint's weights ({name}); column j = {j} is outlined.",
                         "检查点的权重（{name}）；第 j = {j} 列已框出。"),
    "b_E_title": ("The bias b_E", "偏置 b_E"),
    "b_E_bars": ("b_E: one value per embedding dimension, j = {j} marked",
                 "b_E：每个嵌入维度一个值，已标出 j = {j}"),
    "cls_title": ("The [CLS] token, put before the patches", "[CLS] 词元：放在图像块之前"),
    "cls_text": (
        "A ViT then puts {k} learned row(s) before the {N} patch rows: {names}. The [CLS] "
        "vector is not computed from any patch; it is the same for every image, learned in "
        "training, and through the layers it gathers what the image as a whole holds. The "
        "sequence has {S} rows from here on: row 0 is CLS, patch i is row i + {k}.",
        "ViT 接着在 {N} 个图像块行之前放 {k} 个学到的行：{names}。[CLS] 向量不是由任何图像块"
        "算出来的；它对每幅图像都相同，在训练中学到，并在各层中汇集整幅图像的信息。从这里起序列"
        "有 {S} 行：第 0 行是 CLS，图像块 i 在第 i + {k} 行。"),
    "cls_bars": ("the learned [CLS] vector: params.cls [1 × {d}]",
                 "学到的 [CLS] 向量：params.cls [1 × {d}]"),
    "tokens_caption": (
        "tokens = [{names}; embedded]: the CLS row is ticked by name and outlined; patch i = {i} "
        "is row {row}.",
        "tokens = [{names}; embedded]：CLS 行按名称标出并加框；图像块 i = {i} 在第 {row} 行。"),
    "dim_j": ("dimension j", "维度 j"),
}


ctx = page("embedding", TEXT)

cfg, tr = ctx.cfg, ctx.trace
P, C, N, D, d = cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.patch_dim, cfg.d_model
st.write(ctx.t("intro", D=D, P=P, C=C, d=d, N=N))
bias = cfg.patch_bias  # a ViT's b_E; the note has none
b_tex = rf" + \underbrace{{b_E}}_{{{d}}}" if bias else ""
st.latex(rf"\underbrace{{\text{{embedded}}}}_{{{N} \times {d}}} \;=\; "
         rf"\underbrace{{\text{{patches}}}}_{{{N} \times {D}}}\;\cdot\;"
         rf"\underbrace{{W_E}}_{{{D} \times {d}}}{b_tex}")
st.latex(r"(N \times P\!\cdot\!P\!\cdot\!C)\cdot(P\!\cdot\!P\!\cdot\!C \times d_{model}) = "
         rf"N \times d_{{model}}:\quad ({N} \times {D})\cdot({D} \times {d}) = {N} \times {d}")
st.caption(ctx.t("with_bias", d=d, P=P) if bias else ctx.t("no_bias"))
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
    b_j = float(tr.params.b_E[j]) if bias else None
    st.latex(lhs + rf" = \sum_{{k=0}}^{{{D - 1}}} \text{{patches}}[{i}, k]\cdot W_E[k, {j}]"
             + (rf" + b_E[{j}]" if bias else ""))
    blocks.dot_product(ctx, lhs, terms, tr.embedded[i, j], f"embedded[{i}, {j}]", bias=b_j,
                       bias_tex=f"b_E[{j}]")

table_col, bars_col = st.columns(2)
blocks.largest_products(ctx, terms, "patches[i, k]", "W_E[k, j]", where=table_col, extra={
    ctx.t("pixel_of_k"): lambda k: str((k // (P * C), k // C % P, k % C))})
with bars_col:
    widgets.picture(ctx, "bars", [terms.a, terms.b, terms.products],
                    [ctx.ft("terms_a", i=i), ctx.ft("terms_b", j=j),
                     ctx.ft("terms_ab_bias" if bias else "terms_ab", i=i, j=j)],
                    "k", ["patches", "W_E", "·"], ctx.ft("terms_title", i=i, j=j),
                    key="emb_terms")

with matrices:
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
            widgets.picture(ctx, "bars", [tr.params.b_E], [f"b_E  [{d}]"], ctx.ft("dim_j"),
                            ["b_E"], ctx.ft("b_E_bars", j=j), highlight=j, key="b_E")
    with right:
        st.subheader(ctx.t("result"))
        widgets.matrix(ctx, tr.embedded, "embedded = patches · W_E" + (" + b_E" if bias else ""),
                       key="embedded", xlabel=ctx.t("column_j"), highlight_row=i,
                       highlight_col=j)
        st.caption(ctx.t("emb_caption", i=i, j=j))

if cfg.n_prefix:  # [CLS] (and DIST, registers): learned rows before the patches
    names = ", ".join(prefix_names(cfg))
    st.subheader(ctx.t("cls_title"))
    st.write(ctx.t("cls_text", k=cfg.n_prefix, N=N, names=names, S=cfg.seq_len))
    left, right = st.columns(2)
    with left:
        if tr.params.cls is not None:
            widgets.picture(ctx, "bars", [tr.params.cls[0]], [f"CLS  [{d}]"],
                            ctx.ft("dim_j"), ["CLS"], ctx.ft("cls_bars", d=d), highlight=j,
                            key="cls_vector")
    with right:
        widgets.matrix(ctx, tr.tokens, f"tokens = [{names}; embedded]", key="tokens",
                       xlabel=ctx.t("column_j"), highlight_row=ctx.row(i), highlight_col=j,
                       tokens="rows")
        st.caption(ctx.t("tokens_caption", names=names, i=i, row=ctx.row(i)))

chrome.footer(ctx)
