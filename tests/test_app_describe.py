"""AppTest: every picture of every page carries its description as its text alternative (the
image's `alt`, lens/describe.py through lens/widgets.py), in English and in 中文 — and a 中文
page's hold no English word beyond the math names of tests/test_describe.py (issue 52)."""

from __future__ import annotations

import pytest

from lens.steps import ALL_PAGES
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, page_path
from tests.test_describe import english_words

pytestmark = pytest.mark.slow  # the whole app, twice


def image_alts(at) -> list[str]:
    """The alt of every image the page's main area sent (st.image / st.pyplot)."""
    alts: list[str] = []

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        if proto is not None and hasattr(proto, "imgs"):
            alts.extend(img.alt for img in proto.imgs)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at.main)
    return alts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_picture_of_every_page_has_its_description(lang):
    at = new_app(**SMALL, lang=lang)
    at.run()
    seen = {}
    for p in ALL_PAGES:
        at.switch_page(page_path(p.id)).run()
        assert_clean(at)
        alts = image_alts(at)
        assert all(a.strip() for a in alts), (p.id, alts)
        if lang == "zh":
            assert [english_words(a) for a in alts if english_words(a)] == [], p.id
        seen[p.id] = len(alts)
    assert sum(seen.values()) >= 40 and seen["multihead"] >= 3, seen  # pictures were seen
