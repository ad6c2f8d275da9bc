"""The attention explorer in a real browser, at a desktop, a tablet and a phone size: hovering
repaints every map with no rerun, a click (a tap) commits the query to the server, the arrow
keys move and commit it, and the picker maps a tap to the patch under it at every width (on a
phone's touch screen through the finger-sized zoom the tap opens)."""

from __future__ import annotations

import math
import re
from functools import cache

import numpy as np
import pytest
from playwright.sync_api import expect

from lens import images
from lens.i18n import translate
from lens.settings import Settings
from tests.support.browser_helpers import (
    MAIN,
    WATCH_RUNS_JS,
    ZOOM,
    ZOOM_SIDE,
    assert_no_errors,
    default_trace,
    open_app,
    screenshot,
    steady_box,
    tap_in_zoom,
    title,
    wait_for,
    wait_idle,
    wait_url,
)

pytestmark = pytest.mark.browser

SIZES = [(1400, 900), (820, 1180), (390, 844)]
IDS = [f"{w}x{h}" for w, h in SIZES]
G = 14  # the default grid: 224 / 16 patches a side
CENTRE = 7 * G + 7
EXPLORER = '[data-testid="el-explorer"]'
PICKER = f"{EXPLORER} [data-testid='el-picker']"
WHERE = re.compile(r"query patch i = (\d+)")


@cache
def default_attn() -> np.ndarray:
    """attn of layer 1 at the defaults, [n_heads, N, N], computed here as the app does."""
    return np.asarray(default_trace().layers[0].attn)


def same_to_3_digits(shown: float, trace: float) -> bool:
    """`shown` is `trace` to 3 significant digits (within one unit of the third digit, for a
    trace value that float16's rounding moved across a rounding boundary)."""
    unit = 10 ** (math.floor(math.log10(abs(trace))) - 2)
    return abs(shown - trace) <= unit


@pytest.fixture(params=SIZES, ids=IDS)
def sized(request, browser, app_url):
    """A fresh session at one of the three sizes; the phone size has a touch screen."""
    w, h = request.param
    ctx = browser.new_context(viewport={"width": w, "height": h}, has_touch=w < 500)
    page = ctx.new_page()
    yield page, w
    ctx.close()


def query_row_col(page) -> tuple[int, int]:
    wait_idle(page)
    row = page.locator(MAIN).get_by_label("Query row", exact=True)
    col = page.locator(MAIN).get_by_label("Query column", exact=True)
    return int(row.input_value()), int(col.input_value())


def picker(page):
    pic = page.locator(PICKER)
    expect(pic).to_be_visible()
    pic.scroll_into_view_if_needed()
    return pic


def patch_point(box: dict, r: int, c: int) -> dict:
    """The centre of patch (r, c) in the picture as displayed (its box, not its pixels)."""
    return {"x": (c + 0.5) / G * box["width"], "y": (r + 0.5) / G * box["height"]}


def press_patch(pic, width: int, r: int, c: int) -> None:
    """Tap patch (r, c) on a phone-sized page — the tap opens the zoom, a tap in the zoom
    chooses — click it on a wider one."""
    p = patch_point(steady_box(pic), r, c)
    if width < 500:
        pic.tap(position=p)
        tap_in_zoom(pic.page.locator(EXPLORER), r, c, G)
    else:
        pic.click(position=p)


def panels(page) -> list[str]:
    return page.locator(f"{EXPLORER} .el-cell canvas").evaluate_all(
        "cs => cs.map(c => c.toDataURL())")


def dataset(page) -> dict:
    return page.locator(EXPLORER).evaluate("r => ({...r.dataset})")


def fits_its_column(page, locator) -> None:
    """Nothing of the picture hangs out of the main pane (so all of it can be clicked)."""
    box, main = locator.bounding_box(), page.locator(MAIN).bounding_box()
    assert box["width"] > 100, box
    assert box["x"] >= main["x"] - 1 and box["x"] + box["width"] <= main["x"] + main["width"] + 1, \
        (box, main)


