"""Pictures of arrays without a layout engine: a matrix is colour-mapped with the colour map's
256-entry table, scaled into its box nearest-neighbour (cells stay crisp), and the frame —
title, axis labels, ticks, the colour bar — is drawn with Pillow at fixed pixel positions; the
PNG is written with no row filter at zlib level 1 (encoding dominated the old cost).

A picture is data first (`Picture` of `Panel`s and a `ColourBar`, all in pixels), which tests
inspect, then `render` (→ [H, W, 3] uint8) and `png` (→ bytes, written by `encode_png`). Sizes
follow the matplotlib figures they replace: 100 pixels an inch, text in points (1 pt = 100/72
px).
"""

from __future__ import annotations

import math
import re
import struct
import zlib
from dataclasses import dataclass, field
from functools import cache, lru_cache

import matplotlib
import numpy as np
from fontTools.ttLib import TTFont
from matplotlib import font_manager
from matplotlib.colors import to_rgb
from matplotlib.ticker import MaxNLocator
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from .style import DPI, FONTS, MIN_PT, QUERY_COLOUR, png_labels

PX = DPI / 72  # pixels per point
INK = (0, 0, 0)  # axes, ticks and text
TICK = round(3.5 * PX)  # tick length (matplotlib's default 3.5 pt)
# MIN_PT (style): the smallest text of a picture, 10 pt = 14 px. Texts shrunk to fit their
# room stop there, then are cut short with "…".
PNG_LEVEL = 1  # zlib level: 1 is several times faster than 6, the files ~10 % larger
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- colour ------------------------------------------------------------------------------------

@cache
def lut(cmap: str) -> np.ndarray:
    """[256, 3] uint8: the colour map's table, as matplotlib's `cmap(x, bytes=True)` gives it."""
    colormap = matplotlib.colormaps[cmap]
    assert colormap.N == 256, f"{cmap} has {colormap.N} colours, not 256"
    table = colormap(np.arange(256), bytes=True)[:, :3]
    table.flags.writeable = False
    return table


def colour_index(m: np.ndarray, vmin: float, vmax: float) -> np.ndarray:
    """Indices into a 256-entry table, as matplotlib's Normalize + Colormap pick them:
    floor((v − vmin) / (vmax − vmin) · 256), clipped to 0 … 255 (+inf top, −inf bottom).
    NaN gets 256, the "bad" entry. m: [...] → uint16 [...]."""
    x = (np.asarray(m, dtype=np.float64) - vmin) * (256.0 / (vmax - vmin))
    bad = np.isnan(x)
    idx = np.clip(np.nan_to_num(x, nan=0.0, posinf=255.0, neginf=0.0), 0, 255).astype(np.uint16)
    idx[bad] = 256
    return idx


def colourise(m: np.ndarray, cmap: str, vmin: float, vmax: float,
              bad: tuple[int, int, int] = (255, 255, 255)) -> np.ndarray:
    """m: [r, c] → [r, c, 3] uint8 RGB in the colour map (NaN as `bad`, white by default)."""
    table = np.vstack([lut(cmap), np.array([bad], dtype=np.uint8)])  # [257, 3]
    return table[colour_index(m, vmin, vmax)]


def rgb255(colour: str) -> tuple[int, int, int]:
    """A matplotlib colour name as uint8 RGB."""
    return tuple(round(255 * c) for c in to_rgb(colour))


def nearest(img: np.ndarray, h: int, w: int) -> np.ndarray:
    """[r, c, ...] → [h, w, ...]: each pixel takes the cell under its centre (no blending)."""
    rows = ((np.arange(h) + 0.5) * img.shape[0] / h).astype(np.intp)
    cols = ((np.arange(w) + 0.5) * img.shape[1] / w).astype(np.intp)
    return img[rows[:, None], cols[None, :]]


# --- text --------------------------------------------------------------------------------------

@cache
def _font_files() -> tuple[tuple[str, int], ...]:
    """(path, index) of each family in FONTS, in its order: DejaVu Sans, the shipped CJK subset,
    then an installed CJK font when there is one."""
    files = []
    for family in FONTS:
        entry = next((f for f in font_manager.fontManager.ttflist
                      if f.name == family and f.weight == 400 and f.style == "normal"), None)
        if entry is not None:
            files.append((entry.fname, getattr(entry, "index", 0) or 0))
    return tuple(files)


