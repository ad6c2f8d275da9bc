"""Lesson mode in the app (AppTest): what a task withholds is not in the page until it is
answered or shown, and is in it in free mode; answers are judged right and wrong; "Show me"
reveals and counts as unanswered; Next, a reload and the link keep the lesson and its progress;
a task is asked afresh when its trace changes before it is answered."""

from __future__ import annotations

import pytest
from streamlit.elements.lib.utils import user_key_from_element_id

from lens.i18n import translate
from lens.keys import LESSON_RECORDS as RECORDS
from lens.lesson.concepts import PRE, encode_rounds
from lens.lesson.concepts import URL_KEY as CHECK_URL_KEY
from lens.lesson.progress import URL_KEY
from lens.settings import Settings
from lens.steps import STEPS, TASKS, tasks_for
from tests.support.apptest_helpers import assert_clean, new_app, open_page

# Each step's tasks asked at the default settings, from the registry
LESSON_PAGES = {p.id: [s.id for s in tasks_for(p.id, Settings().to_config())] for p in STEPS}
N_TASKS = sum(map(len, LESSON_PAGES.values()))


def keyed(at) -> set[str]:
    """The user keys of every element and container in the page."""
    found: set[str] = set()

    def walk(node) -> None:
        proto = getattr(node, "proto", None)
        element_id = getattr(proto, "id", "") if proto is not None else ""
        if element_id and (key := user_key_from_element_id(element_id)):
            found.add(key)
        for child in getattr(node, "children", {}).values():
            walk(child)

    walk(at._tree)
    return found


def shown_sections(at) -> set[str]:
    """The withholdable parts the page draws: its sections (containers keyed shown_<key>), and
    "page" when anything of the page below the cards is drawn (one of its pictures)."""
    found = {k.removeprefix("shown_") for k in keyed(at) if k.startswith("shown_")}
    pictures = [b.key for b in at.get("download_button")
                if b.key.startswith("dl_") and not b.key.startswith("dl_lesson_")]
    return found | ({"page"} if pictures else set())


CHECK_SKIPPED = {CHECK_URL_KEY: encode_rounds({PRE: {}})}  # the concept check before: skipped


def lesson_page(page: str, **query: str):
    """The lesson opened on `page`, the concept check before it skipped (tests of the check:
    tests/test_app_concept_check.py)."""
    at = new_app(lesson="1", **{**CHECK_SKIPPED, **query})
    at.run()
    return open_page(at, page)


def open_tasks(at) -> list[str]:
    """The task ids whose Check button the page shows, in order."""
    ids = [b.key.removeprefix("lesson_check_") for b in at.button
           if b.key and b.key.startswith("lesson_check_")]
    return [i.replace("_", ".", 1) for i in ids]


def records(at) -> dict:
    return at.session_state[RECORDS]


def verdict_label(verdict: str, task_id: str) -> str:
    """The reveal's label: "✓ Right · the shape of …"."""
    return translate("reveal_label", "en", "lesson", verdict=translate(verdict, "en", "lesson"),
                     task=translate(f"{task_id.replace('.', '_')}_short", "en",
                                    TASKS[task_id].page))


def kind_of(task_id: str) -> str:
    return TASKS[task_id].kind


def answer_with(at, task_id: str, right: bool) -> None:
    """Answer a task through its inputs: the right answer, or a wrong one."""
    text_id = task_id.replace(".", "_")
    truth = at.session_state["_lesson_truth"][task_id]
    kind = kind_of(task_id)
    if kind == "number":
        inputs = [n for n in at.number_input if n.key and n.key.startswith(
            f"lesson_in_{text_id}_")]
        values = truth if right else tuple(v + 7 for v in truth)
        for box, value in zip(inputs, values, strict=True):
            box.set_value(value)
    elif kind == "choice":
        radio = next(r for r in at.radio if r.key and r.key.startswith(f"lesson_in_{text_id}_"))
        radio.set_value(truth if right else next(o for o in radio.options if o != truth))
    elif kind == "estimate":
        box = next(n for n in at.number_input if n.key and n.key.startswith(
            f"lesson_in_{text_id}_"))
        box.set_value(round(truth) if right else (round(truth) + 40) % 100)
    else:
        key = next(k for k in keyed(at) if k.startswith(f"lesson_pick_{text_id}_"))
        j = truth if right else at.session_state["_lesson_worst"][task_id]
        at.session_state[key] = {"commit": {"query": int(j), "nonce": f"t{j}"}}
        at.run()
    at.button(key=f"lesson_check_{text_id}").click().run()


