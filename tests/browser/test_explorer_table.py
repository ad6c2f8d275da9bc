"""The live attention explorer's table alternative (issue 52, WCAG 1.1.1 and 1.3.1), in Chromium
on the Multi-head page, in English and 中文: a button ("Show as a table"), reached and pressed
with the keyboard, shows a real table — a caption that names the query patch, a header row of
`<th scope="col">`, one row per head under a `<th scope="row">` — holding each head's three
strongest patches with their weights and its weight on the query itself, the numbers of the
trace; an arrow key on the picture moves the query and the table follows it, and stays open
when the commit's rerun mounts the explorer anew; axe finds no violation with it shown."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from lens.i18n import translate
from tests.browser.test_accessibility import LAPTOP, axe_violations, not_allowed, visit
from tests.support.browser_helpers import default_trace, wait_idle, wait_url

pytestmark = [pytest.mark.browser, pytest.mark.slow]

EXPLORER = '[data-testid="el-explorer"]'
NUMBER = r"(\d+(?:\.\d+)?(?:e[−-]?\d+)?)"  # a weight as the explorer writes it (fmt)


def weight(text: str) -> float:
    return float(text.replace("−", "-"))


def same_to_3_digits(shown: float, trace: float) -> bool:
    """`shown` is `trace` to 3 significant digits, within one unit of the third (float16)."""
    return abs(shown - trace) <= 10 ** (math.floor(math.log10(abs(trace))) - 2)


def check_rows(page, attn: np.ndarray, q: int, lang: str) -> None:
    """Each head's row: its name, its three strongest patches with their weights and its
    weight on the query itself, against the trace's attention row of query q."""
    rows = page.locator(f"{EXPLORER} [data-testid='el-table'] tbody tr")
    assert rows.count() == attn.shape[0]
    # "patch 42 (0.0115)" / "图像块 42 为 0.0115"
    cell = re.compile(re.escape(translate("alt_patch_value", lang, "describe", i="§", v="¶"))
                      .replace("§", r"(\d+)").replace("¶", NUMBER))
    for h, w in enumerate(attn[:, q]):  # w [N]: head h's weights of query q
        row = rows.nth(h)
        assert row.locator("th[scope='row']").text_content() == translate(
            "head_n", lang, "multihead", n=h + 1)
        cells = [c.strip() for c in row.locator("td").all_text_contents()]
        assert len(cells) == 4, cells
        strongest = np.argsort(-w, kind="stable")[:3]
        for text, j in zip(cells[:3], strongest, strict=True):
            found = cell.fullmatch(text)
            assert found, (lang, h, text)
            shown = int(found.group(1))
            # float16 may swap two weights closer than its rounding: then the weight decides
            assert shown == j or math.isclose(w[shown], w[j], rel_tol=2e-3), (h, text, j)
            assert same_to_3_digits(weight(found.group(2)), float(w[shown])), (h, text)
        assert same_to_3_digits(weight(cells[3]), float(w[q])), (h, cells[3], w[q])


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_explorers_table_shows_each_heads_strongest_patches_and_follows_the_query(
        lang, browser, app_url):
    attn = np.asarray(default_trace().layers[0].attn)  # [heads, N, N]: the page's layer 1
    G = int(round(attn.shape[-1] ** 0.5))
    query = (G // 2) * G + G // 2
    say = lambda key, **kw: translate(key, lang, "describe", **kw)  # noqa: E731
    context = browser.new_context(viewport=LAPTOP)
    try:
        page = context.new_page()
        visit(page, app_url, "multihead", lang)
        button = page.locator(f"{EXPLORER} [data-testid='el-table-button']")
        table = page.locator(f"{EXPLORER} [data-testid='el-table']")
        assert button.text_content() == say("table_show")
        assert button.get_attribute("aria-expanded") == "false" and table.is_hidden()
        assert button.get_attribute("aria-controls") == table.get_attribute("id")
        button.focus()
        page.keyboard.press("Enter")  # the keyboard opens it
        assert table.is_visible() and button.get_attribute("aria-expanded") == "true"
        assert button.text_content() == say("table_hide")
        heads = table.locator("thead th[scope='col']").all_text_contents()
        assert heads == [say("table_map"), *(say(f"table_top_{k}") for k in (1, 2, 3)),
                         say("table_own")]
        caption = table.locator("caption")
        assert str(query) in (caption.text_content() or "")
        check_rows(page, attn, query, lang)
        page.locator(f"{EXPLORER} [data-testid='el-picker']").focus()
        page.keyboard.press("ArrowDown")  # the query moves a row down: the table follows
        page.wait_for_function("([el, q]) => el.textContent.includes(String(q))",
                               arg=[caption.element_handle(), query + G], timeout=10_000)
        check_rows(page, attn, query + G, lang)
        wait_url(page, f"&query={query + G}")  # committed: the rerun mounts the explorer anew
        wait_idle(page)
        assert table.is_visible() and str(query + G) in (caption.text_content() or "")
        assert button.get_attribute("aria-expanded") == "true"  # still open
        assert not_allowed(axe_violations(page)) == []  # axe, with the table shown
    finally:
        context.close()
