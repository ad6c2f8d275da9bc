"""The projector view of a live class, at its own link: `/class?class=CODE&projector=TOKEN` (the
class's projector token, `room.projector_token`: not the teacher's key; the teacher's page
shows the link). Nothing of the app's frame — no sidebar, no header, no control (the
projector role tells the runner so, and `hide_frame` hides Streamlit's sidebar) — and type
read from the back of a hall at 1920 × 1080 (`CSS`: the code large, text ≥ 32 px).

What it shows, by the class's current question (`current`: on the class's step, the one opened
last that is not closed):
- none: how to join — the code, the join link and its QR code — and how many joined;
- a vote open (1 or 2): the question, its picture and a large count of answers (and the
  countdown when the teacher started one);
- the discussion: the question and what to do, with vote 1's count;
- revealed: the model's answer with its experiment (why, and a patch task's true map), the
  distributions of vote 1 and vote 2 and how the students moved.
Before the reveal it holds no answer, no distribution and no nickname (counts only, and the
store gives it no answer before: `room.revealed_pairs`); it never shows a nickname.

It follows the class by itself: `watch` is a fragment that looks at the class every
`WATCH_S` seconds (one read of the class's state and a count), redraws the live counts
itself and runs the page again only when the class changed (a question opened, closed,
revealed; the step; the class ended). The change is also pushed (`push`): the process's watch
runs that look at once when it sees the class change, not at the next tick.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from ... import figures
from ...i18n import Texts
from ...keys import CLASS_PROJECTOR
from ...layout_js import page_language
from ...lesson.tasks import Task, task_texts
from ...lesson.ui.cards import marked_patch, shown_answer
from .. import room
from ..asking import Asked, asked_on
from ..tally import judge_stored, tally, transitions
from . import view
from .follow import listen_here, signature
from .join import join_link, link_base, qr_png
from .member import CLASS_PARAM, shared_store

if TYPE_CHECKING:
    from ...context import PageContext

OWNER = "room"  # lens/texts/<lang>/room.toml
PROJECTOR_PARAM = "projector"  # ?projector=TOKEN
WATCH_S = 0.5  # how often the projector looks at the class (seconds); a change is also pushed
CHART_IN = 4.0  # a chart's drawn width (inches, 100 px each), shown as wide as its column of
#                the wall: ×2.1 in a vote's half, ×1.7 in the moves' narrower column
CHART_PT = 15  # its labels and counts (points; the app's charts: 10): ≥ 32 px on the wall as
#               shown (tests/browser/test_projector.py measures them: WALL_TEXT_PX)
PICTURE_PX = 620  # the question's picture on the wall
QR_PX = 460
LIVE_STATES = ("open", "discuss", "vote2")

# The frame hidden (the sidebar, its button, the navigation, a picture's full-screen button)
# and the type made large. Sent only to a projector's page.
CSS = """
[data-testid="stSidebar"], [data-testid="stSidebarCollapsedControl"],
[data-testid="stExpandSidebarButton"], [data-testid="stSidebarNav"],
[data-testid="stElementToolbar"] { display: none !important; }
.stMain .block-container { padding-top: 1.5rem; max-width: 100%; }
.stMain p, .stMain li, .stMain [data-testid="stMarkdownContainer"] { font-size: 34px;
  line-height: 1.35; }
.stMain h1 { font-size: 60px !important; }
.stMain h2 { font-size: 46px !important; }
.el-room-code { font-size: 150px; font-weight: 800; letter-spacing: 0.12em;
  font-family: monospace; line-height: 1.1; }
.el-room-big { font-size: 170px; font-weight: 800; line-height: 1.1; }
.el-room-line { font-size: 40px; font-weight: 600; }
.el-room-students { font-size: 72px; font-weight: 700; margin-top: 1rem; }
.el-room-link { font-size: 34px; font-family: monospace; word-break: break-all; }
"""


@dataclass(frozen=True)
class Screen:
    """A projector: the class it shows, and whether its link is (still) good."""

    code: str
    live: bool  # False: no class with that code and token (ended, expired, a wrong link)


def current() -> Screen | None:
    """This run's projector, from the link (None: the link asks for none). The token is
    checked against the store on every run: a class ended shows so."""
    q = st.query_params
    token = q.get(PROJECTOR_PARAM)
    if token is None:
        st.session_state.pop(CLASS_PROJECTOR, None)
        return None
    code = str(q.get(CLASS_PARAM, "")).strip().upper()
    try:
        live = room.is_projector(shared_store(), code, token)
    except SQLAlchemyError:
        live = True  # out of reach for now: the view says so and looks again
    screen = Screen(code, live)
    st.session_state[CLASS_PROJECTOR] = screen
    return screen


def screen() -> Screen | None:
    """The projector of this run (`current`), for the class page."""
    return st.session_state.get(CLASS_PROJECTOR)


def class_state_of(s: Screen) -> dict | None:
    try:
        return shared_store().state(s.code) if s.live else None
    except SQLAlchemyError:
        return None


def hide_frame() -> None:
    """The projector's style: no sidebar, large type (first thing in its page run)."""
    st.html(f"<style>{CSS}</style>")


