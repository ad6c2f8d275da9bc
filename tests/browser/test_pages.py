"""First load and every page from the navigation: pictures rendered, no error."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser_helpers import (
    ALL_PAGES,
    MAIN,
    STEPS,
    assert_no_errors,
    go_to_step,
    main_images,
    nav_label,
    nav_links,
    open_app,
    screenshot,
    sidebar,
    title,
    wait_for,
    wait_idle,
    wait_url,
)

pytestmark = pytest.mark.browser


def test_first_load_shows_default_image(page, app_url):
    open_app(page, app_url)
    assert title(page).startswith("Overview")
    assert page.url.startswith(f"{app_url}/overview?"), page.url
    expect(sidebar(page).get_by_text("Built-in photo")).to_be_visible()
    images = main_images(page, at_least=1)
    # the image pair (original | what the model receives) is a real, wide picture
    assert images[0]["w"] >= 400 and images[0]["h"] >= 150, images
    # the settings are mirrored in the URL from the first load on
    for key in ("d_model=512", "n_heads=8", "image_size=224", "lang=en"):
        assert key in page.url, page.url
    assert_no_errors(page)
    screenshot(page, "00_first_load")
    # "Next step →" leads to the patches page and its heatmaps
    page.locator(MAIN).get_by_role("button", name="Next step →").first.click()
    expect(page.locator(f"{MAIN} h1").first).to_have_text(re.compile("^Patches"))
    wait_idle(page)
    wait_url(page, "/patches?")
    heatmaps = main_images(page, at_least=3)
    assert all(i["w"] > 100 and i["h"] > 100 for i in heatmaps), heatmaps
    assert_no_errors(page)


def test_navigation_lists_the_steps_in_order(shared_page, app_url):
    open_app(shared_page, app_url)
    links = nav_links(shared_page)
    expect(links).to_have_count(len(ALL_PAGES))
    assert [t.strip() for t in links.all_inner_texts()] == [
        nav_label(i) for i in range(len(ALL_PAGES))]
    hrefs = [links.nth(i).get_attribute("href") or "" for i in range(len(ALL_PAGES))]
    assert [h.rsplit("/", 1)[-1] for h in hrefs] == [s[0] for s in ALL_PAGES]


@pytest.mark.parametrize("step", [s[0] for s in ALL_PAGES])
def test_page_opens_from_navigation(shared_page, app_url, step):
    """Each page opens by its link (same session): its title, 'Step k of n', pictures."""
    page = shared_page
    if not page.url.startswith(app_url):
        open_app(page, app_url)
    go_to_step(page, step)
    k = [s[0] for s in ALL_PAGES].index(step)
    assert title(page).startswith(ALL_PAGES[k][1])
    if k < len(STEPS):
        expect(page.locator(MAIN).get_by_text(f"Step {k + 1} of {len(STEPS)}").first
               ).to_be_visible()
    wait_url(page, f"/{step}?")
    screenshot(page, f"{k + 1:02d}_{step}")
    assert_no_errors(page)
    if step == "vit":  # the note's encoder has no [CLS]: one line says how to load a ViT
        expect(page.locator(MAIN).get_by_text("scripts/app --checkpoint FILE").first
               ).to_be_visible()
    elif step == "class":  # no class yet: the start and join forms (tests/browser/test_class.py)
        expect(page.locator(MAIN).get_by_role("button", name="Start a class")).to_be_visible()
        expect(page.locator(MAIN).get_by_role("button", name="Join")).to_be_visible()
    else:
        main_images(page, at_least=1)


OVERFLOWING_JS = """() => Array.from(document.querySelectorAll(
  '[data-testid="stMain"] .katex-display')).map(e => ({
    need: e.scrollWidth, have: e.clientWidth,
    scale: parseFloat(getComputedStyle(e.querySelector('.katex')).fontSize) /
           parseFloat(getComputedStyle(e).fontSize)}))"""


@pytest.mark.parametrize("step", ["multihead", "ffn", "learn"])
def test_wide_formulas_fit_a_phone_screen(browser, app_url, step):
    """At 390 px a formula wider than its column is drawn smaller until it fits (down to half
    its size), instead of being cut off."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True)
    page = ctx.new_page()
    try:
        open_app(page, app_url, step)

        def cut(shown: list[dict]) -> list[dict]:  # only one at the smallest size may scroll
            return [f for f in shown if f["need"] > f["have"] + 2 and f["scale"] > 0.61]

        shown = wait_for(lambda: page.evaluate(OVERFLOWING_JS), lambda s: s and not cut(s),
                         "the wide formulas to fit", timeout=20)  # fitted after a frame
        assert len(shown) >= 3, shown
        assert any(f["scale"] < 1.1 for f in shown), shown  # some had to shrink (KaTeX: 1.21)
        assert_no_errors(page)
    finally:
        ctx.close()


CUT_LABELS_JS = """() => Array.from(document.querySelectorAll(
  '[data-testid="stMain"] button')).filter(b => b.offsetParent !== null).flatMap(b =>
    Array.from(b.querySelectorAll('*')).filter(e => e.scrollWidth > e.clientWidth + 1 &&
      getComputedStyle(e).textOverflow === 'ellipsis').map(() => b.innerText.trim()))"""


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_no_button_label_is_cut_on_a_tablet(browser, app_url, lang):
    """At 820 px the buttons in narrow columns (Previous / Next, "Show a trained model…") wrap
    their labels onto a second line instead of cutting them with an ellipsis."""
    ctx = browser.new_context(viewport={"width": 820, "height": 1180})
    page = ctx.new_page()
    try:
        open_app(page, app_url, "multihead", f"lang={lang}")
        buttons = page.locator(f"{MAIN} button")
        expect(buttons.first).to_be_visible()
        assert buttons.count() >= 5
        assert page.evaluate(CUT_LABELS_JS) == []
        assert_no_errors(page)
    finally:
        ctx.close()
