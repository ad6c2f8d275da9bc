"""The whole pipeline in one picture, with the live shapes: image → patches → encoder → output.

`pipeline_figure` draws and returns the Figure (tests inspect it); `pipeline` is its PNG."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

from .images import _show_image
from .style import GRID_COLOUR, to_png, wrap_to

# 11 pt (15 px) in a picture 1100 px wide: 10 px or more from 720 px wide (a tablet's column)
TEXT_PT = 11.0
STAGE_COLOURS = ("#dbe8f5", "#c7dcef", "#f3d9c4", "#dcefd9")  # embed, PE, layers, output


def pipeline_figure(image: np.ndarray, patch_size: int, captions: Sequence[str],
                    stages: Sequence[str], *, shown_patches: int = 6,
                    tall: bool = False) -> Figure:
    """image [S, S, C] with its grid → the first patches as a sequence → the encoder's stages.

    Args:
        captions: 3 texts under the image, the patch sequence and the encoder.
        stages: the encoder's boxes, top to bottom (e.g. "x0 = patches·W_E + PE  [196 × 512]").
        tall: the three parts one under the other (a phone's column) instead of side by side.
    """
    S = image.shape[0]
    G = S // patch_size
    if tall:
        fig = Figure(figsize=(4.6, 10.0))
        fig.subplots_adjust(left=0.04, right=0.96, top=0.99, bottom=0.05, hspace=0.38)
        gs = fig.add_gridspec(3, 1, height_ratios=(1.0, 0.8, 0.8))
        ax_img, ax_seq, ax_enc = (fig.add_subplot(gs[i, 0]) for i in range(3))
        ax_img.set_aspect("equal", anchor="C")
    else:
        fig = Figure(figsize=(11.0, 3.0))
        fig.subplots_adjust(left=0.01, right=0.99, top=0.97, bottom=0.17, wspace=0.05)
        gs = fig.add_gridspec(1, 3, width_ratios=(1.0, 1.15, 2.0))
        ax_img, ax_seq, ax_enc = (fig.add_subplot(gs[0, i]) for i in range(3))
    _show_image(ax_img, image)
    for k in range(1, G):
        ax_img.axhline(k * patch_size - 0.5, color=GRID_COLOUR, lw=0.5)
        ax_img.axvline(k * patch_size - 0.5, color=GRID_COLOUR, lw=0.5)
    # the first patches, one under the other, as the rows of the sequence
    ax_seq.set_xlim(-1.2, 10)
    ax_seq.set_ylim(shown_patches + 1.2, -0.2)
    for n in range(min(shown_patches, G * G)):
        r, c = divmod(n, G)
        tile = image[r * patch_size:(r + 1) * patch_size, c * patch_size:(c + 1) * patch_size]
        extent = (0.2, 1.2, n + 0.9, n - 0.1)
        cmap = "gray" if tile.shape[-1] == 1 else None
        ax_seq.imshow(tile[..., 0] if tile.shape[-1] == 1 else tile, cmap=cmap, vmin=0, vmax=1,
                      extent=extent, aspect="auto", interpolation="nearest")
        strip = tile.reshape(1, -1, tile.shape[-1])  # the flattened patch: one row
        ax_seq.imshow(strip[..., 0] if tile.shape[-1] == 1 else np.clip(strip, 0, 1), cmap=cmap,
                      vmin=0, vmax=1, extent=(1.6, 9.8, n + 0.7, n + 0.1), aspect="auto",
                      interpolation="nearest")
        ax_seq.text(0.0, n + 0.4, str(n), ha="right", va="center", fontsize=TEXT_PT)
    ax_seq.text(5.0, shown_patches + 0.5, "⋮", ha="center", va="center", fontsize=14)
    ax_seq.set_aspect("auto")
    # the encoder: one box per stage
    ax_enc.set_xlim(0, 10)
    ax_enc.set_ylim(len(stages), 0)
    for k, text in enumerate(stages):
        colour = STAGE_COLOURS[min(k, len(STAGE_COLOURS) - 1)]
        ax_enc.add_patch(FancyBboxPatch((0.9, k + 0.12), 8.9, 0.76, facecolor=colour,
                                        edgecolor="#555555", lw=0.8,
                                        boxstyle="round,pad=0.02,rounding_size=0.15"))
        ax_enc.text(5.35, k + 0.5, wrap_to(text, 3.9 if tall else 4.4, TEXT_PT),
                    ha="center", va="center",
                    fontsize=TEXT_PT, linespacing=1.1)  # a long stage on two lines
    for ax, caption in zip((ax_img, ax_seq, ax_enc), captions, strict=True):
        ax.set_xticks([])
        ax.set_yticks([])
        for spine in ax.spines.values():
            spine.set_visible(ax is ax_img)
        ax.set_xlabel(caption, fontsize=TEXT_PT)
    for first, then in ((ax_img, ax_seq), (ax_seq, ax_enc)):
        a, b = first.get_position(), then.get_position()
        ends = (((0.5, a.y0 - 0.028), (0.5, b.y1 + 0.004)) if tall  # under its caption
                else ((a.x1 + 0.004, 0.56), (b.x0 + 0.012, 0.56)))
        fig.add_artist(FancyArrowPatch(*ends, transform=fig.transFigure, arrowstyle="-|>",
                                       mutation_scale=14, lw=1.4, color="#333333"))
    return fig


def pipeline(image: np.ndarray, patch_size: int, captions: Sequence[str],
             stages: Sequence[str], *, shown_patches: int = 6, tall: bool = False) -> bytes:
    """PNG bytes of `pipeline_figure`."""
    return to_png(pipeline_figure(image, patch_size, captions, stages,
                                  shown_patches=shown_patches, tall=tall), "pipeline")
