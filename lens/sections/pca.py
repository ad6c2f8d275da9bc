"""PCA of the patch features, on every page that shows it (The stack, ★ What a ViT
looks at): the chosen layer's patch rows, prefix tokens left out, through
`encoder_core.views.pca` — the first component on the patch grid, the foreground it gives
(projection > 0, the border's mean made negative) over the image, and the foreground's three
components as red, green and blue with their shares of variance. Computed once per trace and
layer (`ctx.derived`). Its texts are its own: `lens/texts/<lang>/pca.toml`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.pca import (
    MIN_FOREGROUND,
    N_COLOURS,
    border_patches,
    on_image,
    trace_pca,
)

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts

OWNER = "pca"  # lens/texts/<lang>/pca.toml



def layer_choice(ctx: PageContext) -> int | None:
    """The features the PCA reads (`widgets.section_layer`)."""
    return widgets.section_layer(ctx, OWNER, "pca")


def pca_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """The PCA of the patch features under a `heading` of the page's size: the text, the
    layer chooser, the first component, the foreground over the image and its colours."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    N, d, G, P, n = cfg.n_tokens, cfg.d_model, cfg.grid_size, cfg.patch_size, cfg.n_prefix
    heading(t("pca_title"))
    st.write(t("pca_text", N=N, d=d))
    st.latex(r"\tilde{X} = X - \bar{x} = U \Sigma V^{\top}, \quad p = \tilde{X} v_1 \;[%d],"
             r" \quad \tfrac{1}{|B|}\textstyle\sum_{i \in B} p_i < 0, \quad p_i > 0"
             r" \Rightarrow i \in F" % N)
    if n:
        st.caption(t("pca_prefix", prefix=", ".join(prefix_names(cfg)), n=n))
    layer = layer_choice(ctx)
    pca = ctx.derived(f"pca/{layer}", lambda: trace_pca(tr, layer))
    if layer is not None:
        where = t("pca_layer_n", l=layer + 1, L=cfg.n_layers)
    else:
        where = t("pca_output" if tr.final_ln is not None else "pca_output_last",
                    L=cfg.n_layers)
    fg = pca.n_foreground
    left, right = st.columns(2)
    widgets.picture(ctx, figures.heatmap, pca.first.reshape(G, G),
                    t("pca_first_title", where=where, share=100 * pca.first_share, G=G),
                    t("pca_col"), t("pca_row"), signed=True,
                    colorbar_label=t("pca_first_scale"), size=(4.8, 4.2),
                    key="pca_first", where=left)
    widgets.picture(ctx, figures.attention_table, tr.image,
                    pca.foreground.astype(np.float32).reshape(1, 1, G, G),
                    t("pca_mask_title", n=fg, N=N), row_labels=[""], col_labels=[""],
                    panel=3.0, vmax=1.0, colorbar_label=t("pca_mask_scale"),
                    key="pca_mask", where=right)
    st.caption(t("pca_first_caption", border=int(border_patches(G).sum()),
                   m=pca.border_mean))
    if pca.too_few:
        st.info(t("pca_too_few", n=fg, k=MIN_FOREGROUND))
    else:
        left, right = st.columns(2)
        shares = 100 * np.pad(pca.shares, (0, N_COLOURS - len(pca.shares)))  # [3] in %
        widgets.picture(ctx, figures.image_with_grid, on_image(pca.rgb, G, P), P,
                        t("pca_rgb_title", n=fg), numbers=False, size=4.2,
                        axis_labels=(t("pixels_x"), t("pixels_y")), key="pca_rgb",
                        where=left)
        right.markdown(t("pca_rgb_caption", r=shares[0], g=shares[1], b=shares[2],
                           n=fg, total=float(shares.sum())))
    if ctx.weights == "random":
        st.caption(t("pca_random"))
