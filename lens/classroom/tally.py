"""What a class answered to one task, counted for the teacher's page: how many answered, how
many chose each option (a histogram), for a patch task how many chose each patch (a map over
the image), and once the task is revealed the share right. Pure functions of the stored
answers (`store.Store.answers_to`) and the task as asked (`lens.lesson.tasks.Task`).

Peer instruction's two votes: how the students who voted twice moved between them
(`transitions`, from `store.Store.vote_rows`: right→right, wrong→right, right→wrong,
wrong→wrong) and the normalised gain from the share right before to the share right after
(`lens.lesson.concepts.normalised_gain`, Hake 1998).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from lens.lesson.concepts import normalised_gain
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


TRANSITIONS = ("right→right", "wrong→right", "right→wrong", "wrong→wrong")  # vote 1 → vote 2


@dataclass(frozen=True)
class Transitions:
    counts: dict[str, int]  # each of TRANSITIONS -> how many students moved so
    n: int  # students who answered both votes (the only ones counted here)
    right_1: float | None  # share of those n right at vote 1 (None: n = 0)
    right_2: float | None  # share of those n right at vote 2

    @property
    def gain(self) -> float | None:
        """The normalised gain from vote 1 to vote 2 of these n students."""
        if self.right_1 is None or self.right_2 is None:
            return None
        return normalised_gain(self.right_1, self.right_2)


def transitions(pairs: Iterable[tuple[object, object]],
                judge: Callable[[object], bool]) -> Transitions:
    """How students moved from vote 1 to vote 2, right or wrong by `judge`; `pairs` are
    (vote 1, vote 2) per student, None for a vote not given (that student is left out).
    The shares right are over the same students at both votes, so that they compare."""
    counts = dict.fromkeys(TRANSITIONS, 0)
    for first, second in pairs:
        if first is None or second is None:
            continue
        was = "right" if judge(first) else "wrong"
        now = "right" if judge(second) else "wrong"
        counts[f"{was}→{now}"] += 1
    n = sum(counts.values())
    if n == 0:
        return Transitions(counts, 0, None, None)
    right_1 = (counts["right→right"] + counts["right→wrong"]) / n
    right_2 = (counts["right→right"] + counts["wrong→right"]) / n
    return Transitions(counts, n, right_1, right_2)


def judge_stored(task: Task) -> Callable[[object], bool]:
    """Right or wrong, for an answer to `task` as the store holds it."""
    return lambda value: judge(task, _as_given(task, value)).right
