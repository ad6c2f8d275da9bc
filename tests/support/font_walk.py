"""Walk every page of the app in 中文 and record what its figures draw: every text drawn by
matplotlib and by Pillow, every missing-glyph warning, and the fonts matplotlib found.

Run from the repository root as `.venv/bin/python -m tests.support.font_walk OUTPUT.json`
(tests/test_fonts.py runs it so in a subprocess that cannot see the system's fonts and reads
OUTPUT.json). With Streamlit's AppTest:
the entry script runs first (a page switched to before it would run alone), then each page of
`lens.steps.ALL_PAGES`, at the small link of `apptest_helpers.SMALL`. Figures are cached in the
process (lens/cache.py): a fresh process draws each one.

A probe before and after the walk draws a character that no font has (a private-use code point):
its warning must be caught, or a walk without warnings proves nothing.
"""

from __future__ import annotations

import json
import logging
import sys
import time
import traceback
import warnings
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.text  # noqa: E402
from fontTools.ttLib import TTFont  # noqa: E402
from matplotlib import font_manager  # noqa: E402
from PIL import ImageDraw  # noqa: E402

PROBE = "\U0010FFFD"  # a private-use code point: in no font
MISSING = ("missing from font", "missing from current font")  # matplotlib's glyph warnings


def is_cjk(text: str) -> bool:
    return any(0x2E80 <= ord(ch) <= 0x9FFF or 0xF900 <= ord(ch) <= 0xFFEF for ch in text)


class Recorder:
    """Everything the figures draw, and every warning about a missing glyph."""

    def __init__(self) -> None:
        self.mpl_texts: list[str] = []
        self.pil_texts: list[str] = []
        self.pil_missing: list[dict] = []  # Pillow text with a character its font lacks
        self.warnings: list[str] = []  # missing-glyph warnings (warnings and logging)
        self._cmaps: dict[tuple[str, int], set[int]] = {}

    def cmap(self, path: str, index: int) -> set[int]:
        if (path, index) not in self._cmaps:
            with TTFont(path, fontNumber=index, lazy=True) as f:
                self._cmaps[path, index] = set(f.getBestCmap())
        return self._cmaps[path, index]

    def install(self) -> None:
        rec = self
        text_draw = matplotlib.text.Text.draw
        pil_text = ImageDraw.ImageDraw.text

        def draw(self, renderer, *args, **kwargs):
            if self.get_visible() and self.get_text():
                rec.mpl_texts.append(self.get_text())
            return text_draw(self, renderer, *args, **kwargs)

        def text(self, xy, text, *args, **kwargs):
            font = kwargs.get("font", args[1] if len(args) > 1 else None)
            if isinstance(text, str) and text:
                rec.pil_texts.append(text)
                path = getattr(font, "path", None)
                if path is None:
                    rec.pil_missing.append({"text": text, "font": None, "missing": ""})
                else:
                    index = getattr(font, "index", 0) or 0
                    lacking = sorted({ch for ch in text if not ch.isspace()
                                      and ord(ch) not in rec.cmap(path, index)})
                    if lacking:
                        rec.pil_missing.append({"text": text, "font": f"{path}#{index}",
                                                "missing": "".join(lacking)})
            return pil_text(self, xy, text, *args, **kwargs)

        matplotlib.text.Text.draw = draw
        ImageDraw.ImageDraw.text = text

        shown = warnings.showwarning

        def showwarning(message, category, filename, lineno, file=None, line=None):
            if any(m in str(message) for m in MISSING):
                rec.warnings.append(str(message))
            return shown(message, category, filename, lineno, file, line)

        warnings.showwarning = showwarning
        warnings.simplefilter("always")  # every occurrence, not once per place

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                message = record.getMessage()
                if any(m in message for m in MISSING):
                    rec.warnings.append(message)

        logging.getLogger().addHandler(Handler(logging.WARNING))


def probe(rec: Recorder) -> list[str]:
    """The missing-glyph warnings of a figure that draws PROBE (then forgotten)."""
    from matplotlib.figure import Figure

    from lens.figures import to_png

    before_texts, before = len(rec.mpl_texts), len(rec.warnings)
    fig = Figure(figsize=(1, 1))
    fig.text(0.5, 0.5, f"probe {PROBE}")
    to_png(fig)
    found = rec.warnings[before:]
    del rec.warnings[before:], rec.mpl_texts[before_texts:]
    return found


def walk(rec: Recorder) -> list[dict]:
    """Every page once, in 中文: its exceptions, errors and time."""
    from streamlit import config

    from lens.steps import ALL_PAGES
    from tests.support.apptest_helpers import SMALL, new_app

    config.set_option("client.showErrorDetails", "full")  # the real message, for the report

    def page(page_id: str, path: str, seconds: float) -> dict:
        return {"id": page_id, "path": path, "seconds": seconds,
                "exceptions": ["\n".join([e.value, *e.stack_trace]) for e in at.exception],
                "errors": [e.value for e in at.error]}

    at = new_app(lang="zh", **SMALL)
    t0 = time.perf_counter()
    at.run()
    pages = [page("(entry)", "app.py", time.perf_counter() - t0)]
    for p in ALL_PAGES:
        t0 = time.perf_counter()
        at.switch_page(p.path).run()
        pages.append(page(p.id, p.path, time.perf_counter() - t0))
    return pages


def main(out: str) -> int:
    start = time.perf_counter()
    rec = Recorder()
    rec.install()
    result: dict = {"crash": None, "pages": []}
    try:
        from lens.figures import style
        from lens.figures.lettering import _font_files

        result["probe_before"] = probe(rec)
        result["pages"] = walk(rec)
        result["probe_after"] = probe(rec)
        result["fonts"] = list(style.FONTS)
        result["raster_fonts"] = [f"{path}#{index}" for path, index in _font_files()]
    except Exception:  # noqa: BLE001 - reported to the test, which fails on it
        result["crash"] = traceback.format_exc()
    result["ttflist"] = sorted({f"{f.name}|{f.fname}" for f in font_manager.fontManager.ttflist})
    result["ttflist_names"] = sorted({f.name for f in font_manager.fontManager.ttflist})
    result["mpl_texts"] = sorted(set(rec.mpl_texts))
    result["pil_texts"] = sorted(set(rec.pil_texts))
    result["pil_missing"] = rec.pil_missing
    result["missing_glyph_warnings"] = sorted(set(rec.warnings))
    result["seconds"] = time.perf_counter() - start
    Path(out).write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
