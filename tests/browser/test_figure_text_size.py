"""No figure text under 10 px as displayed (issue 22, item 3), measured in the browser.

Every page is opened at 1400 × 900 and at 820 × 1180 (the ViT page with the small random timm ViT
of `vit_checkpoint`, its only content), and every page with that ViT at 820 × 1180, in English:
a 中文 figure's text is never smaller than its English twin's for the same picture width, which
tests/test_golden_pages.py checks for every picture of every page without a browser (the
columns do not depend on the language). For every picture of the main
pane: the PNG behind its `src` says how large its smallest text is in its own pixels (the tEXt
chunk `min_text_px` that every figure function writes, `lens.figures.min_text_px`) and which
figure function drew it; shown `clientWidth` CSS px wide, that text is

    displayed px = min_text_px × clientWidth / naturalWidth

and must be at least 10. At 820 px the sidebar is folded first when it is open (the tablet's
main column is ≥ 600 px wide: the app folds it there itself, issue 22, item 4); the explorer's
grey hints (CSS text, not a PNG: "click a map to see it large") by their computed font size,
which must be at least 12 px (grey text needs more size than black).

A report of every picture and the smallest per figure kind goes to
test-artifacts/figure-text-sizes.md. At a phone's 390 px only the pictures drawn in a tall form
for it are checked (`TALL_ON_A_PHONE`): there a grid of many small maps may go smaller, where a
tap opens each one large.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lens import figures
from lens.models import CHECKPOINTS_ENV
from lens.steps import ALL_PAGES
from tests.support.browser_helpers import (
    ARTIFACTS,
    MAIN,
    MAIN_IMAGES,
    SIDEBAR,
    TIMEOUT_MS,
    app_server,
    assert_no_errors,
    main_images,
    open_app,
    screenshot,
    wait_for,
)

pytestmark = pytest.mark.browser

SMALLEST_PX = 10.0  # no figure text under this, in CSS pixels as displayed
HINT_PX = 12.0  # the explorer's hints are grey (opacity 0.75): they need a size more
SIZES = ((1400, 900), (820, 1180))
LANG = "en"  # 中文 text is never smaller (tests/test_golden_pages.py)
VIT = "weights=vit_tiny_test"  # the ViT page's pictures need a ViT
REPORT = ARTIFACTS / "figure-text-sizes.md"
HINTS = f"{MAIN} .el-hint, {MAIN} .el-note"  # the explorer's grey hints

MEASURE_JS = """els => els.filter(e => e.offsetParent !== null).map(e => {
  const r = e.getBoundingClientRect();  // pictures not displayed (the other layout) left out
  return {src: e.src, natural: e.naturalWidth, shown: r.width};
})"""
COLUMN_JS = """() => {
  const c = document.querySelector('[data-testid="stMainBlockContainer"]');
  const s = getComputedStyle(c);
  return c.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
}"""
HINTS_JS = """els => els
  .filter(e => e.offsetParent !== null && e.textContent.trim())
  .map(e => ({text: e.textContent.trim().slice(0, 40),
              px: parseFloat(getComputedStyle(e).fontSize)}))"""


@pytest.fixture(scope="module")
def server(vit_checkpoint) -> Iterator[str]:
    """A server of this repository whose registry holds the test ViT (beside the defaults);
    its log: test-artifacts/streamlit-text-size-server.log."""
    with app_server("streamlit-text-size-server.log", {CHECKPOINTS_ENV: vit_checkpoint}) as url:
        yield url


@pytest.fixture(scope="module")
def rows() -> Iterator[list[dict]]:
    """Every picture measured in this module; written to REPORT at its end."""
    found: list[dict] = []
    yield found
    write_report(found)


def column_width(page) -> float:
    """The main block container's content width, in CSS px."""
    return page.evaluate(COLUMN_JS)


def wide_main(page, width: int) -> None:
    """At a tablet's width the main column spans the window (the app folds its sidebar there,
    issue 22, item 4); when the sidebar is open still, fold it, and wait for the column."""
    spans = lambda w: w >= width - 80  # noqa: E731  (the container's padding: 2 × 1 rem)
    try:
        wait_for(lambda: column_width(page), spans, "the app to fold its sidebar", timeout=3)
        return
    except AssertionError:
        pass
    open_bar = page.locator(f'{SIDEBAR}[data-collapsed="false"]')
    if open_bar.count():
        page.locator(SIDEBAR).hover()
        page.locator('[data-testid="stSidebarCollapseButton"] button').click()
    wait_for(lambda: column_width(page), spans, "the main column to span the window")
    page.wait_for_timeout(300)  # the pictures follow the column


