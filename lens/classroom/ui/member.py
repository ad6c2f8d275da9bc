"""Who this browser is in a live class: its teacher, one of its students, or nobody.

- **The teacher** holds the class's key. The teacher link carries it once (`?teacher=KEY`): the
  first run reads it into the session and takes it out of the address bar (the teacher's
  screen is projected), and the browser keeps it in a cookie (`keep.js`, the class's life
  long), so a reload, a laptop waking up or a replica restart — a new session, maybe on another
  replica — finds it again (`st.context.cookies`). The server checks it on every action.
- **A student** holds a token the store gave at joining, kept in the link (`?student=TOKEN`,
  beside `?class=CODE`) and not only in the Streamlit session: a reload, a phone waking up or
  a replica restart opens the same link, so the same student. Once the teacher ended the
  class, the same link finds the student of an ended class (`ended`): their own results stay
  readable until the class's data are deleted (`Store.results_of`).

`client_key()` is whom the store counts wrong join codes against: behind the balancer
(`scripts/serve` sets `PROXY_ENV`), the last entry of X-Forwarded-For — the address HAProxy's
`option forwardfor` appended (every student reaches Streamlit from 127.0.0.1 there); under
plain `scripts/app`, the connection's own address (a header would then be the client's to
forge). `browser_key()` is the browser session, counted as well: a student's own typos slow
only their own tries long before their address's allowance is reached (`rules.BROWSER_FREE`).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from importlib.resources import files
from typing import Literal

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ...keys import CLASS_ENDED, CLASS_MEMBER, CLASS_STATE, CLASS_STORE_ERROR
from ..rules import CLASS_HOURS, normal_code
from ..store import Store

CLASS_PARAM = "class"  # ?class=CODE: the join link, and every page of a class's member
STUDENT_PARAM = "student"  # ?student=TOKEN: a student's pages
TEACHER_PARAM = "teacher"  # ?teacher=KEY: the teacher link, read once and removed
COOKIE = "encoder_lens_teacher"  # "CODE.KEY" in the teacher's browser
PROXY_ENV = "ENCODER_LENS_BEHIND_PROXY"  # "1": the replicas are reached through HAProxy

JS = (files("lens") / "classroom_web" / "keep.js").read_text(encoding="utf-8")
_keep = st.components.v2.component("encoder_lens_keep_teacher", html="<span></span>", js=JS)


@dataclass(frozen=True)
class Member:
    code: str  # the class's join code
    role: Literal["teacher", "student"]
    secret: str  # the teacher's key or the student's token

    @property
    def teacher(self) -> bool:
        return self.role == "teacher"


@functools.cache
def shared_store() -> Store:
    """The store of this process (one engine and its pool; the data are the database's)."""
    return Store()


def client_key() -> str:
    """Whom wrong join codes are counted against, for this session (`client_from`)."""
    return client_from(st.context.headers.get("X-Forwarded-For"), st.context.ip_address,
                       behind_proxy=os.environ.get(PROXY_ENV) == "1")


def browser_key() -> str:
    """This browser session ("" outside a session): whom its own wrong join codes count
    against besides its address — a hash of Streamlit's session id, which a reconnecting
    browser presents to resume its session and so is not written to the store as it is."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return ""
    return hashlib.sha256(f"join:{ctx.session_id}".encode()).hexdigest()[:32]


def client_from(forwarded: object, address: object, behind_proxy: bool) -> str:
    """Behind the balancer, the last entry of X-Forwarded-For (the one HAProxy appended: what
    a browser sent before it is the browser's to forge); otherwise the connection's address."""
    if behind_proxy and isinstance(forwarded, str):
        last = forwarded.split(",")[-1].strip()
        if last:
            return last
    return address if isinstance(address, str) and address else "unknown"


def current(store: Store | None = None) -> Member | None:
    """This session's membership: kept in the session once known, else from the link (a
    teacher key is read once and removed from it; a student token stays), else the teacher's
    cookie. A class that ended (or expired) ends the membership; a student's pages then show
    their own results (`CLASS_ENDED`, `student.ended_results`), also after a reload: the link
    still names them (`_ended_from_link`)."""
    state = st.session_state
    member = state.get(CLASS_MEMBER)
    state.pop(CLASS_STATE, None)
    q = st.query_params
    if member is None and not (TEACHER_PARAM in q or STUDENT_PARAM in q
                               or isinstance(st.context.cookies.get(COOKIE), str)):
        return None  # no class in sight: the store is not even opened
    try:
        store = store or shared_store()
        if member is None:
            member = _from_link(store) or _from_cookie(store)
            if member is None:
                _ended_from_link(store)
        seen = store.state(member.code) if member is not None else None
        if seen is None:
            if member is not None and not member.teacher:  # their pages show their results
                state[CLASS_ENDED] = (member.code, member.secret)
            member = None  # the class is over
        else:
            state[CLASS_STATE] = seen  # this run's look at the class: `class_state()`
    except SQLAlchemyError as err:  # the database is down or out of reach: said, no crash;
        state[CLASS_STORE_ERROR] = brief(err)  # a member stays one (the class may be back soon)
        return state.get(CLASS_MEMBER)
    state.pop(CLASS_STORE_ERROR, None)
    if member is None:
        state.pop(CLASS_MEMBER, None)
    else:
        state[CLASS_MEMBER] = member
    return member


def class_state() -> dict | None:
    """The class as this page run's `current()` read it (step, settings, tasks): one look at
    the store per run, shared by the settings, the cards and the panel. None: no class, or the
    store out of reach. The fragments that poll read the store themselves."""
    return st.session_state.get(CLASS_STATE)


def brief(err: Exception) -> str:
    """An error's first line, short: what a page says when the store cannot be reached."""
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:300]


