"""The handout's layout: a title page and the sheets, flowed onto A4 pages with matplotlib's PDF
backend.

Text is set in DejaVu Sans with the shipped CJK subset behind it (`figures.style`), glyph by
glyph; installed CJK fonts are left out, as their CFF outlines do not embed as Type 42. A
character neither font has (in an upload's name, a checkpoint's label) is printed as "?"
(`drawable`), never as an empty box; the title page names such an image otherwise. Both
fonts embed as Type 42 (TrueType outlines, searchable and copyable text). Formulas are
mathtext in the default fontset (with `cm`, a × reads back as "£"). Lines are wrapped at the
width they measure, CJK between any two characters; a formula too wide shrinks to 7 pt. The
pictures are the pages' PNGs, embedded at their own pixels (`interpolation="none"`), each
followed by its description as text (the page's `alt`, `lens.describe`).
"""

from __future__ import annotations

import functools
import io
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import matplotlib.image
import numpy as np
from matplotlib import rc_context
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties, findfont
from matplotlib.ft2font import FT2Font

from ..figures.style import CJK_BOLD_FONT_FILE, CJK_FONT_FAMILY, CJK_FONT_FILE, DPI
from .sheets import Sheet

PAGE_W, PAGE_H = 8.27, 11.69  # A4 portrait, inches
MARGIN = 0.6  # inches on every side
WIDTH = PAGE_W - 2 * MARGIN  # the text column
FONTS = ["DejaVu Sans", CJK_FONT_FAMILY]  # embeddable as Type 42, glyph by glyph
GREY = "#555555"
LEADING = 1.35  # line height / font size
MIN_FORMULA_PT = 7.0
PICTURE_ROOM = 2.2  # inches: less room than this left on a page, a picture starts a new one
DESCRIPTION_PT = 8.5  # a picture's description, under it
RC = {"pdf.fonttype": 42, "font.family": FONTS, "mathtext.fontset": "dejavusans",
      "pdf.compression": 6}

Progress = Callable[[int, int], None]  # (sheets done, sheets in all)
UNDRAWABLE = "?"  # what a character no PDF font has is printed as


@functools.cache
def _code_points() -> frozenset[int]:
    """The characters every weight of the PDF's fonts draws: DejaVu Sans's and the subset's."""
    faces = [(findfont(FontProperties(family="DejaVu Sans"), fallback_to_default=False),
              findfont(FontProperties(family="DejaVu Sans", weight="bold"),
                       fallback_to_default=False)),
             (CJK_FONT_FILE, CJK_BOLD_FONT_FILE)]
    return frozenset().union(*(set(FT2Font(str(regular)).get_charmap())
                               & set(FT2Font(str(bold)).get_charmap())
                               for regular, bold in faces))


def can_draw(ch: str) -> bool:
    """Whether the PDF's fonts draw `ch` (a line break or other control counts as drawn)."""
    return ord(ch) in _code_points() or unicodedata.category(ch) in ("Cc", "Zl", "Zp")


def drawable(text: str) -> str:
    """`text` with each character the PDF's fonts lack printed as "?": 猫.jpg → ?.jpg."""
    return "".join(ch if can_draw(ch) else UNDRAWABLE for ch in text)


@dataclass(frozen=True)
class TitlePage:
    """What the first page says: the walk's image, its settings and model, the date."""

    title: str
    image: np.ndarray  # [h, w, 3] the image as given
    image_name: str
    lines: tuple[str, ...]  # the settings, the model, the layer/head/query the pictures show
    footer: str  # every page's foot: "Encoder Lens · <image> · <date>"


