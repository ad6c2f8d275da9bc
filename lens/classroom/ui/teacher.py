"""The teacher's side of a live class, on the class page: how to join (the code large, the
link, its QR code), the students, the class's step and settings, the questions of that step —
asked (vote 1), discussed, asked again (vote 2), revealed, asked again — the concept check
before and after the lesson (`concept_check`), the class's results
as CSV and on one page as PDF (`summary`; each built only when its button is pressed) and the
end of the class.

Every action goes through the store with the teacher's key (checked there). Before the reveal the
card shows how many answered, never what (the projector must not give an answer away; a toggle
shows the teacher the answers on demand), in a fragment that looks at the store every `LIVE_S`
seconds; a question revealed no longer changes and is drawn once, with how the students moved
from vote 1 to vote 2. Nicknames are shown to the teacher
only, as plain text (`st.text`: never markdown or HTML).

The wall has a view of its own (`projector`, its link in "Projector view"), and the teacher's
phone can be a remote (`remote`: the teacher link as a QR code, on demand). The "Presenting"
switch stays, as what it now is — "this screen may be seen": on by default, for a laptop
that is still shared or projected, and kept in this browser with the "show the answers"
toggles (`switches`: a page that reconnects to another replica comes back as it was); it
hides the nicknames (the count only), everything about the teacher's key (the remote's QR
code), the share right at vote 1 with its hint, and the toggle that would show a vote's
answers before the reveal. A revealed question shows its results in both modes. Every
teacher page follows what another device of the same teacher did (`remote.follow`).
"""

from __future__ import annotations

import html
import os
import time
from functools import partial
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from ... import widgets
from ...i18n import Texts
from ...keys import (
    CLASS_FORGET,
    CLASS_STEP_CHOICE,
    TEACHER_ERROR,
)
from ...lesson.tasks import Task, task_from_json, task_json, task_texts
from ...lesson.ui.cards import patch_in_context, true_map
from ...steps import PAGES, STEPS, TASKS, step_number
from .. import room
from ..asking import Asked, asked_on, class_settings, rule_for, same_settings
from ..results import class_results_csv
from ..rules import RefusedError
from ..tally import judge_stored, transitions
from . import concept_check, remote, view
from .join import (
    PUBLIC_URL_ENV,
    join_link,
    lan_address,
    lan_suggestion,
    link_base,
    link_problems,
    loopback_move,
    qr_png,
)
from .member import Member, become, brief, keep_teacher, shared_store, store_error
from .member import class_state as member_class_state
from .switches import SHOW_PREFIX, keep_view, presenting_switch, restored_view

if TYPE_CHECKING:
    from ...context import PageContext

OWNER = "class"
LIVE_S = 2.0  # how often the teacher's counts look at the store (seconds)
PROJECTED_IN = 6.0  # the teacher's histograms, in inches (100 px each): read on a projector



def step_label(lang: str, page_id: str) -> str:
    return f"{step_number(page_id)}. {PAGES[page_id].title_in(lang)}"


def panel(ctx: PageContext, member: Member) -> None:
    """The class page of the class's teacher (the store out of reach: said, nothing breaks)."""
    t = Texts(ctx.lang, OWNER)
    try:
        draw_panel(ctx, member)
    except SQLAlchemyError as err:
        st.error(t("store_down", why=brief(err)))


def draw_panel(ctx: PageContext, member: Member) -> None:
    t = Texts(ctx.lang, OWNER)
    class_state = member_class_state()  # this run's look at the class
    if class_state is None:
        if store_error():
            st.error(t("store_down", why=store_error()))
        return
    error = st.session_state.pop(TEACHER_ERROR, None)
    if error:
        st.error(error)
    shown = presenting_switch(ctx.lang, member.code)
    remote.follow(member.code, member.secret, ctx.lang, remote.seen_of(class_state))
    remote.projector_offer(ctx.lang, member)
    remote.remote_offer(ctx.lang, member, shown)
    joining(ctx, member, shown)
    roster(member.code, member.secret, ctx.lang, shown)
    st.subheader(t("step_title"))
    step = class_state["step"]
    st.markdown(t("class_on", step=step_label(ctx.lang, step)))
    ids = [p.id for p in STEPS]
    if st.session_state.get(CLASS_STEP_CHOICE) not in ids:
        st.session_state[CLASS_STEP_CHOICE] = step
    row = st.container(horizontal=True, vertical_alignment="bottom")
    lang = ctx.lang  # what the widget keeps must not hold the context
    chosen = row.selectbox(t("step_choose"), ids, key=CLASS_STEP_CHOICE, width=320,
                           format_func=lambda i: step_label(lang, i))
    row.button(t("bring"), key="class_bring", type="primary", disabled=chosen == step,
               on_click=act, args=(member, ctx.lang, "move", chosen))
    if not same_settings(ctx.settings, class_state["settings"]):
        st.warning(t("settings_differ"))
        if ctx.settings.source == "upload":
            st.info(t("no_upload"))
        else:
            st.button(t("settings_apply"), key="class_settings_apply", on_click=act,
                      args=(member, ctx.lang, "settings", ctx.settings))
        st.caption(t("settings_first"))
    else:
        st.caption(t("settings_same"))
        questions(ctx, member, class_state, shown)
    concept_check.teacher_section(ctx.lang, member, class_state["checks"])
    ending(ctx, member)
    keep_view(member)


