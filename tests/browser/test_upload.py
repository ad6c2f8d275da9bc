"""Uploading through the real file input: the pictures follow; a damaged file is refused."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from tests.support.browser_helpers import (
    D_MODEL,
    MAIN,
    assert_no_errors,
    checker_png,
    colour_fraction,
    fetch_png,
    go_to_step,
    image_srcs,
    main_images,
    open_advanced,
    open_app,
    png_bytes,
    screenshot,
    set_select_slider,
    sidebar,
    slider_value,
    upload,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser


def overview_pictures(page) -> list[np.ndarray] | None:
    """The overview's pipeline pictures (wide and tall) and its image pair (the upload as
    given); None when one was replaced meanwhile by a newer rerun."""
    pictures = [fetch_png(page, info["src"]) for info in main_images(page, at_least=3)[:3]]
    if any(p is None for p in pictures):
        return None
    return pictures

MAGENTA, CYAN = (255, 0, 255), (0, 255, 255)
ERROR = f'{MAIN} [data-testid="stAlertContentError"]'


def test_upload_updates_the_patches_page(page, app_url):
    open_app(page, app_url, "patches")
    before = main_images(page, at_least=2)
    upload(page, "checker.png", checker_png(MAGENTA, CYAN))
    wait_for(lambda: image_srcs(page), lambda s: not set(s) & {i["src"] for i in before},
             "every picture of the patches page to change after the upload")
    after = main_images(page, at_least=2)
    assert len(after) == len(before)
    assert_no_errors(page)
    screenshot(page, "02_patches_uploaded_checker")
    # the overview shows the upload itself, in colour: many magenta and cyan pixels,
    # which the built-in photograph does not have
    go_to_step(page, "overview")

    def shown() -> tuple[float, float]:
        pictures = overview_pictures(page)
        if pictures is None:  # replaced meanwhile by a newer rerun: look again
            return 0.0, 0.0
        # the picture most of whose pixels are the upload's colours: the image pair
        return max((colour_fraction(p, MAGENTA), colour_fraction(p, CYAN)) for p in pictures)

    wait_for(shown, lambda f: min(f) > 0.05,
             "the overview to show the uploaded picture (magenta and cyan pixel shares)")


def test_damaged_upload_is_refused_and_the_app_keeps_working(page, app_url):
    open_app(page, app_url, "patches")
    good = checker_png(MAGENTA, CYAN)
    upload(page, "broken.png", good[: len(good) // 2])  # a truncated PNG
    error = page.locator(ERROR)
    expect(error).to_be_visible()
    expect(error).to_contain_text(re.compile("damaged|cannot|could not", re.I))
    expect(error).to_contain_text("keeps showing")
    assert page.locator('[data-testid="stException"]').count() == 0
    # the page still shows pictures (of the built-in photo)
    shown = main_images(page, at_least=2)
    screenshot(page, "02_patches_damaged_upload")

    # replace the broken file by a good one: the error goes, the pictures change
    sidebar(page).get_by_role("button", name="Remove broken.png").click()
    wait_idle(page)
    upload(page, "good.png", good)
    expect(page.locator(ERROR)).to_have_count(0)
    wait_for(lambda: image_srcs(page), lambda s: not set(s) & {i["src"] for i in shown},
             "the pictures to follow the good upload")
    main_images(page, at_least=2)
    assert_no_errors(page)


def test_upload_survives_a_setting_changed_right_after_it(page, app_url):
    """A large photo takes the server a moment to decode; a slider touched meanwhile must not
    lose the upload (the sidebar would name the file while the pages show the built-in photo).
    """
    small = "image_size=64&patch_size=16&d_model=32&n_heads=2&n_layers=1&channels=3"
    open_app(page, app_url, "overview", small)
    # 4800 × 4800 magenta (about 23 megapixels: a few tenths of a second to decode), made
    # unique so that no cache of an earlier run has decoded it already
    big = np.empty((4800, 4800, 3), dtype=np.uint8)
    big[...] = MAGENTA
    big[0, :8, 1] = np.frombuffer(os.urandom(8), dtype=np.uint8)
    upload(page, "big.png", png_bytes(big), wait=False)
    open_advanced(page)
    thumb = page.get_by_role("slider", name=D_MODEL)
    thumb.focus()
    thumb.press("ArrowRight")  # at once, while the server decodes
    expect(thumb).to_have_attribute("aria-valuetext", "64")
    wait_idle(page)

    def shown() -> float:
        wait_idle(page)
        pictures = overview_pictures(page)  # the image pair holds most of the upload's colour
        return 0.0 if pictures is None else max(colour_fraction(p, MAGENTA) for p in pictures)

    hint = page.locator(MAIN).get_by_text("Upload a file in the sidebar")
    try:
        wait_for(shown, lambda f: f > 0.05, "the overview to show the uploaded photo",
                 timeout=30)
    except AssertionError as exc:
        raise AssertionError(
            f"the upload was lost: the sidebar names big.png but the page shows "
            f"{'the upload hint' if hint.count() else 'another picture'} "
            f"(d_model {slider_value(page, D_MODEL)})") from exc
    expect(hint).to_have_count(0)
    set_select_slider(page, D_MODEL, 32)  # and it stays
    assert shown() > 0.05
    assert_no_errors(page)
