"""A real-shaped ViT in a real browser: one server started with a small random timm checkpoint
(`ENCODER_LENS_CHECKPOINTS`, 197 tokens: CLS + 14 × 14 patches); every page walks it without an
exception, and the explorer on Multi-head moves over it — hovering two patches repaints the maps,
and the tooltip gives the trace's weight and the CLS share of the row to 3 significant digits."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import cache

import numpy as np
import pytest
from playwright.sync_api import expect

from encoder_core import encode, load_checkpoint
from lens import images
from lens.models import CHECKPOINTS_ENV
from tests.support.browser_helpers import (
    ALL_PAGES,
    MAIN,
    app_server,
    assert_no_errors,
    main_images,
    open_app,
    screenshot,
    steady_box,
    title,
    wait_for,
)

pytestmark = pytest.mark.browser


VIT = "weights=vit_tiny_test"
G = 14
CENTRE = 7 * G + 7  # the default query patch; its row is CENTRE + 1 after CLS
EXPLORER = '[data-testid="el-explorer"]'
PICKER = f"{EXPLORER} [data-testid='el-picker']"


@pytest.fixture(scope="module")
def vit_url(vit_checkpoint) -> Iterator[str]:
    """A server of this repository whose environment names the test checkpoint; stopped at
    the end. Its log: test-artifacts/streamlit-vit-server.log."""
    with app_server("streamlit-vit-server.log", {CHECKPOINTS_ENV: vit_checkpoint}) as url:
        yield url


@cache
def vit_attn(checkpoint: str) -> np.ndarray:
    """attn of layer 1 of the test ViT on the default photo, [h, 197, 197], computed here."""
    cfg, params, _ = load_checkpoint(checkpoint)
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return np.asarray(encode(image, cfg, params).layers[0].attn)


def same_to_3_digits(shown: float, trace: float) -> bool:
    unit = 10 ** (math.floor(math.log10(abs(trace))) - 2)
    return abs(shown - trace) <= unit


def dataset(page) -> dict:
    return page.locator(EXPLORER).evaluate("r => ({...r.dataset})")


def panels(page) -> list[str]:
    return page.locator(f"{EXPLORER} .el-cell canvas").evaluate_all(
        "cs => cs.map(c => c.toDataURL())")


def patch_point(box: dict, r: int, c: int) -> tuple[float, float]:
    return box["x"] + (c + 0.5) / G * box["width"], box["y"] + (r + 0.5) / G * box["height"]


@pytest.mark.parametrize("step", [s[0] for s in ALL_PAGES])
def test_every_page_walks_the_vit(page, vit_url, step):
    open_app(page, vit_url, step, VIT)
    k = [s[0] for s in ALL_PAGES].index(step)
    assert title(page).startswith(ALL_PAGES[k][1])
    assert "vit_tiny_test" in page.url
    if step == "class":  # no class yet: its start and join forms
        expect(page.locator(MAIN).get_by_role("button", name="Start a class")).to_be_visible()
    else:
        main_images(page, at_least=1)
    assert_no_errors(page)
    screenshot(page, f"vit_{k + 1:02d}_{step}")


def test_the_explorer_moves_over_the_197_token_model(page, vit_url, vit_checkpoint):
    open_app(page, vit_url, "multihead", VIT)
    pic = page.locator(PICKER)
    expect(pic).to_be_visible()
    pic.scroll_into_view_if_needed()
    assert len(panels(page)) == 2  # h = 2 heads
    title_text = page.locator(f"{EXPLORER} .el-title").inner_text()
    assert "CLS column left out" in title_text, title_text
    mark = page.locator(f"{EXPLORER} .el-uni span").inner_text()
    assert mark == "1/197", mark
    before = panels(page)
    seen = [before]
    for r, c in [(2, 3), (11, 9)]:  # two patches: each repaints every map
        page.mouse.move(*patch_point(steady_box(pic), r, c))
        wait_for(lambda: dataset(page)["hover"], lambda h, r=r, c=c: h == str(r * G + c),
                 f"the maps to show patch {(r, c)}")
        now = panels(page)
        assert all(a != b for a, b in zip(now, seen[-1], strict=True)), "a map did not repaint"
        seen.append(now)
    page.mouse.move(0, 0)
    wait_for(lambda: dataset(page)["hover"], lambda h: h == str(CENTRE), "the maps to reset")
    attn = vit_attn(vit_checkpoint)
    tip = page.locator(f"{EXPLORER} .el-tip")
    for n in range(2):  # each head's map: the weight, and the share CLS holds, as traced
        cell = page.locator(f"{EXPLORER} .el-cell canvas").nth(n)
        cell.scroll_into_view_if_needed()
        for r, c in [(7, 7), (0, 13), (12, 3)]:
            page.mouse.move(*patch_point(cell.bounding_box(), r, c))
            expect(tip).to_be_visible()
            text = tip.inner_text()
            m = re.search(r"patch (\d+) \(row \d+, column \d+\) · weight ([0-9.e-]+) · "
                          r"CLS \(left out\) ([0-9.e-]+)$", text)
            assert m and int(m.group(1)) == r * G + c, text
            weight = float(attn[n, 1 + CENTRE, 1 + r * G + c])  # rows and keys after CLS
            assert same_to_3_digits(float(m.group(2)), weight), (text, weight)
            assert same_to_3_digits(float(m.group(3)), float(attn[n, 1 + CENTRE, 0])), text
    screenshot(page, "vit_explorer_multihead_hover")
    assert page.locator(MAIN).get_by_text("The weight on CLS is left out").count() >= 1
    assert_no_errors(page)
