"""Step 1 of 10 — the whole pipeline at the current settings."""

import streamlit as st

from encoder_core.analysis import parameter_count, pipeline_steps, score_divisor_text
from lens import chrome, widgets
from lens.context import page
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
    "per_layer": ("per layer", "每层"),
    "total": ("Total trainable parameters: {n:,} ({L} layers).",
              "可训练参数总数：{n:,}（{L} 层）。"),
    "images": ("The image", "图像"),
    "original": ("your image", "原始图像"),
    "tex_image": ("image", "图像"),
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
}


ctx = page("overview", TEXT)
cfg = ctx.cfg
N, D, d, L = cfg.n_tokens, cfg.patch_dim, cfg.d_model, cfg.n_layers
st.markdown(ctx.t("what_to_do"))
sublayers = ctx.ft("stage_layer_ffn") if cfg.use_ffn else ctx.ft("stage_layer")
widgets.picture(ctx, "pipeline", ctx.trace.image, cfg.patch_size,
                [ctx.ft("cap_image", S=cfg.image_size, C=cfg.channels),
                 ctx.ft("cap_patches", N=N, D=D), ctx.ft("cap_encoder", L=L)],
                [f"x0 = patches · W_E + PE   [{N} × {d}]",
                 f"{sublayers}  × {L}   (h = {cfg.n_heads})", f"output   [{N} × {d}]"],
                key="pipeline")
st.write(ctx.t("intro"))
widgets.note_original(ctx)

st.subheader(ctx.t("pipeline"))
rows = [{ctx.t("col_step"): ctx.t(f"step_{s.id}"), ctx.t("col_formula"): s.formula,
         ctx.t("col_shape"): s.shape,
         ctx.t("col_params"): (f"{s.n_params:,}" + (f" ({ctx.t('per_layer')})"
                                                    if s.per_layer and s.n_params else ""))}
        for s in pipeline_steps(cfg)]
st.dataframe(rows, hide_index=True, width="stretch", height=35 * (len(rows) + 1) + 3)
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
    st.latex(r"x_0 = \text{patches}\cdot W_E + PE")
    st.latex(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{MultiHead}(x))")
    if cfg.use_ffn:
        st.latex(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{FFN}(x))")
    st.latex(r"\text{output}\;[%d \times %d]" % (cfg.n_tokens, cfg.d_model))

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
    st.button(ctx.t("use_note") if cfg.use_ffn else ctx.t("use_paper"), key="dev_ffn_btn",
              on_click=set_settings, kwargs={"use_ffn": not cfg.use_ffn})
st.markdown(ctx.t("dev_wq"))
st.markdown(ctx.t("dev_cls"))

chrome.footer(ctx)
