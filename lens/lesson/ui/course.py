"""The lesson over the whole walk: the overview's choice (take the lesson or explore), the
header's line of progress, and the summary at the end of The stack with a retry of what was
not right. Each step's own cards are `lens.lesson.ui.cards`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import streamlit as st

from ... import keys
from ...i18n import Texts
from ...session import set_settings
from ...steps import PAGES, STEPS, tasks_for
from ..progress import Record
from ..tasks import Spec, task_texts
from . import check
from .cards import OWNER, forget, records, shown_answer

if TYPE_CHECKING:
    from ...context import PageContext


def lesson_specs(ctx: PageContext) -> list[Spec]:
    """Every task of the walk for this model, in the walk's order."""
    return [s for info in STEPS for s in tasks_for(info.id, ctx.cfg) if s.possible(ctx)]


def progress_caption(ctx: PageContext) -> None:
    """The header's line: steps done, answers right."""
    t = Texts(ctx.lang, OWNER)
    specs = lesson_specs(ctx)
    rec = records()
    pages = sorted({s.page for s in specs}, key=[p.id for p in STEPS].index)
    done = sum(all(s.id in rec for s in specs if s.page == p) for p in pages)
    st.caption(t("progress", done=done, steps=len(pages), right=right_count(specs, rec),
                   answered=answered_count(specs, rec), tasks=len(specs)))


@dataclass(frozen=True)
class Concept:
    """One task of the walk as the summary reads it: the idea it asks about and how the
    learner did (a later comparison — before / after a class — compares these)."""

    task_id: str
    page: str
    result: str  # "result_right", "result_wrong", "result_shown", "result_open"


def concepts(specs: list[Spec], rec: dict[str, Record]) -> list[Concept]:
    """Every task's idea and the learner's result, in the walk's order."""
    return [Concept(s.id, s.page, result(rec.get(s.id))) for s in specs]


SUMMARY_ANCHOR = "lesson-summary"


def summary(ctx: PageContext) -> None:
    """The end of the walk in lesson mode: the ideas the learner got right and those to look
    at again, then each task with the learner's answer and the right one, and a retry of those
    not right on new numbers."""
    lang = ctx.lang
    t = Texts(lang, OWNER)
    rec = records()
    specs = lesson_specs(ctx)
    ideas = concepts(specs, rec)
    with st.container(border=True, key="lesson_summary"):
        st.header(t("summary_title"), anchor=SUMMARY_ANCHOR)
        st.write(t("summary_text", right=right_count(specs, rec), n=len(specs),
                   answered=answered_count(specs, rec)))
        for title, wanted in (("got_right", ("result_right",)),
                              ("look_again", ("result_wrong", "result_shown")),
                              ("not_yet", ("result_open",))):
            lines = [f"- {idea_line(lang, c)}" for c in ideas if c.result in wanted]
            if lines:
                st.markdown(f"**{t(title, n=len(lines))}**")
                st.markdown("\n".join(lines))
        if ctx.member is None:  # a learner alone: the concept check's after round, or its result
            with st.container(key="lesson_summary_check"):
                check.after(lang)
        rows = []
        for n, s in enumerate(specs):
            r = rec.get(s.id)
            first = n == 0 or specs[n - 1].page != s.page  # a step's name once, on its first row
            rows.append({t("col_step"): PAGES[s.page].title_in(lang) if first else "",
                         t("col_task"): task_texts(lang, s)(f"{s.id.replace('.', '_')}_short"),
                         t("col_yours"): shown_answer(lang, s.id, r.given) if r else "—",
                         t("col_right"): shown_answer(lang, s.id, r.answer) if r else "—",
                         t("col_result"): t(result(r))})
        with st.expander(t("summary_table")):
            st.table(rows)
        again = [s for s in specs if s.id in rec and not rec[s.id].right]  # wrong, or shown
        if again:
            st.markdown(t("retry_text", n=len(again)))
            row = st.container(horizontal=True)
            first = PAGES[again[0].page]
            changes = [("retry_image", {"source": "sample",
                                        "sample_seed": ctx.settings.sample_seed + 1})]
            if ctx.weights == "random":
                changes.append(("retry_seed", {"seed": ctx.settings.seed + 1}))
            for name, change in changes:  # settings change in the callback, before any widget
                if row.button(t(name), key=f"lesson_{name}", type="primary"
                              if name == "retry_image" else "secondary", on_click=retry,
                              args=([s.id for s in again],), kwargs=change):
                    st.switch_page(first.path)


def idea_line(lang: str, c: Concept) -> str:
    """A task's idea in one line, with its step: "Scores & softmax: softmax ignores …"."""
    idea = task_texts(lang, c)(f"{c.task_id.replace('.', '_')}_concept")
    return f"{PAGES[c.page].title_in(lang)} · {idea}"


def right_count(specs: list[Spec], rec: dict[str, Record]) -> int:
    """How many of these tasks were answered right."""
    return sum(1 for s in specs if s.id in rec and rec[s.id].right)


def answered_count(specs: list[Spec], rec: dict[str, Record]) -> int:
    """How many of these tasks the learner answered (not "Show me"): the header's and the
    summary's denominator, beside the number of tasks in all."""
    return sum(1 for s in specs if s.id in rec and rec[s.id].answered)


def result(record: Record | None) -> str:
    if record is None:
        return "result_open"
    if not record.answered:
        return "result_shown"
    return "result_right" if record.right else "result_wrong"


def retry(task_ids: list[str], **changes: object) -> None:
    """Forget the tasks not right and change the settings: the same questions, new numbers
    (a callback)."""
    for task_id in task_ids:
        forget(task_id)
    set_settings(**changes)


def choose(ctx: PageContext) -> None:
    """The overview's choice: take the lesson (predict first) or explore freely."""
    lang = ctx.lang
    t = Texts(lang, OWNER)
    box = st.container(border=True, key="lesson_choice")
    box.markdown(f"**{t('choose_title')}**")
    row = box.container(horizontal=True)
    on = ctx.settings.lesson
    made = chosen(ctx)
    row.button(t("take_lesson"), key="lesson_on", type="primary" if not on else
               "secondary", on_click=make_choice, args=(True,), disabled=on)
    row.button(t("explore"), key="lesson_off", on_click=make_choice, args=(False,),
               disabled=made and not on)
    box.caption(t("choose_on" if on else "choose_help" if made else "choose_first"))


def chosen(ctx: PageContext) -> bool:
    """Whether the walk's first page's choice is made: a button pressed, the lesson on, or a
    link that says lesson=… (lens.session). Before it, the first page counts as the lesson's:
    it shows the choice alone (`lens.roles.Learner`)."""
    return ctx.settings.lesson or bool(ctx.state.get(keys.LESSON_CHOSEN))


def make_choice(lesson: bool) -> None:
    """The choice's buttons: the lesson on or off, and the choice made."""
    st.session_state[keys.LESSON_CHOSEN] = True
    set_settings(lesson=lesson)
