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


def test_every_page_in_every_case_and_language_is_as_the_golden_file(tmp_path):
    golden = json.loads(golden_pages.GOLDEN.read_text(encoding="utf-8"))
    now = golden_pages.dump(checkpoint=golden_pages.test_checkpoint(tmp_path))
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
