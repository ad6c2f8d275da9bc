"""A picture as data, drawn without a layout engine: panels of colour cells in boxes at fixed
pixel positions, each with its frame, ticks, title and axis labels, a colour bar, and any other
text. Sizes follow the matplotlib figures these pictures replace: 100 pixels an inch, text in
points (1 pt = 100/72 px).

A figure function builds a `Picture` (of `Panel`s and a `ColourBar`, all in pixels), which tests
inspect; `render` draws it (→ [H, W, 3] uint8: the cells scaled nearest-neighbour, the text by
`lettering`) and `png` writes it (→ bytes, `pixels.encode_png`) with the size of its smallest
text in a tEXt chunk.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from matplotlib.ticker import MaxNLocator
from PIL import Image, ImageDraw

from .lettering import INK, PX, Drawn, Text, draw_text, text_width, wrap_px
from .pixels import encode_png, lut, nearest, rgb255
from .style import MIN_PT, QUERY_COLOUR, png_labels

TICK = round(3.5 * PX)  # tick length (matplotlib's default 3.5 pt)


# --- ticks -------------------------------------------------------------------------------------

def index_ticks(n: int, length_px: float, label_pt: float = MIN_PT,
                spacing: float = 3.0) -> list[int]:
    """Nice integer ticks for an axis of n cells drawn over length_px, about one every
    `spacing` label sizes (matplotlib's: 3 on an x axis, 2 on a y axis)."""
    nbins = max(2, min(9, int(length_px / (label_pt * PX * spacing))))  # matplotlib: ≤ 9
    ticks = MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10], integer=True).tick_values(
        -0.5, n - 0.5)
    return [int(t) for t in ticks if -0.5 <= t <= n - 0.5]


def value_ticks(vmin: float, vmax: float, length_px: float,
                label_pt: float = MIN_PT, integer: bool = False) -> list[float]:
    """Nice ticks within [vmin, vmax] for a colour bar length_px long (about one a 2.2 label
    heights, as matplotlib spaces them); whole numbers only for counts (`integer`)."""
    nbins = max(3, min(10, int(length_px / (label_pt * PX * 2.2))))
    ticks = MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10], integer=integer).tick_values(
        vmin, vmax)
    span = vmax - vmin
    return [float(t) for t in ticks if vmin - 1e-9 * span <= t <= vmax + 1e-9 * span]


def tick_labels(ticks: list[float]) -> list[str]:
    """The same number of decimals for every tick, as few as show them exactly; "−" minus."""
    if not ticks:
        return []
    top = max(abs(t) for t in ticks)
    if top >= 1e5 or 0 < top < 1e-4:
        return [f"{t:.3g}".replace("-", "−") for t in ticks]
    for decimals in range(7):
        if all(abs(round(t, decimals) - t) <= 1e-9 * max(top, 1e-12) for t in ticks):
            break
    return [f"{t:.{decimals}f}".replace("-", "−") for t in ticks]


# --- the scene ---------------------------------------------------------------------------------

Box = tuple[int, int, int, int]  # x, y, width, height in pixels


@dataclass(frozen=True)
class Rect:
    """A rectangle outline in the panel's data coordinates (cell (i, j) spans j−½ … j+½)."""
    x: float
    y: float
    w: float
    h: float
    colour: tuple[int, int, int]
    width: int = 1
    dashed: bool = False


def patch_outline(patch: int | None, G: int, P: int, colour: str, width: int) -> tuple[Rect, ...]:
    """The outline of one patch (row-major index on a G × G grid of P-pixel patches) in image
    pixels, in `colour` (a style colour: QUERY_COLOUR, MARK_COLOUR); none for None."""
    if patch is None:
        return ()
    r, c = divmod(patch, G)
    return (Rect(c * P - 0.5, r * P - 0.5, P, P, rgb255(colour), width=width),)


@dataclass(frozen=True)
class Panel:
    """One image in a box: cells [r, c, 3] uint8 scaled to the box; extent = (cols, rows) in
    data units; ticks as (data position, label); lines at data positions; cell texts."""
    box: Box
    cells: np.ndarray
    extent: tuple[float, float]
    title: str = ""
    title_pt: float = 11.0
    title_fit: float | None = None  # the title's room in pixels (default: the picture's width)
    title_lines: int = 1  # lines the title may take, when it does not fit on one at its size
    xlabel: str = ""
    ylabel: str = ""
    label_pt: float = MIN_PT
    label_lines: int = 1  # lines an axis label may take, when it does not fit on one
    xticks: tuple[tuple[float, str], ...] = ()
    yticks: tuple[tuple[float, str], ...] = ()
    tick_pt: float = MIN_PT
    hlines: tuple[float, ...] = ()
    vlines: tuple[float, ...] = ()
    line_colour: tuple[int, int, int] = INK  # of hlines and vlines
    rects: tuple[Rect, ...] = ()
    texts: tuple[tuple[float, float, str, tuple[int, int, int]], ...] = ()  # x, y, text, colour
    text_pt: float = MIN_PT
    text_stroke: tuple[int, int, int] | None = None  # an outline around the cell texts
    frame: bool = True

    def to_px(self, x: float, y: float) -> tuple[float, float]:
        """Data (column, row) → pixel (x, y); cell edges at −½ … n − ½."""
        bx, by, bw, bh = self.box
        return bx + (x + 0.5) * bw / self.extent[0], by + (y + 0.5) * bh / self.extent[1]