class Flow:
    """Blocks flowed down A4 pages: text, formulas and pictures, a new page when one is full."""

    def __init__(self, pdf: PdfPages, footer: str) -> None:
        self.pdf, self.footer = pdf, footer
        self.fig: Figure | None = None
        self.y = 0.0  # inches from the top of the page to the next block
        self.pages = 0
        self.measure = RendererAgg(10, 10, 72)  # widths in points

    # --- pages --------------------------------------------------------------------------------
    def new_page(self) -> None:
        self.close_page()
        self.fig = Figure(figsize=(PAGE_W, PAGE_H))
        self.y = MARGIN
        self.pages += 1

    def close_page(self) -> None:
        """The page's foot, drawn last (the text's order in the file is its reading order:
        the page's own text, then its foot), and the page saved."""
        if self.fig is not None:
            self.fig.text(0.5, 0.35 / PAGE_H, drawable(f"{self.footer} · {self.pages}"),
                          ha="center", va="bottom", fontsize=8, color=GREY, parse_math=False)
            self.pdf.savefig(self.fig)
            self.fig = None

    @property
    def room(self) -> float:
        """Inches left above the bottom margin."""
        return PAGE_H - MARGIN - self.y

    def need(self, height: float) -> None:
        if self.fig is None or height > self.room:
            self.new_page()

    def gap(self, inches: float) -> None:
        self.y += inches

    # --- text ---------------------------------------------------------------------------------
    def width_pt(self, text: str, size: float, weight: str = "normal", *,
                 math: bool = False) -> float:
        """The width of `text` set at `size` points: plain text, or mathtext (`math`)."""
        prop = FontProperties(family=FONTS, size=size, weight=weight)
        w, _, _ = self.measure.get_text_width_height_descent(text, prop, ismath=math)
        return w

    def height_pt(self, math: str, size: float) -> float:
        """The height of mathtext `math` set at `size` points, its descent included."""
        prop = FontProperties(family=FONTS, size=size)
        _, h, _ = self.measure.get_text_width_height_descent(math, prop, ismath=True)
        return h

    def wrap(self, text: str, size: float, width: float, weight: str = "normal") -> list[str]:
        """`text` in lines at most `width` inches wide (measured), broken at spaces or between
        CJK characters: each line the most tokens that fit, found by bisection (a width is
        measured ~log₂ n times a line, not once a token)."""
        lines: list[str] = []
        limit = width * 72
        for paragraph in text.split("\n"):
            rest = tokens(paragraph)
            while rest:
                if self.width_pt("".join(rest).rstrip(), size, weight) <= limit:
                    lines.append("".join(rest).rstrip())
                    break
                lo, hi = 1, len(rest)  # the first lo tokens fit (one always goes)
                while lo < hi - 1:
                    mid = (lo + hi) // 2
                    if self.width_pt("".join(rest[:mid]).rstrip(), size, weight) <= limit:
                        lo = mid
                    else:
                        hi = mid
                lines.append("".join(rest[:lo]).rstrip())
                rest = rest[lo:]
                if rest:
                    rest[0] = rest[0].lstrip()
            if not rest and not paragraph:
                lines.append("")
        return lines

    def text(self, text: str, size: float = 10.5, *, weight: str = "normal",
             color: str = "black", indent: float = 0.0, after: float = 0.04) -> None:
        for line in self.wrap(drawable(text), size, WIDTH - indent, weight):
            height = size * LEADING / 72
            self.need(height)
            self.fig.text((MARGIN + indent) / PAGE_W, 1 - self.y / PAGE_H, line, fontsize=size,
                          weight=weight, color=color, va="top", ha="left", parse_math=False)
            self.y += height
        self.y += after

    def formula(self, text: str, size: float = 11.0, indent: float = 0.15) -> None:
        """One formula line: words, then mathtext ("words $math$"), shrunk to fit the column;
        the math on a line of its own when even 7 pt is too wide. The words are a text of their
        own: mathtext sets a whole string in its own fonts, where CJK is a dummy glyph."""
        words, dollar, math = text.partition("$")
        words, math = drawable(words.rstrip()), dollar + math
        width = (WIDTH - indent) * 72

        def wide(pt: float) -> float:
            return ((self.width_pt(words, pt) if words else 0.0)
                    + (self.width_pt(math, pt, math=True) if math else 0.0)
                    + (pt * 0.4 if words and math else 0.0))

        while size > MIN_FORMULA_PT and wide(size) > width:
            size -= 0.5
        if words and math and wide(size) > width:  # the words above, the math below
            self.formula(words, size, indent)
            self.formula(math, size, indent)
            return
        height = size * (1.9 if math else LEADING) / 72  # room for fractions and exponents
        if math:  # a taller one (a sum with limits, a fraction in a root) gets its own height
            height = max(height, (self.height_pt(math, size) + size * 0.5) / 72)
        self.need(height)
        y = 1 - (self.y + height / 2) / PAGE_H
        x = MARGIN + indent
        if words:
            self.fig.text(x / PAGE_W, y, words, fontsize=size, va="center", ha="left",
                          parse_math=False)
            x += (self.width_pt(words, size) + size * 0.4) / 72
        if math:
            self.fig.text(x / PAGE_W, y, math, fontsize=size, va="center", ha="left")
        self.y += height

    def heading(self, text: str) -> None:
        self.need(0.7)  # never a heading alone at the foot of a page
        self.gap(0.08)
        self.text(text, 12, weight="bold", after=0.03)

    # --- pictures -----------------------------------------------------------------------------
    def pictures(self, pngs: Sequence[bytes], words: Sequence[str] = ()) -> None:
        """The pictures at their size (100 px per inch), shrunk to the column; two side by side
        when both fit it at 65 % or more. A picture that would shrink below 60 % to fit what is
        left of a page starts a new one. Under each row, the words of each of its pictures
        (`words[k]`: picture k's description), in the row's order: in the text's reading
        order each picture's description follows it, before the next picture."""
        images = [matplotlib.image.imread(io.BytesIO(p), format="png") for p in pngs]
        sizes = [(im.shape[1] / DPI, im.shape[0] / DPI) for im in images]
        rows: list[list[int]] = []
        k = 0
        while k < len(images):
            pair = [k, k + 1] if k + 1 < len(images) else [k]
            total = sum(sizes[n][0] for n in pair) + 0.2 * (len(pair) - 1)
            if len(pair) == 2 and WIDTH / total >= 0.65:
                rows.append(pair)
                k += 2
            else:
                rows.append([k])
                k += 1
        for row in rows:
            total = sum(sizes[n][0] for n in row) + 0.2 * (len(row) - 1)
            scale = min(1.0, WIDTH / total)
            height = max(sizes[n][1] for n in row) * scale
            if height > self.room and self.room < max(PICTURE_ROOM, 0.6 * height):
                self.new_page()
            if height > self.room:  # taller than what is left: shrink to it
                scale *= self.room / height
                height = self.room
            x = MARGIN + (WIDTH - (total * scale)) / 2
            for n in row:
                w, h = sizes[n][0] * scale, sizes[n][1] * scale
                ax = self.fig.add_axes((x / PAGE_W, 1 - (self.y + h) / PAGE_H, w / PAGE_W,
                                        h / PAGE_H))
                ax.imshow(images[n], interpolation="none")
                ax.set_axis_off()
                x += w + 0.2 * scale
            self.y += height + 0.06
            for n in row:
                if n < len(words) and words[n]:
                    self.text(words[n], DESCRIPTION_PT, color=GREY, indent=0.15, after=0.04)
            self.y += 0.06