@pytest.mark.parametrize("path", ["multihead", "stack"])
def test_hovering_repaints_every_map_with_no_rerun(sized, app_url, path):
    page, w = sized
    open_app(page, app_url, path)
    pic = picker(page)
    fits_its_column(page, pic)
    before = panels(page)
    assert len(before) == (8 if path == "multihead" else 6 * 8), len(before)
    assert dataset(page)["hover"] == str(CENTRE)  # the default query: the centre patch
    page.evaluate(WATCH_RUNS_JS)
    for r, c in [(2, 3), (10, 11), (4, 12)]:
        box = steady_box(pic)
        p = patch_point(box, r, c)
        page.mouse.move(box["x"] + p["x"], box["y"] + p["y"])
        wait_for(lambda: dataset(page)["hover"], lambda h, r=r, c=c: h == str(r * G + c),
                 f"the maps to show patch {(r, c)}")
    after = panels(page)
    assert all(a != b for a, b in zip(after, before, strict=True)), "a map did not repaint"
    page.wait_for_timeout(500)
    assert page.evaluate("window.__states") == [], "hovering started a script run"
    state = page.locator('[data-testid="stApp"]').get_attribute("data-test-script-state")
    assert state == "notRunning"
    assert query_row_col(page) == (7, 7)  # hovering chose nothing
    # the tooltip over a map: the key patch and its weight, the trace's to 3 digits
    page.mouse.move(0, 0)  # off the picture: the maps show the committed query again
    wait_for(lambda: dataset(page)["hover"], lambda h: h == str(CENTRE), "the maps to reset")
    cell = page.locator(f"{EXPLORER} .el-cell canvas").first  # head 1 (of layer 1)
    cell.scroll_into_view_if_needed()
    tip = page.locator(f"{EXPLORER} .el-tip")
    for r, c in [(7, 7), (0, 13), (12, 3)]:
        cb = cell.bounding_box()
        p = patch_point(cb, r, c)
        page.mouse.move(cb["x"] + p["x"], cb["y"] + p["y"])
        expect(tip).to_be_visible()
        text = tip.inner_text()
        m = re.search(r"patch (\d+) \(row \d+, column \d+\) · weight ([0-9.e-]+)$", text)
        assert m and int(m.group(1)) == r * G + c, text
        trace = float(default_attn()[0, CENTRE, r * G + c])
        assert same_to_3_digits(float(m.group(2)), trace), (text, trace)
    screenshot(page, f"explorer_{path}_{w}_hover")
    assert_no_errors(page)


def test_a_click_or_tap_commits_the_query_to_the_server(sized, app_url):
    page, w = sized
    open_app(page, app_url, "multihead")
    assert title(page).startswith("Multi-head attention")
    pic = picker(page)
    r, c = 3, 11
    press_patch(pic, w, r, c)
    got = wait_for(lambda: query_row_col(page), lambda rc: rc != (7, 7),
                   "the query row/column to follow the click")
    assert got == (r, c)
    wait_url(page, f"&query={r * G + c}")
    text = page.locator(MAIN).get_by_text(WHERE).first.inner_text()
    assert WHERE.search(text).group(1) == str(r * G + c)
    wait_for(lambda: dataset(page).get("committed"), lambda q: q == str(r * G + c),
             "the explorer to show the committed query")
    assert_no_errors(page)


def test_on_a_phone_a_tap_opens_a_finger_sized_zoom_and_a_tap_there_chooses(browser, app_url):
    """Patches ~23 px wide are smaller than a finger: the tap that lands a little off patch
    (3, 11) — on its neighbour (3, 12) — opens a zoom of 5 × 5 patches drawn large around it,
    commits nothing, and a tap on (3, 11) in the zoom chooses it (issue 36, item 6)."""
    ctx = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                              is_mobile=True)
    page = ctx.new_page()
    try:
        open_app(page, app_url, "multihead", "lang=zh")
        pic = picker(page)
        box = steady_box(pic)
        assert box["width"] / G < 36, box  # the patches are smaller than a finger here
        pic.tap(position=patch_point(box, 3, 12))
        zoom = page.locator(f"{EXPLORER} {ZOOM}")
        expect(zoom).to_be_visible()
        assert steady_box(zoom)["width"] / ZOOM_SIDE >= 48, "the zoom's patches are too small"
        expect(page.locator(f"{EXPLORER} .el-zoom-tip")).to_have_text(translate("zoom_tip", "zh"))
        assert dataset(page)["committed"] == str(CENTRE), "the first tap committed"
        screenshot(page, "explorer_zoom_phone_zh")
        tap_in_zoom(page.locator(EXPLORER), 3, 11, G)
        wait_for(lambda: dataset(page).get("committed"), lambda q: q == str(3 * G + 11),
                 "the tap in the zoom to commit patch (3, 11)")
        wait_url(page, f"&query={3 * G + 11}")
        expect(zoom).to_be_hidden()
        assert_no_errors(page)
    finally:
        ctx.close()


def test_arrow_keys_move_the_query_and_commit_it(page, app_url):
    open_app(page, app_url, "multihead")
    pic = picker(page)
    pic.focus()
    for key in ["ArrowRight", "ArrowRight", "ArrowUp"]:
        pic.press(key)
    assert dataset(page)["hover"] == str(CENTRE - G + 2)  # shown at once, in the browser
    got = wait_for(lambda: query_row_col(page), lambda rc: rc != (7, 7),
                   "the arrow keys to commit the query")
    assert got == (6, 9)
    wait_url(page, f"&query={CENTRE - G + 2}")


@pytest.mark.parametrize("target", [(0, 0), (13, 13), (2, 9)])
def test_the_picker_maps_a_tap_to_the_patch_under_it_at_every_width(sized, app_url, target):
    """On a page with a query and no attention maps, the same picture picks the query."""
    page, w = sized
    open_app(page, app_url, "scores")
    pic = picker(page)
    fits_its_column(page, pic)
    assert page.locator(f"{EXPLORER} .el-maps").count() == 0
    r, c = target
    press_patch(pic, w, r, c)
    got = wait_for(lambda: query_row_col(page), lambda rc: rc != (7, 7),
                   "the query row/column to follow the tap")
    assert got == target, f"tapped the centre of patch {target} at {w} px, got {got}"
    assert_no_errors(page)


