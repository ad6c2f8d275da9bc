"""Lesson mode's cards: on a step, predict first, then see the live model's answer.

`Settings.lesson` turns it on (the overview offers it; it is kept in the link). On a step with
tasks (its entry's `tasks` in `lens.steps`), `ask(ctx)` draws one card per task at the top of
the page — the question, its answer input, "Check" and "Show me" — and returns the page's
element keys that
stay withheld: the page draws those (`PageContext.shows`) only once every task that withholds
them is answered or shown. Not drawn means not sent: a withheld picture's PNG never reaches
the browser. The reveal gives the learner's answer beside the right one and why.

`progress_caption` is the header's line (steps done, answers right); `summary` replaces the
walk's recap at the end of the stack: every task, the learner's answer and the right one,
and a retry of those not right on new numbers. The records live in the session and in the
link (`progress`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from ... import explorer, explorer_component, figures, scroll_js
from ...i18n import Texts
from ...keys import LESSON_ASKED, LESSON_LAST, LESSON_MISSING, LESSON_PICK, LESSON_RECORDS
from ...steps import TASKS, tasks_for
from ...widgets import picture
from .. import progress
from ..progress import Record, trace_binding
from ..tasks import Fixed, Spec, Task, another, fixed_now, judge, mistake, task_texts

if TYPE_CHECKING:
    from ...context import PageContext

OWNER = "lesson"  # lens/texts/<lang>/lesson.toml: the words every card shares



# --- the records ------------------------------------------------------------------------------

def records() -> dict[str, Record]:
    """This session's records: read from the link on the session's first look."""
    state = st.session_state
    if LESSON_RECORDS not in state:
        state[LESSON_RECORDS] = progress.decode(st.query_params.get(progress.URL_KEY))
    return state[LESSON_RECORDS]


def sync_url(lesson: bool) -> None:
    """The records in the link while the lesson is on; none in it otherwise."""
    text = progress.encode(records()) if lesson else ""
    if text and st.query_params.get(progress.URL_KEY) != text:
        st.query_params[progress.URL_KEY] = text
    elif not text and progress.URL_KEY in st.query_params:
        del st.query_params[progress.URL_KEY]


def current(ctx: PageContext, spec: Spec) -> tuple[Task, str] | None:
    """The task as asked now and its binding: an answered one with what it was asked with, a
    pending one likewise while its binding holds (else asked afresh with the selectors)."""
    if not spec.possible(ctx):
        return None
    state = st.session_state
    asked = state.setdefault(LESSON_ASKED, {})
    record = records().get(spec.id)
    pending = asked.get(spec.id)
    fixed = record.fixed if record else pending[1] if pending else fixed_now(ctx)
    task = spec.ask(ctx, fixed)
    if task is None:
        return None
    bound = trace_binding(ctx, task)
    if record is None and pending is not None and pending[0] != bound:
        task = spec.ask(ctx, fixed_now(ctx))  # the trace changed: asked afresh
        if task is None:
            return None
        bound = trace_binding(ctx, task)
    if record is None:
        asked[spec.id] = (bound, task.fixed)
    return task, bound


# --- the cards --------------------------------------------------------------------------------

def ask(ctx: PageContext) -> frozenset[str]:
    """Draw this page's task cards; the element keys still withheld."""
    specs = tasks_for(ctx.id, ctx.cfg)
    withheld: set[str] = set()
    asked = [a for a in (current(ctx, s) for s in specs) if a is not None]
    waiting = 0  # open tasks after the one asked now: asked one at a time, in order, so that
    #              no reveal gives away a later question's answer
    for n, (task, bound) in enumerate(asked, 1):
        record = records().get(task.id)
        if record is None:
            withheld.update(task.withholds)
            if any(records().get(t.id) is None for t, _ in asked[:n - 1]):
                waiting += 1
                continue
        box = st.container(border=record is None, key=card_key(task))
        with box:
            if record is None:
                question(ctx, task, bound, n, len(asked))
            elif record.bound == bound:
                reveal(ctx, task, record)
            else:
                earlier(ctx, task, record)
    if waiting:
        st.caption(Texts(ctx.lang, OWNER)("more_after", n=waiting))
    return frozenset(withheld)


