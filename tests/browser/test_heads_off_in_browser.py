"""Switch heads off (issue 26, item 5) in Chromium on ★ What a ViT looks at, served with the
small random timm ViT (2 heads, 2 layers, 10 classes): the section draws its pictures and its
two prediction tables; adding head 2 in the multiselect (both heads of the last layer off)
changes the prediction shown after, and not the model's own."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from lens.models import CHECKPOINTS_ENV
from tests.support.browser_helpers import (
    app_server,
    assert_no_errors,
    open_app,
    screenshot,
    wait_for,
    wait_idle,
)

BEFORE, AFTER = ".st-key-heads_off_before_vit", ".st-key-heads_off_after_vit"


@pytest.fixture(scope="module")
def heads_off_url(vit_checkpoint) -> Iterator[str]:
    with app_server("streamlit-server-heads-off.log", {CHECKPOINTS_ENV: vit_checkpoint}) as url:
        yield url


def table_text(page: Page, where: str) -> str:
    """The one table under `where`, read once the run has finished: while it runs, the
    container of the run before can still be on the page beside the new one (both keyed
    alike), so a read mid-run may see two."""
    wait_idle(page)
    return page.locator(f'{where} [data-testid="stTable"]').inner_text()


def test_adding_a_head_in_the_multiselect_changes_the_prediction_shown(page: Page,
                                                                        heads_off_url):
    open_app(page, heads_off_url, "vit", "weights=vit_tiny_test")
    assert_no_errors(page)
    page.locator(AFTER).scroll_into_view_if_needed()
    wait_idle(page)
    before, after = table_text(page, BEFORE), table_text(page, AFTER)
    assert "probability" in after and after != before
    assert "With head 1 of layer 2 off" in page.locator(AFTER).inner_text()
    screenshot(page, "heads_off")

    box = page.locator(".st-key-heads_off_heads_vit input")
    box.click()
    box.press_sequentially("head 2")
    box.press("Enter")  # the one option left that matches
    page.keyboard.press("Escape")
    now = wait_for(lambda: table_text(page, AFTER), lambda t: t != after,
                   "the prediction after to change")
    wait_idle(page)
    assert "With heads 1, 2 of layer 2 off" in page.locator(AFTER).inner_text()
    assert table_text(page, BEFORE) == before and now != before
    assert_no_errors(page)