def show(ctx: PageContext, s: Screen) -> None:
    """The projector view of the class (its page's whole content), its document in its
    language (`<html lang>`: the layout behaviours, framed pages' alone, are not mounted
    here) and titled as the projector of its class."""
    t = Texts(ctx.lang, OWNER)
    st.set_page_config(page_title=t("projector_title", code=s.code))
    page_language(ctx.lang)
    seen = class_state_of(s)
    if seen is None:
        st.markdown(f"## {t('projector_ended')}")
        return
    shown = current_question(ctx, seen)
    if shown is None:
        joining(ctx.lang, s.code)
        watch(s.code, ctx.lang, signature(seen), None)
        return
    words = task_texts(ctx.lang, shown.task)
    if shown.state == "revealed":  # the answer in the title: the charts stay above the fold
        answer = shown_answer(ctx.lang, shown.task.id, shown.task.answer)
        st.markdown(f"## {words(shown.task.text('short'))} · "
                    f"{t('projector_answer', answer=answer)}")
        revealed(ctx, s.code, shown)
        watch(s.code, ctx.lang, signature(seen), None, students=False)
        return
    st.markdown(f"## {words(shown.task.text('short'))} · {t('stage_' + shown.state)}")
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown(words(shown.task.text("q"), **shown.task.values))
        if shown.state == "discuss":
            st.markdown(f"**{t('projector_discuss')}**")
        watch(s.code, ctx.lang, signature(seen),
              (shown.task.id, shown.key, shown.state))
    with right:
        question_picture(ctx, shown.task)


def current_question(ctx: PageContext, seen: dict) -> Asked | None:
    """The question the wall shows: of the class's step, the one opened last among those in
    a vote, the discussion or revealed (None: none asked yet)."""
    asked = [a for a in asked_on(ctx, seen["step"], seen)
             if a.state in (*LIVE_STATES, "revealed")]
    if not asked:
        return None
    s = screen()
    when = room.opened_at(shared_store(), s.code) if s is not None else {}
    live = [a for a in asked if a.state in LIVE_STATES]
    pool = live or asked
    return max(pool, key=lambda a: when.get((a.task.id, a.key), 0.0))


def joining(lang: str, code: str) -> None:
    """How to join: the code large, the link and its QR code."""
    t = Texts(lang, OWNER)
    link = join_link(code, link_base())
    left, right = st.columns([3, 2], gap="large", vertical_alignment="center")
    with left:
        st.markdown(f"## {t('projector_join')}")
        st.html(f"<div class='el-room-code' data-testid='el-room-code'>"
                f"{html.escape(code)}</div>"
                f"<div class='el-room-link'>{html.escape(link)}</div>")
    right.image(qr_png(link), width=QR_PX, output_format="PNG", alt=t("qr_alt", link=link))


def question_picture(ctx: PageContext, task: Task) -> None:
    """The question's picture: its image with the grid and its patch framed (a task on the
    trace), else the class's image."""
    if task.trace is None:
        st.image(ctx.original, width=PICTURE_PX,
                 alt=Texts(ctx.lang, OWNER)("class_image_alt", name=ctx.image_name))
        return
    tr = task.trace
    view.drawn(st, ctx.lang, figures.image_with_grid, tr.image, tr.config.patch_size, "",
               numbers=False, mark=marked_patch(task), size=3.9, axis_labels=("", ""),
               shown=PICTURE_PX)


@st.fragment(run_every=WATCH_S)
def watch(code: str, lang: str, seen: tuple | None, counting: tuple[str, str, str] | None,
          students: bool = True) -> None:
    """Look at the class: a change runs the page again; else the live count — of the
    answers to the vote `counting` (task, settings key, state), else of the `students` — and
    the countdown."""
    t = Texts(lang, OWNER)
    store = shared_store()
    try:
        now = store.state(code)
        if now is None or signature(now) != seen:
            st.rerun()  # the class changed (or ended): the view follows
        listen_here(code, now)  # the next change is pushed: this look runs at once
        if counting is None:
            if not students:
                return
            st.html(f"<div class='el-room-students' data-testid='el-room-count'>"
                    f"{html.escape(t('projector_students', n=now['students']))}</div>")
            return
        task, key, state = counting
        vote = 2 if state == "vote2" else 1
        n = room.answer_count(store, code, task, key, vote)
        ends = room.countdown_end(store, code, task, key, state)
    except SQLAlchemyError:
        return  # out of reach for now: the next look tries again
    said = t("projector_answered" if state != "discuss" else "projector_answered_done", vote=vote)
    st.html(f"<div class='el-room-big' data-testid='el-room-count'>{n} / {now['students']}"
            f"</div><div class='el-room-line'>{html.escape(said)}</div>")
    if ends is not None and state != "discuss":
        left = max(0, int(np.ceil(ends - time.time())))
        st.html(f"<div class='el-room-students' data-testid='el-room-countdown'>"
                f"{html.escape(t('projector_left', s=left))}</div>")