@cache
def _charmaps() -> tuple[frozenset[int], ...]:
    """The code points each font of `_font_files` has a glyph for."""
    maps = []
    for path, index in _font_files():
        with TTFont(path, fontNumber=index, lazy=True) as f:
            maps.append(frozenset(f.getBestCmap()))
    return tuple(maps)


def glyph_font(ch: str) -> int:
    """Which font of `_font_files` draws `ch`: the first in the list that has a glyph for it (0,
    DejaVu Sans, when none has: its empty box)."""
    code = ord(ch)
    return next((i for i, cmap in enumerate(_charmaps()) if code in cmap), 0)


Runs = tuple[tuple[int, str], ...]  # (font index, text) runs of one string (`font_runs`)


@lru_cache(maxsize=4096)
def font_runs(text: str) -> Runs:
    """`text` cut where the font that draws it changes: (font of `_font_files`, run), glyph by
    glyph as matplotlib falls back along FONTS. A space goes with the run before it (the first
    run's font for leading spaces), so a run breaks only at a glyph that needs another font."""
    runs: list[list] = []
    for ch in text:
        if ch.isspace() and runs:
            runs[-1][1] += ch
            continue
        choice = 0 if ch.isspace() else glyph_font(ch)
        if runs and runs[-1][0] == choice:
            runs[-1][1] += ch
        elif runs and runs[-1][1].isspace():  # leading spaces: the font of what follows
            runs[-1] = [choice, runs[-1][1] + ch]
        else:
            runs.append([choice, ch])
    return tuple((choice, run) for choice, run in runs)


@lru_cache(maxsize=256)
def font(pt: float, choice: int = 0) -> ImageFont.FreeTypeFont:
    """The font for text at `pt` points: font `choice` of `_font_files` (0: DejaVu Sans)."""
    path, index = _font_files()[choice]
    return ImageFont.truetype(path, max(1, round(pt * PX)), index=index)


def text_runs(text: str, pt: float,
              fit: float | None = None) -> tuple[tuple[ImageFont.FreeTypeFont, str], ...]:
    """`text` as (font, run) pairs at `pt` points (`font_runs`), fitted to `fit` px (`fitted`)."""
    text, pt = fitted(text, pt, fit)
    return tuple((font(pt, choice), run) for choice, run in font_runs(text))


def _length(text: str, pt: float) -> float:
    return sum(font(pt, choice).getlength(run) for choice, run in font_runs(text))


def fitted(text: str, pt: float, fit: float | None = None) -> tuple[str, float]:
    """`text` and the size to draw it at so that it is at most `fit` px long: as it is when it
    fits, else smaller but never under MIN_PT (the smallest text a picture may have), and
    when that is still too long, cut short with "…"."""
    if fit is None or _length(text, pt) <= fit:
        return text, pt
    smaller = min(pt, max(MIN_PT, math.floor(pt * fit / _length(text, pt) * 2) / 2))
    if _length(text, smaller) <= fit:
        return text, smaller
    cut = text
    while len(cut) > 1 and _length(cut.rstrip() + "…", smaller) > fit:
        cut = cut[:-1]
    return cut.rstrip() + "…", smaller


def wrap_px(text: str, pt: float, width: float, max_lines: int) -> list[str]:
    """`text` in at most `max_lines` lines each at most `width` px long at `pt` points, broken
    at spaces or between two CJK glyphs, or at its own line breaks (the last line cut short with
    "…" if need be)."""
    if "\n" in text:  # broken where the caller says
        return text.split("\n")[:max_lines] if max_lines > 1 else [text.replace("\n", " ")]
    if max_lines <= 1 or _length(text, pt) <= width:
        return [text]
    lines, line = [], ""
    for token in re.findall(r"\s+|[\u2e80-\uffff]|[^\s\u2e80-\uffff]+", text):
        if line.strip() and not token.isspace() and _length(line + token, pt) > width:
            lines.append(line.rstrip())
            line = ""
        if line or not token.isspace():
            line += token
    lines.append(line.rstrip())
    if len(lines) > max_lines:
        lines = lines[:max_lines - 1] + [" ".join(lines[max_lines - 1:])]
    return lines


