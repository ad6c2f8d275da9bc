"""Attention maps over the image: each map nearest-upsampled to the image and alpha-blended on
it, many maps in one picture with one shared colour scale (`attention_grid`, `attention_table`).

No layout engine: each `<kind>_picture` lays the panels out at fixed pixel positions and returns
the picture as data (tests inspect it); `<kind>` is its PNG (`picture.png`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .lettering import PX, text_width, wrap_px
from .picture import TICK, ColourBar, Panel, Picture, patch_outline, png, tick_labels, value_ticks
from .pixels import lut
from .style import DPI, MARK_COLOUR, MIN_PT, OVERLAY_CMAP, QUERY_COLOUR

BAR = 13  # colour bar width, pixels


def uniform_label(uniform: float) -> str:
    """The even weight's mark on a colour bar: "1/197" for 1/197 (the explorer writes it so)."""
    return f"1/{round(1 / uniform)}"


def overlay_rgb(grey: np.ndarray, weights: np.ndarray, vmax: float,
                alpha: float = 0.6, vmin: float = 0.0) -> np.ndarray:
    """A map over the patch grid, nearest-upsampled to the image and blended on it with an
    opacity that follows the weight: where attention is low the photo stays visible, where it
    is high the colour covers it (up to `alpha`).

    Args:
        grey: [S, S] in [0, 1]; weights: [G, G] ≥ vmin; vmax: the top of the shared colour
            scale, vmin its bottom (0 for weights; a cosine map's lowest value, or −1).
    Returns:
        [S, S, 3] RGB in [0, 1] (one image per panel: half the drawing of two layers).
    """
    G = weights.shape[0]
    P = grey.shape[0] // G
    w = np.asarray(weights, dtype=np.float32)
    level = np.clip(np.nan_to_num(w / np.float32(vmax) if vmin == 0  # the weights' own rounding
                                  else (w - np.float32(vmin)) / np.float32(vmax - vmin)),
                    0, 1)  # [G, G]
    colour = lut(OVERLAY_CMAP)[np.minimum((level * 256).astype(np.intp), 255)] / np.float32(255)
    opacity = (alpha * (0.15 + 0.85 * level))[:, None, :, None, None]  # [G, 1, G, 1, 1]
    patches = np.asarray(grey, dtype=np.float32).reshape(G, P, G, P, 1)  # (h p1)(w p2) -> h p1 w p2
    blended = (1 - opacity) * patches + opacity * colour[:, None, :, None, :]  # [G, P, G, P, 3]
    return blended.reshape(G * P, G * P, 3)  # each patch's colour and opacity, upsampled


def overlay_cells(grey: np.ndarray, weights: np.ndarray, vmax: float,
                  alpha: float = 0.6, vmin: float = 0.0) -> np.ndarray:
    """`overlay_rgb` as uint8 [S, S, 3], the cells of a panel."""
    return np.round(255 * overlay_rgb(grey, weights, vmax, alpha, vmin)).astype(np.uint8)


def overlay_scale(maps: np.ndarray, vmax: float | None) -> float:
    """The top of the shared colour scale: vmax, else the largest weight (1 when none > 0)."""
    if vmax:
        return float(vmax)
    top = float(np.nanmax(maps)) if maps.size and np.isfinite(maps).any() else 0.0
    return top if top > 0 else 1.0


def _grey(image: np.ndarray) -> np.ndarray:
    return image.mean(axis=-1) if image.shape[-1] > 1 else image[..., 0]


def _bar_room(vmax: float, height: int, label: str, uniform: float | None, tick_pt: float,
              label_pt: float, integer: bool = False, vmin: float = 0.0) -> tuple[int, int]:
    """Pixels right of the maps for the colour bar 0 … vmax: (before the bar: room for the even
    weight's mark, written left of it; the bar with its ticks, their labels and its label)."""
    ticks = value_ticks(vmin, vmax, height, tick_pt, integer)
    widest = max((text_width(t, tick_pt) for t in tick_labels(ticks)), default=0.0)
    before = 12 + (round(text_width(uniform_label(uniform), MIN_PT)) + 6 if uniform else 0)
    after = BAR + TICK + 3 + round(widest) + (round(label_pt * PX * 1.5) if label else 0) + 8
    return before, after


