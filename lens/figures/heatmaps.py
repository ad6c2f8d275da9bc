"""Matrices as heatmaps: any matrix with its name and shape (`heatmap`), a matrix with a few
named rows (`row_heatmap`), and a small matrix with its numbers written in (`value_grid`).

Each `<kind>_figure` draws and returns the Figure (tests inspect it); `<kind>` is its PNG."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .style import (
    MAX_SIDE,
    PROB_CMAP,
    SIGNED_CMAP,
    WINDOW_COLOUR,
    block_average,
    colour_limits,
    fit_fontsize,
    fixed_axes_with_colorbar,
    to_png,
)


def heatmap_figure(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = True,
                   colorbar_label: str = "", size: tuple[float, float] = (5.0, 4.0),
                   highlight_row: int | None = None,
                   highlight_col: int | None = None, vmax: float | None = None,
                   window: tuple[int, int, int, int] | None = None,
                   mean_of: str = "mean of {k}") -> Figure:
    """One matrix as a heatmap with title, axis labels and colourbar. m: [rows, cols] (1-D ok).
    vmax, when given, fixes the colour scale (0 … vmax, or −vmax … vmax when signed) so that
    several heatmaps can share it; window (row, col, rows, cols) is outlined dashed (where the
    number window sits); mean_of words a block-averaged axis ("mean of {k}")."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    shown, (kr, kc) = block_average(m)
    if vmax is None:
        vmin, vmax = colour_limits(shown, signed)
    else:
        vmin = -vmax if signed else 0.0
    fig = Figure(figsize=size)
    ax, cax = fixed_axes_with_colorbar(fig)
    im = ax.imshow(shown, cmap=SIGNED_CMAP if signed else PROB_CMAP, vmin=vmin, vmax=vmax,
                   aspect="auto", interpolation="nearest",
                   extent=(-0.5, m.shape[1] - 0.5, m.shape[0] - 0.5, -0.5))
    w, h = fig.get_size_inches()
    xlabel += f"  ({mean_of.format(k=kc)})" if kc > 1 else ""
    ylabel += f"  ({mean_of.format(k=kr)})" if kr > 1 else ""
    ax.set_title(title, fontsize=fit_fontsize(title, w - 0.2, 10))
    ax.set_xlabel(xlabel, fontsize=fit_fontsize(xlabel, w - 1.0, 9))
    ax.set_ylabel(ylabel, fontsize=fit_fontsize(ylabel, h - 0.8, 9))
    if highlight_row is not None:
        ax.axhline(highlight_row - 0.5, color="k", lw=0.8)
        ax.axhline(highlight_row + 0.5, color="k", lw=0.8)
    if highlight_col is not None:
        ax.axvline(highlight_col - 0.5, color="k", lw=0.8)
        ax.axvline(highlight_col + 0.5, color="k", lw=0.8)
    if window is not None:
        r0, c0, rows, cols = window
        ax.add_patch(Rectangle((c0 - 0.5, r0 - 0.5), min(cols, m.shape[1] - c0),
                               min(rows, m.shape[0] - r0), fill=False, ec=WINDOW_COLOUR,
                               lw=1.2, ls="--"))
    fig.colorbar(im, cax=cax, label=colorbar_label)
    return fig


def heatmap(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = True,
            colorbar_label: str = "", size: tuple[float, float] = (5.0, 4.0),
            highlight_row: int | None = None, highlight_col: int | None = None,
            vmax: float | None = None, window: tuple[int, int, int, int] | None = None,
            mean_of: str = "mean of {k}") -> bytes:
    """PNG bytes of `heatmap_figure`."""
    return to_png(heatmap_figure(m, title, xlabel, ylabel, signed=signed,
                                 colorbar_label=colorbar_label, size=size,
                                 highlight_row=highlight_row, highlight_col=highlight_col,
                                 vmax=vmax, window=window, mean_of=mean_of))


