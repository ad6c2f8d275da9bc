"""Matrices as heatmaps: any matrix with its name and shape (`heatmap`), a matrix with a few
named rows (`row_heatmap`), and a small matrix with its numbers written in (`value_grid`).

No layout engine: each `<kind>_picture` lays the picture out at fixed pixel margins and returns
it as data (tests inspect it); `<kind>` is its PNG (`picture.png`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .lettering import PX, label_lines, text_width, title_lines
from .picture import (
    TICK,
    ColourBar,
    Panel,
    Picture,
    Rect,
    index_ticks,
    png,
    tick_labels,
    value_ticks,
    xlabel_fit,
    ylabel_fit,
)
from .pixels import colourise, rgb255
from .style import (
    DPI,
    MAX_SIDE,
    MIN_PT,
    PROB_CMAP,
    SIGNED_CMAP,
    WINDOW_COLOUR,
    block_average,
    colour_limits,
)

BAR, GAP = 14, 12  # colour bar width and its gap to the matrix, pixels
TITLE_ROOM, XAXIS_ROOM = 35, 60  # above the matrix (title) and below it (ticks, label), pixels


def matrix_title(name: str, m: np.ndarray) -> str:
    """A matrix's title: its name and shape, "scores  [196 × 196]"."""
    return f"{name}  [{' × '.join(str(s) for s in np.shape(m))}]"


def _pixels(size: tuple[float, float]) -> tuple[int, int]:
    return round(size[0] * DPI), round(size[1] * DPI)


def _bar_room(vmin: float, vmax: float, height: int, label: str) -> int:
    """Pixels right of the matrix for the colour bar, its tick labels and its label."""
    widest = max((text_width(t, MIN_PT) for t in tick_labels(value_ticks(vmin, vmax, height))),
                 default=0)
    return GAP + BAR + TICK + 3 + round(widest) + (round(MIN_PT * PX * 1.4) if label else 0) + 8


def _averaged(mean_of: str, k: int) -> str:
    """What an axis label adds when its axis is block-averaged k to 1: "  (mean of 2)", worded
    by `mean_of` in the page's language (nothing without a wording)."""
    return f"  ({mean_of.format(k=k)})" if k > 1 and mean_of else ""


def _axis_label(label: str, averaged: str, fit: float) -> str:
    """An axis label and its block-average note: on one line when they fit `fit` px, else the
    note on a line of its own."""
    one = label + averaged
    if not averaged or text_width(one, MIN_PT) <= fit:
        return one
    return f"{label}\n{averaged.strip()}"


def _index_ticks(n: int, length: int, spacing: float) -> tuple[tuple[float, str], ...]:
    return tuple((t, str(t)) for t in index_ticks(n, length, spacing=spacing))


def _token_ticks(n: int, length: int, spacing: float, prefix: Sequence[str]
                 ) -> tuple[tuple[float, str], ...]:
    """Ticks of a token axis: the prefix rows by name ("CLS"), then the patches numbered from
    0 (row len(prefix) + i is patch i), leaving out patch ticks too close to the names."""
    k = len(prefix)
    if not k:
        return _index_ticks(n, length, spacing)
    named = tuple((float(i), name) for i, name in enumerate(prefix))
    room = n / 12  # rows kept clear below the names
    patches = index_ticks(n - k, round(length * (n - k) / n), spacing=spacing)
    return named + tuple((t + k, str(t)) for t in patches if t >= room or n - k < 12)


