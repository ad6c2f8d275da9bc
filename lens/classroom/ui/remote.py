"""The teacher's phone as a remote, and what the teacher's page gains beside a projector view.

- **The remote** is the teacher link (`?class=CODE&teacher=KEY`) with `&remote=1`, opened on a
  second device: the same teacher of the same class (the store checks the key on every
  action), its page laid out for a phone (390 × 844, `panel`): the class's step and how many
  joined, then each question of the step as a card with its one next action as a full-width
  button (open, close, vote 2, reveal, ask again), a large live count, the private share right
  at vote 1 with the Crouch–Mazur hint (`room.hint`: under 30 % explain again, 30–70 % peer
  discussion, over 70 % a short explanation and on), an optional countdown that closes vote 1,
  and "Next question" (the step's next question, else the class brought to the next step).
  It is the teacher's role without the app's frame (`roles.Remote`: no sidebar, no header).
  The link is shown on the teacher's page only on demand, as a QR code (`remote_offer`), never
  while "Presenting" is on and never on the projector view: it holds the teacher's key.
- **Following**: every teacher page (the laptop's, the phone's) runs `follow`, a fragment that
  looks at the class every `FOLLOW_S` seconds and runs the page again when the class changed
  (an action from the other device); it is also what closes a vote whose countdown ran out.
- **The projector link** (`projector_offer`): the class's projector view with its own token
  (`room.projector_token`), shown on the teacher's page in any mode (it shows what the wall
  shows).
"""

from __future__ import annotations

import html
import time
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from ...i18n import Texts
from ...keys import CLASS_REMOTE, TEACHER_ERROR
from ...lesson.tasks import task_texts
from ...steps import PAGES, STEPS, step_number
from .. import room
from ..asking import Asked, asked_on, same_settings
from ..rules import RefusedError
from ..tally import tally
from .follow import signature
from .join import link_base, qr_png
from .member import CLASS_PARAM, TEACHER_PARAM, Member, brief, shared_store
from .member import class_state as member_class_state

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...context import PageContext

    Act = Callable[[Member, str, str, object], None]  # a teacher's action (`teacher.act`)

OWNER = "room"
REMOTE_PARAM = "remote"  # ?remote=1: this teacher's browser is a phone used as a remote
FOLLOW_S = 1.0  # how often a teacher's page looks for changes made on another device
COUNTDOWNS = (30, 60, 90)  # the countdown's choices (seconds)
REMOTE_QR_PX = 240


def on_phone() -> bool:
    """Whether this teacher's browser is the remote (its link said so once: kept)."""
    if st.query_params.get(REMOTE_PARAM) == "1":
        st.session_state[CLASS_REMOTE] = True
    return bool(st.session_state.get(CLASS_REMOTE))


# The remote's frame: no sidebar (nor its button), its top below Streamlit's header bar,
# buttons large enough for a thumb.
CSS = """
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"] { display: none !important; }
.stMain .block-container { padding-top: 3.5rem; }
.stMain [class*="st-key-class_remote"] button { min-height: 3rem; }
"""


def hide_frame() -> None:
    """The remote's style (first thing in its page run)."""
    st.html(f"<style>{CSS}</style>")


def seen_of(class_state: dict) -> tuple:
    """What, when it changes, makes a teacher's page run again."""
    return (class_state["step"], class_state["students"] > 0, signature(class_state))


def remote_link(member: Member) -> str:
    return (f"{link_base()}/class?{CLASS_PARAM}={member.code}&{TEACHER_PARAM}={member.secret}"
            f"&{REMOTE_PARAM}=1")


def projector_link(member: Member, lang: str) -> str:
    token = room.projector_token(shared_store(), member.code, member.secret)
    return f"{link_base()}/class?{CLASS_PARAM}={member.code}&projector={token}&lang={lang}"


