"""What a user sees, held still: every page's AppTest element tree — the defaults, the trained
model, lesson mode and a small test ViT, in English and 中文 (kinds, texts, widget labels and
keys, each picture's SHA-256) — is the one in tests/golden/pages.json. A change that means to
change what a page shows writes the file anew (`python -m tests.support.golden_pages --write`)
and says why in its commit; any other difference is a regression of the app's layer."""

from __future__ import annotations

import json

import pytest

from tests.support import golden_pages

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def now(tmp_path_factory) -> dict:
    """Today's dump of every case, language and page."""
    folder = tmp_path_factory.mktemp("golden")
    return golden_pages.dump(checkpoint=golden_pages.test_checkpoint(folder))


def test_every_page_in_every_case_and_language_is_as_the_golden_file(now):
    golden = json.loads(golden_pages.GOLDEN.read_text(encoding="utf-8"))
    assert set(now) == set(golden_pages.CASES)
    diff = golden_pages.differences(golden, now)
    assert diff == [], "\n".join(diff)


def test_the_comparison_sees_a_changed_text_and_a_changed_picture():
    page = [{"at": "main/0", "kind": "title", "proto": {"body": "Patches"}},
            {"at": "main/1", "kind": "imgs", "proto": {"url": "media sha256:aa"}}]
    old = {"defaults": {"en": {"patches": page}}}
    text = [{**page[0], "proto": {"body": "Patch"}}, page[1]]
    picture = [page[0], {**page[1], "proto": {"url": "media sha256:bb"}}]
    assert golden_pages.differences(old, old) == []
    for changed in (text, picture, page[:1]):
        diff = golden_pages.differences(old, {"defaults": {"en": {"patches": changed}}})
        assert len(diff) == 1 and diff[0].startswith("defaults/en/patches:")
    # an emptied placeholder before them draws nothing: not a difference
    slot = [{"at": "main/0", "kind": "empty", "proto": {}},
            *({**e, "at": f"main/{k + 1}"} for k, e in enumerate(page))]
    assert golden_pages.differences(old, {"defaults": {"en": {"patches": slot}}}) == []


@pytest.mark.parametrize("case", ["defaults", "vit"])
def test_no_chinese_figure_has_smaller_text_than_its_english_twin(now, case):
    """The browser measures figure texts as displayed in English only
    (tests/browser/test_figure_text_size.py): the same pictures, shown in the same columns,
    have text at least as large in 中文 — relative to its picture's width, every figure's
    smallest text in 中文 ≥ in English (fit_fontsize shrinks a text too long for its place)."""
    smaller, measured = [], 0
    for page_id in now[case]["en"]:
        en, zh = (golden_pages.pictures(now[case][lang][page_id]) for lang in ("en", "zh"))
        assert len(en) == len(zh), f"{case}/{page_id}: {len(en)} pictures in en, {len(zh)} in zh"
        measured += len(en)
        smaller += [(page_id, k, e, z) for k, (e, z) in enumerate(zip(en, zh, strict=True))
                    if z[1] / z[0] < e[1] / e[0] * (1 - 1e-9)]
    assert measured > 20, f"only {measured} pictures with texts in {case}"
    assert smaller == [], f"中文 figures with smaller text than English (width, px): {smaller}"
