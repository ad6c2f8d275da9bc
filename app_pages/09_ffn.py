"""Step 9 of 10 — the position-wise feed-forward network and the second Add & Norm."""

import streamlit as st

from encoder_core.analysis import relu_zero_share
from encoder_core.explain import hidden_unit_terms
from encoder_core.vit_steps import activation_curve
from lens import blocks, chrome, figures, widgets
from lens.context import page

TEXT = {
    "intro": (
        "The paper's encoder layer has a second sub-layer: a small two-layer network applied to "
        "every position separately and identically — the same W_1, b_1, W_2, b_2 for all {N} "
        "patches, no mixing between positions (that was attention's job). It widens each "
        "vector from d_model = {d} to d_ff = {dff}, applies the ReLU max(0, ·), and projects "
        "back to d_model. Then comes a second Add & Norm.",
        "论文的编码器层还有第二个子层：一个小的两层网络，对每个位置分别、相同地作用——"
        "所有 {N} 个图像块共用同一组 W_1、b_1、W_2、b_2，位置之间不交换信息（那是注意力的工作）。"
        "它把每个向量从 d_model = {d} 扩展到 d_ff = {dff}，经过 ReLU max(0, ·)，再投影回 "
        "d_model。之后是第二个残差与层归一化。"),
    "off_what": (
        "What this step would do: each of the {N} rows of ln_1.out would be widened to "
        "d_ff = {dff} numbers by x·W_1 + b_1, the negative ones set to 0 by the ReLU, and the "
        "result projected back to d_model = {d} by ·W_2 + b_2; a second Add & Norm would then "
        "give the layer's output. Without it, the layer's output is ln_1.out.",
        "这一步本来会做的事：ln_1.out 的 {N} 行中的每一行，先经 x·W_1 + b_1 扩展为 d_ff = {dff} "
        "个数，ReLU 把其中的负数置为 0，再经 ·W_2 + b_2 投影回 d_model = {d}；随后第二个残差与层"
        "归一化给出本层的输出。关闭时，本层的输出就是 ln_1.out。"),
    "input_is": ("The input x is ln_1.out of layer {l}, the output of the first Add & Norm.",
                 "输入 x 是第 {l} 层的 ln_1.out，即第一个残差与层归一化的输出。"),
    "pos_hint": ("The chosen query patch i is outlined in the matrices and worked out by hand "
                 "below.",
                 "所选的查询图像块 i 在各矩阵中标出，并在下面手算。"),
    "hidden": ("1 · Hidden activations: x·W_1 + b_1, then ReLU",
               "1 · 隐藏层激活：x·W_1 + b_1，再经 ReLU"),
    "hidden_unit": ("hidden unit j", "隐藏单元 j"),
    "hidden_unit_from": ("hidden unit j − {a}", "隐藏单元 j − {a}"),
    "unit_slice": ("Hidden units shown", "显示的隐藏单元"),
    "unit_slice_caption": (
        "{n} of the d_ff = {dff} units at full resolution, so every ReLU zero is its own dark "
        "cell; move the slider to see the others.",
        "以原始分辨率显示 d_ff = {dff} 个单元中的 {n} 个，每个被 ReLU 置零的值都是单独的深色格子；"
        "拖动滑块查看其余单元。"),
    "activation": ("activation (≥ 0)", "激活值（≥ 0）"),
    "zero_share": ("ReLU zeros in this layer", "本层 ReLU 置零的比例"),
    "zero_help": ("The share of the N × d_ff hidden activations that the ReLU set to exactly 0.",
                  "N × d_ff 个隐藏激活中被 ReLU 置为 0 的比例。"),
    "zero_title": ("share of ReLU zeros in ffn_hidden, per layer",
                   "各层 ffn_hidden 中 ReLU 置零的比例"),
    "share": ("share of zeros", "零的比例"),
    "layer_axis": ("layer", "层"),
    "zero_text": (
        "All values are ≥ 0, so the colour scale is sequential. With random weights and zero "
        "biases about half of x·W_1 is negative, so about half of the activations are 0: the "
        "ReLU keeps, for each position, a different subset of the d_ff units.",
        "所有值都 ≥ 0，所以使用顺序色标。随机权重且偏置为 0 时，x·W_1 大约一半为负，因此大约一半的"
        "激活为 0：对每个位置，ReLU 保留的是 d_ff 个单元中不同的一部分。"),
    "ffn_weights": ("The weights W_1 and W_2 (and the biases b_1, b_2)",
                "权重 W_1 与 W_2（以及偏置 b_1、b_2）"),
    "in_feature": ("input feature", "输入特征"), "out_feature": ("output feature", "输出特征"),
    "bias_random": ("b_1 and b_2 start at 0, as initialised (random weights).",
                    "b_1 和 b_2 初始化为 0（随机权重）。"),
    "bias_trained": ("b_1 and b_2 were trained together with W_1 and W_2.",
                     "b_1 和 b_2 与 W_1、W_2 一起训练过。"),
    "out": ("2 · Back to d_model: ffn_out = hidden·W_2 + b_2",
            "2 · 投影回 d_model：ffn_out = hidden·W_2 + b_2"),
    "out_text": ("Each row of the hidden matrix is projected back to d_model = {d} numbers: "
                 "ffn_out has the same shape as the sub-layer's input, so the two can be added.",
                 "隐藏矩阵的每一行被投影回 d_model = {d} 个数：ffn_out 与子层输入形状相同，因此两者"
                 "可以相加。"),
    "by_hand": ("3 · One hidden activation by hand: patch i = {i}, layer {l}",
                "3 · 手算一个隐藏激活：图像块 i = {i}，第 {l} 层"),
    "pick_j": ("Hidden unit j", "隐藏单元 j"),
    "addnorm": ("4 · The second Add & Norm", "4 · 第二个残差与层归一化"),
    "addnorm_text": (
        "The same as the first one, with its own γ_2, β_2: add the sub-layer's input back, "
        "then normalise each row to mean 0 and variance 1 (population variance, ε = {eps:g}) "
        "and scale and shift.",
        "与第一个相同，但有自己的 γ_2、β_2：把子层的输入加回去，再把每一行归一化为均值 0、方差 1"
        "（总体方差，ε = {eps:g}），然后缩放和平移。"),
    "moments_title": ("μ and σ² of each position of resid_2", "resid_2 每个位置的 μ 与 σ²"),
    "position": ("position i (patch)", "位置 i（图像块）"),
    "layer_out": ("ln_2.out is layer {l}'s output: {where}.",
                  "ln_2.out 是第 {l} 层的输出：{where}。"),
    "goes_next": ("the next layer's input x", "下一层的输入 x"),
    "goes_final": ("the encoder's output", "编码器的输出"),
    # a ViT: GELU, the biases, the pre-norm input
    "vit_intro": (
        "The second sub-layer of a ViT block: a small two-layer network applied to every row "
        "separately and identically — the same W_1, b_1, W_2, b_2 for all {S} tokens (CLS "
        "included), no mixing between them. It widens each vector from d_model = {d} to "
        "d_ff = {dff}, applies {act}, and projects back to d_model.{pre}",
        "ViT 块的第二个子层：一个小的两层网络，对每一行分别、相同地作用——所有 {S} 个词元"
        "（包括 CLS）共用同一组 W_1、b_1、W_2、b_2，词元之间不交换信息。它把每个向量从 "
        "d_model = {d} 扩展到 d_ff = {dff}，经过 {act}，再投影回 d_model。{pre}"),
    "act_gelu": ("GELU, z·Φ(z) (the exact erf form)", "GELU，即 z·Φ(z)（精确的 erf 形式）"),
    "act_gelu_tanh": ("GELU in its tanh form", "tanh 近似形式的 GELU"),
    "act_relu": ("the ReLU max(0, ·)", "ReLU max(0, ·)"),
    "vit_pre": (
        " Pre-norm: it reads LN_2(resid_1), a normalised copy, and its output is added back to "
        "resid_1 itself; no LayerNorm follows.",
        "pre-norm：它读取归一化副本 LN_2(resid_1)，输出再加回 resid_1 本身；之后没有层归一化。"),
    "gelu_title": ("The GELU", "GELU 激活函数"),
    "gelu_text": (
        "GELU(z) = z·Φ(z), where Φ(z) is the share of a standard normal distribution below z: "
        "a smooth gate between 0 and 1. For large positive z it lets z through (Φ ≈ 1) like "
        "the ReLU; for large negative z it gives ≈ 0; in between it bends smoothly, and a "
        "negative z gives a small negative output (the lowest is −0.17 at z ≈ −0.75) where the "
        "ReLU gives exactly 0.",
        "GELU(z) = z·Φ(z)，其中 Φ(z) 是标准正态分布小于 z 的比例：一个介于 0 和 1 之间的平滑门控。"
        "z 为很大的正数时它像 ReLU 一样让 z 通过（Φ ≈ 1）；z 为很大的负数时输出 ≈ 0；在两者之间"
        "平滑弯曲，z 为负时得到一个小的负输出（最低为 z ≈ −0.75 处的 −0.17），"
        "而 ReLU 给出恰好 0。"),
    "gelu_curve": ("the activation the encoder computes, and the ReLU",
                   "编码器计算的激活函数，以及 ReLU"),
    "vit_input_is": ("The input x is ln_2.out of layer {l}: LN_2(resid_1), the normalised copy "
                     "of the residual stream after attention.",
                     "输入 x 是第 {l} 层的 ln_2.out：LN_2(resid_1)，即注意力之后残差流的归一化"
                     "副本。"),
    "vit_pos_hint": ("The chosen query patch i is row {row} (row 0 is CLS), outlined in the "
                     "matrices and worked out by hand below.",
                     "所选的查询图像块 i 在第 {row} 行（第 0 行是 CLS），在各矩阵中标出，并在下面"
                     "手算。"),
    "vit_hidden": ("1 · Hidden activations: x·W_1 + b_1, then GELU",
                   "1 · 隐藏层激活：x·W_1 + b_1，再经 GELU"),
    "activation_signed": ("activation", "激活值"),
    "neg_share": ("GELU outputs below 0 in this layer", "本层 GELU 输出小于 0 的比例"),
    "neg_help": ("The share of the {S} × d_ff hidden activations that are ≤ 0: those whose "
                 "sum x·W_1 + b_1 was negative.",
                 "{S} × d_ff 个隐藏激活中 ≤ 0 的比例：即 x·W_1 + b_1 为负的那些。"),
    "share_neg": ("share ≤ 0", "≤ 0 的比例"),
    "neg_title": ("share of GELU outputs ≤ 0 in ffn_hidden, per layer",
                  "各层 ffn_hidden 中 GELU 输出 ≤ 0 的比例"),
    "neg_text": (
        "GELU does not cut at 0: a negative sum gives a small negative activation (blue), a "
        "positive one passes almost unchanged (red).",
        "GELU 不在 0 处截断：和为负时得到一个小的负激活（蓝色），为正时几乎原样通过（红色）。"),
    "bias_model": ("b_1 and b_2 come from the checkpoint, trained with W_1 and W_2:",
                   "b_1 与 b_2 来自检查点，与 W_1、W_2 一起训练："),
    "biases_title": ("the FFN's biases, layer {l}", "第 {l} 层前馈网络的偏置"),
    "vit_addnorm": ("4 · The second residual add (pre-norm: no LayerNorm after it)",
                    "4 · 第二个残差相加（pre-norm：之后没有层归一化）"),
    "vit_addnorm_text": (
        "resid_2 = resid_1 + {ls}ffn_out: the FFN's output is added to the un-normalised "
        "residual stream, and resid_2 is the layer's output, {where}. The next LayerNorm is "
        "{next}.",
        "resid_2 = resid_1 + {ls}ffn_out：前馈网络的输出加到未归一化的残差流上，resid_2 就是本层的"
        "输出，即{where}。下一个层归一化是{next}。"),
    "next_ln": ("the next layer's LN_1", "下一层的 LN_1"),
    "next_final": ("the final LayerNorm", "最终的层归一化"),
}