def revealed(ctx: PageContext, code: str, a: Asked) -> None:
    """Vote 1 and vote 2 side by side (the right answer is in the title); how the students
    moved beside why (the experiment's values) and, for a patch task, the true map."""
    lang, task = ctx.lang, a.task
    t, words = Texts(lang, OWNER), task_texts(lang, task)
    try:
        pairs = room.revealed_pairs(shared_store(), code, task.id, a.key)
    except SQLAlchemyError:
        return
    first = [v1 for v1, _ in pairs if v1 is not None]
    second = [v2 for _, v2 in pairs if v2 is not None]
    top = st.columns(2, gap="large")
    chart(top[0], "room_chart_1", lang, task, first, t("projector_vote", vote=1))
    if second:
        chart(top[1], "room_chart_2", lang, task, second, t("projector_vote", vote=2))
        below = st.columns([2, 3], gap="large")
        moves(below[0], lang, task, pairs)
        why = below[1]
    else:
        why = top[1]
    with why:
        st.markdown(words(task.text("why"), **task.revealed()))
        if task.kind == "patch" and task.trace is not None and task.true_map:
            true_map_png(ctx, task)


def moves(where, lang: str, task: Task, pairs: list[tuple[object, object]]) -> None:  # noqa: ANN001
    """How the students who voted twice moved (right→right, wrong→right, …)."""
    t, tc = Texts(lang, OWNER), Texts(lang, "class")
    moved = transitions([(v1, v2) for v1, v2 in pairs if v1 is not None and v2 is not None],
                        judge_stored(task))
    with where.container(key="room_chart_moves"):
        st.markdown(f"**{t('projector_moves')}**")
        if moved.n:
            labels = [tc("move_" + m.replace("→", "_")) for m in moved.counts]
            view.drawn(st, lang, figures.answer_counts, labels, list(moved.counts.values()), "",
                       tc("students"), [m.endswith("→right") for m in moved.counts], CHART_IN,
                       CHART_PT, shown="stretch", named=t("projector_moves"))


def chart(where, key: str, lang: str, task: Task, values: list[object],  # noqa: ANN001
          head: str) -> None:
    """One vote's answers as a histogram, shown large (no nickname: counts per answer)."""
    t = Texts(lang, OWNER)
    counted = tally(task, values)
    with where.container(key=key):
        st.markdown(f"**{head}** · {t('projector_right', right=counted.right, n=counted.n)}")
        if not counted.n:
            return
        if task.kind == "patch" and task.trace is not None:
            G = task.grid
            maps = counted.patches.astype(np.float32).reshape(1, G, G)
            view.drawn(st, lang, figures.attention_grid, task.trace.image, maps, [""], "",
                       ncols=1, mark=marked_patch(task),
                       colorbar_label=Texts(lang, "class")("students"),
                       vmax=float(max(1, maps.max())), width=3.9, counts=True, shown="stretch",
                       named=head)
        else:
            view.drawn(st, lang, figures.answer_counts, view.labels_of(lang, task, counted),
                       list(counted.counts.values()), "", Texts(lang, "class")("students"),
                       view.right_flags(task, counted), CHART_IN, CHART_PT, shown="stretch",
                       named=head)


def true_map_png(ctx: PageContext, task: Task) -> None:
    """A patch task's true map (where the model looked, or how alike), without a download."""
    words = task_texts(ctx.lang, task)
    G, tr = task.grid, task.trace
    values = np.asarray(task.scores, dtype=np.float32).reshape(1, G, G)
    if task.exclude is not None:
        values = values.copy()
        values.flat[task.exclude] = float(np.min(values))
    view.drawn(st, ctx.lang, figures.attention_grid, tr.image, np.clip(values, 0, None), [""],
               words(f"{task.text_id}_map", **task.values), ncols=1, mark=marked_patch(task),
               colorbar_label=words(f"{task.text_id}_bar"), width=3.9, shown=PICTURE_PX)