@dataclass(frozen=True)
class Text:
    """One text: xy in pixels, Pillow anchor ("mm" centre, "rm" right-middle, "ms" centre on
    the baseline …), size in points; rotated texts (90 = reading upwards) anchor at their
    centre."""
    xy: tuple[float, float]
    text: str
    pt: float
    anchor: str = "mm"
    colour: tuple[int, int, int] = INK
    rotate: int = 0
    fit: float | None = None  # at most this many pixels long (`fitted`: smaller, then cut short)
    stroke: tuple[int, int, int] | None = None  # a 1 px outline of this colour (over a photo)


def _runs_mask(runs: Runs) -> tuple[Image.Image, tuple[int, int]]:
    """The runs drawn one after the other on one baseline, as a mask just large enough (1 px
    margin), and where in it the first run's pen starts on the baseline."""
    pens, x = [], 0.0
    for f, run in runs:
        pens.append(x)
        x += f.getlength(run)
    boxes = [f.getbbox(run, anchor="ls") for f, run in runs]
    left = math.floor(min(pen + b[0] for pen, b in zip(pens, boxes, strict=True)))
    right = math.ceil(max(pen + b[2] for pen, b in zip(pens, boxes, strict=True)))
    top, bottom = math.floor(min(b[1] for b in boxes)), math.ceil(max(b[3] for b in boxes))
    mask = Image.new("L", (right - left + 2, bottom - top + 2), 0)
    draw = ImageDraw.Draw(mask)
    for (f, run), pen in zip(runs, pens, strict=True):
        draw.text((1 - left + pen, 1 - top), run, font=f, fill=255, anchor="ls")
    return mask, (1 - left, 1 - top)


def _anchor_point(runs: Runs, mask: Image.Image, origin: tuple[int, int],
                  anchor: str) -> tuple[float, float]:
    """Where Pillow's `anchor` falls in a mask of `_runs_mask` (horizontal: l, m, r; vertical:
    a, m, s, d by the runs' tallest font metrics, t and b by the ink)."""
    length = sum(f.getlength(run) for f, run in runs)
    ascent = max(f.getmetrics()[0] for f, _ in runs)
    descent = max(f.getmetrics()[1] for f, _ in runs)
    x0, base = origin
    x = {"l": x0, "m": x0 + length / 2, "r": x0 + length}[anchor[0]]
    y = {"a": base - ascent, "m": base - (ascent - descent) / 2, "s": base, "d": base + descent,
         "t": 1, "b": mask.height - 1}[anchor[1]]
    return x, y


@lru_cache(maxsize=2048)
def _stamp(text: str, f: ImageFont.FreeTypeFont, anchor: str, colour: tuple[int, int, int],
           stroke: tuple[int, int, int]) -> tuple[Image.Image, tuple[int, int]]:
    """`text` with a 1 px outline as an RGBA image, and where its corner goes from the anchor
    point (Pillow draws an outline slowly: a grid of patch numbers draws each one once)."""
    x0, y0, x1, y1 = f.getbbox(text, anchor=anchor, stroke_width=1)
    stamp = Image.new("RGBA", (x1 - x0, y1 - y0), (0, 0, 0, 0))
    ImageDraw.Draw(stamp).text((-x0, -y0), text, font=f, fill=colour, anchor=anchor,
                               stroke_width=1, stroke_fill=stroke)
    return stamp, (x0, y0)


class Drawn(float):
    """The size a text was drawn at, in pixels, knowing whether it was cut short ("…")."""
    cut: bool = False


