"""Clicking the image (streamlit-image-coordinates, in an iframe) chooses the query patch."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest
from browser_helpers import (
    MAIN,
    assert_no_errors,
    image_srcs,
    main_images,
    open_app,
    screenshot,
    solid_png,
    title,
    upload,
    wait_for,
    wait_idle,
    wait_url,
)
from PIL import Image
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

PICKER = 'iframe[title*="streamlit_image_coordinates"]'
WHERE = re.compile(r"query patch i = (\d+)")


def query_row_col(page) -> tuple[int, int]:
    wait_idle(page)
    row = page.locator(MAIN).get_by_label("Query row", exact=True)
    col = page.locator(MAIN).get_by_label("Query column", exact=True)
    return int(row.input_value()), int(col.input_value())


def shown_query(page) -> int:
    """The query patch the multi-head page says it shows ('… query patch i = 135.')."""
    text = page.locator(MAIN).get_by_text(WHERE).first.inner_text()
    return int(WHERE.search(text).group(1))


def picker(page):
    pic = page.frame_locator(PICKER).locator("img#image")
    expect(pic).to_be_visible()
    return pic


def test_click_on_image_chooses_the_query_patch(page, app_url):
    open_app(page, app_url, "multihead")
    assert title(page).startswith("Multi-head attention")
    assert query_row_col(page) == (0, 0)
    assert shown_query(page) == 0
    main_images(page)
    before = image_srcs(page)

    pic = picker(page)
    box = pic.bounding_box()
    assert box and box["width"] > 100 and box["height"] > 100, box
    # lower right part of the picture: well away from patch (0, 0) whatever the margins
    pic.click(position={"x": box["width"] * 0.7, "y": box["height"] * 0.7})

    row, col = wait_for(lambda: query_row_col(page), lambda rc: rc != (0, 0),
                        "the query row/column to follow the click")
    assert row > 0 and col > 0, (row, col)
    query = 14 * row + col  # the default grid is 224 / 16 = 14 patches a side
    wait_for(lambda: shown_query(page), lambda q: q == query, f"the page to show query {query}")
    wait_for(lambda: image_srcs(page), lambda s: set(s) - set(before),
             "an attention picture to change after choosing another query patch")
    main_images(page)
    assert_no_errors(page)
    screenshot(page, "07_multihead_query_clicked")

    # the row/column inputs drive the same choice back
    row_input = page.locator(MAIN).get_by_label("Query row", exact=True)
    row_input.fill("0")
    row_input.press("Enter")
    wait_for(lambda: query_row_col(page), lambda rc: rc == (0, col), "the row input to apply")
    wait_for(lambda: shown_query(page), lambda q: q == col, f"the page to show query {col}")


def test_clicked_query_is_in_the_link(page, app_url):
    """The URL mirrors the query patch once it is chosen by a click (a copied link keeps it)."""
    open_app(page, app_url, "multihead")
    pic = picker(page)
    box = pic.bounding_box()
    pic.click(position={"x": box["width"] * 0.6, "y": box["height"] * 0.6})
    wait_for(lambda: shown_query(page), lambda q: q != 0, "the click to choose a query")
    wait_idle(page)
    query = shown_query(page)
    wait_url(page, f"&query={query}", timeout=15)  # the page says it: the link must too


def _axes_extent(png: bytes) -> tuple[int, int, int, int, int]:
    """(x0, x1, y0, y1, natural width) of the image inside the picker's picture: within the
    long dark lines of an axes frame around the (white) image when there is one, else the whole
    picture (an image drawn without margins)."""
    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(np.int16)
    h, w = rgb.shape[:2]
    dark = rgb.max(axis=-1) < 90
    cols = np.flatnonzero(dark.mean(axis=0) > 0.5)
    rows = np.flatnonzero(dark.mean(axis=1) > 0.5)
    if cols.size >= 2 and rows.size >= 2:
        return int(cols[0]), int(cols[-1]), int(rows[0]), int(rows[-1]), w
    return 0, w - 1, 0, h - 1, w


@pytest.mark.parametrize("target", [(1, 1), (12, 2), (6, 10)])
def test_click_selects_the_patch_under_the_pointer(page, app_url, target):
    """Click the centre of a patch drawn in the picture: that patch becomes the query."""
    open_app(page, app_url, "multihead")
    old = picker(page).get_attribute("src")
    upload(page, "white.png", solid_png((255, 255, 255), size=224))
    wait_for(lambda: picker(page).get_attribute("src"), lambda s: s != old,
             "the picker to show the uploaded image")
    wait_idle(page)
    pic = picker(page)
    src = pic.get_attribute("src") or ""
    assert src.startswith("data:image/png;base64,"), src[:40]
    x0, x1, y0, y1, natural = _axes_extent(base64.b64decode(src.split(",", 1)[1]))
    box = pic.bounding_box()
    scale = box["width"] / natural
    G = 14
    r, c = target
    x = (x0 + (c + 0.5) / G * (x1 - x0)) * scale
    y = (y0 + (r + 0.5) / G * (y1 - y0)) * scale
    pic.click(position={"x": x, "y": y})
    got = wait_for(lambda: query_row_col(page), lambda rc: rc != (0, 0),
                   "the query row/column to follow the click")
    assert got == target, (f"clicked the centre of patch {target} "
                           f"(at {x:.0f}, {y:.0f} px of the {box['width']:.0f} px picture) "
                           f"but the query became {got}")
    assert_no_errors(page)
