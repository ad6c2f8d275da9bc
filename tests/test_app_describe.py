"""AppTest: every picture of every page carries its description as its text alternative (the
image's `alt`, lens/describe.py through lens/widgets.py), in English and in 中文 — and a 中文
page's hold no English word beyond the math names of tests/test_describe.py (issue 52); a
description longer than its alt gives every part in a table under the picture, once opened."""

from __future__ import annotations

import pytest

from lens.steps import ALL_PAGES
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, page_path
from tests.test_describe import english_words


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


@pytest.mark.slow  # the whole app, twice
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


def long_picture_script() -> None:
    """A page with one picture of 10 attention maps: more than its alt describes one by one."""
    import numpy as np  # noqa: PLC0415

    from encoder_core import EncoderConfig, encode, init_params  # noqa: PLC0415
    from lens import figures, widgets  # noqa: PLC0415
    from lens.context import PageContext  # noqa: PLC0415

    cfg = EncoderConfig(image_size=32, patch_size=8, channels=3, d_model=16, n_heads=2,
                        n_layers=1, d_ff=32)
    image = np.random.default_rng(0).random((32, 32, 3))
    ctx = PageContext.for_trace(encode(image, cfg, init_params(cfg)), image,
                                page="multihead")
    maps = np.random.default_rng(1).dirichlet(np.ones(16), size=10).reshape(10, 4, 4)
    widgets.picture(ctx, figures.attention_grid, image, maps,
                    [f"head {i + 1}" for i in range(10)], "Ten maps", key="ten", query=5)


def test_a_long_description_gives_every_part_in_a_table_once_opened():
    from streamlit.testing.v1 import AppTest  # noqa: PLC0415

    at = AppTest.from_function(long_picture_script, default_timeout=60).run()
    assert_clean(at)
    [alt] = image_alts(at)
    assert "head 8:" in alt and "head 9:" not in alt  # 8 in the alt, the rest in the table
    [box] = [e for e in at.expander if e.label == "Describe this picture"]
    assert not at.table  # built only while open
    at.session_state["describe_open_ten"] = True  # the learner opens it
    at.run()
    assert_clean(at)
    [table] = at.table
    assert len(table.value) == 10 and "head 10" in list(table.value.index)
