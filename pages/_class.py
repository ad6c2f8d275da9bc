"""★ A live class (/class): the teacher starts a class and leads it — the join code, link and
QR code, the class's step and settings, its questions asked, answered live and revealed — and a
student joins it by the link or the code (`lens.classroom`). The file's stem is `_class`, not
the keyword `class` (`lens.steps`)."""

from __future__ import annotations

import streamlit as st

from lens.classroom.ui import join, teacher
from lens.context import PageContext
from lens.runner import run_page
from lens.steps import PAGES


def render(ctx: PageContext) -> None:
    teacher.forget_if_ended(ctx.member)
    if ctx.member is None:
        join.start_or_join(ctx)
    elif ctx.member.teacher:
        teacher.panel(ctx, ctx.member)
    else:  # a student: on to the class's step, the link keeping the token
        step = join.class_step()
        st.switch_page(PAGES[step].path)


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
