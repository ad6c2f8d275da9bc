"""A small table of colours with words: named rows and columns and a text in every cell
(`label_grid`) — the logit lens's classes × layers (a class's probability as the colour, its
rank written in), the logit's shares as layers × heads and the FFN (each share written in).

No layout engine, as `heatmaps.py`: `label_grid_picture` lays it out at fixed pixel margins
and returns it as data; `label_grid` is its PNG."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .heatmaps import BAR, GAP, TITLE_ROOM, _bar_room
from .lettering import PX, text_width, title_lines
from .picture import TICK, ColourBar, Panel, Picture, Rect, png
from .pixels import colourise, rgb255
from .style import MIN_PT, PROB_CMAP, SIGNED_CMAP, colour_limits

CELL_H = 30  # pixels of one row
MIN_CELL_W = 30  # pixels of one column at least
MIN_W, MIN_H = 320, 240  # the smallest picture: its title and colour bar need the room


def label_grid_picture(m: np.ndarray, cells: Sequence[Sequence[str]], title: str, xlabel: str,
                       ylabel: str, row_labels: Sequence[str], col_labels: Sequence[str], *,
                       signed: bool = False, colorbar_label: str = "",
                       vmin: float | None = None, vmax: float | None = None,
                       outline_col: int | None = None) -> Picture:
    """A matrix [rows, cols] as coloured cells, each with its text `cells[i][j]` (white on
    dark cells, black on light), rows named by `row_labels` on the left, columns by
    `col_labels` below, a colour bar labelled `colorbar_label` on the right. `vmin`/`vmax`
    fix the scale (signed: −vmax … vmax); `outline_col` frames one column (e.g. the FFN)."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    rows, cols = m.shape
    lo, hi = colour_limits(m, signed)
    if vmax is not None:
        lo, hi = (-vmax if signed else (vmin if vmin is not None else 0.0)), vmax
    cmap = SIGNED_CMAP if signed else PROB_CMAP
    widest_cell = max((text_width(s, MIN_PT) for row in cells for s in row), default=0)
    widest_col = max((text_width(s, MIN_PT) for s in col_labels), default=0)
    cell_w = max(MIN_CELL_W, math.ceil(max(widest_cell, widest_col)) + 8)
    # the x label on at most two lines under the cells (`xlabel_fit`: their width + 60 px)
    cell_w = max(cell_w, math.ceil((text_width(xlabel, MIN_PT) / 2 + 12 - 60) / cols))
    widest_row = max((text_width(s, MIN_PT) for s in row_labels), default=0)
    left = round(TICK + 8 + widest_row + MIN_PT * PX * 1.2 + 10)
    height = CELL_H * rows
    right = _bar_room(lo, hi, max(height, 120), colorbar_label)
    W = max(MIN_W, left + cell_w * cols + right)
    t_lines = title_lines(title, 11, W - 20)
    top = TITLE_ROOM + (t_lines - 1) * round(11 * PX * 1.2)
    bottom = 80  # the column labels and a two-line x label
    H = max(MIN_H, top + height + bottom)
    height = H - top - bottom  # a short grid is stretched to the picture's least height
    box = (left, top, cell_w * cols, height)
    level = (m - lo) / (hi - lo + 1e-12)
    dark = np.abs(level - 0.5) > 0.3 if signed else level < 0.5  # both ends dark when signed
    texts = tuple((j, i, cells[i][j], (255, 255, 255) if dark[i, j] else (0, 0, 0))
                  for i in range(rows) for j in range(cols) if cells[i][j])
    rects = () if outline_col is None else (
        Rect(outline_col - 0.5, -0.5, 1, rows, rgb255("#222222"), width=2),)
    panel = Panel(box, colourise(m, cmap, lo, hi), (cols, rows), title=title,
                  title_lines=t_lines, xlabel=xlabel, ylabel=ylabel, label_lines=2,
                  xticks=tuple((j, s) for j, s in enumerate(col_labels)),
                  yticks=tuple((i, s) for i, s in enumerate(row_labels)), texts=texts,
                  rects=rects)
    bar = ColourBar((left + box[2] + GAP, top, BAR, height), cmap, lo, hi, label=colorbar_label)
    return Picture((W, H), (panel,), bar)


def label_grid(m: np.ndarray, cells: Sequence[Sequence[str]], title: str, xlabel: str,
               ylabel: str, row_labels: Sequence[str], col_labels: Sequence[str], *,
               signed: bool = False, colorbar_label: str = "",
               vmin: float | None = None, vmax: float | None = None,
               outline_col: int | None = None) -> bytes:
    """PNG bytes of `label_grid_picture`."""
    return png(label_grid_picture(m, cells, title, xlabel, ylabel, row_labels, col_labels,
                                  signed=signed, colorbar_label=colorbar_label, vmin=vmin,
                                  vmax=vmax, outline_col=outline_col), "label_grid")
