"""Step 5 of 10 — queries, keys and values: x times W_Q, W_K, W_V, split into heads."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.explain import affine_terms, dot_terms
from lens import blocks, chrome, widgets
from lens.context import page

TEXT = {
    "intro": (
        "Each layer starts by mapping every token vector x_i (a row of its input x) to three "
        "new vectors: a query q_i (what this patch is looking for), a key k_i (what it offers "
        "to be found by) and a value v_i (what it passes on when it is attended to). Each is a "
        "product with a trainable matrix of shape d_model × d_model = {d} × {d}. The {h} heads "
        "live side by side in that matrix, d_head = d_model / h = {d}/{h} = {dh} columns "
        "each: head 1 uses columns 0 … {dh1}, head 2 the next {dh}, and so on. So each head "
        "has its own W_Q, W_K, W_V of shape {d} × {dh}, and its own Q, K, V of shape "
        "{N} × {dh}.",
        "每一层首先把每个词元向量 x_i（输入 x 的一行）映射成三个新向量：查询 q_i（这个图像块在找"
        "什么）、键 k_i（它能以什么被找到）和值 v_i（它被关注时传递出去的内容）。每个都是与一个"
        "形状为 d_model × d_model = {d} × {d} 的可训练矩阵相乘。{h} 个头并排放在这个矩阵里，"
        "每个头 d_head = d_model / h = {d}/{h} = {dh} 列：第 1 个头用第 0 … {dh1} 列，第 2 个头"
        "用接下来的 {dh} 列，依此类推。所以每个头都有自己形状为 {d} × {dh} 的 W_Q、W_K、W_V，"
        "以及形状为 {N} × {dh} 的 Q、K、V。"),
    "note_slip": (
        "The note gives W_Q, W_K, W_V the shape (sequence length, d_model). That is a slip: a "
        "weight maps a width to a width and never depends on the sequence length ({N} here).",
        "笔记把 W_Q、W_K、W_V 的形状写成（序列长度, d_model）。这是笔误：权重把一种宽度映射到另一种"
        "宽度，与序列长度（这里是 {N}）无关。"),
    "input": ("The layer's input x", "这一层的输入 x"),
    "input_0": ("Layer 1 reads x0 = X + PE from the previous step.",
                "第 1 层读入上一步得到的 x0 = X + PE。"),
    "input_0_nope": ("Layer 1 reads x0 = X (the positional encoding is off).",
                     "第 1 层读入 x0 = X（位置编码已关闭）。"),
    "input_l": ("Layer {l} reads the output of layer {p}.", "第 {l} 层读入第 {p} 层的输出。"),
    "weight_slices": ("Head {hh}'s slices of the weights", "第 {hh} 个头的权重切片"),
    "results": ("Head {hh}'s queries, keys and values", "第 {hh} 个头的查询、键和值"),
    "in_dim": ("input feature (of d_model)", "输入特征（d_model 中）"),
    "head_dim": ("head column (of d_head)", "头内的列（d_head 中）"),
    "weights_caption": (
        "Columns {a} … {b} of the layer's {d} × {d} matrices. Random (Glorot-uniform) weights "
        "unless trained.",
        "该层 {d} × {d} 矩阵的第 {a} … {b} 列。除非经过训练，否则是随机（Glorot 均匀分布）权重。"),
    "results_caption": (
        "Row i is patch i's query, key or value in this head. The row and column of the entry "
        "worked out below are outlined.",
        "第 i 行是图像块 i 在这个头中的查询、键或值。下面逐项计算的那个数所在的行和列已框出。"),
    "same_kv": ("The same for K_{hh} and V_{hh}, with W_K and W_V.",
                "K_{hh} 和 V_{hh} 同理，分别用 W_K 和 W_V。"),
    "one_entry": ("One entry, written out", "逐项写出一个数"),
    "one_entry_intro": (
        "Pick a patch i (click the image or set its row and column), which of Q, K, V, and a "
        "column j of the head. The entry is the dot product of x_i (row i of the layer's "
        "input) with one column of the weight matrix: {d} products added up.",
        "选择一个图像块 i（点击图像，或设置行和列）、Q、K、V 中的一个，以及头内的一列 j。这个数是"
        " x_i（该层输入的第 i 行）与权重矩阵某一列的点积：{d} 个乘积相加。"),
    "which": ("Matrix", "矩阵"),
    "pick_j": ("Column j of the head (0 … d_head − 1)", "头内的列 j（0 … d_head − 1）"),
    # a ViT: pre-norm, biases, prefix tokens
    "pre_norm": (
        "Pre-norm (this model): the projections do not read the layer's input x itself but "
        "LN₁(x), each row of x normalised to mean 0 and variance 1, then scaled by γ₁ and "
        "shifted by β₁ (see Add & Norm). So below, x̃ = LN₁(x) is what meets W_Q, W_K, W_V.",
        "Pre-norm（本模型）：投影读入的不是这一层的输入 x 本身，而是 LN₁(x)：x 的每一行先归一化为"
        "均值 0、方差 1，再乘 γ₁、加 β₁（见“残差与层归一化”）。所以下面与 W_Q、W_K、W_V 相乘的是 "
        "x̃ = LN₁(x)。"),
    "results_caption_vit": (
        "Row 0 is the {first} token's query, key or value in this head, row i + {k} patch i's. "
        "The row and column of the entry worked out below are outlined.",
        "第 0 行是 {first} 词元在这个头中的查询、键或值，第 i + {k} 行是图像块 i 的。下面逐项计算的"
        "那个数所在的行和列已框出。"),
    "weights_caption_model": ("Columns {a} … {b} of the layer's {d} × {d} matrices, as loaded "
                              "from the checkpoint {name}.",
                              "该层 {d} × {d} 矩阵的第 {a} … {b} 列，取自检查点 {name}。"),
    "input_pre": ("The projections' input x̃ = LN₁(x)", "投影的输入 x̃ = LN₁(x)"),
    "input_pre_caption": (
        "Row by row the layer norm of layer {l}'s input ({what}); the trace keeps it as "
        "layers[{l0}].ln_1.out.",
        "第 {l} 层输入（{what}）逐行做层归一化的结果；trace 中保存为 layers[{l0}].ln_1.out。"),
    "what_x0": ("x0 = tokens + positions", "x0 = 词元 + 位置"),
    "what_x0_nope": ("x0 = tokens, positions off", "x0 = 词元，位置已关闭"),
    "what_prev": ("the output of layer {p}", "第 {p} 层的输出"),
    "biases": (
        "This model adds a bias to each projection: b_Q, b_K, b_V ({d} numbers each, head "
        "{hh} uses entries {a} … {b}). The entry below is one dot product plus one bias, "
        "written as a last product 1 × b.",
        "该模型给每个投影加上偏置：b_Q、b_K、b_V（各 {d} 个数，第 {hh} 个头用第 {a} … {b} 个）。"
        "下面这个数是一个点积再加一个偏置，偏置写成最后一个乘积 1 × b。"),
    "prefix_rows": (
        "Row 0 is the {first} token, which belongs to no patch: patch i is row i + {k} of x, Q, "
        "K and V ({T} rows). The query patch {i} is row {r}.",
        "第 0 行是 {first} 词元，它不属于任何图像块：图像块 i 是 x、Q、K、V（共 {T} 行）的第 "
        "i + {k} 行。查询图像块 {i} 在第 {r} 行。"),
}


ctx = page("qkv", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d, h, dh = cfg.n_tokens, cfg.d_model, cfg.n_heads, cfg.d_head
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
    layer, lp = tr.layers[l], tr.params.layers[l]
    x = tr.x0 if l == 0 else tr.layers[l - 1].out  # [T, d] the layer's input
    if cfg.norm_first:  # pre-norm: the projections read LN_1(x)
        x = layer.ln_1.out  # [T, d]
    xs = r"\tilde{x}" if cfg.norm_first else "x"  # the projections' input in formulas
    bias = {"Q": lp.b_Q, "K": lp.b_K, "V": lp.b_V}
    cols = slice(hd * dh, (hd + 1) * dh)  # head hd's columns of W_Q, W_K, W_V
    a, b = hd * dh, (hd + 1) * dh - 1
    bq = {n: (rf" + b_{n}" if bias[n] is not None else "") for n in "QKV"}
    if cfg.norm_first:
        st.latex(r"\tilde{x} = \mathrm{LN}_1(x)")
    if bias["Q"] is None:
        st.latex(rf"Q = {xs}\cdot W_Q,\quad K = {xs}\cdot W_K,\quad V = {xs}\cdot W_V")
    else:  # one line each: with the biases the three do not fit one column
        st.latex(r"\begin{aligned} " + r" \\ ".join(
            rf"{n} &= {xs}\cdot W_{n}{bq[n]}" for n in "QKV") + r" \end{aligned}")
    st.latex(rf"({T} \times {d})\cdot({d} \times {d})"
             + (rf" + (1 \times {d})" if bias["Q"] is not None else "") + rf" = {T} \times {d}")
    st.latex(rf"Q_{{{hd + 1}}} = {xs}\cdot W_Q[:,\, {a}\!:\!{b + 1}]"
             + (rf" + b_Q[{a}\!:\!{b + 1}]" if bias["Q"] is not None else ""))
    st.latex(rf"({T} \times {d})\cdot({d} \times {dh})"
             + (rf" + (1 \times {dh})" if bias["Q"] is not None else "") + rf" = {T} \times {dh}")
    st.caption(ctx.t("same_kv", hh=hd + 1))
    if bias["Q"] is not None:
        st.caption(ctx.t("biases", d=d, hh=hd + 1, a=a, b=b))
input_box = top_right.container()  # filled once the patch i is chosen below
weights_box = st.container()
results_box = st.container()

# --- one entry written out ----------------------------------------------------------------------
st.subheader(ctx.t("one_entry"))
st.write(ctx.t("one_entry_intro", d=d))
pick_col, math_col = st.columns([2, 3])
with pick_col:
    query = widgets.query_picker(ctx)
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
    col = a + j  # the column of the full d_model × d_model matrix
    b_W = bias[which]  # [d] or None
    terms = dot_terms(x[i], W[:, col]) if b_W is None else affine_terms(x[i], W[:, col], b_W[col])
    low = which.lower()
    lhs = rf"{low}^{{(\text{{head}}\,{hd + 1})}}_{{{i},{j}}}"
    plus = rf" + b_{which}[{col}]" if b_W is not None else ""
    st.latex(lhs + rf" = {xs}_{{{i}}}\cdot W_{which}[:,\, {col}]{plus} = "
             rf"\sum_{{k=0}}^{{{d - 1}}} {xs}[{i}, k]\; W_{which}[k, {col}]{plus}")
    blocks.dot_product(ctx, lhs, terms, stored, f"layers[{l}].{low}[{hd}, {i}, {j}]")
    xname = "x̃" if cfg.norm_first else "x"
    blocks.largest_products(ctx, terms, f"{xname}[{i}, k]", f"W_{which}[k, {col}]")

# --- the layer's input, then two rows of three: the weight slices and the results ------------
with input_box:
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

with weights_box:
    st.subheader(ctx.t("weight_slices", hh=hd + 1))
    for name, where in zip(("Q", "K", "V"), st.columns(3), strict=True):
        W_slice = {"Q": lp.W_Q, "K": lp.W_K, "V": lp.W_V}[name][:, cols]  # [d, d_head]
        widgets.matrix(ctx, W_slice, f"W_{name}[:, {a}:{b + 1}]", key=f"qkv_W{name}",
                       where=where, xlabel=ctx.t("head_dim"), ylabel=ctx.t("in_dim"),
                       size=(4, 3.2), highlight_col=j if name == which else None)
    st.caption(ctx.t("weights_caption", a=a, b=b, d=d) if ctx.model is None else
               ctx.t("weights_caption_model", a=a, b=b, d=d, name=ctx.model.id))

with results_box:
    st.subheader(ctx.t("results", hh=hd + 1))
    for name, where in zip(("Q", "K", "V"), st.columns(3), strict=True):
        result = {"Q": layer.q, "K": layer.k, "V": layer.v}[name][hd]  # [N, d_head]
        plus = f" + b_{name}" if bias[name] is not None else ""
        xname = "x̃" if cfg.norm_first else "x"
        widgets.matrix(ctx, result, f"{name}_{hd + 1} = {xname}·W_{name}[:, {a}:{b + 1}]{plus}",
                       key=f"qkv_{name}", where=where, xlabel=ctx.t("head_dim"),
                       size=(4, 3.2), highlight_row=i if name == which else None,
                       highlight_col=j if name == which else None, tokens="rows")
    st.caption(ctx.t("results_caption_vit", first=prefix_names(cfg)[0], k=cfg.n_prefix)
               if cfg.n_prefix else ctx.t("results_caption"))

chrome.footer(ctx)
