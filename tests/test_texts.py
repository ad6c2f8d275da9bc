"""Texts: every text in English and 中文; a page's keys never collide with the common ones."""

from __future__ import annotations

from lens import compute
from lens.steps import ALL_PAGES as PAGES


def test_every_text_has_an_english_and_a_chinese_version():
    import ast

    from lens.i18n import COMMON

    for key, (en, zh) in COMMON.items():
        assert en.strip() and zh.strip(), key
    for p in PAGES:
        tree = ast.parse((compute.ROOT / p.path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "TEXT":
                text = ast.literal_eval(node.value)
                for key, (en, zh) in text.items():
                    assert en.strip() and zh.strip(), (p.path, key)



def page_texts() -> dict[str, dict[str, tuple[str, str]]]:
    """Each page's TEXT table, read from its source without running it."""
    import ast

    tables = {}
    for p in PAGES:
        tree = ast.parse((compute.ROOT / p.path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "TEXT":
                tables[p.id] = ast.literal_eval(node.value)
    return tables


def test_no_page_text_key_is_also_a_common_key():
    from lens.i18n import COMMON, check_page_texts

    tables = page_texts()
    assert len(tables) == len(PAGES)
    for page_id, table in tables.items():
        assert not set(table) & set(COMMON), (page_id, sorted(set(table) & set(COMMON)))
        check_page_texts(page_id, table)


def test_the_meaning_controls_texts_are_in_both_languages_and_not_common_keys():
    from lens.i18n import COMMON
    from lens.meaning import TEXT

    for key, (en, zh) in TEXT.items():
        assert en.strip() and zh.strip(), key
        assert key not in COMMON and key.startswith("meaning_"), key


def test_a_page_text_that_collides_with_a_common_one_is_refused():
    import pytest

    from lens.i18n import TextCollisionError, check_page_texts

    with pytest.raises(TextCollisionError, match="weights"):
        check_page_texts("qkv", {"weights": ("Head {hh}'s slices", "切片"), "x": ("x", "x")})