def projector_offer(lang: str, member: Member) -> None:
    """The projector view's link, for the computer at the projector."""
    t = Texts(lang, OWNER)
    with st.expander(t("projector_link_title")):
        st.caption(t("projector_link_help"))
        try:
            link = projector_link(member, lang)
        except (RefusedError, SQLAlchemyError):
            return
        st.html(f"<a data-testid='el-projector-link' href='{html.escape(link, quote=True)}' "
                f"target='_blank' style='font-family:monospace;word-break:break-all'>"
                f"{html.escape(link)}</a>")


def remote_offer(lang: str, member: Member, presenting: bool) -> None:
    """The teacher link as a QR code for the phone, on demand; never while presenting."""
    t = Texts(lang, OWNER)
    with st.expander(t("remote_title")):
        if presenting:
            st.caption(t("remote_presenting"))
            return
        st.caption(t("remote_help"))
        st.image(qr_png(remote_link(member)), width=REMOTE_QR_PX, output_format="PNG",
                 alt=t("remote_qr_alt"))


def share_hint(lang: str, member: Member, a: Asked) -> None:
    """The share right at vote 1 (the teacher's eyes only) and what Crouch and Mazur advise."""
    t = Texts(lang, OWNER)
    try:
        values = shared_store().answers_to(member.code, a.task.id, a.key, vote=1)
    except SQLAlchemyError:
        return
    counted = tally(a.task, values)
    if not counted.n:
        st.caption(t("share_none"))
        return
    share = counted.right / counted.n
    with st.container(key=f"class_hint_{a.task.text_id}"):
        st.info(t("hint_" + room.hint(share), p=100 * share, right=counted.right,
                  n=counted.n))


def countdown(lang: str, member: Member, a: Asked) -> None:
    """Start a countdown that closes vote 1 (the projector shows it)."""
    t = Texts(lang, OWNER)
    row = st.container(horizontal=True, key=f"class_countdown_{a.task.text_id}")
    for s in COUNTDOWNS:
        row.button(t("countdown_button", s=s), key=f"class_countdown_{a.task.text_id}_{s}",
                   on_click=start, args=(member, lang, a.task.id, a.key, s))


def start(member: Member, lang: str, task: str, key: str, seconds: int) -> None:
    t = Texts(lang, "class")
    try:
        room.start_countdown(shared_store(), member.code, member.secret, task, key, seconds)
    except RefusedError as err:
        st.session_state[TEACHER_ERROR] = t(f"refused_{err.reason}")
    except SQLAlchemyError as err:
        st.session_state[TEACHER_ERROR] = t("store_down", why=brief(err))


@st.fragment(run_every=FOLLOW_S)
def follow(code: str, key: str, lang: str, seen: tuple) -> None:
    """Look at the class: close a vote whose countdown ran out, and run the page again when
    the class changed since it was drawn (an action from the other device). The remaining
    seconds of a countdown are drawn here."""
    store = shared_store()
    try:
        now = store.state(code)
        if now is None:
            st.rerun()
        for (task, settings_key), state in now["tasks"].items():
            if state != "open":
                continue
            ends = room.countdown_end(store, code, task, settings_key, state)
            if room.due(ends):
                try:
                    store.close_vote(code, key, task, settings_key)
                except RefusedError:
                    pass  # the other device closed it first
                room.stop_countdown(store, code, task, settings_key)
                st.rerun()
            elif ends is not None:
                left = max(0, int(np.ceil(ends - time.time())))
                st.markdown(f"**{html.escape(Texts(lang, OWNER)('countdown_left', s=left))}**")
    except SQLAlchemyError:
        return
    if seen_of(now) != seen:
        st.rerun()


