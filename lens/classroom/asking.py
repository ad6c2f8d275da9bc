"""A class's questions: the lesson's tasks (`lens.lesson.tasks`) as the teacher opens them and
every student is asked them — the same question (the teacher's layer, head and query), on the
same trace (the class's settings), its answers stored under that trace's binding.

Functions of a page context and the store's state; the pages draw them
(`lens.classroom.ui.teacher`, `lens.classroom.ui.student`). One memo: a task as asked on a
trace is computed once per process (`ask_once`), since every page of a class asks the same.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..lesson.progress import trace_binding
from ..lesson.tasks import Fixed, Spec, Task, fixed_now
from ..settings import Settings
from ..steps import class_tasks_for
from .rules import Rule

if TYPE_CHECKING:
    from ..context import PageContext

# Settings the class does not fix: each member's language, the lesson switch (always on for a
# student) and the page's selectors (a task carries the teacher's layer, head and query itself).
OWN = ("lang", "lesson", "layer", "head", "query")
ASKED_KEEP = 16  # tasks as asked kept by `ask_once` (each holds its trace: a class's, cached)

_asked: OrderedDict[tuple, tuple[object, Task | None]] = OrderedDict()
_asked_lock = threading.Lock()


def class_settings(settings: Settings) -> dict[str, str]:
    """What the class's settings are, as the store keeps them (link text)."""
    return {k: v for k, v in settings.to_url().items() if k not in OWN}


def same_settings(settings: Settings, stored: Mapping[str, str]) -> bool:
    return class_settings(settings) == dict(stored)


@dataclass(frozen=True)
class Asked:
    """One task of the class's step: as asked, under which binding, in which state."""

    spec: Spec
    task: Task
    key: str  # the binding its answers are stored under (`lens.lesson.progress.trace_binding`)
    state: str  # "", "open", "revealed" or "closed"


def asked_on(ctx: PageContext, step: str, class_state: Mapping) -> list[Asked]:
    """The tasks of `step` on this context's trace: an opened task with the teacher's layer,
    head and query, one not opened yet with the page's own."""
    out = []
    for spec in class_tasks_for(step, ctx.cfg):
        if not spec.possible(ctx):
            continue
        task = ask_once(ctx, spec, fixed_now(ctx))
        if task is None:
            continue
        key = trace_binding(ctx, task)
        fixed = class_state["fixed"].get((spec.id, key))
        if fixed is not None and Fixed(*fixed) != task.fixed:
            task = ask_once(ctx, spec, Fixed(*fixed)) or task
        out.append(Asked(spec, task, key, class_state["tasks"].get((spec.id, key), "")))
    return out


def ask_once(ctx: PageContext, spec: Spec, fixed: Fixed) -> Task | None:
    """`spec.ask(ctx, fixed)`, computed once per trace, settings and `fixed` in this process
    (a Task is frozen): 200 students of a class ask the same question on the same trace, and
    each of their cards' runs would compute it again (the overview's: 12 ms). A class's
    tasks are the note's steps', whose builders read the trace, the settings and `fixed` only
    (not the page's state)."""
    key = (id(ctx.trace), ctx.settings, ctx.image_key, spec.id, fixed)
    with _asked_lock:
        hit = _asked.get(key)
        if hit is not None and hit[0] is ctx.trace:  # the very trace (an id may be reused)
            _asked.move_to_end(key)
            return hit[1]
    task = spec.ask(ctx, fixed)
    with _asked_lock:
        _asked[key] = (ctx.trace, task)
        while len(_asked) > ASKED_KEEP:
            _asked.popitem(last=False)
    return task


def rule_for(task: Task) -> Rule:
    """What the store accepts as an answer to `task`."""
    if task.kind == "patch":
        return Rule("patch", n=task.grid * task.grid)
    if task.kind == "choice":
        return Rule("choice", options=task.options)
    if task.kind == "number":
        return Rule("number", parts=len(task.answer))  # type: ignore[arg-type]
    return Rule("estimate", lo=0.0, hi=100.0)


def stored_value(task: Task, given: object) -> object:
    """An answer as the lesson's inputs give it, as the store keeps it (JSON)."""
    if task.kind == "number":
        return [float(x) for x in given]  # type: ignore[union-attr]
    if task.kind == "patch":
        return int(given)  # type: ignore[arg-type]
    if task.kind == "estimate":
        return float(given)  # type: ignore[arg-type]
    return str(given)


def given_value(task: Task, stored: object) -> object:
    """A stored answer as the lesson's `judge` and `shown_answer` take it."""
    if task.kind == "number":
        return tuple(float(x) for x in stored)  # type: ignore[union-attr]
    return stored
