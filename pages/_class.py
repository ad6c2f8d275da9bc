"""★ A live class (/class): the teacher starts a class and leads it — the join code, link and
QR code, the class's step and settings, its questions asked, answered live and revealed — and a
student joins it by the link or the code (`lens.classroom`). The same page is the class's
projector view (`?projector=TOKEN`: `lens.classroom.ui.projector`) and, opened by the teacher
link on a phone, the teacher's remote (`lens.classroom.ui.remote`). The file's stem is `_class`,
not the keyword `class` (`lens.steps`)."""

from __future__ import annotations

import streamlit as st

from lens.classroom.ui import join, projector, remote, teacher
from lens.context import PageContext
from lens.runner import run_page
from lens.steps import PAGES


def render(ctx: PageContext) -> None:
    screen = projector.screen()
    if screen is not None:  # the projector: the view, nothing else
        projector.show(ctx, screen)
        return
    teacher.forget_if_ended(ctx.member)
    if ctx.member is None:
        join.start_or_join(ctx)
    elif ctx.member.teacher:
        if remote.on_phone():
            remote.panel(ctx, ctx.member, teacher.act)
        else:
            teacher.panel(ctx, ctx.member)
    else:  # a student: on to the class's step, the link keeping the token
        step = join.class_step()
        st.switch_page(PAGES[step].path)


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