def panel(ctx: PageContext, member: Member, act: Act) -> None:
    """The remote: the class's questions on this step, each with its next action (a callback
    `act(member, lang, action, arg)`: the teacher page's, `teacher.act`), laid out for a
    phone."""
    t, tc = Texts(ctx.lang, OWNER), Texts(ctx.lang, "class")
    seen = member_class_state()
    if seen is None:
        return
    error = st.session_state.pop(TEACHER_ERROR, None)
    if error:
        st.error(error)
    step = seen["step"]
    students_line(member.code, ctx.lang, seen["students"])
    st.markdown(t("remote_step", step=f"{step_number(step)}. {PAGES[step].title_in(ctx.lang)}"))
    follow(member.code, member.secret, ctx.lang, seen_of(seen))
    if not same_settings(ctx.settings, seen["settings"]):
        st.warning(tc("settings_differ"))
        return
    asked = asked_on(ctx, step, seen)
    if not asked:
        st.info(tc("no_questions"))
    for a in asked:
        with st.container(border=True, key=f"class_remote_{a.task.text_id}"):
            card(ctx, member, a, act)
    nxt = next_question(asked, step)
    if nxt is not None:
        label, action, arg = nxt
        st.button(t(label), key="class_remote_next", type="primary", width="stretch",
                  on_click=act, args=(member, ctx.lang, action, arg))


@st.fragment(run_every=FOLLOW_S)
def students_line(code: str, lang: str, at_load: int) -> None:
    """The remote's caption with how many students joined, as they join (`at_load`: the
    count the page run read, kept while the store is out of reach)."""
    try:
        n = room.student_count(shared_store(), code)
    except SQLAlchemyError:
        n = at_load
    st.markdown(f"**{Texts(lang, OWNER)('remote_caption', code=code, n=n)}**")


def card(ctx: PageContext, member: Member, a: Asked, act: Act) -> None:
    """One question on the remote: its stage, its next action, its live count."""
    lang, ident, where = ctx.lang, a.task.text_id, (a.task.id, a.key)
    tc, words = Texts(lang, "class"), task_texts(lang, a.task)
    state = a.state or "new"
    st.markdown(f"**{words(a.task.text('short'))}** · {tc('state_' + state)}")
    buttons = {"new": ("open_button", "open", (a.task.light(), a.key)),
               "closed": ("open_button", "open", (a.task.light(), a.key)),
               "open": ("close_button", "close_vote", where),
               "discuss": ("vote2_button", "open_vote2", where),
               "vote2": ("reveal_button", "reveal", where),
               "revealed": ("again_button", "ask_again", where)}
    label, action, arg = buttons[state]
    st.button(tc(label), key=f"class_remote_{action}_{ident}", type="primary",
              width="stretch", on_click=act, args=(member, lang, action, arg))
    if state in ("open", "discuss"):
        st.button(tc("reveal_single_button"), key=f"class_remote_reveal_{ident}",
                  width="stretch", on_click=act, args=(member, lang, "reveal", where))
    if state in ("open", "vote2"):
        vote = 2 if state == "vote2" else 1
        live_count(member.code, lang, a.task.id, a.key, vote)
    if state == "open":
        countdown(lang, member, a)
    if state == "discuss":
        share_hint(lang, member, a)


@st.fragment(run_every=FOLLOW_S)
def live_count(code: str, lang: str, task: str, key: str, vote: int) -> None:
    """How many answered the vote out of how many students, large, both as they come (nothing
    of what)."""
    try:
        n = room.answer_count(shared_store(), code, task, key, vote)
        students = room.student_count(shared_store(), code)
    except SQLAlchemyError:
        return
    st.html(f"<div data-testid='el-remote-count' style='font-size:2.6rem;font-weight:700'>"
            f"{n} / {students}</div>")
    st.caption(Texts(lang, OWNER)("remote_answered", vote=vote))


def next_question(asked: list[Asked], step: str) -> tuple[str, str, object] | None:
    """"Next question": the step's first question not asked yet, else the class to the next
    step (None: the last step, every question asked)."""
    for a in asked:
        if a.state in ("", "closed"):
            return "next_question", "open", (a.task.light(), a.key)
    k = step_number(step)
    if k is not None and k < len(STEPS):
        return "next_step", "move", STEPS[k].id
    return None
