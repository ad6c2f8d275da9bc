"""A student's page following the class: the cards are a fragment the class's changes are
pushed to (`cards`, `push`), with a slow look of its own as the fallback (`follow`).

A change the cards show alone — a task opened, closed for discussion or at vote 2, a round of
the concept check — runs only the cards; a change of the page — the settings, a task revealed
or asked again, the class ended — runs the page again; the teacher bringing the class to
another step brings the page there (once: the student may then walk elsewhere). Send and
"Keep my answer" run only the cards as well.

`follow` is the fallback: a fragment whose browser timer looks at the class every `FOLLOW_S`
seconds, for a page that missed a push (its session between two websockets); a page still
behind the same change at two looks in a row follows or runs again. Its timer is the
browser's: a tab in the background is throttled by the browser (Chromium: about once a minute
after five minutes hidden); a push reaches it all the same.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from ...i18n import Texts
from ...keys import (
    CLASS_BEHIND,
    CLASS_CARDS_FULL,
    CLASS_FOLLOWED,
    CLASS_PAGE_SEEN,
    CLASS_SEEN,
    CLASS_STATE,
)
from ...steps import PAGES
from . import push
from .member import Member, brief, shared_store
from .member import class_state as member_class_state

if TYPE_CHECKING:
    from ...context import PageContext

FOLLOW_S = 10.0  # the fallback: how often a student's page looks at the class itself (seconds)
Draw = Callable[["PageContext", Member], frozenset[str]]  # the cards, drawn (`student.ask`)


@functools.cache
def shared_watch() -> push.Watch:
    """This process's watch over its students' cards (`push`)."""
    return push.Watch(lambda code: shared_store().state(code), stamp, push.nudge, push.alive)


def listen_here(code: str, drawn: dict | None) -> None:
    """The fragment running now drew `drawn` of class `code`: the watch runs it again once
    the class is no longer that, or at once if Streamlit dropped this run's output
    (`push.when_handled`). Registered from the server's event loop, after this run's messages:
    the watch's next nudge then waits for them to be handled, not only computed. A server's
    session only (`push.when_handled` finds no other): AppTest's have none to nudge."""
    here = push.this_fragment()
    if here is None:
        return
    session_id, fragment_id, shows = *here, stamp(drawn)

    def handled(sent: bool) -> None:  # on the server's loop, after this run's messages
        shared_watch().listen(session_id, code, fragment_id, shows if sent else push.UNSENT)

    push.when_handled(session_id, handled)


def signature(class_state: dict | None) -> tuple | None:
    """What, when it changes, makes a student's page run again (the step is followed apart:
    `CLASS_FOLLOWED`)."""
    if class_state is None:
        return None
    return (tuple(sorted(class_state["settings"].items())),
            tuple(sorted(class_state["tasks"].items())),
            tuple(sorted(class_state["checks"].items())))


def stamp(class_state: dict | None) -> tuple | None:
    """Everything of the class a student's page shows (None: ended): what the process's watch
    compares (`push`)."""
    if class_state is None:
        return None
    return (class_state["step"], signature(class_state),
            repr(sorted(class_state["fixed"].items())))


def page_part(class_state: dict | None) -> tuple | None:
    """What of the class the page around the cards shows: its settings, and which tasks are
    revealed (what the page withholds until then, the steps ahead)."""
    if class_state is None:
        return None
    return (tuple(sorted(class_state["settings"].items())),
            tuple(sorted(k for k, v in class_state["tasks"].items() if v == "revealed")))


def cards(ctx: PageContext, member: Member, draw: Draw) -> frozenset[str]:
    """The class's cards on this step, drawn by `draw` (`student.ask`) in a fragment the
    class's changes are pushed to; the element keys still withheld."""
    st.session_state[CLASS_CARDS_FULL] = True  # the page's run: the cards drew with it
    return cards_fragment(ctx, member, draw) or frozenset()


@st.fragment
def cards_fragment(ctx: PageContext, member: Member, draw: Draw) -> frozenset[str] | None:
    """Run with the page, then alone on a push or a press of Send: it reads the class, and
    runs the page again (or goes to the teacher's step) when more than the cards changed.
    `ctx` is the last page run's (its trace: the cards' questions), with this run's state."""
    state = st.session_state
    if state.pop(CLASS_CARDS_FULL, False):
        seen = member_class_state()
        state[CLASS_PAGE_SEEN] = page_part(seen)
        if seen is not None:
            follow_step(seen["step"], ctx.id)
    else:
        try:  # the watch's look, when it is as recent as a look of our own would be
            seen = shared_watch().recent(member.code, shared_store().state)
        except SQLAlchemyError as err:
            st.error(Texts(ctx.lang, "class")("store_down", why=brief(err)))
            return None
        if seen is None or page_part(seen) != state.get(CLASS_PAGE_SEEN):
            st.rerun()  # ended, new settings, a task revealed or asked again: the page
        follow_step(seen["step"], ctx.id)
        state[CLASS_STATE] = seen  # this run's look at the class (`member.class_state`)
        ctx = replace(ctx, state=MappingProxyType(state.to_dict()))
    withheld = draw(ctx, member)
    listen_here(member.code, member_class_state())
    return withheld


def follow_step(step: str, page_id: str) -> None:
    """The teacher brought the class to `step`: the page goes there (once: the student may
    then walk elsewhere)."""
    state = st.session_state
    if state.get(CLASS_FOLLOWED, step) != step:
        state[CLASS_FOLLOWED] = step
        if step != page_id and step in PAGES:
            st.switch_page(PAGES[step].path)


def remember(class_state: dict | None) -> None:
    """What this full run saw of the class (the follower compares against it); the class's
    step counts as followed from the first look on (a student may then walk elsewhere)."""
    st.session_state[CLASS_SEEN] = signature(class_state)
    if class_state is not None:
        st.session_state.setdefault(CLASS_FOLLOWED, class_state["step"])


@st.fragment(run_every=FOLLOW_S)
def follow(code: str, page_id: str, lang: str) -> None:
    """The fallback of the push, every FOLLOW_S s: a page still behind the class at two looks
    in a row (the same change: a push would have come in between) follows the teacher's step
    or runs again. Arguments only: a fragment's are kept by Streamlit, and a trace must not
    be."""
    try:  # the process's watch's look when recent (a page with cards registered it)
        class_state = shared_watch().recent(code, shared_store().state)
    except SQLAlchemyError:
        return  # out of reach for now: the next look tries again
    if class_state is None:  # the class ended: the page runs again outside it
        st.rerun()
    state = st.session_state
    if (class_state["step"] == state.get(CLASS_FOLLOWED, class_state["step"])
            and signature(class_state) == state.get(CLASS_SEEN)):
        state.pop(CLASS_BEHIND, None)  # up to date
        return
    if state.get(CLASS_BEHIND) != stamp(class_state):  # maybe a push on its way: next look
        state[CLASS_BEHIND] = stamp(class_state)
        return
    follow_step(class_state["step"], page_id)  # the teacher moved the class: follow
    st.rerun()  # a task opened or revealed, new settings: the page runs again
