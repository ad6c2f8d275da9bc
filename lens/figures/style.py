"""The look every figure shares: fonts, colour maps, the display size limit, colour limits,
block averaging, margins fixed in inches, and `to_png`, the one way a matplotlib figure becomes
bytes (the pictures drawn without matplotlib have `picture.png`)."""

from __future__ import annotations

import io
import math
import re
import struct
from importlib.resources import files
from pathlib import Path

import matplotlib
import matplotlib.image
import numpy as np
from matplotlib import font_manager
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

matplotlib.use("Agg")

SIGNED_CMAP = "RdBu_r"  # diverging, centred at 0
PROB_CMAP = "viridis"  # sequential, for probabilities and other non-negative values
OVERLAY_CMAP = "inferno"
BAR_COLOUR = "#4c72b0"  # the bars of a chart
HIGHLIGHT_COLOUR = "#dd8452"  # a highlighted bar (e.g. the query's)
GRID_COLOUR = "#ffcc00"  # the patch grid and patch numbers over the image
QUERY_COLOUR = "#00e5ff"  # the outline of the chosen (query) patch: a learner's own choice
MARK_COLOUR = "#ff3df5"  # the frame of the patch a lesson's question names ("framed in
#                          magenta": the picker, explorer.js, dashes it over the choice)
WINDOW_COLOUR = "#111111"  # the dashed outline of the number window on a heatmap
MAX_SIDE = 256  # a matrix side above this is block-averaged for display
DPI = 100
# The tEXt keyword of every PNG of lens.figures: the em size of its smallest text as drawn, in
# the PNG's own pixels (shown at w CSS px wide, a W px PNG's text is min_text_px · w / W px).
MIN_TEXT_KEY = "min_text_px"
FIGURE_KEY = "figure"  # and the figure function that drew it ("heatmap", "attention_grid" …)
CUT_KEY = "texts_cut"  # and how many texts were cut short with "…" to fit (raster pictures)


# The CJK font that ships with the app: subsets of Noto Sans CJK SC Regular and Bold holding
# every glyph of the texts (made by scripts/subset-font; assets/fonts/README.md), under a name
# of their own. The bold face draws the handout's headings.
CJK_FONT_DIR = Path(str(files("encoder_core.assets"))) / "fonts"  # assets/fonts, package data
CJK_FONT_FILE = CJK_FONT_DIR / "EncoderLensCJK-Regular.ttf"
CJK_BOLD_FONT_FILE = CJK_FONT_DIR / "EncoderLensCJK-Bold.ttf"
CJK_FONT_FAMILY = "Encoder Lens CJK"
# Installed CJK fonts, for the glyphs the subset lacks (upload names, checkpoint labels)
SYSTEM_CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans CJK JP", "WenQuanYi Zen Hei",
                       "Droid Sans Fallback")


def _font_families() -> list[str]:
    """DejaVu Sans, then the shipped subset (both weights), then the first CJK font installed
    (if any).
    matplotlib falls back glyph by glyph along this list; DejaVu Sans comes first because the
    subset holds Latin glyphs too, and they should look as in every other figure."""
    for face in (CJK_FONT_FILE, CJK_BOLD_FONT_FILE):
        font_manager.fontManager.addfont(str(face))
    names = {f.name for f in font_manager.fontManager.ttflist}
    system = [n for n in SYSTEM_CJK_FAMILIES if n in names]
    return ["DejaVu Sans", CJK_FONT_FAMILY, *system[:1]]


FONTS = _font_families()
matplotlib.rcParams["font.family"] = FONTS
# No text under 10 pt (13.9 px), the raster pictures' MIN_PT: shown at 3/4 of its width or
# more, a figure's smallest text is 10 CSS px or more (tests/browser/test_figure_text_size.py).
MIN_PT = 10.0
matplotlib.rcParams["font.size"] = MIN_PT  # tick labels
matplotlib.rcParams["axes.titlesize"] = 11
matplotlib.rcParams["axes.labelsize"] = MIN_PT
matplotlib.rcParams["legend.fontsize"] = MIN_PT