def input_keys(task: Task, bound: str) -> list[str]:
    """The session-state keys of a task's answer inputs (new ones for a new binding)."""
    base = f"lesson_in_{task.text_id}_{bound}"
    if task.kind == "number":
        return [f"{base}_{k}" for k in range(len(task.answer))]  # type: ignore[arg-type]
    if task.kind == "patch":
        return [f"{LESSON_PICK}{task.text_id}_{bound}"]
    return [base]


def question(ctx: PageContext, task: Task, bound: str, n: int, total: int) -> None:
    """The card of an open task: the question, its inputs, Check and Show me."""
    t = Texts(ctx.lang, OWNER)  # not ctx: what the widgets keep must not hold the trace
    names = question_inputs(ctx, task, bound, n, total)
    if st.session_state.get(LESSON_MISSING) == task.id:
        if given_answer(task, names) is None:  # gone once every box is filled
            st.warning(t("answer_first"))
        else:
            st.session_state.pop(LESSON_MISSING, None)
    light = task.light()  # what a callback keeps: never a trace, nor the experiment
    buttons = st.container(horizontal=True)
    buttons.button(t("check"), type="primary", key=f"lesson_check_{task.text_id}",
                   on_click=submit, args=(light, bound, names))
    buttons.button(t("show_me"), key=f"lesson_show_{task.text_id}", on_click=show_me,
                   args=(light, bound))
    buttons.caption(t("show_me_help"))


def question_inputs(ctx: PageContext, task: Task, bound: str, n: int, total: int,
                    given: object | None = None) -> list[str]:
    """The question k of n and its answer inputs (a live class's card has them too, `given`
    the answer it sent: the patch picker shows it until another is tapped); the inputs'
    session-state keys."""
    t, words = Texts(ctx.lang, OWNER), task_texts(ctx.lang, task)
    st.markdown(f"**{t('predict_first', k=n, n=total)}**")
    if task.source == "trained":
        st.caption(t("on_trained"))
    st.markdown(words(task.text("q"), **task.values))
    names = input_keys(task, bound)
    if task.kind == "number":
        row = st.container(horizontal=True)
        for k, key in enumerate(names):
            label = words(f"{task.text_id}_p{k}")
            if task.decimals:
                row.number_input(label, value=None, step=10.0 ** -task.decimals,
                                 format=f"%.{task.decimals}f", key=key, width=180)
            else:
                row.number_input(label, min_value=0, value=None, step=1, key=key, width=180)
    elif task.kind == "choice":
        if task.trace is not None and marked_patch(task) is not None:  # the image the
            patch_in_context(ctx, task)  # question is asked on, its patch framed
        st.radio(words(f"{task.text_id}_label"), task.options, index=None, key=names[0],
                 format_func=lambda o: words(f"{task.text_id}_{o}"), horizontal=True)
    elif task.kind == "estimate":  # unset until the learner enters one: no starting value
        #                             that could already be the answer
        st.number_input(f"{words(f'{task.text_id}_label')} (%)", min_value=0, max_value=100,
                        value=None, step=1, key=names[0], width=260)
    else:
        patch_picker(ctx, task, names[0], sent=given)
    return names


def marked_patch(task: Task) -> int | None:
    """The patch a task's question names, framed in magenta (`figures.MARK_COLOUR`) wherever
    the task's image is drawn: the one compared from, else its patch i; None when it names
    none."""
    marked = task.exclude if task.exclude is not None else int(task.values.get("i", -1))
    return marked if marked >= 0 else None


def patch_in_context(ctx: PageContext, task: Task) -> None:
    """The image a task is asked on, with its grid and the question's patch framed in magenta
    (a choice's card; the teacher's card of a class's question, whose students pick on it)."""
    t = Texts(ctx.lang, OWNER)

    tr = task.trace
    marked = marked_patch(task)
    left, _ = st.columns([2, 3])
    picture(ctx, figures.image_with_grid, tr.image, tr.config.patch_size,
            t("context_title", i=marked), numbers=False, mark=marked, size=3.9,
            axis_labels=(Texts(ctx.lang)("pixels_x"), Texts(ctx.lang)("pixels_y")),
            key=f"lesson_image_{task.text_id}", where=left)


