"""Lesson mode in Chromium (issue 24): on Scores & softmax, at a laptop's and a phone's size,
answer the shape, tap the patch you predict on the trained model's picture, and see the
reveal name the patch with the largest weight of attn_h[i, :] — computed here from the trace —
and the page's maps appear."""

from __future__ import annotations

import re

import numpy as np
import pytest
from playwright.sync_api import expect

from encoder_core import encode
from lens import compute
from lens.i18n import translate
from lens.settings import FINAL_STEP, Settings
from lens.steps import STEPS, tasks_for
from tests.support.browser_helpers import (
    MAIN,
    assert_no_errors,
    open_app,
    screenshot,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}


def trained_row(query: int, layer: int = 0, head: int = 0) -> np.ndarray:
    """attn[head, query, :] of the trained shapes model on the generated shape #0 (what the
    lesson's where-will-it-look task is asked on), from encoder_core directly."""
    cfg = compute.model_architectures()["trained"]
    _, image = compute.decode_image(compute.sample_png(0), cfg.image_size, cfg.channels)
    params, _ = compute.weights_for("trained", cfg, FINAL_STEP)
    return encode(image, cfg, params).layers[layer].attn[head, query]


def say(key: str, lang: str, **values: object) -> str:
    return translate(key, lang, "lesson", **values)


@pytest.mark.parametrize(("size", "lang"), [("laptop", "en"), ("laptop", "zh"),
                                             ("phone", "en")])
def test_tap_the_predicted_patch_and_see_the_reveal_and_the_maps(page, app_url, size, lang):
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    open_app(page, app_url, "scores", f"lesson=1&lang={lang}")
    main = page.locator(MAIN)
    maps = main.locator(".st-key-shown_matrices")
    assert maps.count() == 0, "the maps were drawn before an answer"
    screenshot(page, f"lesson_scores_before_{size}_{lang}")

    # 1 · the shape: 196 × 196
    shape = main.locator(".st-key-lesson_card_scores_shape")
    boxes = shape.locator("input")
    for k in range(2):
        boxes.nth(k).fill("196")
        boxes.nth(k).press("Enter")
        wait_idle(page)
    shape.get_by_role("button", name=say("check", lang)).click()
    wait_idle(page)
    expect(main.locator(".st-key-lesson_card_scores_shape")).to_contain_text(say("right", lang))

    # 2 · where will head 1 of layer 1 look from patch 105? tap the patch we predict
    row = trained_row(105)
    best = int(np.argmax(row))
    card = main.locator(".st-key-lesson_card_scores_look")
    picker = card.locator('[data-testid="el-picker"]')
    picker.scroll_into_view_if_needed()
    expect(picker).to_be_visible()
    box = picker.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width + 1, "the picker is cut off"
    G = 14
    r, c = divmod(best, G)
    picker.click(position={"x": (c + 0.5) * box["width"] / G, "y": (r + 0.5) * box["height"] / G})
    expect(card).to_contain_text(say("pick_chosen", lang, j=best, r=r, c=c), timeout=60_000)
    wait_idle(page)
    card.get_by_role("button", name=say("check", lang)).click()
    wait_idle(page)
    card = main.locator(".st-key-lesson_card_scores_look")
    expect(card).to_contain_text(say("right", lang))
    expect(card.locator('[data-testid="stImage"] img')).to_be_visible()  # the true map
    text = card.inner_text()
    # the reveal names the top patch of attn_h[105, :], and its weight, as the trace has them
    assert say("patch_answer", lang, j=best) in text
    weight = re.search(r"(\d\.\d{4})", text.split(say("patch_answer", lang, j=best))[-1])
    assert weight and float(weight.group(1)) == pytest.approx(row[best], abs=6e-5), text

    # the third task (√d_model: flatter) with "Show me": then every map of the page is drawn
    main.locator(".st-key-lesson_card_scores_divisor").get_by_role(
        "button", name=say("show_me", lang)).click()
    wait_idle(page)
    expect(maps.locator('[data-testid="stImage"] img').first).to_be_visible(timeout=60_000)
    wait_for(lambda: maps.locator('[data-testid="stImage"] img').count(), lambda n: n == 2,
             "the scores and the attention matrix")
    specs = [s for info in STEPS for s in tasks_for(info.id, Settings().to_config())]
    progress = say("progress", lang, done=1, steps=len(STEPS), right=2, answered=2,
                   tasks=len(specs))
    expect(main.get_by_text(progress, exact=True)).to_be_visible()
    screenshot(page, f"lesson_scores_after_{size}_{lang}")
    assert_no_errors(page)
