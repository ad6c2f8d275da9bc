"""The teacher's switches on one screen — "Presenting" and each "show the answers" — kept in
this browser (a cookie, the class's life), so that a page that reconnects (a new Streamlit
session after a replica died or the laptop slept) comes back with them as they were (issue 51,
item 7). Per screen, not per class: the laptop and the phone remote each keep their own.
`view_text` / `view_from` are pure; `restored_view` reads the cookie once per session,
`keep_view` writes this run's switches (the same keep.js as the teacher's key);
`presenting_switch` draws the one that is not a question's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import streamlit as st

from ...i18n import Texts
from ...keys import CLASS_PRESENTING, CLASS_PRESENTING_KEPT
from ..rules import CLASS_HOURS
from .member import JS as KEEP_JS
from .member import Member

VIEW_COOKIE = "encoder_lens_teacher_view"
VIEW_RESTORED = "_class_view_restored"  # this session's reading of the cookie: (presenting, shown)
SHOW_PREFIX = "class_show_"
_SAFE = re.compile(r"[A-Za-z0-9_.]+")  # what a key may hold to go into the cookie unchanged
_keep_view = st.components.v2.component("encoder_lens_keep_view", html="<span></span>",
                                        js=KEEP_JS)


def view_text(code: str, presenting: bool, shown: Iterable[str]) -> str:
    """The cookie's value for the switches of class `code`: "CODE~1~class_show_…_1~…" (1:
    presenting, 0: not; then the key of each "show the answers" toggle that is on). Keys with
    other characters than letters, digits, "_" and "." are left out (the cookie keeps the rest
    unchanged through encodeURIComponent)."""
    keys = sorted(k for k in shown if k.startswith(SHOW_PREFIX) and _SAFE.fullmatch(k))
    return "~".join([code, "1" if presenting else "0", *keys])


def view_from(text: object, code: str) -> tuple[bool | None, frozenset[str]]:
    """`view_text` read back for class `code`: (presenting, or None when the cookie says
    nothing of this class; the toggles that were on)."""
    if not isinstance(text, str):
        return None, frozenset()
    parts = text.split("~")
    if len(parts) < 2 or parts[0] != code or parts[1] not in ("0", "1"):
        return None, frozenset()
    return parts[1] == "1", frozenset(
        k for k in parts[2:] if k.startswith(SHOW_PREFIX) and _SAFE.fullmatch(k))


def restored_view(code: str) -> tuple[bool | None, frozenset[str]]:
    """What this browser's cookie said of the switches when this session began (read once)."""
    state = st.session_state
    if VIEW_RESTORED not in state:
        state[VIEW_RESTORED] = view_from(st.context.cookies.get(VIEW_COOKIE), code)
    return state[VIEW_RESTORED]


def keep_view(member: Member) -> None:
    """Mount the component that writes this run's switches into the browser's cookie."""
    state = st.session_state
    shown = [k for k, v in state.items() if isinstance(k, str) and k.startswith(SHOW_PREFIX)
             and v is True]
    value = view_text(member.code, bool(state.get(CLASS_PRESENTING_KEPT, True)), shown)
    with st.sidebar:
        _keep_view(data={"cookie": VIEW_COOKIE, "value": value,
                         "max_age": int(CLASS_HOURS * 3600)}, key="class_keep_view")


def presenting_switch(lang: str, code: str) -> bool:
    """The "Presenting" switch, on by default; its value outlives the page (a widget's state
    does not once the teacher opens another page), kept for this browser session, and in the
    browser for the next one (`VIEW_COOKIE`: a reconnect after a replica died)."""
    t = Texts(lang, "class")
    if CLASS_PRESENTING not in st.session_state:
        kept = st.session_state.get(CLASS_PRESENTING_KEPT)
        if kept is None:
            kept = restored_view(code)[0]
        st.session_state[CLASS_PRESENTING] = True if kept is None else kept
    on = st.toggle(t("presenting"), key=CLASS_PRESENTING, help=t("presenting_help"))
    st.session_state[CLASS_PRESENTING_KEPT] = on
    return on
