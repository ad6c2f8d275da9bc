"""What the learner must read next, scrolled into view: a verdict after "Check", the concept
check's result after "Send", a class's open question on a phone.

A callback asks for it (`ask(key)`: the keyed container to show, e.g. a task's card); the page
run that follows carries it out once (`carry_out()`, called once per run by the runner), after
the run has drawn the part: one `st.components.v2` component (in the page, not an iframe; its
script `layout_web/scroll.js`) that finds the part by its key's class and scrolls it to the top
of the window, below Streamlit's header. A request not carried out in its run (the run was
interrupted) is dropped: nothing jumps later, unasked.
"""

from __future__ import annotations

from importlib.resources import files

import streamlit as st

from . import keys

JS = (files("lens") / "layout_web" / "scroll.js").read_text(encoding="utf-8")

_component = st.components.v2.component(
    "encoder_lens_scroll", html='<div data-testid="el-scroll"></div>', js=JS)


def ask(key: str, focus: bool = False) -> None:
    """Scroll the container keyed `key` into view after the next run (from a callback); with
    `focus`, the keyboard's focus too, when the run took it away (the button pressed is gone
    and the page's body has it): to the container's first control — a verdict's fold, whose
    name says right or wrong — so that Tab goes on from there and a screen reader says it."""
    state = st.session_state
    serial = int(state.get(keys.SCROLL_SERIAL, 0)) + 1
    state[keys.SCROLL_SERIAL] = serial
    state[keys.SCROLL_TO] = (key, serial, focus)


def carry_out() -> None:
    """The request of this run, if any: mounted in the sidebar (it shows nothing), once."""
    asked = st.session_state.pop(keys.SCROLL_TO, None)
    if asked is None:
        return
    key, serial, focus = asked
    with st.sidebar:
        _component(data={"target": f"st-key-{key}", "nonce": f"{key}:{serial}",
                         "focus": focus}, key="scroll_into_view")