def settled(page, polls: int = 20) -> list[dict]:
    """The pictures' sizes once the layout has settled: the same over two reads 250 ms apart
    (a sidebar folding, a scroll bar appearing or a late picture still move the columns)."""
    before = page.locator(MAIN_IMAGES).evaluate_all(MEASURE_JS)
    for _ in range(polls):
        page.wait_for_timeout(250)
        now = page.locator(MAIN_IMAGES).evaluate_all(MEASURE_JS)
        if now == before:
            return now
        before = now
    return before


def measure(page, lang: str, size: tuple[int, int], page_id: str) -> list[dict]:
    """The pictures of the page that is open: one row each, with its displayed text size."""
    images = settled(page)
    column = column_width(page)
    found = []
    for img in images:
        if img["shown"] <= 0:  # folded away (an expander): not seen as it is
            continue
        resp = page.context.request.get(img["src"])
        assert resp.ok, f"GET {img['src']} answered {resp.status}"
        body = resp.body()
        smallest = figures.min_text_px(body)
        texts = figures.png_texts(body)
        kind = texts.get(figures.FIGURE_KEY, "?")
        assert kind != "?", f"{page_id}: a picture not drawn by lens.figures ({img['src']})"
        if smallest is None:
            continue
        found.append(dict(lang=lang, size=f"{size[0]}×{size[1]}", page=page_id, kind=kind,
                          column=round(column), natural=img["natural"],
                          shown=round(img["shown"]), min_px=smallest,
                          cut=int(texts.get(figures.CUT_KEY, 0)),
                          displayed=round(smallest * img["shown"] / img["natural"], 1)))
    return found


def walk(browser, server: str, rows: list[dict], size: tuple[int, int], lang: str,
         vit_everywhere: bool = False) -> None:
    """Every page at `size` in `lang` (the ViT page with the test ViT, every page with it when
    `vit_everywhere`): no figure text under 10 px as displayed, no explorer hint under 12 px."""
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    ctx.set_default_timeout(TIMEOUT_MS)
    page = ctx.new_page()
    small, hints, hint_pages = [], [], []
    try:
        for p in ALL_PAGES:
            if p.id == "class":  # no picture before a class runs: its charts, drawn at their
                continue  # own size, are checked in tests/test_figures.py and test_class.py
            query = f"lang={lang}" + (f"&{VIT}" if p.id == "vit" or vit_everywhere else "")
            open_app(page, server, p.id, query)
            assert_no_errors(page)
            if size[0] < 1000:
                wide_main(page, size[0])
            main_images(page)
            name = f"{p.id} (ViT)" if vit_everywhere else p.id
            measured = measure(page, lang, size, name)
            assert measured, f"{name}: no picture measured"
            rows.extend(measured)
            small += [r for r in measured if r["displayed"] < SMALLEST_PX]
            seen = page.locator(HINTS).evaluate_all(HINTS_JS)  # the locator pierces the
            hints += [(name, h) for h in seen if h["px"] < HINT_PX]  # component's shadow root
            hint_pages += [p.id] if seen else []
            if [r for r in measured if r["displayed"] < SMALLEST_PX]:
                screenshot(page, f"small-text-{lang}-{size[0]}-{p.id}")
    finally:
        ctx.close()
    assert not small, "figure texts under 10 px as displayed:\n" + "\n".join(
        f"  {r['page']}: {r['kind']} {r['displayed']} px ({r['min_px']} px in a "
        f"{r['natural']} px PNG shown {r['shown']} px wide)" for r in small)
    assert {"multihead", "stack"} <= set(hint_pages), f"hints seen on {hint_pages} only"
    assert not hints, f"explorer hints under {HINT_PX:g} px: {hints}"


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_no_figure_text_is_under_10_px_as_displayed(browser, server, rows, size):
    walk(browser, server, rows, size, LANG)


def test_nor_with_a_vit_at_a_tablets_width(browser, server, rows):
    """A ViT's pictures (CLS rows, 197 tokens, its own steps) at 820 px, the narrower width."""
    walk(browser, server, rows, SIZES[1], LANG, vit_everywhere=True)


