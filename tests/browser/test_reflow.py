"""Reflow at 200 % zoom (WCAG 1.4.10, issue 52): a laptop's 1280 px at 200 % is a 640 px wide
window, and nothing on a page may then be cut off or need a sideways scroll of the page.

At 640 × 800 (Streamlit still puts columns side by side there: the narrowest width where they
can crowd), every page in 中文 and the pages with the most columns in English, checked in the
page's layout (not a screenshot): the document and the main area are no wider than the window;
no picture, canvas, table, formula, button or paragraph of the main area reaches past either
edge; and no element that hides its overflow (`overflow-x: hidden | clip`) hides part of its
content (KaTeX's MathML copy for screen readers, drawn 1 px wide on purpose, aside). A formula
wider than its column scrolls inside its own box, which takes the keyboard's focus
(tests/browser/test_accessibility.py): that is allowed by 1.4.10 and is not counted here.

The check itself is shown to fail: a 2000 px wide block put into the main area is found.
"""

from __future__ import annotations

import pytest

from lens.steps import ALL_PAGES
from tests.support.browser_helpers import open_app, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ZOOMED = {"width": 640, "height": 800}  # 1280 × 800 at 200 %
WIDE_PAGES = ("multihead", "addnorm", "compare", "class")  # the most columns side by side

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

# Settled: every picture of the main area loaded and their number steady for a second.
SETTLED_JS = """() => {
  const imgs = Array.from(document.querySelectorAll('[data-testid="stMain"] img'));
  if (!imgs.every(i => i.complete)) { window.__seen = -1; return false; }
  const now = Date.now();
  if (window.__seen !== imgs.length) { window.__seen = imgs.length; window.__since = now; }
  return now - window.__since > 1000;
}"""

CASES = [(p.id, "zh") for p in ALL_PAGES] + [(pid, "en") for pid in WIDE_PAGES]


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
    """One 640 × 800 page for every case (a page is opened by its own URL each time)."""
    context = browser.new_context(viewport=ZOOMED)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize(("page_id", "lang"), CASES, ids=[f"{p}-{lang}" for p, lang in CASES])
def test_nothing_is_cut_off_at_640_px(zoomed, app_url, page_id, lang):
    open_app(zoomed, app_url, page_id, f"lang={lang}")
    zoomed.wait_for_function(SETTLED_JS, timeout=60_000, polling=200)
    wait_idle(zoomed)
    assert problems(zoomed.evaluate(OVERFLOW_JS)) == []


def test_the_check_finds_a_block_wider_than_the_window(zoomed, app_url):
    open_app(zoomed, app_url, "overview", "lang=en")
    zoomed.evaluate("""() => {
      const p = document.createElement('p');
      p.style.width = '2000px'; p.textContent = 'too wide';
      document.querySelector('[data-testid="stMain"] h1').after(p);
    }""")
    found = problems(zoomed.evaluate(OVERFLOW_JS))
    assert any("too wide" in f for f in found), found
