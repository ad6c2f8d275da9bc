"""Step 1 of 10 — the whole pipeline at the current settings."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.analysis import (
    channel_values,
    parameter_count,
    pipeline_steps,
    score_divisor_text,
)
from encoder_core.vit_steps import pixel_stats_guess, vit_differences
from lens import chrome, widgets
from lens.context import page
from lens.i18n import formula_in
from lens.session import set_settings

TEXT = {
    "what_to_do": (
        "**Walk through the ten steps with *Next step →* (or the list on the left) and read "
        "every matrix with its real numbers; click a patch on any image to follow it.** "
        "The architecture (d_model, h, layers) is under *Advanced* in the sidebar.",
        "**用“下一步 →”（或左侧的列表）依次浏览十个步骤，查看每个矩阵的真实数值；点击任意图像上的"
        "图像块即可跟踪它。** 模型结构（d_model、h、层数）在侧边栏的“高级”中。"),
    "cap_image": ("the image  [{S} × {S} × {C}]", "图像  [{S} × {S} × {C}]"),
    "cap_patches": ("{N} patches, each a row of {D} numbers", "{N} 个图像块，每块一行 {D} 个数"),
    "cap_encoder": ("the encoder: {L} layers", "编码器：{L} 层"),
    "stage_layer": ("attention + Add & Norm", "注意力 + 残差与层归一化"),
    "stage_layer_ffn": ("attention + Add & Norm + FFN + Add & Norm",
                        "注意力 + 残差归一化 + 前馈 + 残差归一化"),
    "intro": (
        "A Transformer encoder reads an image as a sequence of patches. Each step below is a "
        "page; here is the whole pipeline with the real shapes at the current settings.",
        "Transformer 编码器把图像当作一串图像块来读取。下面的每一步都是一个页面；这里是当前设置下"
        "整个流程及其真实形状。"),
    "pipeline": ("The pipeline", "计算流程"),
    "col_step": ("step", "步骤"), "col_formula": ("formula", "公式"),
    "col_shape": ("shapes", "形状"), "col_params": ("parameters", "参数量"),
    "per_layer": (" (per layer)", "（每层）"),
    "total": ("Total trainable parameters: {n:,} ({L} layers).",
              "可训练参数总数：{n:,}（{L} 层）。"),
    "images": ("The image", "图像"),
    "original": ("your image", "原始图像"),
    "tex_image": ("image", "图像"),
    "tex_pixels": ("pixels", "像素"),
    "received": ("what the model receives", "模型收到的图像"),
    "images_caption": (
        "Centre-cropped to a square, resized to {S} × {S} with a bicubic filter, {colour}.",
        "居中裁剪为正方形，用双三次滤波缩放到 {S} × {S}，{colour}。"),
    "grey_luma": ("grey by the ITU-R 601 luma (as Pillow's \"L\")", "按 ITU-R 601 亮度转为灰度"),
    "rgb_kept": ("colour kept (3 channels)", "保留颜色（3 通道）"),
    "deviations": ("Where the app differs from the note", "本应用与笔记的不同之处"),
    "dev_scale": (
        "**Scaling.** The note divides the scores by √d_model; the 2017 paper by √d_k = "
        "√(d_model/h). The difference is a softmax temperature of √h. Now: divide by {now}.",
        "**缩放。** 笔记把分数除以 √d_model；2017 年的论文除以 √d_k = √(d_model/h)。两者相差一个"
        "√h 的 softmax 温度。当前：除以 {now}。"),
    "dev_ffn": (
        "**Feed-forward.** The note's day 01 stops after Add & Norm; the paper adds a "
        "position-wise feed-forward network and a second Add & Norm. Now: {now}.",
        "**前馈网络。** 笔记第一天在残差与层归一化之后结束；论文还有逐位置前馈网络和第二个残差与"
        "层归一化。当前：{now}。"),
    "dev_wq": (
        "**W_Q, W_K, W_V shapes.** The note writes (sequence length, d_model); a weight never "
        "depends on the sequence length: each is d_model × d_model (all heads side by side).",
        "**W_Q、W_K、W_V 的形状。** 笔记写作（序列长度, d_model）；权重的形状与序列长度无关："
        "每个都是 d_model × d_model（所有头并排）。"),
    "dev_cls": (
        "**No [CLS] token, no √d_model on the embedding.** The note has neither; ViT prepends a "
        "[CLS] token and the paper scales token embeddings by √d_model.",
        "**没有 [CLS] 词元，嵌入也不乘 √d_model。** 笔记两者都没有；ViT 会加 [CLS] 词元，论文会"
        "把词元嵌入乘以 √d_model。"),
    "on": ("on", "开启"), "off": ("off", "关闭"),
    # the core's steps by id (encoder_core.analysis.pipeline_steps, Step.id)
    "step_patches": ("patches", "图像块"), "step_embedding": ("input embedding", "输入嵌入"),
    "step_positional": ("positional encoding", "位置编码"),
    "step_qkv": ("Q, K, V", "Q、K、V"), "step_scores": ("scores", "注意力分数"),
    "step_softmax": ("softmax", "softmax"), "step_heads": ("heads", "各头输出"),
    "step_concat": ("concat · W_O", "拼接 · W_O"),
    "step_addnorm_1": ("Add & Norm 1", "残差与层归一化 1"),
    "step_ffn": ("feed-forward", "前馈网络"),
    "step_addnorm_2": ("Add & Norm 2", "残差与层归一化 2"),
    "step_output": ("encoder output", "编码器输出"),
    "use_note": ("Use the note's variant", "使用笔记的写法"),
    "use_paper": ("Use the paper's variant", "使用论文的写法"),
    # a Vision Transformer checkpoint: its steps in their real order
    "step_normalise": ("pixel normalisation", "像素归一化"),
    "step_prefix": ("[CLS] prepended", "前置 [CLS]"),
    "step_ln_1": ("LayerNorm 1 (before attention)", "层归一化 1（注意力之前）"),
    "step_add_1": ("residual add 1", "残差相加 1"),
    "step_ln_2": ("LayerNorm 2 (before the FFN)", "层归一化 2（前馈之前）"),
    "step_add_2": ("residual add 2", "残差相加 2"),
    "step_final_norm": ("final LayerNorm", "最后的层归一化"),
    "vit_intro": (
        "This is a real Vision Transformer ({name}). It runs the same steps as the note's "
        "encoder, in its own order: the pixels are normalised first, a learned [CLS] token is "
        "put before the {N} patches ({S} rows), every layer normalises *before* attention and "
        "before the FFN (pre-norm) and adds the result back to the un-normalised x, and a last "
        "LayerNorm follows the stack. The table lists the steps in the order the encoder runs "
        "them.",
        "这是一个真实的 Vision Transformer（{name}）。它执行与笔记中的编码器相同的步骤，但顺序"
        "是它自己的：先对像素做归一化，在 {N} 个图像块前放一个学到的 [CLS] 词元（共 {S} 行），"
        "每一层在注意力和前馈网络*之前*做层归一化（pre-norm），再把结果加回未归一化的 x，"
        "整个堆叠之后还有最后一个层归一化。表格按编码器实际执行的顺序列出各步骤。"),
    "stats_inferred": ("These values are not in the checkpoint: they are the rule for its "
                       "family ({why}).",
                       "这些值不在检查点里：它们是该模型家族的惯例（{why}）。"),
    "cap_vit_encoder": ("the encoder: {L} pre-norm layers", "编码器：{L} 个前归一化层"),
    "stage_pixels": ("pixels = (image − mean) / std", "像素 = (图像 − 均值) / 标准差"),
    "stage_output": ("output", "输出"),
    "stage_cls": ("CLS row", "CLS 行"),
    "vit_diffs": ("This Vision Transformer against the note's encoder",
                  "这个 Vision Transformer 与笔记中编码器的不同"),
    "diff_pixels": (
        "**Pixel normalisation.** The image in [0, 1] becomes (image − mean) / std per channel, "
        "mean = {mean}, std = {std}: the statistics this checkpoint expects.",
        "**像素归一化。** [0, 1] 之间的图像按通道变为 (图像 − 均值) / 标准差，均值 = {mean}，"
        "标准差 = {std}：即该检查点所要求的统计量。"),
    "diff_patch_bias": ("**A bias on the patch embedding**: X = patches · W_E + b_E (a P × P "
                        "convolution with stride P).",
                        "**图像块嵌入带偏置**：X = patches · W_E + b_E"
                        "（步长为 P 的 P × P 卷积）。"),
    "diff_cls": ("**A [CLS] token**: one learned row before the patches ({S} rows in all); "
                 "its output row stands for the whole image.",
                 "**[CLS] 词元**：图像块之前一个学到的行（共 {S} 行）；它的输出行代表整幅图像。"),
    "diff_dist": ("**A distillation token** after [CLS] (DeiT).",
                  "**蒸馏词元**，位于 [CLS] 之后（DeiT）。"),
    "diff_registers": ("**{R} register tokens** after the class token(s) (DINOv2), without "
                       "positions.",
                       "**{R} 个寄存器词元**，位于类别词元之后（DINOv2），不加位置。"),
    "diff_learned": ("**Learned positions**: pos_embed [{n} × {d}] was trained, not computed "
                     "from sines and cosines.",
                     "**学到的位置**：pos_embed [{n} × {d}] 是训练出来的，"
                     "不是用正弦和余弦算出来的。"),
    "diff_pre_norm": ("**Pre-norm**: x + attn(LN_1(x)), then x + FFN(LN_2(x)); the note "
                      "normalises after the add (post-norm).",
                      "**前归一化（pre-norm）**：x + attn(LN_1(x))，再 x + FFN(LN_2(x))；笔记是"
                      "相加之后再归一化（post-norm）。"),
    "diff_qkv_bias": ("**Biases on Q, K, V**: b_Q, b_K, b_V.",
                      "**Q、K、V 带偏置**：b_Q、b_K、b_V。"),
    "diff_proj_bias": ("**A bias on W_O**: b_O.", "**W_O 带偏置**：b_O。"),
    "diff_gelu": ("**GELU** in the FFN: x·Φ(x) (the exact erf form) instead of max(0, x).",
                  "前馈网络中用 **GELU**：x·Φ(x)（精确的 erf 形式），而不是 max(0, x)。"),
    "diff_gelu_tanh": ("**GELU (tanh form)** in the FFN: "
                       "½x(1 + tanh(√(2/π)(x + 0.044715x³))).",
                       "前馈网络中用 **GELU（tanh 近似）**："
                       "½x(1 + tanh(√(2/π)(x + 0.044715x³)))。"),
    "diff_layer_scale": ("**LayerScale**: each sub-layer's output is multiplied by a learned "
                         "ls ⊙ before it is added.",
                         "**LayerScale**：每个子层的输出在相加前乘以学到的 ls ⊙。"),
    "diff_final_norm": ("**A final LayerNorm** after the last layer (ε = {eps:g}).",
                        "最后一层之后还有一个**层归一化**（ε = {eps:g}）。"),
}


def vit_stages(ctx, cfg) -> list[str]:
    """The pipeline figure's boxes for a ViT, in the order it runs."""
    S_, d = cfg.seq_len, cfg.d_model
    prefix = ", ".join(prefix_names(cfg))
    embed = "patches · W_E" + (" + b_E" if cfg.patch_bias else "")
    pos = (" + pos_embed" if cfg.position == "learned" else " + PE") if cfg.use_pe else ""
    x0 = f"x0 = [{prefix}; {embed}]{pos}" if cfg.n_prefix else f"x0 = {embed}{pos}"
    ls = ("ls_1 ⊙ ", "ls_2 ⊙ ") if cfg.layer_scale else ("", "")
    layer = (f"x + {ls[0]}attn(LN₁(x))" + (f",  x + {ls[1]}FFN(LN₂(x))" if cfg.use_ffn else "")
             if cfg.norm_first else ctx.ft("stage_layer_ffn" if cfg.use_ffn else "stage_layer"))
    out = (f"LayerNorm(x) → {ctx.ft('stage_output')}" if cfg.final_norm
           else ctx.ft("stage_output"))
    cls = f";  {ctx.ft('stage_cls')} [1 × {d}]" if cfg.cls_token else ""
    stages = [ctx.ft("stage_pixels")] if cfg.normalises_pixels else []
    return stages + [f"{x0}   [{S_} × {d}]", f"{layer}   × {cfg.n_layers}   (h = {cfg.n_heads})",
                     f"{out} [{S_} × {d}]{cls}"]


