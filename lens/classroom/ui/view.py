"""How a class answered one task, drawn for the teacher (live) and for each student (once
revealed): how many answered; a histogram of the answers for a number, a choice or an
estimate; for a patch task, a map over the image of how many chose each patch. No nickname and
no single student's answer is ever drawn. Takes the stored answers and the task without its
trace (a fragment keeps what it is given).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from ... import figures
from ...describe import after_name, describe
from ...i18n import Texts
from ...lesson.tasks import Task, task_texts
from ...lesson.ui.cards import marked_patch, shown_answer
from ...widgets import render
from ..tally import TRANSITIONS, Tally, Transitions, tally

OWNER = "class"



def drawn(where, lang: str, draw, *args: object, shown: int | str,  # noqa: ANN001
          named: str = "", **kwargs: object) -> None:
    """Render the figure `draw(*args, **kwargs)` and show it `shown` wide (pixels, "stretch",
    "content") in `where`, with its text alternative in `lang` (`lens.describe`, as every
    picture of the app: what it shows and its numbers), after `named` — what the page's
    heading above says of a figure drawn without a title."""
    png = render(draw, *args, **kwargs)
    alt = describe(draw, args, kwargs, lang).alt
    where.image(png, width=shown, output_format="PNG",
                alt=after_name(named, alt, lang) if named else alt)


def labels_of(lang: str, task: Task, counted: Tally) -> list[str]:
    """The histogram's labels in words: "196 × 512", "flatter", "60–70 %"."""
    if task.kind == "choice":
        return [shown_answer(lang, task.id, o) for o in counted.counts]
    if task.kind == "estimate":
        return [f"{k} %" for k in counted.counts]
    return list(counted.counts)


def right_flags(task: Task, counted: Tally) -> list[bool]:
    """Which histogram bars hold right answers."""
    if task.kind == "choice":
        return [o == task.answer for o in counted.counts]
    if task.kind == "estimate":
        a = float(task.answer)  # type: ignore[arg-type]
        return [float(k.split("–")[0]) <= a <= float(k.split("–")[1]) for k in counted.counts]
    right = " × ".join(f"{x:g}" for x in task.answer)  # type: ignore[union-attr]
    return [k == right for k in counted.counts]


def answered(lang: str, n: int, students: int | None = None) -> None:
    """How many answered, and nothing of what: all a vote still open shows the class."""
    t = Texts(lang, OWNER)
    head = t("answered_of", n=n, of=students) if students is not None else t("answered", n=n)
    st.markdown(f"**{head}**")


def final_vote(store, code: str, task_id: str, key: str) -> tuple[int, list[object]]:  # noqa: ANN001
    """The vote a revealed task was decided by — vote 2 when any student gave one, else the
    single vote — and its answers."""
    second = store.answers_to(code, task_id, key, vote=2)
    return (2, second) if second else (1, store.answers_to(code, task_id, key, vote=1))


def class_transitions(lang: str, task: Task, moved: Transitions, width: float = 4.0) -> None:
    """How the students who voted twice moved from vote 1 to vote 2 (a bar per move, those
    ending right highlighted), and the share right at each vote."""
    t = Texts(lang, OWNER)
    short = task_texts(lang, task)(task.text("short"))
    labels = [t("move_" + m.replace("→", "_")) for m in TRANSITIONS]
    if moved.n:
        st.markdown(t("shares_right", n=moved.n, p1=100 * moved.right_1,
                      p2=100 * moved.right_2))
    drawn(st, lang, figures.answer_counts, labels, [moved.counts[m] for m in TRANSITIONS],
          t("transitions_title", task=short), t("students"),
          [m.endswith("→right") for m in TRANSITIONS], width, shown="content")


def class_answers(lang: str, task: Task, values: list[object], *, revealed: bool,
                  image: np.ndarray | None = None, students: int | None = None,
                  width: float = 4.0) -> Tally:
    """Draw how the class answered `task` (a histogram `width` inches wide, shown at its own
    size: a phone's narrower column shrinks it); its tally."""
    t = Texts(lang, OWNER)

    counted = tally(task, values)
    n = counted.n
    answered(lang, n, students)
    if n and revealed:
        st.markdown(t("share_right", right=counted.right, n=n,
                        p=100 * counted.right / n))
    if not n:
        st.caption(t("no_answers"))
        return counted
    short = task_texts(lang, task)(task.text("short"))
    title = t("chart_title", task=short)
    if task.kind == "patch" and image is not None:
        # titled as the true map beside it: the question, then what the map holds in its
        # panel's title (a map's title is one line, cut to fit)
        G = task.grid
        maps = counted.patches.astype(np.float32).reshape(1, G, G)
        drawn(st, lang, figures.attention_grid, image, maps, [t("map_panel")], short,
              ncols=1, mark=marked_patch(task), colorbar_label=t("students"),
              vmax=float(max(1, maps.max())), width=3.9, counts=True, shown="content")
    else:  # its own size, smaller on a phone
        drawn(st, lang, figures.answer_counts, labels_of(lang, task, counted),
              list(counted.counts.values()), title, t("students"),
              right_flags(task, counted) if revealed else [], width, shown="content")
    return counted
