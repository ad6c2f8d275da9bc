"""Cut the image into P × P patches, numbered row-major."""

import numpy as np
import streamlit as st

from encoder_core import patchify
from encoder_core.views.analysis import channel_values
from encoder_core.views.vit_steps import pixel_stats_guess, pixel_terms
from lens import chrome, figures, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.walk import patches as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg, tr = ctx.cfg, ctx.trace
    P, C, N, G = cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.grid_size
    st.write(ctx.t("intro", S=cfg.image_size, P=P, N=N, D=cfg.patch_dim, C=C))
    for tex in walk.formulas(cfg, ctx.t("tex_image"), ctx.t("word_patches")):
        st.latex(tex)  # the handout's sheet shows the same
    widgets.note_original(ctx)
    norm = cfg.normalises_pixels  # a checkpoint's (image − mean) / std; the note has none
    normalisation = st.container() if norm else None  # filled once the patch is picked below

    left, right = st.columns(2)
    with left:
        st.subheader(ctx.t("grid"))
        pick = st.number_input(ctx.t("pick"), 0, N - 1, 0, step=1, key="patch_pick")
        widgets.picture(ctx, figures.image_with_grid, tr.image, P, ctx.t("grid_title", G=G, N=N),
                        numbers=G <= 16, highlight=pick, key="grid",
                        axis_labels=(ctx.t("pixels_x"), ctx.t("pixels_y")))

    if normalisation is not None:
        with normalisation:
            st.subheader(ctx.t("norm_title"))
            st.write(ctx.t("norm_text", lo=float(tr.pixels.min()), hi=float(tr.pixels.max())))
            why = pixel_stats_guess(ctx.model.info if ctx.model else None)
            if why:
                st.caption(ctx.t("stats_guess", why=why))
            # page-only: the page's words (中文 too, which mathtext cannot draw)
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
        widgets.picture(ctx, figures.patch_gallery, tiles, P, C,
                        ctx.t("gallery_title", n=n_show - 1), max_patches=n_show, key="gallery")
        if norm:
            st.caption(ctx.t("gallery_note"))

    st.subheader(ctx.t("matrix"))
    value_label = ctx.t("norm_value") if norm else ctx.t("pixel_value")
    widgets.matrix(ctx, tr.patches, ctx.t("word_patches"), key="patches", signed=norm,
                   xlabel=ctx.t("pixels"), highlight_row=pick, colorbar_label=value_label)

    r, c = divmod(pick, G)
    st.subheader(ctx.t("one_patch", i=pick, r=r, c=c, P=P))
    one = tr.patches[pick].reshape(P, P, C)
    # one channel at a time at the page's width: three grids of 16 × 16 numbers side by side
    # would be unreadable on a tablet
    cols = (st.tabs([f"{ctx.t('channel')} {'RGB'[ch]}" for ch in range(C)]) if C == 3
            else [st.container()])
    for ch in range(C):
        with cols[ch]:
            name = ctx.t("patch_name", i=pick) + (f", {ctx.t('channel')} {'RGB'[ch]}"
                                                    if C == 3 else "")
            value_grids(ctx, one[..., ch], name, signed=norm, key=f"patch_values_{ch}")

    chrome.footer(ctx)


def value_grids(ctx: PageContext, m: np.ndarray, name: str, *, signed: bool, key: str) -> None:
    """A patch's P × P values with their numbers: one grid on a laptop or a tablet; on a
    phone two grids of half the columns each, one above the other, so that the numbers keep
    their size (P = 16: sixteen columns of numbers would be drawn at half size)."""
    st.html(widgets.SWAP_CSS)
    cols = m.shape[1]
    half = (cols + 1) // 2
    labels = (ctx.t("pixel_col"), ctx.t("pixel_row"))
    widgets.picture(ctx, figures.value_grid, m, name, *labels, signed=signed, key=key,
                    where=st.container(key=f"wide_{key}"))
    tall = st.container(key=f"tall_{key}")
    parts = ((0, half), (half, cols)) if cols > 8 else ((0, cols),)
    limits = figures.colour_limits(m, signed)  # one colour scale for both halves
    for k, (c0, c1) in enumerate(parts):
        widgets.picture(ctx, figures.value_grid, m[:, c0:c1], name, *labels, signed=signed,
                        col0=c0, limits=limits, key=f"{key}_tall{k}", shows=key, where=tall)


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