def vit_formulas(cfg, image: str, pixels: str) -> list[str]:
    """The pipeline in LaTeX, in the order a ViT runs it (`image`, `pixels`: the words,
    translated)."""
    tex = []
    if cfg.normalises_pixels:
        tex.append(r"\text{%s} = (\text{%s} - \text{pixel\_mean}) \,/\, \text{pixel\_std}"
                   % (pixels, image))
    embed = r"\text{patches}\cdot W_E" + (" + b_E" if cfg.patch_bias else "")
    pos = ((r" + E_{pos}" if cfg.position == "learned" else " + PE") if cfg.use_pe else "")
    names = r",\ ".join(rf"x_{{\text{{{n}}}}}" for n in prefix_names(cfg))
    tex.append(rf"x_0 = [\,{names};\ {embed}\,]{pos}" if cfg.n_prefix else rf"x_0 = {embed}{pos}")
    ls = (r"\mathrm{ls}_1 \odot ", r"\mathrm{ls}_2 \odot ") if cfg.layer_scale else ("", "")
    tex.append(rf"x \leftarrow x + {ls[0]}\mathrm{{MultiHead}}(\mathrm{{LN}}_1(x))")
    if cfg.use_ffn:
        tex.append(rf"x \leftarrow x + {ls[1]}\mathrm{{FFN}}(\mathrm{{LN}}_2(x))")
    out = r"\text{output} = \mathrm{LN}(x)" if cfg.final_norm else r"\text{output} = x"
    tex.append(r"%s\;[%d \times %d]" % (out, cfg.seq_len, cfg.d_model))
    if cfg.cls_token:
        tex.append(r"\text{output}[\text{CLS}]\;[1 \times %d]" % cfg.d_model)
    return tex