def draw_text(img: Image.Image, t: Text) -> Drawn:
    """One text, glyph by glyph in the first font of FONTS that has it (one run: drawn as is).
    Returns the size it was drawn at, in pixels (the em of its smallest font; `inf` for no
    text), once fitted to `fit` (`fitted`), and whether fitting cut it short."""
    if not t.text.strip():
        return Drawn(math.inf)
    runs = text_runs(t.text, t.pt, t.fit)
    drawn = Drawn(min(f.size for f, _ in runs))
    drawn.cut = t.fit is not None and fitted(t.text, t.pt, t.fit)[0] != t.text
    if t.rotate == 0 and len(runs) == 1:
        (f, run), = runs  # the text as fitted
        if t.stroke:  # outlined (patch numbers over a photo): drawn once, then pasted
            stamp, (dx, dy) = _stamp(run, f, t.anchor, t.colour, t.stroke)
            img.paste(stamp, (round(t.xy[0]) + dx, round(t.xy[1]) + dy), stamp)
        else:
            ImageDraw.Draw(img).text(t.xy, run, font=f, fill=t.colour, anchor=t.anchor)
        return drawn
    mask, origin = _runs_mask(runs)
    if t.rotate == 0:
        ax, ay = _anchor_point(runs, mask, origin, t.anchor)
        x, y = round(t.xy[0] - ax), round(t.xy[1] - ay)
    else:
        mask = mask.rotate(t.rotate, expand=True)
        x, y = round(t.xy[0] - mask.width / 2), round(t.xy[1] - mask.height / 2)
    if t.stroke:
        img.paste(Image.new("RGB", mask.size, t.stroke), (x, y),
                  mask.filter(ImageFilter.MaxFilter(3)))
    img.paste(Image.new("RGB", mask.size, t.colour), (x, y), mask)
    return drawn


def text_width(text: str, pt: float, fit: float | None = None) -> float:
    """How long `text` is drawn, in pixels (at most about `fit` when given)."""
    return sum(f.getlength(run) for f, run in text_runs(text, pt, fit))


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


def title_lines(text: str, pt: float, fit: float) -> int:
    """How many lines (1 or 2) a title takes in `fit` px: one when it fits at `pt` or, shrunk,
    at MIN_PT; else two."""
    return 1 if _length(text, min(pt, MIN_PT)) <= fit else len(wrap_px(text, pt, fit, 2))


def label_lines(text: str, pt: float, fit: float) -> int:
    """How many lines (1 or 2) an axis label takes in `fit` px at `pt` points."""
    return len(wrap_px(text, pt, fit, 2))


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


def _chunk(tag: bytes, data: bytes) -> bytes:
    """One PNG chunk: length, tag, data, CRC-32 of tag and data."""
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def text_chunk(key: str, value: str) -> bytes:
    """A PNG tEXt chunk: a Latin-1 keyword, a NUL, the text."""
    return _chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1"))


def encode_png(rgb: np.ndarray, row_filter: str = "none",
               texts: dict[str, str] | None = None) -> bytes:
    """[H, W, 3] uint8 → PNG bytes: 8-bit RGB, zlib level 1, one row filter for every row;
    `texts` become tEXt chunks before the image data.

    "none" (type 0) suits flat colour cells and text: as small as Pillow's adaptive choice, at
    half the time; "up" (type 2, each byte minus the one above, mod 256) suits photographs:
    within ~5 % of Pillow's size, at half its time."""
    h, w, _ = rgb.shape
    flat = rgb.reshape(h, 3 * w)
    rows = np.empty((h, 1 + 3 * w), dtype=np.uint8)
    if row_filter == "up":
        rows[:, 0] = 2
        rows[0, 1:] = flat[0]
        np.subtract(flat[1:], flat[:-1], out=rows[1:, 1:])  # uint8 wraps: mod 256
    else:
        rows[:, 0] = 0
        rows[:, 1:] = flat
    header = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)  # 8 bits, RGB, deflate, no interlace
    return (PNG_SIGNATURE + _chunk(b"IHDR", header)
            + b"".join(text_chunk(k, v) for k, v in (texts or {}).items())
            + _chunk(b"IDAT", zlib.compress(rows.tobytes(), PNG_LEVEL)) + _chunk(b"IEND", b""))


def png(pic: Picture, figure: str = "") -> bytes:
    """PNG bytes of the picture, with tEXt chunks: its smallest text's size (`MIN_TEXT_KEY`)
    and which figure function drew it (`FIGURE_KEY`, when given)."""
    rgb, smallest, cut = render_sized(pic)
    return encode_png(rgb, pic.row_filter, png_labels(smallest, figure, cut))
