"""Reflow at 200 % zoom (WCAG 1.4.10, issue 52): a laptop's 1280 px at 200 % is a 640 px wide
window, and nothing on a page may then be cut off or need a sideways scroll of the page.

At 640 × 800 (Streamlit still puts columns side by side there: the narrowest width where they
can crowd), every step of the walk in 中文 and in English (walked by its "Next step →"), the
pages beyond it in 中文 and those with the most columns in English, checked in the page's
layout (not a screenshot): the document and the main area are no wider than the window;
no picture, canvas, table, formula, button or paragraph of the main area reaches past either
edge; and no element that hides its overflow (`overflow-x: hidden | clip`) hides part of its
content (KaTeX's MathML copy for screen readers, drawn 1 px wide on purpose, aside). A formula
wider than its column scrolls inside its own box, which takes the keyboard's focus
(tests/browser/test_accessibility.py): that is allowed by 1.4.10 and is not counted here.

The check itself is shown to fail: a 2000 px wide block put into the main area is found.
"""

from __future__ import annotations

import pytest

from lens.i18n import translate
from lens.steps import EXTRA_PAGES, STEPS
from tests.browser.test_accessibility import PICTURES_SETTLED_JS
from tests.support.browser_helpers import MAIN, open_app, wait_for, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZOOMED = {"width": 640, "height": 800}  # 1280 × 800 at 200 %
WIDE_PAGES = ("compare", "class")  # beyond the walk, the most columns side by side

# What is wider than the window or cut off, in the main area: {page: [px], cut: [...], hidden:
# [...]} (each list: a few examples, with the element's tag, test id and text)
OVERFLOW_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const main = document.querySelector('[data-testid="stMain"]');
  const name = el => ({tag: el.tagName, id: el.dataset.testid || '',
                       text: (el.innerText || el.alt || '').slice(0, 40)});
  const cut = [];
  for (const el of main.querySelectorAll(
      'img, canvas, svg, table, iframe, button, p, h1, h2, h3, li, .katex-display')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || el.closest('.katex-mathml')) continue;
    if (r.right > vw + 1 || r.left < -1) cut.push({...name(el), left: r.left, right: r.right});
  }
  const hidden = [];
  for (const el of main.querySelectorAll('*')) {
    const cs = getComputedStyle(el);
    if ((cs.overflowX === 'hidden' || cs.overflowX === 'clip') && el.clientWidth > 2
        && el.scrollWidth > el.clientWidth + 2 && !el.closest('.katex-mathml'))
      hidden.push({...name(el), scroll: el.scrollWidth, client: el.clientWidth});
  }
  return {window: vw, document: document.scrollingElement.scrollWidth,
          main: main.scrollWidth, cut: cut.slice(0, 6), hidden: hidden.slice(0, 6)};
}"""


def problems(found: dict) -> list[str]:
    """What the layout check found wrong, in words (empty: the page reflows)."""
    out = []
    if found["document"] > found["window"] or found["main"] > found["window"]:
        out.append(f"wider than the window ({found['window']} px): the document "
                   f"{found['document']} px, the main area {found['main']} px")
    out += [f"past an edge: {c}" for c in found["cut"]]
    out += [f"content hidden: {h}" for h in found["hidden"]]
    return out


@pytest.fixture(scope="module")
def zoomed(browser):  # noqa: ANN001
    """One 640 × 800 page for every test (a session of its own)."""
    context = browser.new_context(viewport=ZOOMED)
    yield context.new_page()
    context.close()


def settled_on(page, step: str) -> dict:  # noqa: ANN001 (a Playwright Page)
    """Once `step` is shown, its run over and its pictures arrived: the layout check."""
    wait_for(lambda: page.evaluate("location.pathname"), lambda p: p == f"/{step}",
             f"the page {step!r}")
    wait_idle(page)
    page.wait_for_function(PICTURES_SETTLED_JS, timeout=60_000, polling=200)
    wait_idle(page)
    return page.evaluate(OVERFLOW_JS)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_nothing_is_cut_off_at_640_px(zoomed, app_url, lang):
    """The walk's steps one after the other by the page's "Next step →" (one session: no page
    load each), then the pages beyond the walk (in 中文 all; in English those with the most
    columns)."""
    found: dict[str, list[str]] = {}
    open_app(zoomed, app_url, STEPS[0].id, f"lang={lang}")
    for here, there in zip(STEPS, [*STEPS[1:], None], strict=True):
        found[here.id] = problems(settled_on(zoomed, here.id))
        if there is not None:
            zoomed.locator(MAIN).get_by_role(
                "button", name=translate("next", lang)).first.click()
    for extra in EXTRA_PAGES:
        if lang == "zh" or extra.id in WIDE_PAGES:
            open_app(zoomed, app_url, extra.id, f"lang={lang}")
            found[extra.id] = problems(settled_on(zoomed, extra.id))
    assert {k: v for k, v in found.items() if v} == {}, found
    assert len(found) >= len(STEPS)  # every step was looked at


def test_the_check_finds_a_block_wider_than_the_window(zoomed, app_url):
    open_app(zoomed, app_url, "overview", "lang=en")
    zoomed.evaluate("""() => {
      const p = document.createElement('p');
      p.style.width = '2000px'; p.textContent = 'too wide';
      document.querySelector('[data-testid="stMain"] h1').after(p);
    }""")
    found = problems(zoomed.evaluate(OVERFLOW_JS))
    assert any("too wide" in f for f in found), found