ctx = page("overview", TEXT)
cfg = ctx.cfg
N, D, d, L = cfg.n_tokens, cfg.patch_dim, cfg.d_model, cfg.n_layers
vit = bool(vit_differences(cfg))  # a real ViT's steps (the note's encoder: none)
st.markdown(ctx.t("what_to_do"))
sublayers = ctx.ft("stage_layer_ffn") if cfg.use_ffn else ctx.ft("stage_layer")
if vit:
    widgets.picture(ctx, "pipeline", ctx.trace.image, cfg.patch_size,
                    [ctx.ft("cap_image", S=cfg.image_size, C=cfg.channels),
                     ctx.ft("cap_patches", N=N, D=D),
                     ctx.ft("cap_vit_encoder" if cfg.norm_first else "cap_encoder", L=L)],
                    vit_stages(ctx, cfg), key="pipeline")
    model = ctx.model
    st.write(ctx.t("vit_intro", name=model.name if model else "ViT", N=N, S=cfg.seq_len))
else:
    widgets.picture(ctx, "pipeline", ctx.trace.image, cfg.patch_size,
                    [ctx.ft("cap_image", S=cfg.image_size, C=cfg.channels),
                     ctx.ft("cap_patches", N=N, D=D), ctx.ft("cap_encoder", L=L)],
                    [f"x0 = patches · W_E + PE   [{N} × {d}]",
                     f"{sublayers}  × {L}   (h = {cfg.n_heads})", f"output   [{N} × {d}]"],
                    key="pipeline")
    st.write(ctx.t("intro"))