@pytest.fixture(autouse=True)
def expose_truth(monkeypatch):
    """Keep each task's right answer (and a poor patch) in the session, for the test to answer
    with — read from the Task the page built (every task of the page, the ones still waiting
    for their turn too), never computed here."""
    import lens.lesson.ui.cards as lesson  # noqa: PLC0415

    real = lesson.current

    def current(ctx, spec):
        import numpy as np  # noqa: PLC0415
        import streamlit as st  # noqa: PLC0415

        asked = real(ctx, spec)
        if asked is not None:
            task = asked[0]
            st.session_state.setdefault("_lesson_truth", {})[task.id] = task.answer
            st.session_state.setdefault("_lesson_withholds", {})[task.id] = set(task.withholds)
            if task.kind == "patch":
                st.session_state.setdefault("_lesson_worst", {})[task.id] = int(
                    np.argmin(task.scores))
        return asked

    monkeypatch.setattr(lesson, "current", current)


@pytest.mark.parametrize("page", list(LESSON_PAGES))
def test_withheld_sections_are_absent_until_answered_and_present_in_free_mode(page):
    at = lesson_page(page)
    assert_clean(at)
    assert open_tasks(at) == LESSON_PAGES[page][:1]  # one at a time, in order
    withholds = {t: at.session_state["_lesson_withholds"][t] for t in LESSON_PAGES[page]}
    everything = set().union(*withholds.values())

    free = new_app_free(page)
    assert_clean(free)
    expected = everything & shown_sections(free)  # the sections these settings draw
    assert expected, (page, everything)

    assert not (shown_sections(at) & expected), "a withheld section was drawn"
    remaining = list(LESSON_PAGES[page])
    while remaining:
        answer_with(at, remaining.pop(0), right=True)
        assert_clean(at)
        still = set().union(*(withholds[t] for t in remaining))
        assert shown_sections(at) & expected == expected - still, remaining
    assert open_tasks(at) == []
    assert all(r.right for r in records(at).values())


def test_a_wrong_and_a_right_answer_are_judged_so():
    at = lesson_page("positional")
    answer_with(at, "positional.similar", right=False)
    answer_with(at, "positional.shuffle", right=True)
    rec = records(at)
    assert rec["positional.similar"].right is False and rec["positional.similar"].answered
    assert rec["positional.shuffle"].right is True
    labels = [e.label for e in at.expander]
    assert verdict_label("wrong", "positional.similar") in labels
    assert verdict_label("right", "positional.shuffle") in labels
    progress = translate("progress", "en", "lesson", done=1, steps=len(STEPS), right=1, answered=2,
                         tasks=N_TASKS)
    assert progress in [c.value for c in at.caption]


def test_a_patch_answer_is_judged_by_its_place_among_the_patches():
    at = lesson_page("positional")
    answer_with(at, "positional.similar", right=False)
    record = records(at)["positional.similar"]
    worst = at.session_state["_lesson_worst"]["positional.similar"]
    assert not record.right and record.given == worst
    captions = [c.value for c in at.caption]
    assert any(f"Your patch {record.given}: cos" in c for c in captions), captions
    assert "dl_lesson_positional_similar" in [b.key for b in at.get("download_button")]


def test_show_me_reveals_and_counts_as_not_answered():
    at = lesson_page("addnorm")
    at.button(key="lesson_show_addnorm_scale").click().run()
    record = records(at)["addnorm.scale"]
    assert record.given is None and not record.right
    assert verdict_label("shown", "addnorm.scale") in [e.label for e in at.expander]
    assert "normalise" not in shown_sections(at)  # the other task still withholds it
    at.button(key="lesson_show_addnorm_within").click().run()
    assert {"normalise", "by_hand"} <= shown_sections(at)


