"""Step 2 of 10 — cut the image into P × P patches, numbered row-major."""

import streamlit as st

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
}

ctx = page("patches", TEXT)
cfg, tr = ctx.cfg, ctx.trace
P, C, N, G = cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.grid_size
st.write(ctx.t("intro", S=cfg.image_size, P=P, N=N, D=cfg.patch_dim, C=C))
st.latex(r"\underbrace{[%d \times %d \times %d]}_{\text{%s}}\;\xrightarrow{(h\,p_1)(w\,p_2)\,c"
         r"\;\to\;(h\,w)(p_1\,p_2\,c)}\;\underbrace{[%d \times %d]}_{\text{patches}}"
         % (cfg.image_size, cfg.image_size, C, ctx.t("tex_image"), N, cfg.patch_dim))
widgets.note_original(ctx)

left, right = st.columns(2)
with left:
    st.subheader(ctx.t("grid"))
    pick = st.number_input(ctx.t("pick"), 0, N - 1, 0, step=1, key="patch_pick")
    widgets.picture(ctx, "image_with_grid", tr.image, P, ctx.ft("grid_title", G=G, N=N),
                    numbers=G <= 16, highlight=pick, key="grid",
                    axis_labels=(ctx.ft("pixels_x"), ctx.ft("pixels_y")))
with right:
    n_show = min(N, 64)
    st.subheader(ctx.t("gallery", n=n_show))
    widgets.picture(ctx, "patch_gallery", tr.patches, P, C, ctx.ft("gallery_title", n=n_show - 1),
                    max_patches=n_show, key="gallery")

st.subheader(ctx.t("matrix"))
widgets.matrix(ctx, tr.patches, "patches", key="patches", signed=False,
               xlabel=ctx.t("pixels"), highlight_row=pick, colorbar_label=ctx.ft("pixel_value"))

r, c = divmod(pick, G)
st.subheader(ctx.t("one_patch", i=pick, r=r, c=c, P=P))
one = tr.patches[pick].reshape(P, P, C)
cols = st.columns(C)
for ch in range(C):
    with cols[ch]:
        name = ctx.ft("patch_name", i=pick) + (f", {ctx.ft('channel')} {'RGB'[ch]}"
                                                if C == 3 else "")
        widgets.picture(ctx, "value_grid", one[..., ch], name, ctx.ft("pixel_col"),
                        ctx.ft("pixel_row"), signed=False, key=f"patch_values_{ch}")

chrome.footer(ctx)