def row_heatmap_figure(m: np.ndarray, title: str, xlabel: str, ylabel: str,
                       row_labels: Sequence[str], *, signed: bool = True,
                       colorbar_label: str = "", highlight_col: int | None = None,
                       size: tuple[float, float] = (5.0, 3.4),
                       mean_of: str = "mean of {k}") -> Figure:
    """A matrix with a few named rows (e.g. one row per head) as a heatmap: integer row ticks
    with labels, columns block-averaged over 256, title, axis labels and a colourbar.

    Args:
        m: [rows, cols]; row_labels: rows labels (at most 16 are written, evenly spaced)
    """
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    rows, cols = m.shape
    shown, (_, kc) = block_average(m, max_side=max(MAX_SIDE, rows))  # rows are never averaged
    vmin, vmax = colour_limits(shown, signed)
    fig = Figure(figsize=size, layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(shown, cmap=SIGNED_CMAP if signed else PROB_CMAP, vmin=vmin, vmax=vmax,
                   aspect="auto", interpolation="nearest",
                   extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    step = max(1, -(-rows // 16))
    ticks = list(range(0, rows, step))
    ax.set_yticks(ticks, [row_labels[r] for r in ticks])
    ax.set_title(f"{title}  [{rows} × {cols}]")
    ax.set_xlabel(xlabel + (f"  ({mean_of.format(k=kc)})" if kc > 1 else ""))
    ax.set_ylabel(ylabel)
    if highlight_col is not None:
        ax.axvline(highlight_col - 0.5, color="k", lw=0.8)
        ax.axvline(highlight_col + 0.5, color="k", lw=0.8)
    fig.colorbar(im, ax=ax, label=colorbar_label, shrink=0.9)
    return fig


def row_heatmap(m: np.ndarray, title: str, xlabel: str, ylabel: str, row_labels: Sequence[str],
                *, signed: bool = True, colorbar_label: str = "",
                highlight_col: int | None = None, size: tuple[float, float] = (5.0, 3.4),
                mean_of: str = "mean of {k}") -> bytes:
    """PNG bytes of `row_heatmap_figure`."""
    return to_png(row_heatmap_figure(m, title, xlabel, ylabel, row_labels, signed=signed,
                                     colorbar_label=colorbar_label, highlight_col=highlight_col,
                                     size=size, mean_of=mean_of))


def value_grid_figure(m: np.ndarray, title: str, xlabel: str, ylabel: str, *,
                      signed: bool = False, fmt: str = "{:.2f}", row0: int = 0,
                      col0: int = 0) -> Figure:
    """A small matrix (≤ 32 × 32) as a heatmap with tick labels starting at row0/col0."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    vmin, vmax = colour_limits(m, signed)
    fig = Figure(figsize=(max(3.0, 0.28 * m.shape[1] + 1.5), max(2.5, 0.28 * m.shape[0] + 1)),
                 layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(m, cmap=SIGNED_CMAP if signed else PROB_CMAP, vmin=vmin, vmax=vmax,
                   interpolation="nearest", aspect="auto")
    step_r = max(1, m.shape[0] // 8)
    step_c = max(1, m.shape[1] // 8)
    rows, cols = range(0, m.shape[0], step_r), range(0, m.shape[1], step_c)
    ax.set_yticks(rows, [str(row0 + i) for i in rows])
    ax.set_xticks(cols, [str(col0 + i) for i in cols])
    if m.size <= 256:
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6,
                    color="white" if (v - vmin) / (vmax - vmin + 1e-12) < 0.5 else "black")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(im, ax=ax, shrink=0.9)
    return fig


def value_grid(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = False,
               fmt: str = "{:.2f}", row0: int = 0, col0: int = 0) -> bytes:
    """PNG bytes of `value_grid_figure`."""
    return to_png(value_grid_figure(m, title, xlabel, ylabel, signed=signed, fmt=fmt,
                                    row0=row0, col0=col0))
