"""lens.compute_gate.ComputeGate's quick slots: a short computation does not wait for a long
one to end, a long one is never starved by short ones, and the bound on computations holds."""

from __future__ import annotations

import threading
import time

import pytest

from lens.cache import LRUCache
from lens.compute_gate import ComputeGate
from tests.support.held import WAIT_S, Held, wait_until

LONG_S, SHORT_S = 6.0, 0.1  # predicted seconds: a trace at the heaviest settings, a small one


def holder(gate: ComputeGate, seconds: float, started: list[str], name: str) -> Held:
    """A thread that takes a gate slot for `seconds` (noting `name` in `started` once inside)
    and holds it until released."""
    return Held(lambda: gate.slot(seconds), lambda: started.append(name))


def entered(gate: ComputeGate, seconds: float, started: list[str], name: str) -> Held:
    """A holder that got its slot."""
    h = holder(gate, seconds, started, name)
    assert h.entered.wait(WAIT_S), f"{name} never got a slot"
    return h


def test_a_short_computation_runs_while_a_long_one_holds_the_only_slot():
    gate = ComputeGate(1, quick=1, quick_s=1.0)
    started: list[str] = []
    long = entered(gate, LONG_S, started, "long")
    short = holder(gate, SHORT_S, started, "short")
    assert short.entered.wait(WAIT_S), "the short computation waited for the long one"
    assert gate.running == 2 and gate.running_quick == 1
    short.release()
    long.release()
    assert gate.running == 0 and gate.peak == 2


def test_without_quick_slots_the_short_one_waits_for_the_long_one():
    """The test above can fail: with no quick slot the short computation waits."""
    gate = ComputeGate(1, quick=0, quick_s=1.0)
    started: list[str] = []
    long = entered(gate, LONG_S, started, "long")
    short = holder(gate, SHORT_S, started, "short")
    assert not short.entered.wait(0.3)
    long.release()
    assert short.entered.wait(WAIT_S)
    short.release()
    assert started == ["long", "short"] and gate.peak == 1


def test_a_long_computation_is_not_starved_by_short_ones():
    """Short ones keep arriving while a long one waits: they wait for the quick slot rather
    than take the limit slot the long one waits for, which it gets as soon as it frees."""
    gate = ComputeGate(1, quick=1, quick_s=1.0)
    started: list[str] = []
    first = entered(gate, LONG_S, started, "long 1")
    second = holder(gate, LONG_S, started, "long 2")
    wait_until(lambda: gate.queue() == (1, 1))
    quick = entered(gate, SHORT_S, started, "short 1")
    later = holder(gate, SHORT_S, started, "short 2")  # both slots busy: it waits
    assert not later.entered.wait(0.2)
    first.release()
    assert second.entered.wait(WAIT_S)
    assert not later.entered.is_set()  # the freed limit slot went to the long one
    quick.release()
    assert later.entered.wait(WAIT_S)
    later.release()
    second.release()
    assert started == ["long 1", "short 1", "long 2", "short 2"]
    assert gate.peak == 2 and gate.running == 0


def test_long_ones_take_the_limit_slot_in_the_order_they_came():
    gate = ComputeGate(1, quick=1, quick_s=1.0)
    started: list[str] = []
    first = entered(gate, LONG_S, started, "long 0")
    waiting = []
    for i in range(1, 4):
        waiting.append(holder(gate, LONG_S, started, f"long {i}"))
        wait_until(lambda i=i: gate.queue() == (1, i))
    first.release()
    for h in waiting:
        assert h.entered.wait(WAIT_S)
        h.release()
    assert started == [f"long {i}" for i in range(4)]


@pytest.mark.parametrize("quick", [0, 1, 2])
def test_many_short_and_long_computations_stay_within_limit_plus_quick(quick):
    gate = ComputeGate(1, quick=quick, quick_s=1.0)
    cache: LRUCache[int] = LRUCache(64, gate=gate)
    lock = threading.Lock()
    running = {"long": 0, "all": 0}
    peak = {"long": 0, "all": 0}

    def compute(long: bool) -> int:
        with lock:
            running["all"] += 1
            running["long"] += long
            peak["all"] = max(peak["all"], running["all"])
            peak["long"] = max(peak["long"], running["long"])
        time.sleep(0.02)
        with lock:
            running["all"] -= 1
            running["long"] -= long
        return 1

    threads = [threading.Thread(target=lambda i=i: cache.get_or_compute(
        i, lambda: compute(i % 3 == 0), LONG_S if i % 3 == 0 else SHORT_S)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    assert not any(t.is_alive() for t in threads)
    assert peak["long"] == 1  # long ones never share the limit slot
    assert 1 <= peak["all"] <= 1 + quick
    assert gate.peak == peak["all"] and gate.running == 0 and gate.running_quick == 0
    assert cache.misses == 24