widgets.note_original(ctx)

st.subheader(ctx.t("pipeline"))
rows = [{ctx.t("col_step"): ctx.t(f"step_{s.id}"),
         ctx.t("col_formula"): formula_in(s.formula, ctx.lang),
         ctx.t("col_shape"): formula_in(s.shape, ctx.lang),
         ctx.t("col_params"): (f"{s.n_params:,}" + (ctx.t("per_layer")
                                                    if s.per_layer and s.n_params else ""))}
        for s in pipeline_steps(cfg)]
st.table(rows, hide_index=True)  # static, every cell wrapped in full (a grid cut long ones)
st.caption(ctx.t("total", n=parameter_count(cfg), L=cfg.n_layers))

st.subheader(ctx.t("images"))
left, right = st.columns([3, 2])
with left:
    widgets.picture(ctx, "image_pair", ctx.original, ctx.trace.image,
                    (ctx.ft("original"), ctx.ft("received")), key="images",
                    axis_labels=(ctx.ft("pixels_x"), ctx.ft("pixels_y")))
    colour = ctx.t("grey_luma") if cfg.channels == 1 else ctx.t("rgb_kept")
    st.caption(ctx.t("images_caption", S=cfg.image_size, colour=colour))
with right:
    st.latex(r"\text{%s}\;[%d \times %d \times %d] \rightarrow \text{patches}\;[%d \times %d]"
             % (ctx.t("tex_image"), cfg.image_size, cfg.image_size, cfg.channels, cfg.n_tokens,
                cfg.patch_dim))
    if vit:
        for tex in vit_formulas(cfg, ctx.t("tex_image"), ctx.t("tex_pixels")):
            st.latex(tex)
    else:
        st.latex(r"x_0 = \text{patches}\cdot W_E + PE")
        st.latex(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{MultiHead}(x))")
        if cfg.use_ffn:
            st.latex(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{FFN}(x))")
        st.latex(r"\text{output}\;[%d \times %d]" % (cfg.n_tokens, cfg.d_model))