@dataclass(frozen=True)
class ColourBar:
    box: Box
    cmap: str
    vmin: float
    vmax: float
    label: str = ""
    label_pt: float = MIN_PT
    tick_pt: float = MIN_PT
    marks: tuple[tuple[float, str], ...] = ()  # (value, text): a line across the bar, text left
    mark_pt: float = MIN_PT
    integer: bool = False  # counts: whole-number ticks

    def ticks(self) -> list[float]:
        return value_ticks(self.vmin, self.vmax, self.box[3], self.tick_pt, self.integer)


@dataclass(frozen=True)
class Picture:
    size: tuple[int, int]  # width, height in pixels
    panels: tuple[Panel, ...]
    colourbar: ColourBar | None = None
    title: str = ""
    title_pt: float = 12.0
    texts: tuple[Text, ...] = field(default=())  # any other text (row labels, …)
    row_filter: str = "none"  # the PNG row filter: "none" for cells and text, "up" for photos


# --- drawing it --------------------------------------------------------------------------------

def _dashed(draw: ImageDraw.ImageDraw, p0: tuple[float, float], p1: tuple[float, float],
            colour: str | tuple[int, ...], width: int) -> None:
    """A dashed segment (matplotlib's "--": 3.7 on, 1.6 off, in line widths)."""
    (x0, y0), (x1, y1) = p0, p1
    length = max(abs(x1 - x0), abs(y1 - y0))
    on, off = 3.7 * width * PX * 0.75, 1.6 * width * PX * 0.75
    s = 0.0
    while s < length:
        e = min(s + on, length)
        draw.line([(x0 + (x1 - x0) * s / length, y0 + (y1 - y0) * s / length),
                   (x0 + (x1 - x0) * e / length, y0 + (y1 - y0) * e / length)],
                  fill=colour, width=width)
        s = e + off


def _draw_panel(img: Image.Image, p: Panel, sizes: list[float]) -> None:
    bx, by, bw, bh = p.box
    img.paste(Image.fromarray(nearest(p.cells, bh, bw)), (bx, by))
    draw = ImageDraw.Draw(img)
    for y in p.hlines:
        py = round(p.to_px(0, y)[1])
        draw.line([(bx, py), (bx + bw - 1, py)], fill=p.line_colour, width=1)
    for x in p.vlines:
        px = round(p.to_px(x, 0)[0])
        draw.line([(px, by), (px, by + bh - 1)], fill=p.line_colour, width=1)
    for r in p.rects:
        (x0, y0), (x1, y1) = p.to_px(r.x, r.y), p.to_px(r.x + r.w, r.y + r.h)
        x0, y0 = max(x0, bx), max(y0, by)
        x1, y1 = min(x1, bx + bw) - 1, min(y1, by + bh) - 1
        corners = [(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)]
        for a, b in zip(corners, corners[1:], strict=False):
            if r.dashed:
                _dashed(draw, a, b, r.colour, r.width)
            else:
                draw.line([a, b], fill=r.colour, width=r.width)
    for x, y, text, colour in p.texts:
        sizes.append(draw_text(img, Text(p.to_px(x, y), text, p.text_pt, "mm", colour,
                                         stroke=p.text_stroke)))
    if p.frame:
        draw.rectangle([bx - 1, by - 1, bx + bw, by + bh], outline=INK, width=1)
    for x, label in p.xticks:
        px = round(p.to_px(x, 0)[0])
        draw.line([(px, by + bh), (px, by + bh + TICK)], fill=INK, width=1)
        sizes.append(draw_text(img, Text((px, by + bh + TICK + 2), label, p.tick_pt, "mt")))
    y_width = 0.0
    for y, label in p.yticks:
        py = round(p.to_px(0, y)[1])
        draw.line([(bx - 1 - TICK, py), (bx - 1, py)], fill=INK, width=1)
        sizes.append(draw_text(img, Text((bx - TICK - 4, py), label, p.tick_pt, "rm")))
        y_width = max(y_width, text_width(label, p.tick_pt))
    if p.title:  # centred over the panel, moved inwards when it would leave the picture
        fit = min(img.width - 20, p.title_fit or img.width)
        lines = wrap_px(p.title, p.title_pt, fit, p.title_lines)
        step = round(p.title_pt * PX * 1.2)
        for k, line in enumerate(reversed(lines)):
            half = text_width(line, p.title_pt, fit) / 2
            cx = min(max(bx + bw / 2, half + 10), img.width - half - 10)
            sizes.append(draw_text(img, Text((cx, by - 6 - k * step), line, p.title_pt, "md",
                                             fit=fit)))
    step = round(p.label_pt * PX * 1.2)  # from one line of a label to the next
    if p.xlabel:  # centred under the panel, moved inwards when it would leave the picture
        below = by + bh + (TICK + 4 + p.tick_pt * PX * 1.25 if p.xticks else 4)
        fit = xlabel_fit(bw, img.width)
        for k, line in enumerate(wrap_px(p.xlabel, p.label_pt, fit, p.label_lines)):
            half = text_width(line, p.label_pt, fit) / 2
            cx = min(max(bx + bw / 2, half + 10), img.width - half - 10)
            sizes.append(draw_text(img, Text((cx, below + k * step), line, p.label_pt, "mt",
                                             fit=fit)))
    if p.ylabel:  # reading upwards; a second line right of the first
        left = bx - (TICK + 8 + y_width if p.yticks else 4) - p.label_pt * PX * 0.6
        fit = ylabel_fit(bh, img.height)
        lines = wrap_px(p.ylabel, p.label_pt, fit, p.label_lines)
        for k, line in enumerate(lines):
            half = text_width(line, p.label_pt, fit) / 2
            cy = min(max(by + bh / 2, half + 10), img.height - half - 10)
            x = left - (len(lines) - 1 - k) * step
            sizes.append(draw_text(img, Text((x, cy), line, p.label_pt, rotate=90, fit=fit)))


