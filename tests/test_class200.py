"""The lecture hall of 200 (benchmarks/class200.py): its ramp, statistics and CPU arithmetic
without a server, and the whole script with 4 students (slow: it starts scripts/serve)."""

from __future__ import annotations

import math
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from benchmarks import class200


def test_the_ramp_spreads_the_joins_evenly_over_its_seconds():
    assert class200.ramp_schedule(200, 30.0)[:3] == [0.0, 0.15, 0.3]
    ramp = class200.ramp_schedule(200, 30.0)
    assert len(ramp) == 200 and ramp[-1] == pytest.approx(29.85)
    gaps = {round(b - a, 9) for a, b in zip(ramp, ramp[1:], strict=False)}
    assert gaps == {0.15}
    assert class200.ramp_schedule(4, 0.0) == [0.0] * 4
    assert class200.ramp_schedule(0, 30.0) == []


def test_the_statistics_are_nearest_rank():
    values = [float(v) for v in range(1, 101)]  # 1 … 100
    assert class200.stats(values) == (50.0, 95.0, 100.0)
    assert class200.stats([0.3]) == (0.3, 0.3, 0.3)
    assert all(math.isnan(v) for v in class200.stats([]))
    assert class200.stats_line([1.0, 2.0], 3) == "2/3, p50 1.00 s, p95 2.00 s, max 2.00 s"
    assert class200.stats_line([], 3) == "0/3, none" and class200.stats_line([]) == "none"


def test_idle_cpu_per_student_divides_each_replica_by_its_own_students():
    got = class200.per_student({"r1": 2.0, "r2": 1.0}, 20.0, {"r1": 100, "r2": 50})
    assert got["r1"] == pytest.approx(0.001) and got["r2"] == pytest.approx(0.001)
    assert math.isnan(class200.per_student({"r1": 1.0}, 10.0, {"r1": 0})["r1"])


def test_a_card_costs_the_cpu_beyond_the_idle_polling_divided_by_the_students():
    # 12 CPU-s in 4 s while idling costs 0.5 CPU-s/s: 10 CPU-s for 200 cards, 50 ms each
    assert class200.card_cost(12.0, 0.5, 4.0, 200) == pytest.approx(0.05)
    assert class200.card_cost(1.0, 0.5, 4.0, 10) == 0.0  # never below nothing
    assert class200.cores_bound(200, 0.05, 2) == pytest.approx(5.0)  # > 1 s: missed


def test_the_machine_line_names_the_cpu_cores_load_and_probe():
    line = class200.machine_line()
    assert re.search(r", \d+ cores, load average [\d.]+ / [\d.]+ / [\d.]+, speed probe "
                     r"[\d.]+ s$", line)


@pytest.mark.slow
def test_a_hall_of_four_joins_follows_and_loses_no_answer_to_a_kill(tmp_path):
    out = tmp_path / "hall.txt"
    args = ["--students", "4", "--ramp", "1", "--idle", "2", "--spread", "2", "--kill-at", "1",
            "--after", "6", "--wait", "20", "--pushed-only", "--out", str(out)]
    # in a thread of its own: main's asyncio.run cannot run in this process's main thread once
    # a browser test (Playwright's loop) has run there (tests/support/run_async.py)
    with ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(class200.main, args).result() == 0
    text = out.read_text()
    assert "4/4 joined (4 students in the store)" in text
    assert re.search(r"Open → the card .*\n\n4/4, p50", text)
    # the tabs' timers sent nothing: every card came with a run the server pushed
    assert "cards shown after a run the server pushed (no timer of the tab asked): 4/4" in text
    assert "**acknowledged answers lost: 0**" in text
    assert "pages working at the end (open, the card shown): 4/4" in text