if vit:
    st.subheader(ctx.t("vit_diffs"))
    values = dict(mean=channel_values(cfg.pixel_mean), std=channel_values(cfg.pixel_std),
                  S=cfg.seq_len, R=cfg.n_registers, n=cfg.n_pos, d=d, eps=cfg.ln_eps)
    lines = [ctx.t("diff_" + name, **values) for name in vit_differences(cfg)]
    why = pixel_stats_guess(ctx.model.info if ctx.model else None)
    if why and lines and vit_differences(cfg)[0] == "pixels":
        lines[0] += " " + ctx.t("stats_inferred", why=why)
    st.markdown("\n".join(f"- {line}" for line in lines))

st.subheader(ctx.t("deviations"))
divisor = score_divisor_text(cfg)
c1, c2 = st.columns(2)
with c1:
    st.markdown(ctx.t("dev_scale", now=divisor))
    note_scale = cfg.scale == "d_model"
    st.button(ctx.t("use_paper") if note_scale else ctx.t("use_note"), key="dev_scale_btn",
              on_click=set_settings, kwargs={"scale": "d_k" if note_scale else "d_model"})
with c2:
    st.markdown(ctx.t("dev_ffn", now=ctx.t("on") if cfg.use_ffn else ctx.t("off")))
    if not vit:  # a checkpoint fixes its architecture, FFN included
        st.button(ctx.t("use_note") if cfg.use_ffn else ctx.t("use_paper"), key="dev_ffn_btn",
                  on_click=set_settings, kwargs={"use_ffn": not cfg.use_ffn})
st.markdown(ctx.t("dev_wq"))
if not vit:
    st.markdown(ctx.t("dev_cls"))

chrome.footer(ctx)
