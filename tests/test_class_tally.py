"""The teacher's counts of a task's answers (lens/classroom/tally.py)."""

from __future__ import annotations

import numpy as np

from lens.classroom.tally import tally
from lens.lesson.tasks import Task

SHAPE = Task("scores.shape", "number", (196.0, 196.0), {}, ("x",))
LOOK = Task("scores.look", "patch", 5, {}, ("x",), scores=tuple([0.0] * 5 + [1.0] + [0.0] * 3),
            grid=3)
DIVISOR = Task("scores.divisor", "choice", "flatter", {}, ("x",),
               options=("sharper", "flatter", "same"))
WITHIN = Task("addnorm.within", "estimate", 68.0, {}, ("x",), tolerance=10.0)


def test_numbers_are_counted_answer_by_answer_most_first():
    t = tally(SHAPE, [[196, 196], [196, 512], [196, 196], [14, 14]])
    assert t.n == 4 and t.right == 2
    assert list(t.counts.items()) == [("196 × 196", 2), ("196 × 512", 1), ("14 × 14", 1)]


def test_patches_are_counted_on_the_grid():
    t = tally(LOOK, [5, 5, 0, 8])
    assert t.patches.tolist() == [1, 0, 0, 0, 0, 2, 0, 0, 1] and t.right == 2
    assert t.patches.sum() == t.n == 4


def test_choices_list_every_option_even_unchosen():
    t = tally(DIVISOR, ["flatter", "sharper", "flatter"])
    assert t.counts == {"sharper": 1, "flatter": 2, "same": 0} and t.right == 2


def test_estimates_fall_in_bins_of_ten_points():
    t = tally(WITHIN, [0, 9.9, 68, 71, 100])
    assert t.counts["0–10"] == 2 and t.counts["60–70"] == 1 and t.counts["70–80"] == 1
    assert t.counts["90–100"] == 1 and sum(t.counts.values()) == 5
    assert t.right == 2  # 68 and 71 within ±10 of 68


def test_no_answers_yet():
    t = tally(LOOK, [])
    assert t.n == 0 and t.right == 0 and not np.any(t.patches)
