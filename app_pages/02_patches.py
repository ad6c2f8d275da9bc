"""Step 2 of 10 — cut the image into P × P patches, numbered row-major."""

import streamlit as st

from encoder_core import patchify
from encoder_core.analysis import channel_values
from encoder_core.vit_steps import pixel_stats_guess, pixel_terms
from lens import chrome, widgets
from lens.context import page

TEXT = {
    "intro": (
        "The {S} × {S} image is cut into ({S}/{P})² = {N} patches of {P} × {P} pixels. They are "
        "numbered row-major — left to right, then top to bottom — and that number is the "
        "position pos used by the positional encoding. Each patch is flattened, pixel rows one "
        "after another with the channels last, into a row of {D} = {P}·{P}·{C} values.",
        "{S} × {S} 的图像被切成 ({S}/{P})² = {N} 个 {P} × {P} 像素的图像块。"
        "按行优先编号——从左到右，再从上到下——这个编号就是位置编码中的位置 pos。"
        "每个图像块被展平（逐行、通道在最后）成一行"
        " {D} = {P}·{P}·{C} 个数值。"),
    "grid": ("The image with its patch grid", "带网格的图像"),
    "gallery": ("The first {n} patches", "前 {n} 个图像块"),
    "tex_image": ("image", "图像"),
    "tex_pixels": ("pixels", "像素"),
    "grid_title": ("{G} × {G} = {N} patches", "{G} × {G} = {N} 个图像块"),
    "gallery_title": ("patches 0 … {n}", "图像块 0 … {n}"),
    "patch_name": ("patch {i}", "图像块 {i}"),
    "matrix": ("patches", "图像块矩阵"),
    "pick": ("Patch to inspect", "要查看的图像块"),
    "one_patch": ("patch {i} (grid row {r}, column {c}): its {P} × {P} values",
                  "图像块 {i}（第 {r} 行，第 {c} 列）：{P} × {P} 个数值"),
    "channel": ("channel", "通道"),
    "pixel_col": ("pixel column", "像素列"), "pixel_row": ("pixel row", "像素行"),
    "pixels": ("pixel value p₁p₂c", "像素值 p₁p₂c"),
    "pixel_value": ("pixel value", "像素值"),
    # a checkpoint trained on normalised pixels
    "norm_title": ("0 · The pixels, normalised as the model expects",
                   "0 · 像素：按模型要求的方式归一化"),
    "norm_text": (
        "Before the image is cut, each channel is normalised with the statistics this checkpoint "
        "expects: pixels = (image − mean) / std. A pixel equal to the mean becomes 0; "
        "the patches below hold these normalised values, not the [0, 1] values of the picture "
        "(in [{lo:.3g}, {hi:.3g}] here).",
        "切分之前，每个通道先用该检查点所要求的统计量归一化：像素 = (图像 − 均值) / 标准差。"
        "等于均值的像素变为 0；下面的图像块保存的是这些归一化后的值，而不是图片中 [0, 1] 的值"
        "（此处在 [{lo:.3g}, {hi:.3g}] 之间）。"),
    "norm_pixel": ("The first pixel of patch {i} (image row {r}, column {c}), channel by channel",
                   "图像块 {i} 的第一个像素（图像第 {r} 行，第 {c} 列），逐通道计算"),
    "px_channel": ("channel", "通道"),
    "px_image": ("image x", "图像 x"),
    "px_written": ("(x − mean) / std, float64", "(x − 均值) / 标准差，float64"),
    "px_trace": ("trace.pixels (float32)", "trace.pixels（float32）"),
    "gallery_note": ("The tiles show the image; the rows of the matrix below hold the normalised "
                     "pixels.",
                     "小图显示的是原图；下面矩阵的各行保存的是归一化后的像素。"),
    "norm_value": ("normalised pixel value", "归一化后的像素值"),
    "stats_guess": ("The checkpoint does not say which mean and std it was trained with: these "
                    "are the rule for its family ({why}).",
                    "检查点没有写明训练时用的均值和标准差：这里用的是该模型家族的惯例（{why}）。"),
}

