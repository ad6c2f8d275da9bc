"""The end of the walk in Chromium (issue 22): The stack ends with a recap whose links reach
every step and the pages after the walk, its step label is centred, and the ViT page without
a ViT names the sidebar's "Download a model"."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from lens.i18n import translate
from lens.steps import EXTRA_PAGES, STEPS
from tests.support.browser_helpers import (
    MAIN,
    assert_no_errors,
    open_app,
    screenshot,
    sidebar,
    title,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stack_links_every_step_and_compare_and_its_label_is_centred(page, app_url, lang):
    page.set_viewport_size({"width": 1400, "height": 900})
    open_app(page, app_url, "stack", f"lang={lang}")
    assert title(page) == STEPS[-1].title_in(lang)
    recap = page.locator(MAIN).get_by_role("heading", name=translate("recap_title", lang, "stack"))
    expect(recap).to_be_visible()
    links = page.locator(f'{MAIN} [data-testid="stPageLink"] a')
    wanted = [s.id for s in STEPS] + [p.id for p in EXTRA_PAGES]
    expect(links).to_have_count(len(wanted))  # the recap's heading may show before its links
    hrefs = [re.sub(r"\?.*", "", links.nth(i).get_attribute("href") or "")
             for i in range(links.count())]
    assert [h.rsplit("/", 1)[-1] for h in hrefs] == wanted, hrefs
    # the step label sits in the middle of the row, though the last step has no Next
    n = len(STEPS)
    label = page.locator(MAIN).get_by_text(translate("step_of", lang, k=n, n=n), exact=True)
    column = page.locator('[data-testid="stMainBlockContainer"]')  # the row spans it
    lb, rb = label.first.bounding_box(), column.bounding_box()
    assert abs((lb["x"] + lb["width"] / 2) - (rb["x"] + rb["width"] / 2)) < 12, (lb, rb)
    # a recap link opens its page in the same session
    link = page.locator(MAIN).get_by_role("link", name=f"★ {EXTRA_PAGES[0].title_in(lang)}")
    screenshot(page, f"stack_recap_{lang}")
    wait_idle(page)
    link.scroll_into_view_if_needed()
    page.wait_for_timeout(500)  # the main pane settled after the screenshot's resize
    link.click()
    expect(page.locator(f"{MAIN} h1").first).to_have_text(EXTRA_PAGES[0].title_in(lang),
                                                           timeout=60_000)
    wait_idle(page)
    # the address bar's path (Playwright's page.url may keep the old one after a page change)
    wait_for(lambda: page.evaluate("location.pathname"), lambda p: p.endswith(
        f"/{EXTRA_PAGES[0].id}"), "the path of Compare")
    assert_no_errors(page)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vit_page_without_a_vit_names_download_a_model(page, app_url, lang):
    open_app(page, app_url, "vit", f"lang={lang}")
    hub = translate("hub_title", lang)
    expect(page.locator(MAIN).get_by_text(hub).first).to_be_visible()
    expect(sidebar(page).get_by_text(hub).first).to_be_visible()  # the control it names
    assert_no_errors(page)