def tokens(text: str) -> list[str]:
    """Break points of a line: a word with its following space, or one CJK character."""
    out: list[str] = []
    word = ""
    for ch in text:
        wide = unicodedata.east_asian_width(ch) in "WF"
        if wide:
            if word:
                out.append(word)
                word = ""
            out.append(ch)
        else:
            word += ch
            if ch == " ":
                out.append(word)
                word = ""
    if word:
        out.append(word)
    return out


def title_page(flow: Flow, page: TitlePage) -> None:
    flow.new_page()
    flow.text(page.title, 22, weight="bold", after=0.15)
    h, w = page.image.shape[:2]
    side = 3.6  # inches: the image's longer side
    scale = side / max(h, w)
    iw, ih = w * scale, h * scale
    ax = flow.fig.add_axes(((PAGE_W - iw) / 2 / PAGE_W, 1 - (flow.y + ih) / PAGE_H,
                            iw / PAGE_W, ih / PAGE_H))
    ax.imshow(page.image, interpolation="antialiased")
    ax.set_axis_off()
    flow.y += ih + 0.1
    flow.text(page.image_name, 10, color=GREY, after=0.2)
    for line in page.lines:
        flow.text(line, 11, after=0.06)


def sheet_pages(flow: Flow, s: Sheet, say: Callable[..., str]) -> None:
    """One step: its title, takeaway, formulas, worked entry, words, pictures, the learner's
    answers, the note's lines."""
    flow.new_page()
    flow.text(s.title, 17, weight="bold", after=0.06)
    flow.text(s.takeaway, 11, color=GREY, after=0.1)
    if s.formulas:
        flow.heading(say("h_formulas"))
        for f in s.formulas:
            flow.formula(f)
    if s.worked:
        flow.heading(say("h_worked"))
        for line in s.worked:
            flow.text(line, 9.5, indent=0.15, after=0.02)
    for line in s.lines:
        flow.text("• " + line, 9.5, indent=0.15, after=0.03)
    if s.pictures:
        flow.gap(0.1)
        flow.pictures([p.png for p in s.pictures],
                      [say("picture_words", text=p.text) for p in s.pictures])
    if s.answers:
        flow.heading(say("h_answers"))
        for task, given, right, result in s.answers:
            flow.text(f"{task}:  {say('yours')} {given} · {say('right')} {right} · {result}",
                      10, indent=0.15, after=0.03)
    if s.note:
        flow.heading(say("h_note"))
        for line in s.note:
            depth = (len(line) - len(line.lstrip(" "))) // 2
            flow.text(line.strip(), 9.5, indent=0.15 + 0.22 * depth, after=0.01)


def handout_pdf(title: TitlePage, sheets: Sequence[Sheet], say: Callable[..., str],
                progress: Progress | None = None) -> bytes:
    """The PDF: the title page, then each sheet from a new page. `say` words the headings."""
    out = io.BytesIO()
    with rc_context(RC):
        with PdfPages(out, metadata={"Title": title.title, "Creator": "Encoder Lens",
                                     "CreationDate": None}) as pdf:
            flow = Flow(pdf, title.footer)
            title_page(flow, title)
            for n, s in enumerate(sheets):
                sheet_pages(flow, s, say)
                if progress is not None:
                    progress(n + 1, len(sheets))
            flow.close_page()
    return out.getvalue()
