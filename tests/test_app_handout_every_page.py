"""The walk's PDF is built when asked on every page, whatever its variant (issue 49).

The sidebar's "Prepare the walk as PDF" notes a press during the page's run and builds after
it (`lens.runner.run_page`: `handout.ui.offer`, `render(ctx)`, then `handout.ui.build_asked`).
A page that ended the script with `st.stop()` skipped that end: the button did nothing on
Feed-forward with the FFN off, on Add & Norm, Positional and Feed-forward with a ViT (pre-norm,
learned positions), and on the ViT page with the note's encoder (no [CLS]). Here every page at
the defaults and each of those variants is asked, in English and 中文, with the build replaced by
a recording stub (about 1 s a page: in the fast lane); a real build per variant and language
checks the PDF itself."""

from __future__ import annotations

import pytest

from lens import keys
from lens.handout import book
from lens.handout import ui as handout_ui
from tests.support.apptest_helpers import ALL_PAGES, SMALL, assert_clean, build_button, opened

STUB_PDF = b"%PDF-stub"
LANGS = ("en", "zh")
# the variants whose render stopped the script before: (case, link settings, their pages)
VARIANTS = [("no_ffn", {**SMALL, "use_ffn": "0"}, ("ffn",)),
            ("vit", {"weights": "vit_tiny_test"}, ("addnorm", "positional", "ffn")),
            ("note_encoder", SMALL, ("vit",))]
CASES = [("defaults", {}, tuple(page for page, _ in ALL_PAGES)), *VARIANTS]
ASKED = [pytest.param(case, query, page, lang, id=f"{case}-{page}-{lang}")
         for case, query, pages in CASES for page in pages for lang in LANGS]
# one real build per variant and language, on its last page (a ViT's: Feed-forward, whose
# render stopped in two places)
REAL = [pytest.param(case, query, pages[-1], lang, id=f"{case}-{pages[-1]}-{lang}")
        for case, query, pages in VARIANTS for lang in LANGS]


class Builds:
    """Stands in for `lens.handout.book.handout` (the ten steps' PDF, ~1 s and more at the
    defaults), and records what each press of the button handed the runner's end: the page's
    context (`handout_ui.build_asked`) and the context the PDF's sheets were given."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.contexts, self.sheets = [], []
        real_build_asked = handout_ui.build_asked

        def build_asked(ctx, slot):
            self.contexts.append(ctx)
            real_build_asked(ctx, slot)

        monkeypatch.setattr(handout_ui, "build_asked", build_asked)
        monkeypatch.setattr(book, "handout", self.handout)

    def handout(self, ctx, title, told, **beyond) -> bytes:
        self.sheets.append(ctx)
        told(1.0)
        return STUB_PDF


def opened_on(request: pytest.FixtureRequest, case: str, query: dict, page: str, lang: str):
    """A new session on `page` with the case's link settings (a ViT's: the suite's checkpoint
    loaded), the build's button offered."""
    if case == "vit":
        request.getfixturevalue("with_checkpoint")
    at = opened(page, lang=lang, **query)
    assert build_button(at), f"{page}: no button to press"
    return at


def press(at) -> None:
    build_button(at)[0].click().run(timeout=300)
    assert_clean(at)


def offered_for_download(at) -> bool:
    return any(b.key == keys.HANDOUT_DOWNLOAD for b in at.sidebar.get("download_button"))


@pytest.mark.parametrize("case, query, page, lang", ASKED)
def test_pressing_the_button_builds_the_walk_after_the_page(request, monkeypatch, case, query,
                                                            page, lang):
    at = opened_on(request, case, query, page, lang)
    builds = Builds(monkeypatch)
    press(at)
    assert [(c.id, c.lang) for c in builds.contexts] == [(page, lang)]
    ctx = builds.contexts[0]
    assert len(builds.sheets) == 1, f"{page} ({case}): the button built nothing"
    assert builds.sheets[0].trace is ctx.trace and builds.sheets[0].lang == lang
    assert at.session_state[keys.HANDOUT][1] == STUB_PDF
    assert not build_button(at) and offered_for_download(at)


@pytest.mark.slow  # the ten steps' PDF, 3 s or more each
@pytest.mark.parametrize("case, query, page, lang", REAL)
def test_a_real_build_on_a_page_that_stopped_early_gives_a_pdf(request, case, query, page,
                                                              lang):
    at = opened_on(request, case, query, page, lang)
    press(at)
    pdf = at.session_state[keys.HANDOUT][1]
    assert pdf.startswith(b"%PDF") and pdf != STUB_PDF
    assert not build_button(at) and offered_for_download(at)