def joining(ctx: PageContext, member: Member, presenting: bool) -> None:
    """The code large, the link and its QR code: what the projector shows first (and, not
    `presenting`, how this browser keeps the teacher's key)."""
    t = Texts(ctx.lang, OWNER)
    base = link_base()
    link = join_link(member.code, base)
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown(t("join_how"))
        st.html(f"<div data-testid='el-class-code' style='font-size:3.2rem;font-weight:700;"
                f"letter-spacing:0.12em;font-family:monospace'>{html.escape(member.code)}</div>")
        st.code(link, language=None, wrap_lines=True)
        env_url = os.environ.get(PUBLIC_URL_ENV)
        for problem in link_problems(env_url, base):  # said to the teacher, under the link
            st.warning(t(problem, env=PUBLIC_URL_ENV, url=env_url or "", base=base,
                         lan=lan_suggestion(base, lan_address())))
        loopback_move(t, base, member, presenting)  # the teacher link there keeps the class
        if not presenting:
            st.caption(t("teacher_kept"))
    right.image(qr_png(link), caption=t("qr_caption"), width=260, output_format="PNG",
                alt=t("qr_alt", link=link))


@st.fragment(run_every=LIVE_S)
def roster(code: str, key: str, lang: str, presenting: bool) -> None:
    """How many joined, and their nicknames (the teacher's eyes only: not `presenting`), live."""
    t = Texts(lang, OWNER)
    try:
        names = shared_store().nicknames(code, key)
    except (RefusedError, SQLAlchemyError):
        return  # the class ended, or the store is out of reach: the page says so
    st.markdown(f"**{t('students_count', n=len(names))}**")
    given = [n for n in names if n]
    if given and not presenting:
        with st.expander(t("nicknames", n=len(given))):
            st.text(", ".join(given))  # plain text: a nickname is never markup


def questions(ctx: PageContext, member: Member, class_state: dict, presenting: bool) -> None:
    """The questions of the class's step: ask, watch the answers come, reveal."""
    t = Texts(ctx.lang, OWNER)
    step = class_state["step"]
    st.subheader(t("questions_title", step=step_label(ctx.lang, step)))
    asked = asked_on(ctx, step, class_state)
    if not asked:
        st.info(t("no_questions"))
        return
    with st.expander(t("selectors_title")):
        st.caption(t("selectors_help"))
        layer, head = widgets.layer_selector(ctx), widgets.head_selector(ctx)
        widgets.query_inputs(ctx)
    ctx = ctx.choose(layer=layer + 1, head=head + 1)  # what the pictures below name
    for a in asked:
        with st.container(border=True, key=f"class_question_{a.task.text_id}"):
            question(ctx, member, a, class_state["students"], presenting)


