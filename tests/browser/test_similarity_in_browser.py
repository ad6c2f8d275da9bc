"""Patch similarity (issue 26, item 4) in Chromium on The stack at the defaults (14 × 14
patches): hovering two patches of the similarity explorer repaints its map differently each
time with no script run; the tooltip gives the cosine of the trace's rows to 3 digits; the
scale button turns the row's min … max into −1 … 1, the legend saying which; a click keeps the
patch and leaves the page's query."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest
from playwright.sync_api import expect

from encoder_core.views.similarity import cosine_map, unit_rows
from tests.support.browser_helpers import (
    MAIN,
    WATCH_RUNS_JS,
    assert_no_errors,
    default_trace,
    open_app,
    screenshot,
    steady_box,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

G = 14
CENTRE = 7 * G + 7
SIM = '[data-testid="el-similarity"]'
PICKER = f"{SIM} [data-testid='el-picker']"
MAP = f"{SIM} .el-cell canvas"


@cache
def default_unit() -> np.ndarray:
    """The unit rows of the output at the defaults, [N, d], computed here as the app does."""
    return unit_rows(default_trace())


def dataset(page) -> dict:
    return page.locator(SIM).evaluate("r => ({...r.dataset})")


def the_map(page) -> str:
    return page.locator(MAP).evaluate("c => c.toDataURL()")


def in_patch(box: dict, r: int, c: int) -> dict:
    """The centre of patch (r, c) relative to a picture whose box is `box`: for
    `Locator.hover(position=…)`, which scrolls to it and waits until nothing (the app's sticky
    header, a notice) covers the point."""
    return {"x": (c + 0.5) / G * box["width"], "y": (r + 0.5) / G * box["height"]}


def test_hovering_two_patches_repaints_the_similarity_map_with_no_rerun(page, app_url):
    open_app(page, app_url, "stack")
    pic = page.locator(PICKER)
    expect(pic).to_be_visible()
    pic.scroll_into_view_if_needed()
    wait_idle(page)
    assert dataset(page)["hover"] == str(CENTRE)  # the page's query until a click here
    seen = [the_map(page)]
    page.evaluate(WATCH_RUNS_JS)
    for r, c in [(2, 3), (11, 9)]:
        pic.hover(position=in_patch(steady_box(pic), r, c))
        wait_for(lambda: dataset(page)["hover"], lambda h, r=r, c=c: h == str(r * G + c),
                 f"the similarity map to show patch {(r, c)}")
        now = the_map(page)
        assert now not in seen, "the map did not repaint differently"
        seen.append(now)
    page.wait_for_timeout(500)
    assert page.evaluate("window.__states") == [], "hovering started a script run"
    assert page.locator('[data-testid="stApp"]').get_attribute(
        "data-test-script-state") == "notRunning"
    title = page.locator(f"{SIM} .el-title").inner_text()
    assert title.startswith("Cosine similarity to patch 163"), title  # (11, 9)
    # the tooltip over the map: the cosine of patch (11, 9)'s row with the one pointed at
    unit = default_unit()
    cell = page.locator(MAP)
    cell.scroll_into_view_if_needed()
    tip = page.locator(f"{SIM} .el-tip")
    page.mouse.move(0, 0)  # off the picker: back to the committed patch, the centre
    wait_for(lambda: dataset(page)["hover"], lambda h: h == str(CENTRE), "the map to reset")
    want = cosine_map(unit, CENTRE)
    for r, c in [(7, 7), (0, 13), (12, 3)]:
        cell.hover(position=in_patch(cell.bounding_box(), r, c))
        expect(tip).to_be_visible()
        text = tip.inner_text()
        m = re.search(r"patch (\d+) \(row \d+, column \d+\) · cos (-?[0-9.e-]+)$", text)
        assert m and int(m.group(1)) == r * G + c, text
        assert abs(float(m.group(2)) - float(want[r * G + c])) <= 2e-3, (text, want[r * G + c])
    # the scale: this patch's min … max, then −1 … 1, said on the legend
    legend = page.locator(f"{SIM} .el-bar .el-lab").first
    ticks = page.locator(f"{SIM} .el-ticks span")
    assert "min … max" in legend.inner_text() and dataset(page)["scale"] == "row"
    lo, _, hi = ticks.all_inner_texts()
    assert float(hi) == pytest.approx(1.0, abs=2e-3)  # its own cosine is the top
    assert float(lo) == pytest.approx(float(want.min()), abs=2e-3)
    page.locator(f'{SIM} [data-testid="el-scale"]').click()
    assert "scale −1 … 1" in legend.inner_text() and dataset(page)["scale"] == "fixed"
    assert ticks.all_inner_texts() == ["-1", "0", "1"]
    assert page.evaluate("window.__states") == [], "the scale button started a script run"
    screenshot(page, "similarity_stack_hover")
    # a click keeps the patch (a rerun) and leaves the page's query where it was
    box = pic.bounding_box()
    pic.click(position={"x": (4 + 0.5) / G * box["width"], "y": (2 + 0.5) / G * box["height"]})
    wait_for(lambda: dataset(page).get("committed"), lambda q: q == str(2 * G + 4),
             "the similarity explorer to keep the clicked patch")
    wait_idle(page)
    row = page.locator(MAIN).get_by_label("Query row", exact=True)
    assert row.input_value() == "7"
    assert_no_errors(page)