def attention_grid_picture(image: np.ndarray, maps: np.ndarray, titles: Sequence[str],
                           title: str, *, ncols: int = 4, query: int | None = None,
                           alpha: float = 0.6, row_labels: Sequence[str] | None = None,
                           colorbar_label: str = "", vmax: float | None = None,
                           uniform: float | None = None, width: float = 5.0,
                           counts: bool = False, vmin: float = 0.0,
                           mark: int | None = None) -> Picture:
    """Attention maps over the image, one picture `width` inches wide (its maps share what the
    title, labels and colour bar leave) with one shared colour scale.

    Args:
        image: [S, S, C] in [0, 1]
        maps: [k, G, G] weights per patch (e.g. one query's row of each head, reshaped)
        titles: k panel titles; query: the query patch to outline (row-major index)
        mark: the patch a lesson's question names, framed in MARK_COLOUR (row-major index)
        row_labels: when given, ncols is the row length and each row gets this label
        vmax: top of the colour scale (default: the largest weight), to share it across pictures
        uniform: the even weight 1/N, marked on the colour bar
        width: of the picture, in inches (100 px each): about the width of the column it is
            shown in at 820 px, so that its text (10 pt and more) reads at 10 px or more
        counts: the maps hold counts (how many chose each patch): whole-number ticks
        vmin: the bottom of the colour scale (0: weights; for cosine similarities their
            lowest value, or −1, with vmax 1)
    """
    k, G, _ = maps.shape
    S = image.shape[0]
    ncols = max(1, min(ncols, k))
    nrows = max(1, -(-k // ncols))
    vmax = overlay_scale(maps, vmax)
    grey = _grey(image)
    W = round(width * DPI)
    gap_w, gap_h, top = 12, 28, 58 if title else 32
    left = 12 + (round(MIN_PT * PX * 1.6) if row_labels is not None else 0)
    before, after = _bar_room(vmax, 200, colorbar_label, uniform, MIN_PT, MIN_PT, counts, vmin)
    side = max(24, (W - left - before - after - (ncols - 1) * gap_w) // ncols)
    height = nrows * side + (nrows - 1) * gap_h
    before, after = _bar_room(vmax, height, colorbar_label, uniform, MIN_PT, MIN_PT, counts,
                              vmin)
    side = max(24, (W - left - before - after - (ncols - 1) * gap_w) // ncols)
    lines = max((len(wrap_px(t, MIN_PT, side + gap_w - 2, 2)) for t in titles), default=1)
    if lines > 1:  # a title on two lines: room for the second above every row
        extra = round(MIN_PT * PX * 1.2)
        gap_h, top = gap_h + extra, top + extra
    height = nrows * side + (nrows - 1) * gap_h
    H = top + height + 10
    panels = []
    for i in range(k):
        r, c = divmod(i, ncols)
        box = (left + c * (side + gap_w), top + r * (side + gap_h), side, side)
        label = row_labels[r] if row_labels is not None and c == 0 else ""
        panels.append(Panel(box, overlay_cells(grey, maps[i], vmax, alpha, vmin), (S, S),
                            title=titles[i], title_pt=MIN_PT, title_fit=side + gap_w - 2,
                            title_lines=lines, ylabel=label, label_pt=MIN_PT,
                            rects=(patch_outline(query, G, S // G, QUERY_COLOUR, 2)
                                   + patch_outline(mark, G, S // G, MARK_COLOUR, 2))))
    x_bar = left + ncols * side + (ncols - 1) * gap_w + before
    bar = ColourBar((x_bar, top, BAR, height), OVERLAY_CMAP, vmin, vmax, label=colorbar_label,
                    marks=() if uniform is None else ((uniform, uniform_label(uniform)),),
                    integer=counts) if k else None
    return Picture((W, H), tuple(panels), bar, title=title, title_pt=12, row_filter="up")


def attention_grid(image: np.ndarray, maps: np.ndarray, titles: Sequence[str], title: str,
                   *, ncols: int = 4, query: int | None = None, alpha: float = 0.6,
                   row_labels: Sequence[str] | None = None, colorbar_label: str = "",
                   vmax: float | None = None, uniform: float | None = None,
                   width: float = 5.0, counts: bool = False, vmin: float = 0.0,
                   mark: int | None = None) -> bytes:
    """PNG bytes of `attention_grid_picture`."""
    return png(attention_grid_picture(image, maps, titles, title, ncols=ncols, query=query,
                                      alpha=alpha, row_labels=row_labels,
                                      colorbar_label=colorbar_label, vmax=vmax,
                                      uniform=uniform, width=width, counts=counts,
                                      vmin=vmin, mark=mark),
               "attention_grid")


def attention_table_picture(image: np.ndarray, maps: np.ndarray, title: str, *,
                            row_labels: Sequence[str], col_labels: Sequence[str],
                            query: int | None = None, alpha: float = 0.6, panel: float = 1.25,
                            colorbar_label: str = "", vmax: float | None = None,
                            uniform: float | None = None) -> Picture:
    """A rows × columns table of attention maps over the image (e.g. layer × head), one picture,
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
    vmax = overlay_scale(maps, vmax)
    grey = _grey(image)
    side = round(panel * DPI)
    gap = max(4, round(0.06 * side))
    left = 35 if any(row_labels) else 12
    top = 75 if any(col_labels) else 50
    height = nrows * side + (nrows - 1) * gap
    before, after = _bar_room(vmax, height, colorbar_label, uniform, MIN_PT, 11)
    W = left + ncols * side + (ncols - 1) * gap + before + after
    H = top + height + 12
    panels = tuple(
        Panel((left + c * (side + gap), top + r * (side + gap), side, side),
              overlay_cells(grey, maps[r, c], vmax, alpha), (S, S),
              title=col_labels[c] if r == 0 else "", title_pt=11, title_fit=side + gap - 2,
              title_lines=2,
              ylabel=row_labels[r] if c == 0 else "", label_pt=11,
              rects=patch_outline(query, G, S // G, QUERY_COLOUR, 2))
        for r in range(nrows) for c in range(ncols))
    bar = ColourBar((W - after, top, BAR, height), OVERLAY_CMAP, 0.0, vmax,
                    label=colorbar_label, label_pt=11,
                    marks=() if uniform is None else ((uniform, uniform_label(uniform)),))
    return Picture((W, H), panels, bar, title=title, title_pt=12, row_filter="up")


def attention_table(image: np.ndarray, maps: np.ndarray, title: str, *,
                    row_labels: Sequence[str], col_labels: Sequence[str],
                    query: int | None = None, alpha: float = 0.6, panel: float = 1.25,
                    colorbar_label: str = "", vmax: float | None = None,
                    uniform: float | None = None) -> bytes:
    """PNG bytes of `attention_table_picture`."""
    return png(attention_table_picture(image, maps, title, row_labels=row_labels,
                                       col_labels=col_labels, query=query, alpha=alpha,
                                       panel=panel, colorbar_label=colorbar_label, vmax=vmax,
                                       uniform=uniform), "attention_table")