def question(ctx: PageContext, member: Member, a: Asked, students: int,
             presenting: bool) -> None:
    """One question's card, by its stage: asked (vote 1), discussed, asked again (vote 2),
    revealed. Before the reveal it shows how many answered, never what — unless the teacher,
    not `presenting`, turns on `show_key`'s toggle (the projector must not give the answer
    away)."""
    lang, task = ctx.lang, a.task
    t, words = Texts(lang, OWNER), task_texts(lang, task)
    state = a.state or "new"
    st.markdown(f"**{words(task.text('short'))}** · {t('state_' + state)}")
    st.markdown(words(task.text("q"), **task.values))
    if task.trace is not None and state != "revealed":  # what the students pick on: the
        patch_in_context(ctx, task)  # image, the question's patch framed as its text says
    ident, where = task.text_id, (task.id, a.key)
    row = st.container(horizontal=True)
    if state in ("new", "closed"):  # a revealed question stays as it was answered
        row.button(t("open_button"), key=f"class_open_{ident}", type="primary",
                   on_click=act, args=(member, lang, "open", (task.light(), a.key)))
    elif state == "open":
        row.button(t("close_button"), key=f"class_close_{ident}", type="primary",
                   on_click=act, args=(member, lang, "close_vote", where))
        row.button(t("reveal_single_button"), key=f"class_reveal_{ident}",
                   on_click=act, args=(member, lang, "reveal", where))
    elif state == "discuss":
        st.info(t("discuss_teacher"))
        if not presenting:  # the share right at vote 1: the teacher's eyes only
            remote.share_hint(lang, member, a)
        row.button(t("vote2_button"), key=f"class_vote2_{ident}", type="primary",
                   on_click=act, args=(member, lang, "open_vote2", where))
    elif state == "vote2":
        row.button(t("reveal_button"), key=f"class_reveal_{ident}", type="primary",
                   on_click=act, args=(member, lang, "reveal", where))
    if state in ("open", "discuss", "vote2"):
        vote = 2 if state == "vote2" else 1
        counts = st.container()  # the count first, the teacher's toggle below it
        key = show_key(ident, vote)
        if key not in st.session_state and key in restored_view(member.code)[1]:
            st.session_state[key] = True  # as it was before this page reconnected
        shown = not presenting and st.toggle(t("show_votes", vote=vote), key=key)
        if not shown:
            st.caption(t("answers_hidden"))
        with counts:
            live(member.code, lang, task.light(), a.key, image_of(task), vote, shown)
        if state == "open":
            remote.countdown(lang, member, a)
    elif state == "revealed":
        revealed(ctx, member, a, students)
        st.button(t("again_button"), key=f"class_again_{ident}", on_click=act,
                  args=(member, lang, "ask_again", where))


def show_key(text_id: str, vote: int) -> str:
    """The session key of the teacher's toggle that shows a vote's answers on this screen."""
    return f"{SHOW_PREFIX}{text_id}_{vote}"


def revealed(ctx: PageContext, member: Member, a: Asked, students: int) -> None:
    """The right answer and why, the final vote's answers, and for two votes how the students
    moved between them."""
    lang, task = ctx.lang, a.task
    t = Texts(lang, OWNER)
    store = shared_store()
    vote, values = view.final_vote(store, member.code, task.id, a.key)
    left, right = st.columns(2, gap="large")
    with left:
        if vote == 2:
            st.caption(t("final_vote2"))
        view.class_answers(lang, task, values, revealed=True, image=image_of(task),
                           students=students, width=PROJECTED_IN)
        if vote == 2:
            rows = store.vote_rows(member.code, member.secret, task.id, a.key)
            moved = transitions([(v1, v2) for _, v1, v2 in rows], judge_stored(task))
            view.class_transitions(lang, task, moved, width=PROJECTED_IN)
    with right:
        if task.kind == "patch" and task.trace is not None and task.true_map:
            true_map(ctx, task)
        st.markdown(task_texts(lang, task)(task.text("why"), **task.revealed()))


def withheld_on_step(ctx: PageContext) -> frozenset[str]:
    """A step page the class's teacher opens during the class (it may be projected): what the
    class's questions of this step not yet revealed would give away stays withheld, as on a
    student's page, with a line that says why (the store out of reach: all of the step's)."""
    seen = member_class_state()
    asked = asked_on(ctx, ctx.id, seen or {"tasks": {}, "fixed": {}})
    withheld = frozenset(k for a in asked if a.state != "revealed" for k in a.task.withholds)
    if withheld:
        st.caption(Texts(ctx.lang, OWNER)("step_withheld"))
    return withheld


def image_of(task: Task) -> np.ndarray | None:
    return task.trace.image if task.trace is not None else None


@st.fragment(run_every=LIVE_S)
def live(code: str, lang: str, task: Task, key: str, image: np.ndarray | None, vote: int,
         shown: bool) -> None:
    """How many answered `vote` as the answers come; what they answered only when the teacher
    `shown` it (never the right answer marked before the reveal)."""
    t = Texts(lang, OWNER)
    store = shared_store()
    try:
        class_state = store.state(code)
        values = store.answers_to(code, task.id, key, vote=vote)
    except SQLAlchemyError as err:
        st.caption(t("store_down", why=brief(err)))
        return
    if class_state is None:
        return
    if shown:
        view.class_answers(lang, task, values, revealed=False, image=image,
                           students=class_state["students"], width=PROJECTED_IN)
    else:
        view.answered(lang, len(values), class_state["students"])