def test_the_row_and_column_inputs_still_choose_the_query(page, app_url):
    open_app(page, app_url, "multihead")
    row_input = page.locator(MAIN).get_by_label("Query row", exact=True)
    row_input.fill("0")
    row_input.press("Enter")
    wait_for(lambda: query_row_col(page), lambda rc: rc == (0, 7), "the row input to apply")
    wait_for(lambda: dataset(page).get("committed"), lambda q: q == "7",
             "the explorer to follow the inputs")
    wait_url(page, "&query=7")


@cache
def default_picture() -> np.ndarray:
    """The picture the explorer is sent at the defaults, [side, side, 3] uint8."""
    from lens import explorer

    cfg = Settings().normalised()[0].to_config()
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return explorer.picture_pixels(image, cfg.grid_size)


def overlay_pixel(weight: float, vmax: float, grey: float) -> np.ndarray:
    """One pixel of a map as `figures.overlay_rgb` blends it: opacity alpha·(0.15 + 0.85·level)."""
    from lens import explorer

    level = min(1.0, max(0.0, weight / vmax))
    colour = explorer._lut()[round(level * 255)].astype(float)
    opacity = explorer.ALPHA * (0.15 + 0.85 * level)
    return (1 - opacity) * grey + opacity * colour


PIXEL_JS = "(cv, [x, y]) => Array.from(cv.getContext('2d').getImageData(x, y, 1, 1).data)"


def test_the_maps_opacity_follows_the_weight_and_the_bar_marks_1_over_n(page, app_url):
    """The live maps blend like the server's pictures (the photo shows where attention is low),
    each on its own colour scale until the scale button puts all on one, which the colour bar
    marks with the even weight 1/N; a click opens a map large (and closes it)."""
    open_app(page, app_url, "multihead")
    picker(page)
    attn = default_attn()  # [h, N, N] of layer 1
    from lens import explorer

    # as the browser reads them: float16 of the weights × SCALE (normal numbers, not subnormal)
    rows = (attn[:, CENTRE] * explorer.SCALE).astype(np.float16).astype(np.float64)
    rows /= explorer.SCALE
    vmax = float(rows.max())
    cell = page.locator(f"{EXPLORER} .el-cell canvas").first
    ps = cell.evaluate("c => c.width")
    pic = default_picture()
    mark = page.locator(f"{EXPLORER} .el-uni")

    def check_first_map(top: float) -> None:
        for j in (int(rows[0].argmin()), int(rows[0].argmax())):  # lowest and highest weight
            r, c = divmod(j, G)
            y, x = int((r + 0.5) * ps / G), int((c + 0.5) * ps / G)
            shown = np.array(cell.evaluate(PIXEL_JS, [x, y]))[:3]
            src = pic[y * pic.shape[0] // ps, x * pic.shape[0] // ps].astype(float)
            want = overlay_pixel(float(rows[0, j]), top, float(src.mean()))
            assert np.abs(shown - want).max() <= 2, (j, shown, want, top)

    assert dataset(page).get("shared") == "0"
    assert float(rows[0].max()) < vmax  # else the two scales could not be told apart
    check_first_map(float(rows[0].max()))  # its own scale: its largest weight is the top colour
    expect(mark).to_be_hidden()
    page.get_by_test_id("el-scale").click()
    wait_for(lambda: dataset(page).get("shared"), lambda s: s == "1", "one shared scale")
    check_first_map(vmax)  # one scale: the largest weight of all maps is the top colour
    expect(mark).to_be_visible()
    assert mark.inner_text() == "1/N"
    left = float(mark.evaluate("m => parseFloat(m.style.left)"))
    assert abs(left - 100 * (1 / G**2) / vmax) < 0.05, (left, vmax)
    # any map opens large: a click on it, and a click on the large one closes it
    big = page.locator(f"{EXPLORER} .el-big canvas")
    expect(big).to_be_hidden()
    third = page.locator(f"{EXPLORER} .el-cell canvas").nth(2)
    third.click()
    wait_for(lambda: dataset(page).get("big"), lambda b: b == "2", "the third map to open large")
    expect(big).to_be_visible()
    assert big.bounding_box()["width"] > 1.5 * third.bounding_box()["width"]
    assert page.locator(f"{EXPLORER} .el-big .el-lab").inner_text() == "head 3"
    bb = big.bounding_box()
    p = patch_point(bb, 12, 3)
    page.mouse.move(bb["x"] + p["x"], bb["y"] + p["y"])
    text = page.locator(f"{EXPLORER} .el-tip").inner_text()
    m = re.search(r"^head 3 · patch (\d+) .* · weight ([0-9.e-]+)$", text)
    assert m and int(m.group(1)) == 12 * G + 3, text
    assert same_to_3_digits(float(m.group(2)), float(attn[2, CENTRE, 12 * G + 3])), text
    screenshot(page, "explorer_multihead_big")
    big.click()
    wait_for(lambda: dataset(page).get("big"), lambda b: b == "-1", "the large map to close")
    expect(big).to_be_hidden()
    assert_no_errors(page)
