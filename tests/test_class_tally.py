"""The teacher's counts of a task's answers (lens/classroom/tally.py): histograms, maps, and
peer instruction's two votes — how students moved between them, the normalised gain."""

from __future__ import annotations

import numpy as np
import pytest

from lens.classroom.tally import judge_stored, normalised_gain, tally, transitions
from lens.lesson.tasks import Task

SHAPE = Task((196.0, 196.0), {}, ("x",), id="scores.shape", kind="number", page="scores")
LOOK = Task(5, {}, ("x",), id="scores.look", kind="patch", page="scores",
            scores=tuple([0.0] * 5 + [1.0] + [0.0] * 3), grid=3)
DIVISOR = Task("flatter", {}, ("x",), id="scores.divisor", kind="choice", page="scores",
               options=("sharper", "flatter", "same"))
WITHIN = Task(68.0, {}, ("x",), id="addnorm.within", kind="estimate", page="addnorm",
              tolerance=10.0)


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


def test_transitions_count_only_students_who_voted_twice():
    right = {"a"}.__contains__  # "a" is right
    pairs = [("a", "a"), ("a", "a"), ("b", "a"), ("b", "a"), ("b", "a"), ("a", "b"),
             ("b", "c"), ("a", None), (None, "a"), (None, None)]
    t = transitions(pairs, right)
    assert t.counts == {"right→right": 2, "wrong→right": 3, "right→wrong": 1,
                        "wrong→wrong": 1}
    assert t.n == 7
    assert t.right_1 == pytest.approx(3 / 7) and t.right_2 == pytest.approx(5 / 7)
    assert t.gain == pytest.approx((5 / 7 - 3 / 7) / (1 - 3 / 7))


def test_no_student_voted_twice_nothing_to_compare():
    t = transitions([("a", None), (None, "a")], {"a"}.__contains__)
    assert t.n == 0 and t.right_1 is None and t.right_2 is None and t.gain is None
    assert set(t.counts.values()) == {0}


@pytest.mark.parametrize(("pre", "post", "gain"), [
    (0.5, 0.75, 0.5),  # half of what could be gained
    (0.0, 1.0, 1.0), (0.0, 0.0, 0.0), (0.4, 0.4, 0.0),
    (0.8, 0.6, -1.0),  # a class that lost
])
def test_normalised_gain_is_the_share_gained_of_what_could_be(pre, post, gain):
    assert normalised_gain(pre, post) == pytest.approx(gain)


def test_normalised_gain_is_undefined_when_everyone_was_right_before():
    assert normalised_gain(1.0, 1.0) is None and normalised_gain(1.0, 0.5) is None
    everyone = transitions([("a", "a"), ("a", "b")], {"a"}.__contains__)
    assert everyone.right_1 == 1.0 and everyone.gain is None


def test_stored_answers_are_judged_as_the_lesson_judges_them():
    assert judge_stored(SHAPE)([196.0, 196.0]) and not judge_stored(SHAPE)([196.0, 64.0])
    assert judge_stored(DIVISOR)("flatter") and not judge_stored(DIVISOR)("same")