def act(member: Member, lang: str, action: str, arg: object) -> None:
    """A teacher's action (a callback), checked by the store with the teacher's key."""
    t = Texts(lang, OWNER)
    store = shared_store()
    try:
        if action == "move":
            store.move(member.code, member.secret, str(arg))
        elif action == "settings":
            store.change_settings(member.code, member.secret,
                                  class_settings(arg))  # type: ignore[arg-type]
        elif action == "open":
            task, key = arg  # type: ignore[misc]
            f = task.fixed
            store.open_task(member.code, member.secret, task.id, key, rule_for(task),
                            (f.layer, f.head, f.query), asked=task_json(task.light()))
            room.stop_countdown(store, member.code, task.id, key)  # none left from before
        elif action in ("close_vote", "open_vote2", "reveal", "ask_again"):
            task_id, key = arg  # type: ignore[misc]
            move = {"close_vote": store.close_vote, "open_vote2": store.open_vote2,
                    "reveal": store.reveal, "ask_again": store.ask_again}[action]
            move(member.code, member.secret, task_id, key)
            room.stop_countdown(store, member.code, task_id, key)  # the vote closed by hand
            if action == "ask_again":  # a new round: its answers hidden again
                for vote in (1, 2):
                    st.session_state.pop(show_key(task_id.replace(".", "_"), vote), None)
        elif action == "end":
            store.end_class(member.code, member.secret)
            become(None)
            st.session_state[CLASS_FORGET] = True
    except RefusedError as err:
        st.session_state[TEACHER_ERROR] = t(f"refused_{err.reason}")
    except SQLAlchemyError as err:
        st.session_state[TEACHER_ERROR] = t("store_down", why=brief(err))


def asked_tasks(code: str, key: str) -> dict[tuple[str, str], Task]:
    """Each question of the class as it was asked, by (question id, settings key): the store
    keeps them (`open_task`), so that a reload or another teacher session judges them too.
    A task stored before tasks held their page gets its page from the registry."""
    return {where: task_from_json(text, TASKS[where[0]].page if where[0] in TASKS else "")
            for where, text in shared_store().asked_tasks(code, key).items()}


def results_bytes(code: str, key: str, lang: str = "en") -> bytes:
    """The class's results as CSV in `lang` (`results.class_results_csv`), built when the
    button is pressed: no Streamlit call, no page context (it would hold the trace)."""
    store, steps = shared_store(), {task_id: spec.page for task_id, spec in TASKS.items()}
    return class_results_csv(store.result_rows(code, key), asked_tasks(code, key), steps,
                             store.check_rows(code, key), lang)


def summary_bytes(code: str, key: str, lang: str) -> bytes:
    """The class on one page as PDF (`summary.summary_pdf`), in the teacher's language; run
    when the button is pressed, as `results_bytes`. Its layout (matplotlib's PDF backend) is
    loaded only then."""
    from ..summary import summary_pdf  # noqa: PLC0415

    store = shared_store()
    return summary_pdf(code, store.result_rows(code, key), asked_tasks(code, key),
                       store.check_answers(code, key), lang, time.time())


def ending(ctx: PageContext, member: Member) -> None:
    t = Texts(ctx.lang, OWNER)
    st.divider()
    row = st.container(horizontal=True)
    row.download_button(t("results_button"), partial(results_bytes, member.code,
                                                     member.secret, ctx.lang),
                        file_name=f"class-{member.code}-results.csv", mime="text/csv",
                        key="class_results", on_click="ignore")  # built only when pressed
    row.download_button(t("summary_button"), partial(summary_bytes, member.code,
                                                     member.secret, ctx.lang),
                        file_name=f"class-{member.code}-summary.pdf", mime="application/pdf",
                        key="class_summary", on_click="ignore")
    st.caption(t("results_help") + " " + t("summary_help"))
    with st.expander(t("end_title")):
        sure = st.checkbox(t("end_sure"), key="class_end_sure")
        st.button(t("end_button"), key="class_end", disabled=not sure, on_click=act,
                  args=(member, ctx.lang, "end", None))


def forget_if_ended(member: Member | None) -> None:
    """After the teacher ended the class: the browser forgets the key."""
    if st.session_state.pop(CLASS_FORGET, False):
        keep_teacher(Member("", "teacher", ""), forget=True)