def test_next_and_a_reload_keep_the_lesson_and_its_progress():
    at = lesson_page("positional")
    answer_with(at, "positional.similar", right=True)
    assert at.query_params["lesson"] == "1"
    link = at.query_params[URL_KEY]
    open_page(at, "qkv")  # Next (AppTest does not follow st.switch_page)
    open_page(at, "scores")
    assert open_tasks(at) == LESSON_PAGES["scores"][:1]
    assert at.query_params[URL_KEY] == link

    reloaded = new_app(lesson="1", **{URL_KEY: link})  # a new session from the link
    reloaded.run()
    open_page(reloaded, "positional")
    assert open_tasks(reloaded) == ["positional.shuffle"]
    assert records(reloaded)["positional.similar"].right
    assert "pe_similarity" in shown_sections(reloaded)  # withheld by the similar task alone


def new_app_free(page: str):
    at = new_app()
    at.run()
    return open_page(at, page)


def test_free_mode_has_no_cards_and_no_progress():
    at = new_app_free("scores")
    assert open_tasks(at) == []
    assert not any(c.value.startswith("Lesson:") for c in at.caption)
    assert URL_KEY not in at.query_params


def test_a_task_is_asked_afresh_when_the_weights_change_before_it_is_answered():
    at = lesson_page("scores")
    at.button(key="lesson_show_scores_shape").click().run()
    keys_before = {k for k in keyed(at) if k.startswith("lesson_in_scores_shift_")}
    question = [m.value for m in at.markdown if "Row 105" in m.value]
    at.session_state["seed"] = 7  # new weights before an answer
    at.run()
    assert open_tasks(at) == ["scores.shift"]
    keys_now = {k for k in keyed(at) if k.startswith("lesson_in_scores_shift_")}
    assert keys_now and question and keys_now != keys_before  # asked afresh: new inputs
    # answered, then the weights change: the answer stays, said as given on other settings
    answer_with(at, "scores.shift", right=True)
    at.session_state["seed"] = 8
    at.run()
    assert "scores.shift" not in open_tasks(at)
    assert any("Answered on other settings" in m.value for m in at.markdown)
    at.button(key="lesson_again_scores_shift").click().run()
    assert "scores.shift" in open_tasks(at)


def test_moving_a_selector_keeps_the_asked_question():
    at = lesson_page("scores")
    at.button(key="lesson_show_scores_shape").click().run()
    asked = [m.value for m in at.markdown if "Row 105 of head 1" in m.value]
    at.session_state["head"] = 5
    at.session_state["query"] = 20
    at.run()
    assert asked and [m.value for m in at.markdown if "Row 105 of head" in m.value] == asked


def test_the_stack_ends_with_the_lessons_summary_in_lesson_mode():
    at = lesson_page("positional")
    answer_with(at, "positional.similar", right=False)
    open_page(at, "stack")
    assert_clean(at)
    assert translate("summary_title", "en", "lesson") not in [h.value for h in at.header]
    for task_id in LESSON_PAGES["stack"]:  # the stack's own questions first
        at.button(key=f"lesson_show_{task_id.replace('.', '_')}").click().run()
    table = at.table[0].value
    assert len(table) == N_TASKS
    assert translate("summary_title", "en", "lesson") in [h.value for h in at.header]
    assert translate("recap_title", "en", "stack") not in [h.value for h in at.header]
    at.button(key="lesson_retry_seed").click().run()
    assert_clean(at)
    assert "positional.similar" not in records(at)
    assert at.session_state["seed"] == 1


@pytest.mark.parametrize("page", list(LESSON_PAGES))
def test_a_vits_lesson_asks_in_its_own_terms_and_reveals_without_an_error(page,
                                                                         with_checkpoint):
    at = lesson_page(page, weights="vit_tiny_test")
    assert_clean(at)
    assert at.session_state["weights"] == "vit_tiny_test"
    gelu = {"ffn.relu"}  # a ViT's GELU is seldom exactly 0: the ReLU share is not asked
    expected = [t for t in LESSON_PAGES[page] if t not in gelu]
    truth = at.session_state["_lesson_truth"]
    assert [t for t in truth if TASKS[t].page == page] == expected
    if page == "overview":  # the CLS token and one per patch
        assert truth["overview.tokens"] == (197.0,)
    if page == "scores":  # the ViT's own scores: its CLS row and column too
        assert truth["scores.shape"] == (197.0, 197.0)
    shown = []
    while asked := open_tasks(at):
        shown.append(asked[0])
        at.button(key=f"lesson_show_{asked[0].replace('.', '_')}").click().run()
        assert_clean(at)
    assert shown == expected