def block_average(m: np.ndarray, max_side: int = MAX_SIDE) -> tuple[np.ndarray, tuple[int, int]]:
    """Average k×k blocks so that no side exceeds max_side. Returns (matrix, (k_rows, k_cols))."""
    kr = -(-m.shape[0] // max_side)
    kc = -(-m.shape[1] // max_side)
    if kr == 1 and kc == 1:
        return m, (1, 1)
    rows, cols = m.shape[0] // kr * kr, m.shape[1] // kc * kc
    trimmed = m[:rows, :cols]
    return trimmed.reshape(rows // kr, kr, cols // kc, kc).mean(axis=(1, 3)), (kr, kc)


def colour_limits(m: np.ndarray, signed: bool) -> tuple[float, float]:
    """vmin, vmax: symmetric around 0 for signed data; never an empty range."""
    finite = m[np.isfinite(m)]
    if finite.size == 0:
        return (-1.0, 1.0) if signed else (0.0, 1.0)
    if signed:
        a = float(np.abs(finite).max())
        a = a if a > 0 else 1.0
        return -a, a
    lo, hi = float(finite.min()), float(finite.max())
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def to_png(fig: Figure, figure: str = "") -> bytes:
    """A matplotlib figure's PNG at zlib level 1 (level 6, the default, costs several times
    more and saves ~10 % of the bytes), with tEXt chunks: its smallest text's size
    (`MIN_TEXT_KEY`) and which figure function drew it (`FIGURE_KEY`, when given).

    Drawn as `savefig(dpi=DPI)` draws it (an Agg canvas, then `imsave`), on a renderer of its
    own whose `draw_text` notes each text's size (points · dpi / 72) as it is drawn: every
    title, label, tick label, legend entry and free text, after any layout engine ran."""
    fig.set_dpi(DPI)
    canvas = FigureCanvasAgg(fig)
    renderer = canvas.get_renderer()  # canvas.draw() reuses it: same size and dpi
    sizes: list[float] = [math.inf]
    draw_text = renderer.draw_text

    def noting_size(gc, x, y, s, prop, angle, ismath=False, mtext=None):  # noqa: ANN001, ANN202
        if s.strip():
            sizes.append(prop.get_size_in_points() * fig.dpi / 72)
        return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

    renderer.draw_text = noting_size
    canvas.draw()
    buf = io.BytesIO()
    matplotlib.image.imsave(buf, canvas.buffer_rgba(), format="png", origin="upper", dpi=DPI,
                            metadata=png_labels(min(sizes), figure),
                            pil_kwargs={"compress_level": 1})
    return buf.getvalue()


def png_labels(smallest: float, figure: str = "", cut: int = 0) -> dict[str, str]:
    """The tEXt chunks of a PNG of lens.figures: its smallest text in its own pixels ("12.5";
    none for a picture without text), the figure function that drew it ("heatmap") and how
    many of its texts were cut short with "…" to fit (`CUT_KEY`, when any)."""
    texts = {MIN_TEXT_KEY: f"{smallest:.1f}"} if math.isfinite(smallest) else {}
    return texts | ({FIGURE_KEY: figure} if figure else {}) | ({CUT_KEY: str(cut)} if cut else {})


def png_texts(data: bytes) -> dict[str, str]:
    """The tEXt chunks of PNG bytes, keyword → text (read chunk by chunk up to the image)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    texts, at = {}, 8
    while at + 8 <= len(data):
        length, tag = struct.unpack(">I4s", data[at:at + 8])
        if tag in (b"IDAT", b"IEND"):
            break
        if tag == b"tEXt":
            key, _, value = data[at + 8:at + 8 + length].partition(b"\0")
            texts[key.decode("latin-1")] = value.decode("latin-1")
        at += 12 + length
    return texts


def min_text_px(data: bytes) -> float | None:
    """The smallest text of a PNG of `lens.figures`, in the PNG's pixels (None: no text)."""
    value = png_texts(data).get(MIN_TEXT_KEY)
    return None if value is None else float(value)


def _ems(text: str) -> float:
    """About how wide `text` is, in ems: 0.55 a Latin glyph, 1 a CJK one."""
    return sum(1.0 if ord(ch) > 0x2E80 else 0.55 for ch in text)


def fit_fontsize(text: str, inches: float, base: float) -> float:
    """The base font size, reduced so that `text` fits in `inches` (`_ems`), but never under
    MIN_PT."""
    return max(MIN_PT, min(base, 72 * inches / max(_ems(text), 1)))


def wrap_to(text: str, inches: float, pt: float) -> str:
    """`text` broken into lines at most about `inches` wide at `pt` points: first where it has
    two spaces or more ("… × 6   (h = 8)": between its parts), then at single spaces or between
    two CJK glyphs."""
    limit = 72 * inches / pt  # ems a line
    if _ems(text) <= limit:
        return text
    lines, line = [], ""
    for part in re.split(r"\s{2,}", text):
        if line and _ems(line + "  " + part) > limit:
            lines.append(line)
            line = part
        else:
            line = f"{line}  {part}" if line else part
    lines.append(line)
    return "\n".join(_wrap_words(one, limit) for one in lines)


def _wrap_words(text: str, limit: float) -> str:
    """`text` in lines of at most `limit` ems, broken at spaces or between two CJK glyphs."""
    lines, line, width = [], "", 0.0
    for token in re.findall(r"\s+|[\u2e80-\uffff]|[^\s\u2e80-\uffff]+", text):
        w = _ems(token)
        if line.strip() and width + w > limit and not token.isspace():
            lines.append(line.rstrip())
            line, width = "", 0.0
        if line or not token.isspace():
            line, width = line + token, width + w
    lines.append(line.rstrip())
    return "\n".join(lines)


def fit_title(text: str, inches: float, base: float) -> tuple[str, float]:
    """A title and its size in points to fit `inches`: smaller (down to MIN_PT), then on more
    lines (`wrap_to`)."""
    pt = fit_fontsize(text, inches, base)
    return (text if _ems(text) * pt / 72 <= inches else wrap_to(text, inches, pt)), pt


def fixed_margins(fig: Figure, hspace: float = 0.6, wspace: float = 0.3,
                  title_lines: int = 1) -> None:
    """Subplot margins fixed in inches (room for labels, a suptitle of `title_lines` lines and
    subplot titles), instead of a layout engine that draws the figure twice."""
    w, h = fig.get_size_inches()
    top = 0.7 + 0.2 * (title_lines - 1)
    fig.subplots_adjust(left=0.9 / w, right=1 - 0.2 / w, bottom=0.6 / h, top=1 - top / h,
                        hspace=hspace, wspace=wspace)
