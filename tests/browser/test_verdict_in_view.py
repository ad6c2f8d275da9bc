"""Every verdict in view (issue 50, item 4): after "Check" on a step's card, and after the
concept check after the lesson is sent, the part the learner must read next lies inside the
window — at a laptop's, a tablet's and a phone's size, in English and 中文 (lens/scroll_js.py
scrolls it there once the run that drew it has finished).

On Patches, in the lesson: the shape answered, then the last card (moving the image by one
patch), where the page's whole content appears below the verdict. Then The stack with every
task shown (the link's progress), where the concept check after the lesson is answered and
sent: its before → after result must be in the window, not above it.
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from playwright.sync_api import expect

from lens.i18n import translate
from lens.lesson.concepts import PRE, QUESTIONS, encode_rounds
from lens.lesson.concepts import URL_KEY as CHECK_URL_KEY
from lens.lesson.progress import URL_KEY, encode
from lens.settings import Settings
from lens.steps import STEPS, tasks_for
from tests.support.apptest_helpers import shown_record
from tests.support.browser_helpers import MAIN, assert_no_errors, open_app, screenshot, wait_idle

pytestmark = pytest.mark.browser

SIZES = {"laptop": (1400, 900), "tablet": (820, 1180), "phone": (390, 844)}
SKIPPED = {CHECK_URL_KEY: encode_rounds({PRE: {}})}


def in_view(page, locator) -> tuple[float, float, int]:
    """(top, bottom) of the part's box in the window and the window's height; its top must
    lie between Streamlit's header and the window's bottom."""
    locator.wait_for(state="visible")
    box = locator.bounding_box()
    assert box is not None
    return box["y"], box["y"] + box["height"], page.viewport_size["height"]


def assert_in_view(page, locator, what: str) -> None:
    page.wait_for_timeout(2000)  # shown once the run has finished, and again as it settles
    top, bottom, height = in_view(page, locator)
    assert 0 <= top < height - 40, f"{what}: its top at {top:.0f} px in a {height} px window"


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("size", list(SIZES))
def test_each_verdict_is_scrolled_into_view(page, app_url, size, lang):
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    open_app(page, app_url, "patches", urlencode({"lesson": "1", "lang": lang, **SKIPPED}))
    main = page.locator(MAIN)
    cfg = Settings().to_config()

    shape = main.locator(".st-key-lesson_card_patches_shape")
    boxes = shape.locator("input")
    for k, v in enumerate((cfg.n_tokens, cfg.patch_dim)):
        boxes.nth(k).fill(str(v))
        boxes.nth(k).press("Enter")
        wait_idle(page)
    shape.get_by_role("button", name=translate("check", lang, "lesson")).click()
    wait_idle(page)
    card = main.locator(".st-key-lesson_card_patches_shape")
    expect(card).to_contain_text(translate("right", lang, "lesson"))
    assert_in_view(page, card, f"{size}/{lang}: the shape's verdict")

    last = main.locator(".st-key-lesson_card_patches_shift")
    last.scroll_into_view_if_needed()
    last.get_by_text(translate("patches_shift_moved", lang, "patches"), exact=True).click()
    wait_idle(page)
    last.get_by_role("button", name=translate("check", lang, "lesson")).click()
    wait_idle(page)
    last = main.locator(".st-key-lesson_card_patches_shift")
    expect(last).to_contain_text(translate("right", lang, "lesson"))
    assert_in_view(page, last, f"{size}/{lang}: the last card's verdict")
    screenshot(page, f"verdict_in_view_{size}_{lang}")
    assert_no_errors(page)


@pytest.mark.parametrize(("size", "lang"), [("laptop", "en"), ("tablet", "zh"),
                                             ("phone", "zh")])
def test_the_concept_checks_result_is_scrolled_into_view(page, app_url, size, lang):
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    cfg = Settings().to_config()
    shown = {s.id: shown_record(s) for info in STEPS for s in tasks_for(info.id, cfg)}
    query = {"lesson": "1", "lang": lang, **SKIPPED, URL_KEY: encode(shown)}
    open_app(page, app_url, STEPS[-1].id, urlencode(query))
    main = page.locator(MAIN)
    card = main.locator(".st-key-concept_check_card_post")
    card.scroll_into_view_if_needed()
    for n in range(len(QUESTIONS)):
        card.locator('[role="radiogroup"]').nth(n).locator("label").first.click()
        wait_idle(page)
    card.get_by_role("button", name=translate("alone_send_post", lang, "concepts")).click()
    wait_idle(page)
    result = main.locator(".st-key-concept_check_result")
    assert_in_view(page, result, f"{size}/{lang}: the concept check's result")
    screenshot(page, f"check_result_in_view_{size}_{lang}")
    assert_no_errors(page)
