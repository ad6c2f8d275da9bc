"""Text drawn with Pillow into a picture: each glyph taken from the first font of FONTS that has
it (DejaVu Sans, then the shipped CJK subset, then an installed CJK font), the text cut into runs
where that font changes and the runs drawn one after the other on one baseline.

A text too long for its room is drawn smaller, never under MIN_PT (the smallest text a picture
may have), then cut short with "…" (`fitted`); a long title or axis label may instead be broken
into lines (`wrap_px`). `draw_text` draws one `Text` and says the size it was drawn at, which
the picture's PNG records. Sizes are in points as in the matplotlib figures these pictures
replace: 100 pixels an inch, 1 pt = 100/72 px (`PX`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache, lru_cache

from fontTools.ttLib import TTFont
from matplotlib import font_manager
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from .style import DPI, FONTS, MIN_PT

PX = DPI / 72  # pixels per point
INK = (0, 0, 0)  # axes, ticks and text
# MIN_PT (style): the smallest text of a picture, 10 pt = 14 px. Texts shrunk to fit their
# room stop there, then are cut short with "…".


# --- the fonts ---------------------------------------------------------------------------------

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


# --- fitting a text to its room ----------------------------------------------------------------

def _length(text: str, pt: float) -> float:
    return sum(font(pt, choice).getlength(run) for choice, run in font_runs(text))


def fitted(text: str, pt: float, fit: float | None = None) -> tuple[str, float]:
    """`text` and the size to draw it at so that it is at most `fit` px long: as it is when it
    fits, else smaller but never under MIN_PT (the smallest text a picture may have), and
    when that is still too long, cut short with "…"."""
    if fit is None or _length(text, pt) <= fit:
        return text, pt
    smaller = min(pt, max(MIN_PT, math.floor(pt * fit / _length(text, pt) * 2) / 2))
    # glyphs are drawn at whole pixels: a half point less may be the same pixel size (11 and
    # 10.5 pt are both 15 px), so step down until it fits or MIN_PT is reached
    while smaller > MIN_PT and _length(text, smaller) > fit:
        smaller = max(MIN_PT, smaller - 0.5)
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


def title_lines(text: str, pt: float, fit: float) -> int:
    """How many lines (1 or 2) a title takes in `fit` px: one when it fits at `pt` or, shrunk,
    at MIN_PT; else two."""
    return 1 if _length(text, min(pt, MIN_PT)) <= fit else len(wrap_px(text, pt, fit, 2))


def label_lines(text: str, pt: float, fit: float) -> int:
    """How many lines (1 or 2) an axis label takes in `fit` px at `pt` points."""
    return len(wrap_px(text, pt, fit, 2))


def text_width(text: str, pt: float, fit: float | None = None) -> float:
    """How long `text` is drawn, in pixels (at most about `fit` when given)."""
    return sum(f.getlength(run) for f, run in text_runs(text, pt, fit))


# --- drawing -----------------------------------------------------------------------------------

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
