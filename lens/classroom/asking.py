"""A class's questions: the lesson's tasks (`lens.lesson.tasks`) as the teacher opens them and
every student is asked them — the same question (the teacher's layer, head and query), on the
same trace (the class's settings), its answers stored under that trace's binding.

Pure functions of a page context and the store's state; the pages draw them
(`lens.classroom.ui.teacher`, `lens.classroom.ui.student`).
"""

from __future__ import annotations

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
        task = spec.ask(ctx, fixed_now(ctx))
        if task is None:
            continue
        key = trace_binding(ctx, task)
        fixed = class_state["fixed"].get((spec.id, key))
        if fixed is not None and Fixed(*fixed) != task.fixed:
            task = spec.ask(ctx, Fixed(*fixed)) or task
        out.append(Asked(spec, task, key, class_state["tasks"].get((spec.id, key), "")))
    return out


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
