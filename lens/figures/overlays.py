"""Attention maps over the image: each map nearest-upsampled to the image and alpha-blended on
it, many maps in one figure with one shared colour scale (`attention_grid`, `attention_table`).

Each `<kind>_figure` draws and returns the Figure (tests inspect it); `<kind>` is its PNG."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .style import OVERLAY_CMAP, QUERY_COLOUR, fit_fontsize, grid_margins, to_png


def overlay_rgb(grey: np.ndarray, weights: np.ndarray, vmax: float,
                alpha: float = 0.6) -> np.ndarray:
    """A map over the patch grid, nearest-upsampled to the image and blended on it with an
    opacity that follows the weight: where attention is low the photo stays visible, where it
    is high the colour covers it (up to `alpha`).

    Args:
        grey: [S, S] in [0, 1]; weights: [G, G] ≥ 0; vmax: the top of the shared colour scale.
    Returns:
        [S, S, 3] RGB in [0, 1] (one image per panel: half the drawing of two layers).
    """
    P = grey.shape[0] // weights.shape[0]
    level = np.clip(np.kron(weights, np.ones((P, P))) / vmax, 0, 1)  # nearest upsampling
    colour = matplotlib.colormaps[OVERLAY_CMAP](level)[..., :3]
    opacity = (alpha * (0.15 + 0.85 * level))[..., None]  # [S, S, 1]
    return (1 - opacity) * grey[..., None] + opacity * colour


def mark_uniform(cb, uniform: float | None) -> None:
    """Mark the uniform weight 1/N on a colourbar (when it lies within the scale): above it a
    patch gets more than an even share of attention, below it less."""
    lo, hi = cb.mappable.norm.vmin, cb.mappable.norm.vmax
    if uniform is None or not lo <= uniform <= hi:
        return
    cb.ax.axhline(uniform, color=QUERY_COLOUR, lw=2.0)
    cb.ax.text(-0.15, uniform, "1/N", transform=cb.ax.get_yaxis_transform(), ha="right",
               va="center", fontsize=7, color="#333333")


def overlay_mappable(vmax: float) -> ScalarMappable:
    """The colour scale of `overlay_rgb` panels, for their shared colourbar."""
    norm = Normalize(0, vmax)
    return ScalarMappable(norm=norm, cmap=OVERLAY_CMAP)


def attention_grid_figure(image: np.ndarray, maps: np.ndarray, titles: Sequence[str],
                          title: str, *, ncols: int = 4, query: int | None = None,
                          alpha: float = 0.6, row_labels: Sequence[str] | None = None,
                          colorbar_label: str = "attention weight",
                          vmax: float | None = None, uniform: float | None = None) -> Figure:
    """Attention maps over the image, one figure with one shared colour scale.

    Args:
        image: [S, S, C] in [0, 1]
        maps: [k, G, G] weights per patch (e.g. one query's row of each head, reshaped)
        titles: k subplot titles; query: the query patch to outline (row-major index)
        row_labels: when given, ncols is the row length and each row gets this label
        vmax: top of the colour scale (default: the largest weight), to share it across figures
        uniform: the even weight 1/N, marked on the colour bar
    """
    k, G, _ = maps.shape
    S = image.shape[0]
    P = S // G
    ncols = min(ncols, k)
    nrows = int(np.ceil(k / ncols))
    vmax = vmax or (float(maps.max()) if maps.size and maps.max() > 0 else 1.0)
    grey = image.mean(axis=-1) if image.shape[-1] > 1 else image[..., 0]
    fig = Figure(figsize=(2.3 * ncols + 1.2, 2.3 * nrows + 0.6))
    fig.suptitle(title, fontsize=fit_fontsize(title, fig.get_size_inches()[0] - 0.3, 11))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    cax = grid_margins(fig)
    for i, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if i >= k:
            ax.set_axis_off()
            continue
        ax.imshow(overlay_rgb(grey, maps[i], vmax, alpha), interpolation="nearest")
        ax.set_title(titles[i], fontsize=8)
        if row_labels is not None and i % ncols == 0:
            ax.set_ylabel(row_labels[i // ncols], fontsize=8)
        if query is not None:
            r, c = divmod(query, G)
            ax.add_patch(Rectangle((c * P - 0.5, r * P - 0.5), P, P,
                                   fill=False, ec=QUERY_COLOUR, lw=1.5))
    if k:
        cb = fig.colorbar(overlay_mappable(vmax), cax=cax, label=colorbar_label)
        mark_uniform(cb, uniform)
    return fig


def attention_grid(image: np.ndarray, maps: np.ndarray, titles: Sequence[str], title: str,
                   *, ncols: int = 4, query: int | None = None, alpha: float = 0.6,
                   row_labels: Sequence[str] | None = None,
                   colorbar_label: str = "attention weight", vmax: float | None = None,
                   uniform: float | None = None) -> bytes:
    """PNG bytes of `attention_grid_figure`."""
    return to_png(attention_grid_figure(image, maps, titles, title, ncols=ncols, query=query,
                                        alpha=alpha, row_labels=row_labels,
                                        colorbar_label=colorbar_label, vmax=vmax,
                                        uniform=uniform))


def attention_table_figure(image: np.ndarray, maps: np.ndarray, title: str, *,
                           row_labels: Sequence[str], col_labels: Sequence[str],
                           query: int | None = None, alpha: float = 0.6, panel: float = 1.25,
                           colorbar_label: str = "attention weight",
                           vmax: float | None = None, uniform: float | None = None) -> Figure:
    """A rows × columns table of attention maps over the image (e.g. layer × head), one figure,
    one shared colour scale, labels only on the outer edge so the text stays large.

    Args:
        image: [S, S, C] in [0, 1]
        maps: [rows, cols, G, G] weights per patch (e.g. one query's attn row, reshaped)
        row_labels: rows labels (left edge); col_labels: cols labels (top edge)
        query: the query patch to outline (row-major index); panel: side of one map in inches
        vmax: top of the colour scale (default: the largest weight)
        uniform: the even weight 1/N, marked on the colour bar
    """
    nrows, ncols, G, _ = maps.shape
    S = image.shape[0]
    P = S // G
    vmax = vmax or (float(maps.max()) if maps.size and maps.max() > 0 else 1.0)
    grey = image.mean(axis=-1) if image.shape[-1] > 1 else image[..., 0]
    fig = Figure(figsize=(panel * ncols + 1.6, panel * nrows + 0.9))
    fig.suptitle(title, fontsize=12)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    cax = grid_margins(fig, top=0.75)
    for (r, c), ax in np.ndenumerate(axes):
        ax.set_xticks([])
        ax.set_yticks([])
        ax.imshow(overlay_rgb(grey, maps[r, c], vmax, alpha), interpolation="nearest")
        if r == 0:
            ax.set_title(col_labels[c], fontsize=11)
        if c == 0:
            ax.set_ylabel(row_labels[r], fontsize=11)
        if query is not None:
            qr, qc = divmod(query, G)
            ax.add_patch(Rectangle((qc * P - 0.5, qr * P - 0.5), P, P,
                                   fill=False, ec=QUERY_COLOUR, lw=1.2))
    cb = fig.colorbar(overlay_mappable(vmax), cax=cax)
    cb.set_label(colorbar_label, fontsize=11)
    cb.ax.tick_params(labelsize=10)
    mark_uniform(cb, uniform)
    return fig


def attention_table(image: np.ndarray, maps: np.ndarray, title: str, *,
                    row_labels: Sequence[str], col_labels: Sequence[str],
                    query: int | None = None, alpha: float = 0.6, panel: float = 1.25,
                    colorbar_label: str = "attention weight", vmax: float | None = None,
                    uniform: float | None = None) -> bytes:
    """PNG bytes of `attention_table_figure`."""
    return to_png(attention_table_figure(image, maps, title, row_labels=row_labels,
                                         col_labels=col_labels, query=query, alpha=alpha,
                                         panel=panel, colorbar_label=colorbar_label, vmax=vmax,
                                         uniform=uniform))
