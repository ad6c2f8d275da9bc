"""What a class answered to one task, counted for the teacher's page: how many answered, how
many chose each option (a histogram), for a patch task how many chose each patch (a map over
the image), and once the task is revealed the share right. Pure functions of the stored
answers (`store.Store.answers_to`) and the task as asked (`lens.lesson.tasks.Task`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from lens.lesson.tasks import Task, judge

ESTIMATE_BIN = 10.0  # an estimate's histogram: bins of 10 points, 0–10 … 90–100


@dataclass(frozen=True)
class Tally:
    n: int  # answers counted
    counts: dict[str, int]  # label -> how many (options, shapes, bins), most first for numbers
    patches: np.ndarray | None  # patch task: [N] how many chose each patch
    right: int  # answers judged right against the task's answer


def tally(task: Task, values: list[object]) -> Tally:
    """Count the class's answers to `task` (as the store holds them: JSON values)."""
    right = sum(judge(task, _as_given(task, v)).right for v in values)
    if task.kind == "patch":
        grid = np.zeros(task.grid * task.grid, dtype=np.int64)
        for v in values:
            grid[int(v)] += 1
        return Tally(len(values), {}, grid, right)
    if task.kind == "choice":
        counts = Counter(str(v) for v in values)
        return Tally(len(values), {o: counts.get(o, 0) for o in task.options}, None, right)
    if task.kind == "estimate":
        edges = np.arange(0.0, 100.0 + ESTIMATE_BIN, ESTIMATE_BIN)
        hist, _ = np.histogram([float(v) for v in values], bins=edges)
        labels = [f"{a:g}–{b:g}" for a, b in zip(edges[:-1], edges[1:], strict=True)]
        return Tally(len(values), dict(zip(labels, map(int, hist), strict=True)), None, right)
    counts = Counter(" × ".join(f"{x:g}" for x in v) for v in values)  # number: each answer
    return Tally(len(values), dict(counts.most_common()), None, right)


def _as_given(task: Task, value: object) -> object:
    """A stored value as the lesson's `judge` takes it."""
    if task.kind == "number":
        return tuple(float(x) for x in value)  # type: ignore[union-attr]
    return value