def xlabel_fit(box_w: int, width: int) -> float:
    """The room of a panel's x label, in pixels: its width and some, within the picture."""
    return max(box_w + 60, min(width - 20, 2 * box_w))


def ylabel_fit(box_h: int, height: int) -> float:
    """The room of a panel's y label (reading upwards), in pixels."""
    return max(box_h, min(height - 20, box_h + 60))


def _draw_colourbar(img: Image.Image, cb: ColourBar, sizes: list[float]) -> None:
    bx, by, bw, bh = cb.box
    ramp = lut(cb.cmap)[::-1]  # top = vmax
    img.paste(Image.fromarray(nearest(ramp[:, None, :], bh, bw)), (bx, by))
    draw = ImageDraw.Draw(img)
    draw.rectangle([bx - 1, by - 1, bx + bw, by + bh], outline=INK, width=1)
    ticks = cb.ticks()
    widest = 0.0
    for v, label in zip(ticks, tick_labels(ticks), strict=True):
        py = round(by + (cb.vmax - v) / (cb.vmax - cb.vmin) * bh)
        draw.line([(bx + bw, py), (bx + bw + TICK, py)], fill=INK, width=1)
        sizes.append(draw_text(img, Text((bx + bw + TICK + 3, py), label, cb.tick_pt, "lm")))
        widest = max(widest, text_width(label, cb.tick_pt))
    for v, text in cb.marks:
        if cb.vmin <= v <= cb.vmax:
            py = round(by + (cb.vmax - v) / (cb.vmax - cb.vmin) * bh)
            draw.line([(bx, py), (bx + bw - 1, py)], fill=rgb255(QUERY_COLOUR), width=3)
            sizes.append(draw_text(img, Text((bx - 3, py), text, cb.mark_pt, "rm",
                                             colour=(0x33, 0x33, 0x33))))
    if cb.label:
        x = bx + bw + TICK + 6 + widest + cb.label_pt * PX * 0.7
        sizes.append(draw_text(img, Text((x, by + bh / 2), cb.label, cb.label_pt, rotate=90,
                                         fit=bh)))


def render(pic: Picture) -> np.ndarray:
    """The picture as [H, W, 3] uint8: panels, then the colour bar, then the texts."""
    return render_sized(pic)[0]


def render_sized(pic: Picture) -> tuple[np.ndarray, float, int]:
    """`render`, the size of its smallest text as drawn, in pixels (`inf`: no text), and how
    many texts were cut short to fit."""
    img = Image.new("RGB", pic.size, (255, 255, 255))
    sizes: list[float] = [Drawn(math.inf)]
    for p in pic.panels:
        _draw_panel(img, p, sizes)
    if pic.colourbar is not None:
        _draw_colourbar(img, pic.colourbar, sizes)
    if pic.title:
        sizes.append(draw_text(img, Text((pic.size[0] / 2, 8), pic.title, pic.title_pt, "mt",
                                         fit=pic.size[0] - 20)))
    for t in pic.texts:
        sizes.append(draw_text(img, t))
    return np.asarray(img), min(sizes), sum(getattr(d, "cut", False) for d in sizes)


def png(pic: Picture, figure: str = "") -> bytes:
    """PNG bytes of the picture, with tEXt chunks: its smallest text's size (`MIN_TEXT_KEY`)
    and which figure function drew it (`FIGURE_KEY`, when given)."""
    rgb, smallest, cut = render_sized(pic)
    return encode_png(rgb, pic.row_filter, png_labels(smallest, figure, cut))
