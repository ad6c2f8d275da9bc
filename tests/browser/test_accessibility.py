"""WCAG 2.1 AA in a real browser (issue 52): axe-core (pinned in tools/axe, installed by
scripts/test) over every page of the app, in English and 中文, at a laptop's 1400 × 900 (every
page) and a phone's 390 × 844 (a few pages), and a few in lesson mode (its cards, its
withheld parts); the page's language (`<html lang>`) and its own
document title.

No violation is allowed except those in Streamlit's own markup that the app cannot change,
each listed in ALLOWED by rule and CSS selector (and in docs/accessibility.md, with why).

Run alone, it also prints every page's violations (`-s`): `ENCODER_LENS_AXE_ALLOW=none` turns
the allow-list off, to measure what axe sees in all.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from lens.layout_js import html_lang
from lens.steps import ALL_PAGES as PAGES
from tests.support.browser_helpers import default_trace, open_app, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

AXE = Path(__file__).resolve().parents[2] / "tools" / "axe" / "node_modules" / "axe-core" / \
    "axe.min.js"
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
LAPTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
PAGE_BY_ID = {p.id: p for p in PAGES}
# The phone and lesson mode for a few pages (the suite's run time); ENCODER_LENS_AXE_ALL=1
# scans every page at the phone's size and every step with cards in lesson mode too.
EVERY = os.environ.get("ENCODER_LENS_AXE_ALL") == "1"
PHONE_PAGES = tuple(p.id for p in PAGES) if EVERY else ("overview", "multihead", "stack")
LESSON_PAGES = (tuple(p.id for p in PAGES if p.id not in ("compare", "class"))
                if EVERY else ("overview", "scores", "learn"))  # their cards

# Violations in Streamlit's own markup that the app cannot change: (rule id, a regular
# expression the violating node's CSS selector matches). Each is explained in
# docs/accessibility.md.
ALLOWED: tuple[tuple[str, str], ...] = ()


def allowed(rule: str, target: str) -> bool:
    """Whether a violation of `rule` at the node `target` (axe's CSS selector) is one of
    Streamlit's own that ALLOWED lists."""
    if os.environ.get("ENCODER_LENS_AXE_ALLOW") == "none":
        return False
    return any(rule == r and re.search(pattern, target) for r, pattern in ALLOWED)


def axe_violations(page) -> list[dict]:  # noqa: ANN001 (a Playwright Page)
    """axe's violations of the page as it stands: [{id, impact, nodes: [selector]}]."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "async (tags) => { const r = await axe.run(document, "
        "{runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});"
        " return r.violations.map(v => ({id: v.id, impact: v.impact,"
        " nodes: v.nodes.map(n => n.target.join(' '))})); }", TAGS)
    return result


def not_allowed(violations: list[dict]) -> list[dict]:
    """The violations left once ALLOWED's are taken out (a rule with no node left goes)."""
    left = []
    for v in violations:
        nodes = [n for n in v["nodes"] if not allowed(v["id"], n)]
        if nodes:
            left.append({**v, "nodes": nodes})
    return left


def assert_axe_clean(page, what: str) -> None:  # noqa: ANN001 (a Playwright Page)
    """No axe violation beyond ALLOWED on `page` as it stands (`what`: which page, in the
    message) — for the class pages, scanned inside their own browser tests."""
    assert AXE.exists(), "axe-core is missing: (cd tools/axe && npm ci)"
    found = not_allowed(axe_violations(page))
    assert found == [], f"{what}: {found}"


# Every picture of the main area loaded, and their number unchanged for a second.
PICTURES_SETTLED_JS = """() => {
  const imgs = Array.from(document.querySelectorAll('[data-testid="stMain"] img'));
  if (!imgs.every(i => i.complete)) { window.__seen = -1; return false; }
  const now = Date.now();
  if (window.__seen !== imgs.length) { window.__seen = imgs.length; window.__since = now; }
  return now - window.__since > 1000;
}"""


FORMULAS_FITTED_JS = """() => Array.from(
  document.querySelectorAll('[data-testid="stMain"] .katex-display')).every(
    b => b.scrollWidth <= b.clientWidth + 1 || b.getAttribute('tabindex') === '0')"""


@pytest.fixture(scope="module")
def base(request) -> str:  # noqa: ANN001
    """The app's URL: ENCODER_LENS_AXE_URL when set (a server started by hand, e.g. an older
    commit's, to measure it), else the browser tests' server."""
    return os.environ.get("ENCODER_LENS_AXE_URL") or request.getfixturevalue("app_url")


def visit(page, url: str, page_id: str, lang: str, extra: str = "") -> None:  # noqa: ANN001
    """Open a page in `lang` and wait until its run is over and its pictures have arrived: the
    layout component has set `<html lang>` (it is mounted in the page's own run, before its
    header), the pictures are loaded and their number steady, and the app is idle again."""
    open_app(page, url, page_id, f"lang={lang}{extra}")
    page.wait_for_function("(want) => document.documentElement.lang === want",
                           arg=html_lang(lang), timeout=60_000)
    page.wait_for_function(PICTURES_SETTLED_JS, timeout=60_000, polling=200)
    wait_idle(page)
    # the layout behaviours have fitted the formulas (a web font arriving late widens one):
    # each that still scrolls sideways has been made focusable — bounded, so one never made
    # so fails here
    page.wait_for_function(FORMULAS_FITTED_JS, timeout=10_000, polling=200)


CASES = [(p.id, lang, "laptop") for p in PAGES for lang in ("en", "zh")] + \
    [(pid, lang, "phone") for pid in PHONE_PAGES for lang in ("en", "zh")] + \
    [(pid, lang, "lesson") for pid in LESSON_PAGES for lang in ("en", "zh")]


@pytest.mark.parametrize(("page_id", "lang", "size"), CASES,
                         ids=[f"{p}-{lang}-{s}" for p, lang, s in CASES])
def test_no_axe_violation_beyond_streamlits_own(browser, base, page_id, lang, size):
    assert AXE.exists(), "axe-core is missing: (cd tools/axe && npm ci)"
    context = browser.new_context(viewport=PHONE if size == "phone" else LAPTOP)
    try:
        page = context.new_page()
        visit(page, base, page_id, lang, "&lesson=1" if size == "lesson" else "")
        # the page's language (visit waits for it) and its own title
        assert page.evaluate("document.documentElement.lang") == html_lang(lang)
        assert PAGE_BY_ID[page_id].title_in(lang) in page.title(), page.title()
        found = axe_violations(page)
        print(json.dumps({"page": page_id, "lang": lang, "size": size,
                          "violations": [(v["id"], v["impact"], len(v["nodes"]))
                                         for v in found]}, ensure_ascii=False))
        assert not_allowed(found) == []
    finally:
        context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_page_has_a_title_of_its_own(lang):
    """Each page's document title names it (checked as displayed in each scan above): no two
    pages share one."""
    titles = [p.title_in(lang) for p in PAGES]
    assert len(set(titles)) == len(titles), titles


def test_the_allow_list_takes_out_only_what_it_names(monkeypatch):
    monkeypatch.setattr(__import__(__name__, fromlist=["ALLOWED"]), "ALLOWED",
                        (("region", r"^\.stApp"),))
    found = [{"id": "region", "impact": "moderate", "nodes": [".stApp > div", "#main"]},
             {"id": "image-alt", "impact": "critical", "nodes": [".stApp img"]}]
    assert not_allowed(found) == [
        {"id": "region", "impact": "moderate", "nodes": ["#main"]},
        {"id": "image-alt", "impact": "critical", "nodes": [".stApp img"]}]


def test_the_explorers_description_follows_the_query(browser, base):
    """The live explorer (a canvas) says in words what its maps show for the patch pointed at —
    each head's strongest patch among them — and says it again when an arrow key moves it."""
    attn = default_trace().layers[0].attn  # [heads, N, N], the Multi-head page's layer 1
    G = int(round(attn.shape[-1] ** 0.5))
    query = (G // 2) * G + G // 2
    for lang, patch in (("en", "patch {}"), ("zh", "图像块 {}")):
        context = browser.new_context(viewport=LAPTOP)
        try:
            page = context.new_page()
            visit(page, base, "multihead", lang)
            said = page.locator('[data-testid="el-description"]').first
            for q in (query, query + 1):
                text = said.text_content() or ""
                assert str(q) in text and said.get_attribute("aria-live") == "polite"
                for head in attn[:, q]:
                    assert patch.format(int(head.argmax())) in text, (lang, q, text)
                page.locator('[data-testid="el-picker"]').first.focus()
                page.keyboard.press("ArrowRight")
                page.wait_for_function(
                    "([el, q]) => el.textContent.includes(String(q))",
                    arg=[said.element_handle(), q + 1], timeout=10_000)
        finally:
            context.close()


# What has the keyboard's focus: the element, or inside a component's shadow root its own.
FOCUSED_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  if (!e || e === document.body) return null;
  return {label: (e.getAttribute('aria-label') || e.textContent || '').trim().slice(0, 60),
          testid: e.dataset.testid || '', main: !!(e.closest('[data-testid="stMain"]')
            || (e.getRootNode().host || e).closest('[data-testid="stMain"]'))};
}"""


def test_the_multihead_page_is_walked_by_keyboard(browser, base):
    """Tab alone reaches the page's controls in the page's order — the previous / next step,
    the query's row and column, the layer, the explorer's picture (whose arrow keys move the
    query) — and Enter on "Next step →" opens the next step."""
    from lens.i18n import translate  # noqa: PLC0415

    context = browser.new_context(viewport=LAPTOP)
    try:
        page = context.new_page()
        visit(page, base, "multihead", "en")
        page.evaluate("document.activeElement && document.activeElement.blur()")
        seen = []
        for _ in range(120):
            page.keyboard.press("Tab")
            now = page.evaluate(FOCUSED_JS)
            if now and now["main"]:
                seen.append(f"{now['testid']} | {now['label']}")
        wanted = [translate("prev", "en"), translate("query_row", "en"),
                  translate("query_col", "en"), "el-picker", translate("next", "en")]
        at = -1
        for w in wanted:  # each after the one before: in the page's order
            at = next((i for i, s in enumerate(seen) if i > at and w in s), len(seen))
            assert at < len(seen), (w, seen)
        for _ in range(2 * len(seen)):  # on to the next step's button, then Enter
            page.keyboard.press("Shift+Tab")
            now = page.evaluate(FOCUSED_JS)
            if now and now["label"].startswith(translate("next", "en")):
                break
        page.keyboard.press("Enter")
        page.wait_for_url(re.compile(r"/addnorm\b"), timeout=60_000)
    finally:
        context.close()
