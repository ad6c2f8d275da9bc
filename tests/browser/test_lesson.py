"""Lesson mode in Chromium (issues 24, 36): on Scores & softmax, at a laptop's and a phone's
size, a wrong answer gets the reason for that answer and the page's maps wait for the last
task; the whole lesson in 中文 on a phone (the laptop's walk is the keyboard's,
test_keyboard_walk.py), answered right (patches tapped on the picker), ends on the
summary right below The stack's card — between them the concept check, before (on the overview)
and after (in the summary), with the learner's own result."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from lens.i18n import translate
from lens.lesson.concepts import OWNER as CONCEPTS
from lens.lesson.concepts import POST, PRE, QUESTIONS
from lens.settings import Settings
from lens.steps import STEPS, tasks_for
from tests.support.browser_helpers import (
    MAIN,
    assert_no_errors,
    default_trace,
    open_app,
    screenshot,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

SIZES = {"laptop": (1400, 900), "phone": (390, 844)}


def say(key: str, lang: str, **values: object) -> str:
    return translate(key, lang, "lesson", **values)


def first_sentence(key: str, lang: str, owner: str) -> str:
    """The first sentence of a text, up to its first placeholder-free full stop."""
    return re.split(r"(?<=[.。])", translate(key, lang, owner))[0].strip()


@pytest.mark.parametrize(("size", "lang"), [("laptop", "en"), ("laptop", "zh"),
                                             ("phone", "en")])
def test_a_wrong_answer_gets_its_own_reason_and_the_maps_wait(page, app_url, size, lang):
    """Scores & softmax: the shape answered right; "add 5 to a row" answered wrong ("all
    grow") gets the reason for that answer, not the generic one; "Show me" on the last task
    draws the page's maps, which were withheld until then."""
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

    # 2 · add 5 to every score of a row: "all grow" is wrong, and the reveal says why
    card = main.locator(".st-key-lesson_card_scores_shift")
    card.scroll_into_view_if_needed()
    card.get_by_text(translate("scores_shift_larger", lang, "scores"), exact=True).click()
    wait_idle(page)
    card.get_by_role("button", name=say("check", lang)).click()
    wait_idle(page)
    card = main.locator(".st-key-lesson_card_scores_shift")
    expect(card).not_to_contain_text(say("right", lang))
    expect(card).to_contain_text(first_sentence("scores_shift_if_larger", lang, "scores"))
    expect(card).to_contain_text(translate("scores_shift_unchanged", lang, "scores"))

    # 3 · √d_model: "Show me" — then every map of the page is drawn
    main.locator(".st-key-lesson_card_scores_divisor").get_by_role(
        "button", name=say("show_me", lang)).click()
    wait_idle(page)
    expect(maps.locator('[data-testid="stImage"] img').first).to_be_visible(timeout=60_000)
    wait_for(lambda: maps.locator('[data-testid="stImage"] img').count(), lambda n: n == 2,
             "the scores and the attention matrix")
    specs = [s for info in STEPS for s in tasks_for(info.id, Settings().to_config())]
    progress = say("progress", lang, done=1, steps=len(STEPS), right=1, answered=2,
                   tasks=len(specs))
    expect(main.get_by_text(progress, exact=True)).to_be_visible()
    screenshot(page, f"lesson_scores_after_{size}_{lang}")
    assert_no_errors(page)


# --- the whole lesson, in 中文, answered right, to the summary (issue 36) --------------------

def default_tasks() -> list:
    """Every task of the walk as the app asks it at the default settings on the built-in photo
    (`default_trace`, as the app computes it), built by the registry's own builders with the
    page's selectors: what a learner who answers right enters."""
    from lens.context import PageContext  # noqa: PLC0415
    from lens.lesson.tasks import fixed_now  # noqa: PLC0415

    settings = Settings(lesson=True, lang="zh").normalised()[0]
    trace = default_trace()
    tasks = []
    for info in STEPS:
        ctx = PageContext(id=info.id, settings=settings, trace=trace, original=trace.image,
                          image_name="photo", image_key="browser-test")
        for spec in tasks_for(info.id, trace.config):
            tasks.append(spec.ask(ctx, fixed_now(ctx)))
    return tasks


def answer_right(page, card, task, lang: str) -> None:
    """Enter the right answer through the card's own inputs, as a learner does."""
    from lens.lesson.tasks import task_texts  # noqa: PLC0415

    if task.kind in ("number", "estimate"):
        values = task.answer if task.kind == "number" else (round(float(task.answer)),)
        boxes = card.locator("input")
        for k, v in enumerate(values):
            boxes.nth(k).fill(f"{v:g}" if isinstance(v, float) else str(v))
            boxes.nth(k).press("Enter")
            wait_idle(page)
    elif task.kind == "choice":
        label = task_texts(lang, task)(f"{task.text_id}_{task.answer}")
        card.get_by_text(label, exact=True).click()
        wait_idle(page)
    else:
        picker = card.locator('[data-testid="el-picker"]')
        picker.scroll_into_view_if_needed()
        box = picker.bounding_box()
        r, c = divmod(int(task.answer), task.grid)
        picker.click(position={"x": (c + 0.5) * box["width"] / task.grid,
                               "y": (r + 0.5) * box["height"] / task.grid})
        expect(card).to_contain_text(say("pick_chosen", lang, j=task.answer, r=r, c=c),
                                     timeout=60_000)
        wait_idle(page)


@pytest.mark.slow
# with a pointer on a phone (taps on the picker); at a laptop's size the same lesson is walked
# with the keyboard alone (tests/browser/test_keyboard_walk.py): the suite's time
@pytest.mark.parametrize("size", ["phone"])
def test_the_whole_lesson_in_chinese_answered_right_ends_on_the_summary(page, app_url, size):
    lang = "zh"
    width, height = SIZES[size]
    page.set_viewport_size({"width": width, "height": height})
    open_app(page, app_url, "", f"lesson=1&lang={lang}")
    main = page.locator(MAIN)
    tasks = default_tasks()
    before = {q.id: q.right if n < 3 else next(o for o in q.options if o != q.right)
              for n, q in enumerate(QUESTIONS)}  # the concept check before: 3 of 6 right
    take_check(page, PRE, before)
    for info in STEPS:
        if info.id != STEPS[0].id:
            page.goto(f"{app_url}/{info.id}?{page.url.split('?', 1)[1]}")  # the link keeps it
            wait_idle(page)
        for task in (t for t in tasks if t.page == info.id):
            card = main.locator(f".st-key-lesson_card_{task.text_id}")
            card.scroll_into_view_if_needed()
            # the takeaway waits until the step's questions are answered
            assert main.get_by_text(info.takeaway_in(lang), exact=True).count() == 0
            answer_right(page, card, task, lang)
            card.get_by_role("button", name=say("check", lang)).click()
            wait_idle(page)
            card = main.locator(f".st-key-lesson_card_{task.text_id}")
            expect(card).to_contain_text(say("right", lang), timeout=60_000)
        expect(main.get_by_text(info.takeaway_in(lang), exact=True).first).to_be_visible()
        assert_no_errors(page)
    summary = main.locator(".st-key-lesson_summary")
    expect(summary).to_contain_text(say("summary_title", lang))
    expect(summary).to_contain_text(say("got_right", lang, n=len(tasks)))
    expect(summary).to_contain_text(say("summary_text", lang, right=len(tasks), answered=len(tasks),
                                           n=len(tasks)))
    # right below the step's card, not thousands of pixels down
    card = main.locator(".st-key-lesson_card_stack_reach")
    top = summary.bounding_box()["y"] - card.bounding_box()["y"]
    assert 0 < top < 2 * height, top
    screenshot(page, f"lesson_summary_{size}_{lang}")
    take_check(page, POST, {q.id: q.right for q in QUESTIONS})  # after: 6 of 6
    expect(summary).to_contain_text(
        translate("result", lang, CONCEPTS, pre=3, post=6, n=6).replace("**", ""))
    screenshot(page, f"lesson_check_result_{size}_{lang}")
    assert_no_errors(page)


def take_check(page, round_: str, chosen: dict[str, str]) -> None:
    """A learner alone answers the concept check's round (its card on the page) and sends."""
    main = page.locator(MAIN)
    card = main.locator(f".st-key-concept_check_card_{round_}")
    expect(card).to_be_visible(timeout=60_000)
    for q in QUESTIONS:
        group = main.locator(f".st-key-concept_check_{round_}_{q.id} [role='radiogroup']")
        group.scroll_into_view_if_needed()
        group.locator("label").nth(q.options.index(chosen[q.id])).click()
    wait_idle(page)
    for q in QUESTIONS:
        radios = main.locator(f".st-key-concept_check_{round_}_{q.id} input[type='radio']")
        expect(radios.nth(q.options.index(chosen[q.id]))).to_be_checked()
    main.locator(f".st-key-concept_check_send_{round_} button").click()
    wait_idle(page)
    expect(card).to_have_count(0, timeout=60_000)
