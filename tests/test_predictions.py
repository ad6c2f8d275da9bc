"""encoder_core.views.predictions: the answers the lesson reads off a trace."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core.views.predictions import (
    choice_quality,
    compare_sharpness,
    deletion_pace,
    most_similar_other,
    settles_at,
    share_within,
    top_patch,
)


def test_the_most_similar_other_leaves_the_patch_itself_out():
    row = np.array([0.2, 1.0, 0.9, 0.9])
    assert most_similar_other(row, 1) == 2  # the first of a tie
    assert most_similar_other(row, 2) == 1
    assert top_patch(row) == 1


def test_choice_quality_ranks_and_shares_within_the_candidates():
    w = np.array([0.1, 0.5, 0.3, 0.1])
    best = choice_quality(w, 1)
    assert (best.share, best.rank, best.of, best.value, best.best) == (1.0, 1, 4, 0.5, 0.5)
    mid = choice_quality(w, 2)
    assert mid.rank == 2 and mid.share == pytest.approx((0.3 - 0.1) / (0.5 - 0.1))
    assert choice_quality(w, 0).rank == 3 and choice_quality(w, 0).share == 0.0
    sim = np.array([1.0, 0.8, 0.2])  # patch 0 is the one compared from
    q = choice_quality(sim, 1, exclude=0)
    assert (q.rank, q.of, q.share, q.best) == (1, 2, 1.0, 0.8)
    assert choice_quality(np.ones(3), 2).share == 1.0  # all alike: every choice is the best


def test_sharper_means_a_lower_entropy():
    assert compare_sharpness(3.0, 2.0) == "sharper"
    assert compare_sharpness(3.0, 4.0) == "flatter"
    assert compare_sharpness(3.0, 3.0 + 1e-9) == "same"


def test_share_within_counts_the_bound_itself():
    x = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 1.5])
    assert share_within(x) == pytest.approx(4 / 6)
    assert share_within(x, 0.25) == pytest.approx(1 / 6)


# --- issue 53: the lens's and the deletion curve's answers -------------------------------------

def test_the_class_settles_where_it_becomes_the_top_1_for_good():
    lens = np.array([[3.0, 1.0, 0.0],   # entering layer 1: class 0
                     [0.0, 2.0, 1.0],   # after layer 1: class 1
                     [2.0, 1.0, 0.0],   # after layer 2: class 0 again
                     [0.0, 1.0, 0.5],   # after layer 3: class 1
                     [0.0, 1.0, 1.0]])  # the prediction: class 1 (a tie with 2: the lower)
    assert settles_at(lens, 1) == 3
    assert settles_at(lens, 0) is None and settles_at(lens, 2) is None
    assert settles_at(lens[[0, 2]], 0) == 0


def test_a_smaller_deletion_area_is_a_faster_fall():
    assert deletion_pace(0.3, 0.76) == "faster"
    assert deletion_pace(0.8, 0.76) == "slower"
    assert deletion_pace(0.765, 0.76) == "same"
    assert deletion_pace(0.765, 0.76, tol=0.001) == "slower"
