"""Meaning up front in a real browser: one click from random weights to the trained model on a
shape, and the training-step slider changes the attention maps."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

from lens.i18n import translate
from tests.support.browser_helpers import (
    MAIN,
    assert_no_errors,
    fetch_png,
    main_images,
    open_app,
    screenshot,
    slider_value,
    wait_for,
    wait_idle,
    wait_url,
)

pytestmark = pytest.mark.browser

SHOW = translate("meaning_show", "en", "meaning")  # "Show a trained model on a shape"
STEP = translate("meaning_step", "en", "meaning")  # the slider's label


def grid_picture(page) -> np.ndarray:
    """The multi-head page's attention grid: its first picture in the main area (the query
    picker above it is a component, not a picture), fetched as pixels."""
    return wait_for(lambda: fetch_png(page, main_images(page)[0]["src"]),
                    lambda a: a is not None, "the attention grid picture")


def test_one_click_shows_the_trained_model_and_the_step_slider_changes_the_maps(page, app_url):
    open_app(page, app_url, "multihead")
    page.locator(MAIN).get_by_role("button", name=SHOW).click()
    wait_idle(page)
    wait_url(page, "weights=trained", "source=sample", "train_step=-1")
    expect(page.locator(MAIN).get_by_text("Prediction:").first).to_be_visible()
    final_value = slider_value(page, STEP)
    assert final_value.replace(",", "").isdigit() and final_value != "0", final_value
    trained = grid_picture(page)
    screenshot(page, "07_multihead_trained_final")

    thumb = page.get_by_role("slider", name=STEP)
    thumb.focus()
    thumb.press("Home")  # the first checkpoint: step 0, the random start
    wait_for(lambda: slider_value(page, STEP), lambda v: v == "0", "the slider to reach step 0")
    wait_idle(page)
    wait_url(page, "train_step=0")
    start = wait_for(lambda: grid_picture(page), lambda a: a.shape != trained.shape
                     or not np.array_equal(a, trained), "the attention grid to change")
    assert_no_errors(page)
    screenshot(page, "07_multihead_trained_step0")
    # the same picture size (same model, same shape), other pixels: the maps changed
    assert start.shape == trained.shape
    changed = np.abs(start.astype(int) - trained.astype(int)).max(axis=-1) > 16
    assert changed.mean() > 0.02, changed.mean()
    expect(page.locator(MAIN).get_by_text("After 0 training steps").first).to_be_visible()