def heatmap_picture(m: np.ndarray, title: str, xlabel: str, ylabel: str, *,
                    signed: bool = True, colorbar_label: str = "",
                    size: tuple[float, float] = (5.0, 4.0), highlight_row: int | None = None,
                    highlight_col: int | None = None, vmax: float | None = None,
                    window: tuple[int, int, int, int] | None = None,
                    mean_of: str = "", prefix: Sequence[str] = (),
                    prefix_cols: bool = False) -> Picture:
    """One matrix as a heatmap with title, axis labels and colourbar. m: [rows, cols] (1-D ok).
    prefix names the rows before the patches (a ViT's "CLS", …): they are ticked by name and
    outlined, the patches numbered from 0; prefix_cols does the same for the columns.
    vmax, when given, fixes the colour scale (0 … vmax, or −vmax … vmax when signed) so that
    several heatmaps can share it; window (row, col, rows, cols) is outlined dashed (where the
    number window sits); mean_of words a block-averaged axis in the page's language ("mean of
    {k}"; none by default)."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    rows, cols = m.shape
    shown, (kr, kc) = block_average(m)  # [≤ 256, ≤ 256]
    if vmax is None:
        vmin, vmax = colour_limits(shown, signed)
    else:
        vmin = -vmax if signed else 0.0
    cmap = SIGNED_CMAP if signed else PROB_CMAP
    W, H = _pixels(size)
    t_lines = title_lines(title, 11, W - 20)  # a long title on two lines
    top = TITLE_ROOM + (t_lines - 1) * round(11 * PX * 1.2)
    height = H - top - XAXIS_ROOM
    rects = ()
    # block averages mix CLS with patches: name the prefix only along an axis kept whole
    k_rows = len(prefix) if kr == 1 else 0
    k_cols = len(prefix) if prefix_cols and kc == 1 else 0
    if k_rows:
        rects += (Rect(-0.5, -0.5, cols, k_rows, rgb255("#222222"), width=1),)
    if k_cols:
        rects += (Rect(-0.5, -0.5, k_cols, rows, rgb255("#222222"), width=1),)
    if window is not None:
        r0, c0, wr, wc = window
        rects += (Rect(c0 - 0.5, r0 - 0.5, min(wc, cols - c0), min(wr, rows - r0),
                       rgb255(WINDOW_COLOUR), width=2, dashed=True),)
    # the margins as wide as their texts: the row ticks and label left, the colour bar right
    # (an axis label too long for its side takes two lines: "feature j" / "(mean of 2)")
    step = round(MIN_PT * PX * 1.2)
    ylabel = _axis_label(ylabel, _averaged(mean_of, kr), ylabel_fit(height, H))
    y_lines = label_lines(ylabel, MIN_PT, ylabel_fit(height, H))
    yticks = _token_ticks(rows, height, 2.0, prefix[:k_rows])
    widest = max((text_width(label, MIN_PT) for _, label in yticks), default=0)
    left = round(TICK + 8 + widest + MIN_PT * PX * 1.2 + 10) + (y_lines - 1) * step
    right = _bar_room(vmin, vmax, height, colorbar_label)
    xlabel = _axis_label(xlabel, _averaged(mean_of, kc), xlabel_fit(W - left - right, W))
    x_lines = label_lines(xlabel, MIN_PT, xlabel_fit(W - left - right, W))
    height -= (x_lines - 1) * step
    box = (left, top, W - left - right, height)
    panel = Panel(box, colourise(shown, cmap, vmin, vmax), (cols, rows), title=title,
                  title_lines=t_lines,
                  xlabel=xlabel, ylabel=ylabel, label_lines=max(x_lines, y_lines),
                  xticks=_token_ticks(cols, box[2], 3.0, prefix[:k_cols]), yticks=yticks,
                  hlines=() if highlight_row is None else (highlight_row - 0.5,
                                                           highlight_row + 0.5),
                  vlines=() if highlight_col is None else (highlight_col - 0.5,
                                                           highlight_col + 0.5),
                  rects=rects)
    bar = ColourBar((left + box[2] + GAP, top, BAR, height), cmap, vmin, vmax,
                    label=colorbar_label)
    return Picture((W, H), (panel,), bar)


def heatmap(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = True,
            colorbar_label: str = "", size: tuple[float, float] = (5.0, 4.0),
            highlight_row: int | None = None, highlight_col: int | None = None,
            vmax: float | None = None, window: tuple[int, int, int, int] | None = None,
            mean_of: str = "", prefix: Sequence[str] = (),
            prefix_cols: bool = False) -> bytes:
    """PNG bytes of `heatmap_picture`."""
    return png(heatmap_picture(m, title, xlabel, ylabel, signed=signed,
                               colorbar_label=colorbar_label, size=size,
                               highlight_row=highlight_row, highlight_col=highlight_col,
                               vmax=vmax, window=window, mean_of=mean_of, prefix=prefix,
                               prefix_cols=prefix_cols), "heatmap")


def row_heatmap_picture(m: np.ndarray, title: str, xlabel: str, ylabel: str,
                        row_labels: Sequence[str], *, signed: bool = True,
                        colorbar_label: str = "", highlight_col: int | None = None,
                        size: tuple[float, float] = (5.0, 3.4),
                        mean_of: str = "") -> Picture:
    """A matrix with a few named rows (e.g. one row per head) as a heatmap: integer row ticks
    with labels, columns block-averaged over 256, title, axis labels and a colourbar.

    Args:
        m: [rows, cols]; row_labels: rows labels (at most 16 are written, evenly spaced)
    """
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    rows, cols = m.shape
    shown, (_, kc) = block_average(m, max_side=max(MAX_SIDE, rows))  # rows are never averaged
    vmin, vmax = colour_limits(shown, signed)
    cmap = SIGNED_CMAP if signed else PROB_CMAP
    W, H = _pixels(size)
    step = max(1, -(-rows // 16))
    yticks = tuple((r, row_labels[r]) for r in range(0, rows, step))
    widest = max((text_width(label, MIN_PT) for _, label in yticks), default=0)
    left = round(TICK + 8 + widest + MIN_PT * PX * 1.2 + 8)
    height = H - TITLE_ROOM - XAXIS_ROOM
    right = _bar_room(vmin, vmax, height, colorbar_label)
    box = (left, TITLE_ROOM, W - left - right, height)
    panel = Panel(box, colourise(shown, cmap, vmin, vmax), (cols, rows),
                  title=f"{title}  [{rows} × {cols}]",
                  xlabel=xlabel + _averaged(mean_of, kc),
                  ylabel=ylabel, xticks=_index_ticks(cols, box[2], 3.0), yticks=yticks,
                  vlines=() if highlight_col is None else (highlight_col - 0.5,
                                                           highlight_col + 0.5))
    bar = ColourBar((box[0] + box[2] + GAP, TITLE_ROOM, BAR, height), cmap, vmin, vmax,
                    label=colorbar_label)
    return Picture((W, H), (panel,), bar)


def row_heatmap(m: np.ndarray, title: str, xlabel: str, ylabel: str, row_labels: Sequence[str],
                *, signed: bool = True, colorbar_label: str = "",
                highlight_col: int | None = None, size: tuple[float, float] = (5.0, 3.4),
                mean_of: str = "") -> bytes:
    """PNG bytes of `row_heatmap_picture`."""
    return png(row_heatmap_picture(m, title, xlabel, ylabel, row_labels, signed=signed,
                                   colorbar_label=colorbar_label, highlight_col=highlight_col,
                                   size=size, mean_of=mean_of), "row_heatmap")


def value_grid_picture(m: np.ndarray, title: str, xlabel: str, ylabel: str, *,
                       signed: bool = False, fmt: str = "{:.2f}", row0: int = 0,
                       col0: int = 0, limits: tuple[float, float] | None = None) -> Picture:
    """A small matrix (≤ 32 × 32) as a heatmap with tick labels starting at row0/col0 and, up
    to 256 values, each value written in its cell (white on dark cells, black on light).
    `limits`: the colour scale's (vmin, vmax) when it is shared with other parts of a larger
    matrix (default: this matrix's own)."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    rows, cols = m.shape
    vmin, vmax = limits if limits is not None else colour_limits(m, signed)
    cmap = SIGNED_CMAP if signed else PROB_CMAP
    values = [fmt.format(v) for v in m.ravel()] if m.size <= 256 else []
    # cells as wide as their numbers at MIN_PT (and 28 px at least): the text is never shrunk
    cell_w = max(28, math.ceil(max((text_width(v, MIN_PT) for v in values), default=0)) + 8)
    step_r, step_c = max(1, rows // 8), max(1, cols // 8)
    yticks = tuple((r, str(row0 + r)) for r in range(0, rows, step_r))
    xticks = tuple((c, str(col0 + c)) for c in range(0, cols, step_c))
    widest = max(text_width(label, MIN_PT) for _, label in yticks)
    left = round(TICK + 8 + widest + MIN_PT * PX * 1.2 + 8)
    H = max(250, TITLE_ROOM + 28 * rows + 50)
    height = H - TITLE_ROOM - 50
    right = _bar_room(vmin, vmax, height, "")
    W = max(300, left + cell_w * cols + right)
    box = (left, TITLE_ROOM, W - left - right, height)
    texts = ()
    if values:
        level = (m - vmin) / (vmax - vmin + 1e-12)
        texts = tuple((j, i, values[i * cols + j],
                       (255, 255, 255) if level[i, j] < 0.5 else (0, 0, 0))
                      for i in range(rows) for j in range(cols))
    panel = Panel(box, colourise(m, cmap, vmin, vmax), (cols, rows), title=title,
                  xlabel=xlabel, ylabel=ylabel, xticks=xticks, yticks=yticks, texts=texts)
    bar = ColourBar((box[0] + box[2] + GAP, TITLE_ROOM, BAR, height), cmap, vmin, vmax)
    return Picture((W, H), (panel,), bar)


def value_grid(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = False,
               fmt: str = "{:.2f}", row0: int = 0, col0: int = 0,
               limits: tuple[float, float] | None = None) -> bytes:
    """PNG bytes of `value_grid_picture`."""
    return png(value_grid_picture(m, title, xlabel, ylabel, signed=signed, fmt=fmt, row0=row0,
                                  col0=col0, limits=limits), "value_grid")