# On a phone, the pictures drawn twice (side by side, and one part under the other:
# `lens.widgets.wide_or_tall`) show their tall form, legible there: page -> figure kinds.
PHONE = (390, 844)
TALL_ON_A_PHONE = {"overview": {"pipeline"}, "scores": {"bar_panels"}}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_the_pictures_drawn_tall_are_legible(browser, server, rows, lang):
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    ctx.set_default_timeout(TIMEOUT_MS)
    page = ctx.new_page()
    try:
        for page_id, kinds in TALL_ON_A_PHONE.items():
            open_app(page, server, page_id, f"lang={lang}")
            main_images(page)
            measured = [r for r in measure(page, lang, PHONE, page_id) if r["kind"] in kinds]
            assert {r["kind"] for r in measured} == kinds, f"{page_id}: {measured}"
            rows.extend(measured)
            small = [r for r in measured if r["displayed"] < SMALLEST_PX]
            if small:
                screenshot(page, f"small-text-{lang}-{PHONE[0]}-{page_id}")
            assert not small, f"{page_id} on a phone: {small}"
            assert_no_errors(page)
    finally:
        ctx.close()


# Pages drawn for a phone throughout (issue 50, item 6): at 390 px every picture's text is
# ≥ 10 px and every displayed formula ≥ 12 px (lens/layout_web/layout.js shrinks a formula wider
# than the column: its lines must be short enough), the folded arithmetic opened.
EVERY_PICTURE_ON_A_PHONE = ("learn",)
FORMULA_PX = 12.0
OPEN_FOLDS_JS = """() => document.querySelectorAll(
  '[data-testid="stMain"] [data-testid="stExpander"] details').forEach(d => { d.open = true; })"""
FORMULAS_JS = """() => Array.from(document.querySelectorAll(
    '[data-testid="stMain"] .katex-display > .katex'))
  .filter(k => k.offsetParent !== null)
  .map(k => ({px: parseFloat(getComputedStyle(k).fontSize),
              tex: (k.querySelector('annotation') || {}).textContent || ''}))"""


def formulas_settled(page, polls: int = 20) -> list[dict]:
    """The displayed formulas' font sizes once the fitting has settled (two reads alike)."""
    before = page.evaluate(FORMULAS_JS)
    for _ in range(polls):
        page.wait_for_timeout(250)
        now = page.evaluate(FORMULAS_JS)
        if now == before:
            return now
        before = now
    return before


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_a_phone_every_picture_and_formula_of_how_it_learns_is_legible(browser, server,
                                                                            rows, lang):
    ctx = browser.new_context(viewport={"width": PHONE[0], "height": PHONE[1]})
    ctx.set_default_timeout(TIMEOUT_MS)
    page = ctx.new_page()
    try:
        for page_id in EVERY_PICTURE_ON_A_PHONE:
            open_app(page, server, page_id, f"lang={lang}")
            main_images(page)
            assert_no_errors(page)
            measured = measure(page, lang, PHONE, page_id)
            assert measured, f"{page_id}: no picture measured"
            rows.extend(measured)
            small = [r for r in measured if r["displayed"] < SMALLEST_PX]
            page.evaluate(OPEN_FOLDS_JS)
            formulas = formulas_settled(page)
            assert len(formulas) >= 10, f"{page_id}: formulas seen: {formulas}"
            tiny = [f for f in formulas if f["px"] < FORMULA_PX]
            if small or tiny:
                screenshot(page, f"small-text-{lang}-{PHONE[0]}-{page_id}")
            assert not small, f"{page_id} on a phone: {small}"
            assert not tiny, f"{page_id} on a phone, formulas under {FORMULA_PX:g} px: {tiny}"
    finally:
        ctx.close()


def write_report(found: list[dict]) -> None:
    """Every picture measured, and the smallest displayed text per figure kind and size."""
    if not found:
        return
    lines = ["# Figure texts as displayed (tests/browser/test_figure_text_size.py)", "",
             "## Smallest per figure kind", "", "| figure | " + " | ".join(
                 f"{w}×{h}" for w, h in SIZES) + " |", "|---|" + "---|" * len(SIZES)]
    for kind in sorted({r["kind"] for r in found}):
        cells = []
        for w, h in SIZES:
            these = [r for r in found if r["kind"] == kind and r["size"] == f"{w}×{h}"]
            low = min(these, key=lambda r: r["displayed"], default=None)
            cells.append("—" if low is None else
                         f"{low['displayed']} px ({low['page']}, {low['lang']})")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    lines += ["", "## Every picture", "",
              "| lang | size | page | figure | column px | PNG px | shown px | min text (PNG px) "
              "| displayed px | texts cut with … |", "|---|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['lang']} | {r['size']} | {r['page']} | {r['kind']} | {r['column']} | "
              f"{r['natural']} | {r['shown']} | {r['min_px']} | {r['displayed']} | "
              f"{r['cut'] or ''} |" for r in found]
    REPORT.write_text("\n".join(lines) + "\n", encoding="utf-8")
