"""The concept check taken by a learner alone (AppTest): the lesson starts with its six
questions on the overview, and the overview waits; nothing of the right answers shows; sent (or
skipped) the lesson goes on and the link keeps the answers; at the lesson's end the summary asks
the same six again, then shows the learner's own before and after — in English and 中文. Free
mode and a new session from the link too."""

from __future__ import annotations

import pytest

from lens.i18n import translate
from lens.lesson.concepts import OWNER, POST, PRE, QUESTIONS, URL_KEY, decode_rounds
from lens.settings import Settings
from lens.steps import tasks_for
from tests.support.apptest_helpers import assert_clean, new_app, open_page

RIGHT = {q.id: q.right for q in QUESTIONS}
WRONG = {q.id: next(o for o in q.options if o != q.right) for q in QUESTIONS}
STACK_TASKS = [s.id for s in tasks_for("stack", Settings().to_config())]


def words(key: str, lang: str = "en", **values: object) -> str:
    return translate(key, lang, OWNER, **values)


def check_radios(at, round_: str) -> list:
    return [r for r in at.radio if (r.key or "").startswith(f"concept_check_{round_}_")]


def task_buttons(at) -> list[str]:
    return [b.key for b in at.button if (b.key or "").startswith("lesson_check_")]


def all_text(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "success")
             for e in at.get(kind)]
    return "\n".join(str(p) for p in parts)


def answer(at, round_: str, chosen: dict[str, str]) -> None:
    for q_id, option in chosen.items():
        at.radio(key=f"concept_check_{round_}_{q_id}").set_value(option)
    at.button(key=f"concept_check_send_{round_}").click().run()
    assert_clean(at)


def lesson_start(lang: str = "en"):
    at = new_app(lesson="1", lang=lang)
    at.run()
    assert_clean(at)
    return at


def to_summary(at):
    """The stack, its own tasks shown: the lesson's summary with the check's after round."""
    open_page(at, "stack")
    for task_id in STACK_TASKS:
        at.button(key=f"lesson_show_{task_id.replace('.', '_')}").click().run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_lesson_starts_with_six_questions_and_the_overview_waits(lang):
    at = lesson_start(lang)
    radios = check_radios(at, PRE)
    assert [r.key for r in radios] == [f"concept_check_pre_{q.id}" for q in QUESTIONS]
    assert all(r.value is None for r in radios), "nothing chosen for the learner"
    assert words("alone_title_pre", lang) in all_text(at)
    assert task_buttons(at) == [], "the lesson's first task comes after the check"
    assert not [b for b in at.get("download_button") if (b.key or "").startswith("dl_")], \
        "no picture of the overview while the check waits"
    assert translate("withheld_check", lang, "common") in all_text(at)
    for q in QUESTIONS:  # nothing of the answers: no why, no "right answer"
        assert words(q.text("why"), lang) not in all_text(at)
    assert words("right", lang, answer="") .split("**")[0] not in all_text(at)


def test_sending_nothing_says_what_to_do_and_keeps_the_card():
    at = lesson_start()
    at.button(key="concept_check_send_pre").click().run()
    assert_clean(at)
    assert words("alone_answer_first") in [w.value for w in at.warning]
    assert len(check_radios(at, PRE)) == len(QUESTIONS)


def test_sent_answers_start_the_lesson_and_travel_in_the_link():
    at = lesson_start()
    mine = {**dict(list(RIGHT.items())[:2]), QUESTIONS[2].id: WRONG[QUESTIONS[2].id]}
    answer(at, PRE, mine)
    assert check_radios(at, PRE) == []
    assert task_buttons(at), "the overview's first task is asked now"
    assert decode_rounds(at.query_params[URL_KEY]) == {PRE: mine}
    assert words("result", pre=2, post=0, n=6).split("**")[0] not in all_text(at)

    again = new_app(lesson="1", **{URL_KEY: at.query_params[URL_KEY]})  # a reload
    again.run()
    assert_clean(again)
    assert check_radios(again, PRE) == [] and task_buttons(again)


def test_skipping_starts_the_lesson_and_the_after_round_is_still_asked():
    at = lesson_start()
    at.button(key="concept_check_skip").click().run()
    assert_clean(at)
    assert check_radios(at, PRE) == [] and task_buttons(at)
    assert decode_rounds(at.query_params[URL_KEY]) == {PRE: {}}
    to_summary(at)
    answer(at, POST, RIGHT)
    assert words("result_after_only", post=6, n=6) in [i.value for i in at.info]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_asks_again_then_shows_before_and_after(lang):
    at = lesson_start(lang)
    before = {**RIGHT, QUESTIONS[0].id: WRONG[QUESTIONS[0].id],
              QUESTIONS[3].id: WRONG[QUESTIONS[3].id]}  # 4 of 6 right
    answer(at, PRE, before)
    to_summary(at)
    assert [r.key for r in check_radios(at, POST)] == [f"concept_check_post_{q.id}"
                                                       for q in QUESTIONS]
    assert all(r.value is None for r in check_radios(at, POST)), "not prefilled from before"
    for q in QUESTIONS:
        assert words(q.text("why"), lang) not in all_text(at), "no why before the after round"
    after = {**RIGHT, QUESTIONS[5].id: WRONG[QUESTIONS[5].id]}  # 5 of 6 right
    answer(at, POST, after)
    assert check_radios(at, POST) == []
    assert words("result", lang, pre=4, post=5, n=6) in [i.value for i in at.info]
    text = all_text(at)
    for q in QUESTIONS:  # each question: the answers given, the right one and why
        assert words(q.text("why"), lang) in text
        assert words("right", lang, answer=words(q.text(q.right), lang)) in text
    first, last = QUESTIONS[0], QUESTIONS[1]  # changed; the same twice: said once
    assert words("yours_pre", lang, answer=f"{words(first.text(WRONG[first.id]), lang)} ✗") in text
    assert words("yours_post", lang, answer=f"{words(first.text(first.right), lang)} ✓") in text
    assert words("yours_both", lang, answer=f"{words(last.text(last.right), lang)} ✓") in text
    assert words("yours_pre", lang, answer=f"{words(last.text(last.right), lang)} ✓") not in text
    assert decode_rounds(at.query_params[URL_KEY]) == {PRE: before, POST: after}

    again = new_app(lesson="1", lang=lang, **{URL_KEY: at.query_params[URL_KEY]})
    again.run()
    to_summary(again)  # a new session from the link: the result, not the card
    assert words("result", lang, pre=4, post=5, n=6) in [i.value for i in again.info]


def test_free_mode_has_no_check_and_no_check_in_the_link():
    at = new_app(**{URL_KEY: "0000--."})  # a lesson's link with the lesson turned off
    at.run()
    assert_clean(at)
    assert check_radios(at, PRE) == [] and URL_KEY not in at.query_params


def test_a_hand_edited_link_is_read_as_no_check_taken():
    at = new_app(lesson="1", **{URL_KEY: "99zz.<script>"})
    at.run()
    assert_clean(at)
    assert len(check_radios(at, PRE)) == len(QUESTIONS)