def store_error() -> str | None:
    """Why the class's store could not be reached on this run (None: it could, or no class
    was in sight)."""
    return st.session_state.get(CLASS_STORE_ERROR)


def _from_link(store: Store) -> Member | None:
    q = st.query_params
    code = normal_code(q.get(CLASS_PARAM, ""))
    key = q.get(TEACHER_PARAM)
    if key is not None:
        del q[TEACHER_PARAM]  # out of the address bar before anything is drawn
        return Member(code, "teacher", key) if store.is_teacher(code, key) else None
    token = q.get(STUDENT_PARAM)
    if token and store.is_student(code, token):
        return Member(code, "student", token)
    return None


def _ended_from_link(store: Store) -> None:
    """A student's link (`?class=CODE&student=TOKEN`) of a class its teacher ended, in a new
    session (a reload): this session shows that student's own results (`CLASS_ENDED`)."""
    q, state = st.query_params, st.session_state
    token = q.get(STUDENT_PARAM)
    code = normal_code(q.get(CLASS_PARAM, ""))
    if not token or state.get(CLASS_ENDED) == (code, token):
        return
    if store.results_of(code, token) is not None:
        state[CLASS_ENDED] = (code, token)


def _from_cookie(store: Store) -> Member | None:
    text = st.context.cookies.get(COOKIE)
    if not isinstance(text, str):  # no cookie (or no browser: AppTest)
        return None
    code, _, key = text.partition(".")
    wanted = normal_code(st.query_params.get(CLASS_PARAM, ""))
    if not key or (wanted and wanted != code) or not store.is_teacher(code, key):
        return None
    return Member(code, "teacher", key)


def become(member: Member | None) -> None:
    """This session is now `member` (None: it left, or the class ended)."""
    if member is None:
        st.session_state.pop(CLASS_MEMBER, None)
    else:
        st.session_state[CLASS_MEMBER] = member


def sync_url(member: Member | None) -> None:
    """A member's link keeps the class (and a student's token) on every page."""
    want = {}
    if member is not None:
        want[CLASS_PARAM] = member.code
        if not member.teacher:
            want[STUDENT_PARAM] = member.secret
    q = st.query_params
    for name in (CLASS_PARAM, STUDENT_PARAM):
        if name in want and q.get(name) != want[name]:
            q[name] = want[name]
        elif name not in want and name in q and member is not None:
            del q[name]


def keep_teacher(member: Member | None, forget: bool = False) -> None:
    """Mount the component that keeps (or forgets) the teacher's key in this browser."""
    if member is None or not member.teacher:
        return
    value = "" if forget else f"{member.code}.{member.secret}"
    with st.sidebar:
        _keep(data={"cookie": COOKIE, "value": value, "max_age": int(CLASS_HOURS * 3600)},
              key="class_keep_teacher")