ctx = page("ffn", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d, dff = cfg.n_tokens, cfg.d_model, cfg.d_ff
widgets.note_original(ctx)
ACT_TEX = {"relu": r"\max(0,\; x \cdot W_1 + b_1)", "gelu": r"\mathrm{GELU}(x \cdot W_1 + b_1)",
           "gelu_tanh": r"\mathrm{GELU}_{\tanh}(x \cdot W_1 + b_1)"}
st.latex(r"\mathrm{FFN}(x) = %s \cdot W_2 + b_2" % ACT_TEX[cfg.activation])

if not cfg.use_ffn:
    st.info(ctx.t("no_ffn"))
    st.write(ctx.t("off_what", N=N, d=d, dff=dff))
    st.latex(r"(%d \times %d) \cdot (%d \times %d) \rightarrow %d \times %d \rightarrow"
             r" (%d \times %d) \cdot (%d \times %d) = %d \times %d"
             % (N, d, d, dff, N, dff, N, dff, dff, d, N, d))
    chrome.footer(ctx)
    st.stop()

pre, gelu = cfg.norm_first, cfg.activation != "relu"  # a ViT's pre-norm block and GELU
vit = pre or gelu or cfg.n_prefix > 0
S_ = cfg.seq_len  # rows: N for the note's encoder, CLS + N for a ViT
if vit:
    st.write(ctx.t("vit_intro", S=S_, d=d, dff=dff, act=ctx.t(f"act_{cfg.activation}"),
                   pre=ctx.t("vit_pre") if pre else ""))
else:
    st.write(ctx.t("intro", N=N, d=d, dff=dff))
if gelu:
    st.subheader(ctx.t("gelu_title"))
    left, right = st.columns([3, 2], gap="large")
    z, act = activation_curve(cfg.activation)
    _, relu_z = activation_curve("relu")
    name = {"gelu": "GELU", "gelu_tanh": "GELU (tanh)"}[cfg.activation]
    widgets.picture(ctx, "lines", z, [act, relu_z], [name, "ReLU"],
                    ctx.ft("gelu_curve"), "z", "f(z)", key="gelu_curve", where=left)
    with right:
        st.latex(r"\mathrm{GELU}(z) = z\,%s" % blocks.GATE_TEX[cfg.activation]
                 if cfg.activation == "gelu_tanh" else
                 r"\mathrm{GELU}(z) = z\,\Phi(z) = \tfrac12\, z\,\big(1 + "
                 r"\mathrm{erf}(z/\sqrt{2})\big)")
        st.write(ctx.t("gelu_text"))
top_left, top_right = st.columns([2, 3], gap="large")
with top_left:
    layer = widgets.layer_selector(ctx)
    query = widgets.query_picker(ctx)
row = ctx.row(query)  # the query's row: after CLS in a ViT
lt, lp = tr.layers[layer], tr.params.layers[layer]
x_in = lt.ln_2.out if pre else lt.ln_1.out  # what the FFN reads
x_field = "ln_2.out" if pre else "ln_1.out"
act_tex = r"\mathrm{GELU}\big(" if gelu else r"\max\big(0,\;"
with top_right:
    st.markdown(ctx.t("vit_input_is", l=layer + 1) if pre else ctx.t("input_is", l=layer + 1))
    st.latex(r"\underbrace{\text{ffn\_hidden}}_{%d \times %d} = %s"
             r"\underbrace{x}_{%d \times %d} \cdot \underbrace{W_1}_{%d \times %d}"
             r" + \underbrace{b_1}_{%d}\big)" % (S_, dff, act_tex, S_, d, d, dff, dff))
    st.latex(r"\underbrace{\text{ffn\_out}}_{%d \times %d} = \underbrace{\text{ffn\_hidden}}"
             r"_{%d \times %d} \cdot \underbrace{W_2}_{%d \times %d} + \underbrace{b_2}_{%d}"
             % (S_, d, S_, dff, dff, d, d))
    if pre:
        ls = r"\mathrm{ls}_2 \odot " if cfg.layer_scale else ""
        st.latex(r"x = \text{ln\_2.out} = \mathrm{LN}_2(\text{resid\_1}), \qquad"
                 r"\text{resid\_2} = \text{resid\_1} + %s\text{ffn\_out}" % ls)
        st.caption(ctx.t("vit_pos_hint", row=row))
    else:
        st.latex(r"\text{resid\_2} = x + \text{ffn\_out}, \qquad"
                 r"\text{ln\_2.out} = \mathrm{LayerNorm}(\text{resid\_2})")
        st.caption(ctx.t("vit_pos_hint", row=row) if cfg.n_prefix else ctx.t("pos_hint"))

# --- 1 · hidden activations -----------------------------------------------------------------
st.subheader(ctx.t("vit_hidden") if gelu else ctx.t("hidden"))
left, right = st.columns([3, 2], gap="large")
with left:  # an exact slice of at most 256 units: block-averaging would hide the zeros
    start = 0
    if dff > figures.MAX_SIDE:
        starts = list(range(0, dff, figures.MAX_SIDE))
        last = {a: min(a + figures.MAX_SIDE, dff) - 1 for a in starts}
        start = st.select_slider(ctx.t("unit_slice"), starts, key="ffn_unit_slice",
                                 format_func=lambda a: f"{a} … {last[a]}")
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
        st.metric(ctx.t("neg_share"), f"{shares[layer]:.1%}", help=ctx.t("neg_help", S=S_))
        st.write(ctx.t("neg_text"))
    else:
        st.metric(ctx.t("zero_share"), f"{shares[layer]:.1%}", help=ctx.t("zero_help"))
        st.write(ctx.t("zero_text"))
    widgets.picture(ctx, "bar_panels", [shares],
                    [f"ffn_hidden ≤ 0  [{cfg.n_layers}]" if gelu else
                     f"relu_zero_share(ffn_hidden)  [{cfg.n_layers}]"], ctx.t("layer_axis"),
                    ctx.t("share_neg" if gelu else "share"),
                    ctx.t("neg_title" if gelu else "zero_title"),
                    highlight=layer, tick_labels=[str(l + 1) for l in range(cfg.n_layers)],
                    size=(4.5, 2.8), key="zero_share")
with st.expander(ctx.t("ffn_weights")):
    c1, c2 = st.columns(2)
    widgets.matrix(ctx, lp.W_1, "W_1", key="W_1", where=c1, xlabel=ctx.t("hidden_unit"),
                   ylabel=ctx.t("in_feature"), window=False)
    widgets.matrix(ctx, lp.W_2, "W_2", key="W_2", where=c2, xlabel=ctx.t("out_feature"),
                   ylabel=ctx.t("hidden_unit"), window=False)
    if ctx.model is not None:
        st.caption(ctx.t("bias_model"))
        widgets.picture(ctx, "bars", [lp.b_1, lp.b_2], [f"b_1  [{dff}]", f"b_2  [{d}]"],
                        "j", ["b_1", "b_2"], ctx.ft("biases_title", l=layer + 1),
                        key="ffn_biases")
    else:
        st.caption(ctx.t("bias_trained") if ctx.weights == "trained" else ctx.t("bias_random"))

# --- 2 · back to d_model --------------------------------------------------------------------
st.subheader(ctx.t("out"))
left, right = st.columns([3, 2], gap="large")
widgets.matrix(ctx, lt.ffn_out, "ffn_out", key="ffn_out", where=left, highlight_row=row,
               tokens="rows" if cfg.n_prefix else "")
with right:
    st.latex(r"(%d \times %d) \cdot (%d \times %d) = %d \times %d" % (S_, dff, dff, d, S_, d))
    st.write(ctx.t("out_text", d=d))

# --- 3 · one hidden activation by hand ------------------------------------------------------
st.subheader(ctx.t("by_hand", i=query, l=layer + 1))
left, _ = st.columns(2)
j = int(left.number_input(ctx.t("pick_j"), 0, dff - 1, 0, step=1, key="ffn_unit"))
unit = hidden_unit_terms(x_in[row], lp.W_1, lp.b_1, j, cfg.activation)
blocks.hidden_unit(ctx, unit, lt.ffn_hidden[row, j], row, j,
                   f"layers[{layer}].ffn_hidden[{row}, {j}]")
if vit:
    st.caption(f"x = {x_field}[{row}]")

# --- 4 · the second Add & Norm (post-norm) or the second residual add (pre-norm) -------------
last = layer == cfg.n_layers - 1
where_to = ctx.t("goes_final") if last else ctx.t("goes_next")
if pre:
    st.subheader(ctx.t("vit_addnorm"))
    ls = "ls_2 ⊙ " if cfg.layer_scale else ""
    st.write(ctx.t("vit_addnorm_text", ls=ls, where=where_to,
                   next=ctx.t("next_final") if last and cfg.final_norm else ctx.t("next_ln")))
    st.latex(r"\underbrace{\text{resid\_2}}_{%d \times %d} = \underbrace{\text{resid\_1}}"
             r"_{%d \times %d} + %s\underbrace{\text{ffn\_out}}_{%d \times %d}"
             % (S_, d, S_, d, r"\mathrm{ls}_2 \odot " if ls else "", S_, d))
    c1, c2 = st.columns(2)
    widgets.matrix(ctx, lt.resid_1, "resid_1", key="resid_1", where=c1, highlight_row=row,
                   tokens="rows")
    widgets.matrix(ctx, lt.resid_2, "resid_2 = out", key="resid_2", where=c2,
                   highlight_row=row, tokens="rows")
    chrome.footer(ctx)
    st.stop()
st.subheader(ctx.t("addnorm"))
st.write(ctx.t("addnorm_text", eps=cfg.ln_eps))
st.latex(r"\underbrace{\text{resid\_2}}_{%d \times %d} = \underbrace{x}_{%d \times %d} + "
         r"\underbrace{\text{ffn\_out}}_{%d \times %d}" % (S_, d, S_, d, S_, d))
st.latex(r"\text{ln\_2.out} = \gamma_2 \odot \frac{\text{resid\_2} - \mu}"
         r"{\sqrt{\sigma^2 + \varepsilon}} + \beta_2")
c1, c2 = st.columns(2)
tokens = "rows" if cfg.n_prefix else ""
widgets.matrix(ctx, lt.resid_2, "resid_2", key="resid_2", where=c1, highlight_row=row,
               tokens=tokens)
widgets.matrix(ctx, lt.ln_2.out, "ln_2.out", key="ln_2_out", where=c2, highlight_row=row,
               tokens=tokens)
left, right = st.columns([3, 2], gap="large")
widgets.picture(ctx, "bars", [lt.ln_2.mean, lt.ln_2.var],
                [f"ln_2.mean = μ  [{S_}]", f"ln_2.var = σ²  [{S_}]"], ctx.t("position"),
                ["μ", "σ²"], ctx.t("moments_title"), highlight=row, key="ln_2_moments",
                where=left)
right.write(ctx.t("layer_out", l=layer + 1, where=where_to))

chrome.footer(ctx)
