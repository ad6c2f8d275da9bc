"""Step 8 of 10 — Add & Norm: the residual sum, then layer normalisation of each position."""

import streamlit as st

from encoder_core.explain import layer_norm_terms
from lens import blocks_rows, chrome, widgets
from lens.context import page

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
}


ctx = page("addnorm", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d = cfg.n_tokens, cfg.d_model
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
terms = layer_norm_terms(lt.resid_1[query], lp.gamma_1, lp.beta_1, cfg.ln_eps)
left, _ = st.columns([1, 1])
k = int(left.number_input(ctx.t("pick_k"), 0, d - 1, 0, step=1, key="ln_feature"))
blocks_rows.layer_norm_row(ctx, terms, lp.gamma_1, lp.beta_1, cfg.ln_eps, k, lt.ln_1, query,
                           f"layers[{layer}].ln_1")
widgets.picture(ctx, "bars", [terms.x, terms.normed],
                [f"resid_1[{query}]  [{d}]", f"ln_1.normed[{query}] = x̂  [{d}]"],
                ctx.t("feature_k"), ["x", "x̂"], ctx.t("row_title", i=query),
                highlight=k, key="row")

chrome.footer(ctx)