def chosen_patch(key: str) -> int | None:
    commit = explorer_component.committed(key)
    return int(commit["query"]) if commit else None


def patch_picker(ctx: PageContext, task: Task, key: str, sent: object | None = None) -> None:
    """The task's own picker: the image and its grid, the question's patch framed, no maps;
    the patch chosen (or, in a class, the one sent) named beside it."""
    t = Texts(ctx.lang, OWNER)
    tr = task.trace if task.trace is not None else ctx.trace
    G = task.grid
    marked = marked_patch(task)
    mark = -1 if marked is None else marked  # the picker's "none"
    chosen = chosen_patch(key)
    if chosen is None and sent is not None:
        chosen = int(sent)  # type: ignore[arg-type]
    aria = t("pick_aria") if chosen is None else t("pick_aria_chosen", j=chosen,
                                                        r=chosen // G, c=chosen % G)
    text = {"hint": t("pick_hint"), "aria": aria,  # a focus on it says the choice
            "patch": Texts(ctx.lang)("patch_tip", i="{i}", r="{r}", c="{c}"),
            "chosen": t("pick_chosen", j="{i}", r="{r}", c="{c}"),  # said once committed
            "weight": "", "zoom": Texts(ctx.lang)("zoom_tip"),
            "zoom_close": Texts(ctx.lang)("zoom_close")}
    blob = ctx.services.payload(
        ("lesson", key, marked, chosen, ctx.lang),  # its key names the task and binding
        lambda: explorer.payload(tr.image, G, mark if chosen is None else chosen, text,
                                 mark=mark))
    left, right = st.columns([3, 2])
    explorer_component.show(blob, key=key, where=left)
    with right:
        if chosen is None:
            st.info(t("pick_none_plain") if marked is None else t("pick_none", i=marked))
        else:
            st.success(t("pick_chosen", j=chosen, r=chosen // G, c=chosen % G))


def given_answer(task: Task, names: list[str]) -> object | None:
    """The learner's answer from its inputs, or None while incomplete."""
    state = st.session_state
    if task.kind == "number":
        parts = [state.get(k) for k in names]
        return None if any(p is None for p in parts) else tuple(float(p) for p in parts)
    if task.kind == "patch":
        j = chosen_patch(names[0])
        return None if j is None or not 0 <= j < task.grid ** 2 else j
    value = state.get(names[0])
    return None if value is None else (float(value) if task.kind == "estimate" else value)


def submit(task: Task, bound: str, names: list[str]) -> None:
    """Check: judge the answer and record it (a callback, before the page runs)."""
    given = given_answer(task, names)
    if given is None:
        st.session_state[LESSON_MISSING] = task.id
        return
    st.session_state.pop(LESSON_MISSING, None)
    verdict = judge(task, given)
    records()[task.id] = Record(task.id, bound, task.fixed, given, verdict.right, task.answer)
    st.session_state[LESSON_LAST] = task.id
    scroll_js.ask(card_key(task), focus=True)  # its verdict, where the question was


def show_me(task: Task, bound: str) -> None:
    """Show me: the answer without one of the learner's (counted as not answered)."""
    st.session_state.pop(LESSON_MISSING, None)
    records()[task.id] = Record(task.id, bound, task.fixed, None, False, task.answer)
    st.session_state[LESSON_LAST] = task.id
    scroll_js.ask(card_key(task), focus=True)


def card_key(task: Task) -> str:
    """The key of a task's card: its question, then its verdict (`ask`)."""
    return f"lesson_card_{task.text_id}"


def shown_answer(lang: str, task_id: str, value: object) -> str:
    """An answer in words: "196 × 512", "patch 37", "flatter", "68 %"."""
    spec = TASKS[task_id]
    t, words = Texts(lang, OWNER), task_texts(lang, spec)
    text_id = task_id.replace(".", "_")
    if value is None:
        return t("no_answer")
    if spec.kind == "number":
        parts = [f"{v:g}" if float(v).is_integer() else f"{v:.3f}" for v in value]  # type: ignore[union-attr]
        return words(f"{text_id}_answer", a=parts[0], b=parts[-1])
    if spec.kind == "patch":
        return t("patch_answer", j=value)
    if spec.kind == "choice":
        return words(f"{text_id}_{value}")
    return t("percent", v=float(value))  # type: ignore[arg-type]


def reveal(ctx: PageContext, task: Task, record: Record) -> None:
    """The answer beside the right one, why, and (a patch) the true map; folded once another
    task was answered since (the page below is what the learner reads on)."""
    lang = ctx.lang
    t, words = Texts(lang, OWNER), task_texts(lang, task)
    verdict = ("shown" if not record.answered else "right" if record.right else "wrong")
    label = t("reveal_label", verdict=t(verdict),
                task=words(task.text("short")))
    with st.expander(label, expanded=st.session_state.get(LESSON_LAST) == task.id):
        st.markdown(words(task.text("q"), **task.values))
        st.markdown(t("yours_and_right",
                        yours=shown_answer(lang, task.id, record.given),
                        right=shown_answer(lang, task.id, task.answer)))
        if task.kind == "patch" and record.given is not None:
            detail = judge(task, record.given).detail
            st.caption(words(f"{task.text_id}_quality", j=record.given, **detail))
        values = task.revealed()  # the experiment runs now, once the answer is in
        if (name := mistake(task, record.given)) is not None:
            st.info(words(f"{task.text_id}_if_{name}", **values))
        if task.kind == "patch" and task.trace is not None and task.true_map:
            left, right = st.columns([2, 3], gap="large")
            with left:
                true_map(ctx, task)
            right.markdown(words(task.text("why"), **values))
        else:
            st.markdown(words(task.text("why"), **values))
        st.button(t("ask_again"), key=f"lesson_again_{task.text_id}", on_click=forget,
                  args=(task.id, record.bound, another(task.fixed, ctx.cfg)))


def true_map(ctx: PageContext, task: Task) -> None:
    """The true values of every patch, on the image: where the model looked, or how alike."""
    t, words = Texts(ctx.lang, OWNER), task_texts(ctx.lang, task)
    G, tr = task.grid, task.trace
    values = np.asarray(task.scores, dtype=np.float32).reshape(1, G, G)
    if task.exclude is not None:  # a similarity: the patch compared from is left out
        values = values.copy()
        values.flat[task.exclude] = float(np.min(values))  # its own 1 would set the scale
    title = words(f"{task.text_id}_map", **task.values)
    picture(ctx, figures.attention_grid, tr.image, np.clip(values, 0, None),
            [t("map_panel", best=task.values["best"])], title, ncols=1,
            mark=marked_patch(task), colorbar_label=words(f"{task.text_id}_bar"),
            width=3.9, key=f"lesson_{task.text_id}")


def earlier(ctx: PageContext, task: Task, record: Record) -> None:
    """A task answered on other settings: what was said then, and an offer to ask again."""
    lang = ctx.lang
    t = Texts(lang, OWNER)
    st.markdown(t("earlier", yours=shown_answer(lang, task.id, record.given),
                    right=shown_answer(lang, task.id, record.answer),
                    mark=t("mark_right" if record.right else "mark_wrong")))
    st.button(t("ask_again_here"), key=f"lesson_again_{task.text_id}",
              on_click=forget, args=(task.id,))


def forget(task_id: str, bound: str | None = None, fixed: Fixed | None = None) -> None:
    """Ask a task again (a callback): with `fixed` (and the trace's binding `bound`), on new
    numbers — its answer just revealed is not the next one's."""
    records().pop(task_id, None)
    asked = st.session_state.setdefault(LESSON_ASKED, {})
    asked.pop(task_id, None)
    if fixed is not None and bound is not None:
        asked[task_id] = (bound, fixed)
