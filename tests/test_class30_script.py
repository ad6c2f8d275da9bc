"""The scripted class of 30 (benchmarks/class30.py): its seeded answers and what they should
count to, without a server."""

from __future__ import annotations

from benchmarks import class30
from lens.classroom.tally import transitions


def test_the_script_is_seeded_and_its_counts_match_tally():
    a = class30.draw_script(30, 0.4, 0.8, 0.1, seed=37)
    assert a == class30.draw_script(30, 0.4, 0.8, 0.1, seed=37)
    assert a != class30.draw_script(30, 0.4, 0.8, 0.1, seed=38)
    values = class30.script_values(a, 37)
    counts, share1, share2 = class30.expected(a)
    assert sum(counts.values()) == 30
    got = transitions(values, lambda v: v == class30.RIGHT)
    assert got.counts == counts and got.right_1 == share1 and got.right_2 == share2
    for (r1, r2), (v1, v2) in zip(a, values, strict=True):
        assert (v1 == class30.RIGHT) == r1 and (v2 == class30.RIGHT) == r2


def test_the_shares_approach_the_given_ones_over_many_students():
    counts, share1, share2 = class30.expected(class30.draw_script(20000, 0.4, 0.8, 0.1, 1))
    assert abs(share1 - 0.4) < 0.02 and abs(share2 - 0.8) < 0.02
    assert abs(counts["right→wrong"] / 20000 - 0.04) < 0.01  # 0.4 × 0.1


def test_no_flip_and_all_right_at_vote_2():
    counts, _, share2 = class30.expected(class30.draw_script(50, 0.3, 1.0, 0.0, 5))
    assert share2 == 1.0 and counts["right→wrong"] == counts["wrong→wrong"] == 0