ctx = page("patches", TEXT)
cfg, tr = ctx.cfg, ctx.trace
P, C, N, G = cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.grid_size
st.write(ctx.t("intro", S=cfg.image_size, P=P, N=N, D=cfg.patch_dim, C=C))
st.latex(r"\underbrace{[%d \times %d \times %d]}_{\text{%s}}\;\xrightarrow{(h\,p_1)(w\,p_2)\,c"
         r"\;\to\;(h\,w)(p_1\,p_2\,c)}\;\underbrace{[%d \times %d]}_{\text{patches}}"
         % (cfg.image_size, cfg.image_size, C, ctx.t("tex_image"), N, cfg.patch_dim))
widgets.note_original(ctx)
norm = cfg.normalises_pixels  # a checkpoint's (image − mean) / std; the note has none
normalisation = st.container() if norm else None  # filled once the patch is picked below

left, right = st.columns(2)
with left:
    st.subheader(ctx.t("grid"))
    pick = st.number_input(ctx.t("pick"), 0, N - 1, 0, step=1, key="patch_pick")
    widgets.picture(ctx, "image_with_grid", tr.image, P, ctx.ft("grid_title", G=G, N=N),
                    numbers=G <= 16, highlight=pick, key="grid",
                    axis_labels=(ctx.ft("pixels_x"), ctx.ft("pixels_y")))

if normalisation is not None:
    with normalisation:
        st.subheader(ctx.t("norm_title"))
        st.write(ctx.t("norm_text", lo=float(tr.pixels.min()), hi=float(tr.pixels.max())))
        why = pixel_stats_guess(ctx.model.info if ctx.model else None)
        if why:
            st.caption(ctx.t("stats_guess", why=why))
        st.latex(r"\text{%s}_c = \frac{\text{%s}_c - \text{pixel\_mean}_c}"
                 r"{\text{pixel\_std}_c},\quad \text{pixel\_mean} = %s,\quad "
                 r"\text{pixel\_std} = %s"
                 % (ctx.t("tex_pixels"), ctx.t("tex_image"), channel_values(cfg.pixel_mean),
                    channel_values(cfg.pixel_std)))
        r0, c0 = (pick // G) * P, (pick % G) * P  # the patch's top-left pixel
        px = pixel_terms(tr.image[r0, c0], cfg.pixel_mean, cfg.pixel_std)
        st.markdown(f"**{ctx.t('norm_pixel', i=pick, r=r0, c=c0)}**")
        st.dataframe([{ctx.t("px_channel"): "RGB"[ch] if C == 3 else str(ch),
                       ctx.t("px_image"): f"{px.x[ch]:.6f}", "mean": f"{px.mean[ch]:g}",
                       "std": f"{px.std[ch]:g}", ctx.t("px_written"): f"{px.value[ch]:+.6f}",
                       ctx.t("px_trace"): f"{float(tr.pixels[r0, c0, ch]):+.6f}"}
                      for ch in range(C)], hide_index=True)


with right:
    n_show = min(N, 64)
    st.subheader(ctx.t("gallery", n=n_show))
    tiles = patchify(tr.image, P) if norm else tr.patches  # the picture's [0, 1] values
    widgets.picture(ctx, "patch_gallery", tiles, P, C, ctx.ft("gallery_title", n=n_show - 1),
                    max_patches=n_show, key="gallery")
    if norm:
        st.caption(ctx.t("gallery_note"))

st.subheader(ctx.t("matrix"))
value_label = ctx.ft("norm_value") if norm else ctx.ft("pixel_value")
widgets.matrix(ctx, tr.patches, "patches", key="patches", signed=norm,
               xlabel=ctx.t("pixels"), highlight_row=pick, colorbar_label=value_label)

r, c = divmod(pick, G)
st.subheader(ctx.t("one_patch", i=pick, r=r, c=c, P=P))
one = tr.patches[pick].reshape(P, P, C)
cols = st.columns(C)
for ch in range(C):
    with cols[ch]:
        name = ctx.ft("patch_name", i=pick) + (f", {ctx.ft('channel')} {'RGB'[ch]}"
                                                if C == 3 else "")
        widgets.picture(ctx, "value_grid", one[..., ch], name, ctx.ft("pixel_col"),
                        ctx.ft("pixel_row"), signed=norm, key=f"patch_values_{ch}")

chrome.footer(ctx)
