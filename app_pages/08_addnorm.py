"""Step 8 of 10 — Add & Norm: the residual sum, then layer normalisation of each position."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.explain import layer_norm_terms
from encoder_core.vit_steps import residual_entry
from lens import blocks, blocks_rows, chrome, widgets
from lens.context import page
from lens.latex import num, term

TEXT = {
    "intro": (
        "After attention comes **Add & Norm**. *Add*: the sub-layer's input x is added back to "
        "its output (a residual connection), so the signal and its gradient have a direct path "
        "through a deep stack. *Norm*: each position — each row of length d_model — is then "
        "normalised on its own to mean 0 and variance 1, and scaled and shifted by the "
        "trainable γ and β. This is post-norm (normalise after the add), as in the 2017 paper "
        "and the note; ViT normalises before each sub-layer instead (pre-norm).",
        "注意力之后是**残差与层归一化（Add & Norm）**。*残差（Add）*：把子层的输入 x "
        "加回到它的输出上（残差连接），使信号和梯度在很深的堆叠中也有一条直通的路径。"
        "*归一化（Norm）*：然后对每个位置——每一行，长度为 d_model——单独归一化为均值 0、"
        "方差 1，再用可训练的 γ 和 β 缩放和平移。这是后归一化（post-norm，先相加再归一化），"
        "与 2017 年的论文和笔记一致；ViT 则在每个子层之前归一化（pre-norm）。"),
    "x_is": ("Here x is {what}.", "这里的 x 是{what}。"),
    "x_is_x0": ("x0 = patches · W_E + PE, the encoder's input (layer 1)",
                "x0 = patches · W_E + PE，即编码器的输入（第 1 层）"),
    "x_is_prev": ("the output of layer {l} (this is layer {l1})",
                  "第 {l} 层的输出（当前是第 {l1} 层）"),
    "pos_hint": ("The chosen query patch i is the position worked out by hand below and "
                 "outlined in the pictures.",
                 "所选的查询图像块 i 就是下面手算的位置，并在各图中标出。"),
    "add": ("1 · Add: the residual sum", "1 · 残差相加"),
    "add_caption": (
        "Element by element: the same position and feature of x and attn_out are added.",
        "逐元素相加：x 与 attn_out 中相同位置、相同特征的数相加。"),
    "moments": ("2 · Mean and variance of each position", "2 · 每个位置的均值与方差"),
    "moments_title": ("μ and σ² of each position of resid_1", "resid_1 每个位置的 μ 与 σ²"),
    "moments_text": (
        "One μ and one σ² per row (per patch), over its d_model = {d} features. The variance is "
        "the population variance: divide by d, not d − 1. Rows differ in scale; normalising "
        "brings them all to the same one.",
        "每一行（每个图像块）在其 d_model = {d} 个特征上求一个 μ 和一个 σ²。方差是总体方差："
        "除以 d，而不是 d − 1。各行的尺度不同；归一化把它们拉到同一个尺度。"),
    "position": ("position i (patch)", "位置 i（图像块）"),
    "normalise": ("3 · Normalise", "3 · 归一化"),
    "normalise_text": (
        "Subtract the row's μ and divide by √(σ² + ε), ε = {eps:g} against division by zero. "
        "Every row now has mean 0 and variance σ²/(σ² + ε) ≈ 1: compare the colour scale with "
        "resid_1's.",
        "减去该行的 μ，再除以 √(σ² + ε)，ε = {eps:g} 防止除以零。现在每一行的均值为 0、方差为 "
        "σ²/(σ² + ε) ≈ 1：可与 resid_1 的色标比较。"),
    "scale_shift": ("4 · Scale and shift: γ and β", "4 · 缩放与平移：γ 与 β"),
    "gb_title": ("the layer norm's trainable vectors, layer {l}", "第 {l} 层层归一化的可训练向量"),
    "gb_random": (
        "With random (initial) weights γ = 1 and β = 0, the standard initialisation, so "
        "ln_1.out equals x̂ exactly. Training moves them, letting the layer undo the "
        "normalisation where that helps: it loses no expressive power.",
        "使用随机（初始）权重时 γ = 1、β = 0（标准初始化），所以 ln_1.out 与 x̂ 完全相同。训练会改变"
        "它们，让该层在有用时撤销归一化：表达能力不会因此损失。"),
    "gb_trained": (
        "These γ and β were trained (they start at γ = 1, β = 0); they rescale and shift each "
        "feature of x̂.",
        "这里的 γ 和 β 经过训练（初始为 γ = 1、β = 0）；它们对 x̂ 的每个特征做缩放和平移。"),
    "feature_k": ("feature k", "特征 k"),
    "by_hand": ("5 · One position by hand: patch i = {i}, layer {l}",
                "5 · 手算一个位置：图像块 i = {i}，第 {l} 层"),
    "pick_k": ("Feature k to follow through x̂ and the output", "要跟踪的特征 k（x̂ 与输出）"),
    "row_title": ("position {i}: one row before and after normalising",
                  "位置 {i}：归一化前后的一行"),
    "next_ffn": ("Next, ln_1.out goes into the feed-forward network, followed by a second "
                 "Add & Norm.",
                 "接下来，ln_1.out 进入前馈网络，随后还有第二个残差与层归一化。"),
    "next_layer": ("The feed-forward sub-layer is off (the note's day-01 layer): ln_1.out is "
                   "this layer's output and the next layer's x.",
                   "前馈子层已关闭（笔记第一天的结构）：ln_1.out 就是本层的输出，也是下一层的 x。"),
    # pre-norm (a ViT): Norm first, then the sub-layer, then Add
    "pre_intro": (
        "A Vision Transformer puts the norm **first** (pre-norm). Each sub-layer reads a "
        "normalised copy of x, LN_1(x); its output is then added back to x itself, which is "
        "never normalised on this path (the residual connection). So the order in every layer "
        "is: LayerNorm → attention → add, then LayerNorm → FFN → add. The normalisation is the "
        "same as the note's: each row (a token, of length d_model) on its own to mean 0 and "
        "variance 1, then scaled and shifted by the trainable γ and β, here with ε = {eps:g}. "
        "After the last layer one final LayerNorm normalises the output.",
        "Vision Transformer 把归一化放在**前面**（pre-norm）。每个子层读取 x 的一个归一化副本 "
        "LN_1(x)；子层的输出再加回 x 本身，而 x 在这条路径上从不被归一化（残差连接）。所以每一层"
        "的顺序是：层归一化 → 注意力 → 相加，然后 层归一化 → 前馈网络 → 相加。归一化本身与笔记"
        "相同：每一行（一个词元，长度为 d_model）单独归一化为均值 0、方差 1，再用可训练的 γ 和 β "
        "缩放和平移，这里 ε = {eps:g}。最后一层之后还有一个最终的层归一化。"),
    "pre_x_is_x0": ("x0 = tokens + pos (the [CLS] row first), the encoder's input (layer 1)",
                    "x0 = tokens + pos（第一行是 [CLS]），即编码器的输入（第 1 层）"),
    "pre_pos_hint": ("The chosen query patch i is row {row} of every matrix here (row 0 is "
                     "CLS): it is worked out by hand below and outlined in the pictures.",
                     "所选的查询图像块 i 是这里每个矩阵的第 {row} 行（第 0 行是 CLS）：下面手算"
                     "它，并在各图中标出。"),
    "pre_norm": ("1 · Norm first: LN_1(x), each row of the layer's input x",
                 "1 · 先归一化：LN_1(x)，对本层输入 x 的每一行"),
    "pre_moments_title": ("μ and σ² of each row of x (the input of LN_1)",
                          "x（LN_1 的输入）每一行的 μ 与 σ²"),
    "row_axis": ("row (0 = {first}, patch i = row i + {k})",
                 "行（0 = {first}，图像块 i = 第 i + {k} 行）"),
    "pre_normed_text": (
        "x̂ = (x − μ) / √(σ² + ε) row by row, then ln_1.out = γ_1 ⊙ x̂ + β_1. This normalised "
        "copy is what attention reads: Q, K and V are computed from ln_1.out.",
        "逐行计算 x̂ = (x − μ) / √(σ² + ε)，再 ln_1.out = γ_1 ⊙ x̂ + β_1。注意力读取的就是这个归一化"
        "副本：Q、K、V 由 ln_1.out 算出。"),
    "gb_model": ("γ_1 and β_1 come from the checkpoint: training moved them away from γ = 1, "
                 "β = 0 where that helped.",
                 "γ_1 与 β_1 来自检查点：训练在有用的地方把它们从 γ = 1、β = 0 移开。"),
    "pre_sublayer": ("2 · The sub-layer works on the normalised copy",
                     "2 · 子层作用在归一化副本上"),
    "pre_sublayer_text": (
        "attn_out = MultiHead(ln_1.out): the attention of pages 5–7, computed from ln_1.out "
        "(not from x).",
        "attn_out = MultiHead(ln_1.out)：即第 5–7 页的注意力，由 ln_1.out（而不是 x）算出。"),
    "pre_add": ("3 · Add: the residual adds the un-normalised x",
                "3 · 相加：残差加的是未归一化的 x"),
    "pre_add_text": (
        "resid_1 = x + {ls}attn_out, element by element: x itself, not ln_1.out. resid_1 goes on "
        "(to LN_2 and the FFN, whose output is added to resid_1 in the same way) without being "
        "normalised.",
        "resid_1 = x + {ls}attn_out，逐元素相加：加的是 x 本身，而不是 ln_1.out。resid_1 继续往下"
        "传（进入 LN_2 和前馈网络，其输出同样加到 resid_1 上），不被归一化。"),
    "pre_add_entry": ("One entry: resid_1[{row}, {k}] = x[{row}, {k}] + {ls}attn_out[{row}, {k}]",
                      "一个元素：resid_1[{row}, {k}] = x[{row}, {k}] + {ls}attn_out[{row}, {k}]"),
    "pre_by_hand": ("4 · LN_1 of one row by hand: patch i = {i} (row {row}), layer {l}",
                    "4 · 手算 LN_1 的一行：图像块 i = {i}（第 {row} 行），第 {l} 层"),
    "pre_row_title": ("row {row} of x: before and after normalising",
                      "x 的第 {row} 行：归一化前后"),
    "final_title": ("5 · After the last layer: the final LayerNorm",
                    "5 · 最后一层之后：最终的层归一化"),
    "final_text": (
        "The stack ends with one more LayerNorm, with its own γ and β (norm_gamma, norm_beta): "
        "output = LN(out of layer {L}). Only here is the residual stream itself normalised. "
        "Row 0 of the output, the [CLS] row, is what a classification head reads.",
        "堆叠的最后还有一个层归一化，带有它自己的 γ 和 β（norm_gamma、norm_beta）："
        "output = LN(第 {L} 层的输出)。只有在这里，残差流本身才被归一化。输出的第 0 行，即 [CLS] "
        "行，是分类头读取的内容。"),
    "final_text_no_cls": (
        "The stack ends with one more LayerNorm, with its own γ and β (norm_gamma, norm_beta): "
        "output = LN(out of layer {L}). Only here is the residual stream itself normalised.",
        "堆叠的最后还有一个层归一化，带有它自己的 γ 和 β（norm_gamma、norm_beta）："
        "output = LN(第 {L} 层的输出)。只有在这里，残差流本身才被归一化。"),
    "final_moments": ("μ and σ² of each row of layer {L}'s output",
                      "第 {L} 层输出每一行的 μ 与 σ²"),
    "final_by_hand": ("The final LayerNorm of row {row} (patch {i}), by hand",
                      "手算最终层归一化的第 {row} 行（图像块 {i}）"),
    "no_final": ("This model has no final LayerNorm: the last layer's output is the encoder's "
                 "output.",
                 "该模型没有最终的层归一化：最后一层的输出就是编码器的输出。"),
}


ctx = page("addnorm", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d = cfg.n_tokens, cfg.d_model


def ln_1_by_hand(x_row, x_name: str, row: int, k: int, title: str, layer: int) -> None:
    """LN_1 of layer `layer` on one row [d], written out (mean, variance, x̂, γ, β against the
    trace, entry k highlighted), and the row before and after normalising as bars."""
    lt, lp = tr.layers[layer], tr.params.layers[layer]
    terms = layer_norm_terms(x_row, lp.gamma_1, lp.beta_1, cfg.ln_eps)
    blocks_rows.layer_norm_row(ctx, terms, lp.gamma_1, lp.beta_1, cfg.ln_eps, k, lt.ln_1, row,
                               f"layers[{layer}].ln_1")
    widgets.picture(ctx, "bars", [terms.x, terms.normed],
                    [f"{x_name}[{row}]  [{d}]", f"ln_1.normed[{row}] = x̂  [{d}]"],
                    ctx.t("feature_k"), ["x", "x̂"], title,
                    highlight=k, key="row")


def pre_norm() -> None:
    """Pre-norm (a ViT): LN_1 of x, the sub-layer on the normalised copy, x + attn_out; the
    final LayerNorm."""
    S_, k0 = cfg.seq_len, cfg.n_prefix
    names = prefix_names(cfg)
    ls = r"\mathrm{ls}_1 \odot " if cfg.layer_scale else ""
    st.write(ctx.t("pre_intro", eps=cfg.ln_eps))
    st.latex(r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
             r" + \beta")
    st.latex(r"\text{ln\_1} = \mathrm{LN}_1(x),\qquad \text{resid\_1} = x + %s"
             r"\mathrm{MultiHead}(\text{ln\_1.out})" % ls)
    widgets.note_original(ctx)
    top_left, top_right = st.columns([2, 3], gap="large")
    with top_left:
        layer = widgets.layer_selector(ctx)
        query = widgets.query_picker(ctx)
    row = ctx.row(query)
    lt, lp = tr.layers[layer], tr.params.layers[layer]
    x = tr.x0 if layer == 0 else tr.layers[layer - 1].out  # the layer's input, not normalised
    x_name = "x0" if layer == 0 else f"out (layer {layer})"
    with top_right:
        what = ctx.t("pre_x_is_x0") if layer == 0 else ctx.t("x_is_prev", l=layer, l1=layer + 1)
        st.markdown(ctx.t("x_is", what=what))
        st.latex(r"\underbrace{\text{ln\_1.out}}_{%d \times %d} = \gamma_1 \odot"
                 r" \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta_1,\quad"
                 r" \underbrace{x}_{%d \times %d}" % (S_, d, S_, d))
        st.latex(r"\underbrace{\text{resid\_1}}_{%d \times %d} = \underbrace{x}_{%d \times %d}"
                 r" + %s\underbrace{\text{attn\_out}}_{%d \times %d}"
                 % (S_, d, S_, d, ls, S_, d))
        st.caption(ctx.t("pre_pos_hint", row=row))

    # --- 1 · Norm first -----------------------------------------------------------------------
    st.subheader(ctx.t("pre_norm"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, x, x_name, key="x", where=left, highlight_row=row, tokens="rows")
    row_axis = ctx.t("row_axis", first=names[0], k=k0) if k0 else ctx.t("position")
    widgets.picture(ctx, "bars", [lt.ln_1.mean, lt.ln_1.var],
                    [f"ln_1.mean = μ  [{S_}]", f"ln_1.var = σ²  [{S_}]"], row_axis,
                    ["μ", "σ²"], ctx.t("pre_moments_title"), highlight=row, key="moments",
                    where=right)
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.ln_1.out, "ln_1.out", key="ln_1_out", where=left,
                   highlight_row=row, tokens="rows")
    with right:
        st.write(ctx.t("pre_normed_text"))
        widgets.picture(ctx, "bars", [lp.gamma_1, lp.beta_1], [f"gamma_1 = γ  [{d}]",
                        f"beta_1 = β  [{d}]"], ctx.t("feature_k"), ["γ", "β"],
                        ctx.t("gb_title", l=layer + 1), key="gamma_beta")
        st.caption(ctx.t("gb_model") if ctx.model is not None else ctx.t("gb_random"))

    # --- 2 · the sub-layer on the normalised copy -------------------------------------------
    st.subheader(ctx.t("pre_sublayer"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.attn_out, "attn_out = MultiHead(ln_1.out)", key="attn_out",
                   where=left, highlight_row=row, tokens="rows", window=False)
    right.write(ctx.t("pre_sublayer_text"))

    # --- 3 · Add: x, not its normalised copy ------------------------------------------------
    st.subheader(ctx.t("pre_add"))
    ls_text = "ls_1 ⊙ " if cfg.layer_scale else ""
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, lt.resid_1, "resid_1", key="resid_1", where=left, highlight_row=row,
                   tokens="rows")
    k = int(right.number_input(ctx.t("pick_k"), 0, d - 1, 0, step=1, key="ln_feature"))
    with right:
        st.write(ctx.t("pre_add_text", ls=ls_text))
        st.markdown(f"**{ctx.t('pre_add_entry', row=row, k=k, ls=ls_text)}**")
        ls_k = float(lp.ls_1[k]) if cfg.layer_scale else None
        mine = residual_entry(x[row, k], lt.attn_out[row, k], ls_k)
        st.latex(r"%s %s%s = %s" % (num(float(x[row, k])), "+ " if ls_k is None else
                                    rf"+ {term(ls_k)} \cdot ",
                                    term(float(lt.attn_out[row, k])), num(mine)))
        blocks.stored_check(ctx, mine, lt.resid_1[row, k], f"layers[{layer}].resid_1[{row}, {k}]")

    # --- 4 · one row of LN_1 by hand ----------------------------------------------------------
    st.subheader(ctx.t("pre_by_hand", i=query, row=row, l=layer + 1))
    ln_1_by_hand(x[row], "x", row, k, ctx.t("pre_row_title", row=row), layer)

    # --- 5 · the final LayerNorm --------------------------------------------------------------
    st.subheader(ctx.t("final_title"))
    if tr.final_ln is None:
        st.write(ctx.t("no_final"))
        return
    L = cfg.n_layers
    st.write(ctx.t("final_text" if cfg.cls_token else "final_text_no_cls", L=L))
    st.latex(r"\underbrace{\text{output}}_{%d \times %d} = \gamma \odot"
             r" \frac{\text{out}_{%d} - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta"
             % (S_, d, L))
    last = tr.layers[-1].out
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, tr.output, "output = final_ln.out", key="final_out", where=left,
                   highlight_row=row, tokens="rows")
    widgets.picture(ctx, "bars", [tr.final_ln.mean, tr.final_ln.var],
                    [f"final_ln.mean = μ  [{S_}]", f"final_ln.var = σ²  [{S_}]"], row_axis,
                    ["μ", "σ²"], ctx.t("final_moments", L=L), highlight=row,
                    key="final_moments", where=right)
    st.markdown(f"**{ctx.t('final_by_hand', row=row, i=query)}**")
    final = layer_norm_terms(last[row], tr.params.norm_gamma, tr.params.norm_beta, cfg.ln_eps)
    blocks_rows.layer_norm_row(ctx, final, tr.params.norm_gamma, tr.params.norm_beta,
                               cfg.ln_eps, k, tr.final_ln, row, "final_ln")


if cfg.norm_first:  # a ViT: Norm first, Add after
    pre_norm()
    chrome.footer(ctx)
    st.stop()
st.write(ctx.t("intro"))
st.latex(r"\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
         r" + \beta")
st.latex(r"\text{ln\_1.out} = \mathrm{LayerNorm}(x + \text{attn\_out})")
widgets.note_original(ctx)

top_left, top_right = st.columns([2, 3], gap="large")
with top_left:
    layer = widgets.layer_selector(ctx)
    query = widgets.query_picker(ctx)
lt, lp = tr.layers[layer], tr.params.layers[layer]
x = tr.x0 if layer == 0 else tr.layers[layer - 1].out
x_name = "x0" if layer == 0 else f"out (layer {layer})"
with top_right:
    what = ctx.t("x_is_x0") if layer == 0 else ctx.t("x_is_prev", l=layer, l1=layer + 1)
    st.markdown(ctx.t("x_is", what=what))
    st.latex(r"\underbrace{\text{resid\_1}}_{%d \times %d} = \underbrace{x}_{%d \times %d}"
             r" + \underbrace{\text{attn\_out}}_{%d \times %d}" % (N, d, N, d, N, d))
    st.latex(r"\mu_i = \frac{1}{d}\sum_{k} x_{ik}, \qquad \sigma_i^2 = \frac{1}{d}\sum_{k}"
             r"(x_{ik} - \mu_i)^2")
    st.latex(r"\hat{x}_{ik} = \frac{x_{ik} - \mu_i}{\sqrt{\sigma_i^2 + \varepsilon}}, \qquad"
             r"\text{out}_{ik} = \gamma_k\,\hat{x}_{ik} + \beta_k")
    st.latex(r"\underbrace{\text{ln\_1.out}}_{%d \times %d} = \gamma \odot \hat{x} + \beta,"
             r"\quad \gamma, \beta \in \mathbb{R}^{%d}" % (N, d, d))
    st.caption(ctx.t("pos_hint"))

# --- 1 · Add --------------------------------------------------------------------------------
st.subheader(ctx.t("add"))
c1, c2 = st.columns(2)
widgets.matrix(ctx, x, x_name, key="x", where=c1, window=False)
widgets.matrix(ctx, lt.attn_out, "attn_out", key="attn_out", where=c2, window=False)
left, right = st.columns([3, 2], gap="large")
widgets.matrix(ctx, lt.resid_1, "resid_1", key="resid_1", where=left, highlight_row=query)
with right:
    st.latex(r"\text{resid\_1}_{ik} = x_{ik} + \text{attn\_out}_{ik}")
    st.caption(ctx.t("add_caption"))

# --- 2 · mean and variance ------------------------------------------------------------------
st.subheader(ctx.t("moments"))
left, right = st.columns([3, 2], gap="large")
with left:
    widgets.picture(ctx, "bars", [lt.ln_1.mean, lt.ln_1.var],
                    [f"ln_1.mean = μ  [{N}]", f"ln_1.var = σ²  [{N}]"], ctx.t("position"),
                    ["μ", "σ²"], ctx.t("moments_title"), highlight=query, key="moments")
with right:
    st.write(ctx.t("moments_text", d=d))
st.latex(r"\mu_i = \frac{x_{i,0} + x_{i,1} + \cdots + x_{i,%d}}{%d}" % (d - 1, d))
st.latex(r"\sigma_i^2 = \frac{(x_{i,0} - \mu_i)^2 + \cdots + (x_{i,%d} - \mu_i)^2}{%d}"
         % (d - 1, d))

# --- 3 · normalise --------------------------------------------------------------------------
st.subheader(ctx.t("normalise"))
left, right = st.columns([3, 2], gap="large")
widgets.matrix(ctx, lt.ln_1.normed, "ln_1.normed", key="normed", where=left,
               highlight_row=query)
with right:
    st.latex(r"\hat{x}_{ik} = \frac{x_{ik} - \mu_i}{\sqrt{\sigma_i^2 + \varepsilon}}")
    st.write(ctx.t("normalise_text", eps=cfg.ln_eps))

# --- 4 · scale and shift --------------------------------------------------------------------
st.subheader(ctx.t("scale_shift"))
left, right = st.columns(2, gap="large")
widgets.picture(ctx, "bars", [lp.gamma_1, lp.beta_1], [f"gamma_1 = γ  [{d}]",
                f"beta_1 = β  [{d}]"], ctx.t("feature_k"), ["γ", "β"],
                ctx.t("gb_title", l=layer + 1), key="gamma_beta", where=left)
with right:
    st.latex(r"\text{out}_{ik} = \gamma_k\,\hat{x}_{ik} + \beta_k")
    st.write(ctx.t("gb_trained") if ctx.weights == "trained" else ctx.t("gb_random"))
left, right = st.columns([3, 2], gap="large")
widgets.matrix(ctx, lt.ln_1.out, "ln_1.out", key="ln_1_out", where=left, highlight_row=query)
with right:
    st.latex(r"\underbrace{\text{ln\_1.out}}_{%d \times %d}" % (N, d))
    st.write(ctx.t("next_ffn") if cfg.use_ffn else ctx.t("next_layer"))

# --- 5 · one position by hand ---------------------------------------------------------------
st.subheader(ctx.t("by_hand", i=query, l=layer + 1))
left, _ = st.columns([1, 1])
k = int(left.number_input(ctx.t("pick_k"), 0, d - 1, 0, step=1, key="ln_feature"))
ln_1_by_hand(lt.resid_1[query], "resid_1", query, k, ctx.t("row_title", i=query), layer)

chrome.footer(ctx)
