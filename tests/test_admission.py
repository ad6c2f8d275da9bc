"""The admission rule (lens/admission.py), with fake costs and a fake clock: under the budget a
request runs at once; over it, one waits while a smaller one that fits goes past it — freely when
it fits beside the waiter (it never delays it), else at most `max_overtakes` times (then the
waiter is a barrier for all that would delay it: never starved); among requests that fit, the
order they came; a request that could never fit is refused at once."""

from __future__ import annotations

import threading

import pytest

from lens.admission import (
    MemoryBudget,
    Request,
    TooHeavyError,
    admissible,
    passes_freely,
    shortfall,
)
from lens.fair_queue import Queue
from tests.support.held import WAIT_S, Held, wait_until

GB = 2**30


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def waiting(budget: MemoryBudget, n: int) -> bool:
    """Whether `n` requests wait now."""
    return budget.queue()[1] == n


def runner(budget: MemoryBudget, name: str, need: int, seconds: float, log: list[str],
           seen: list[Queue] | None = None) -> Held:
    """A request in its own thread: reserve `need` bytes (its queue notices into `seen`), note
    `name` in `log` once admitted, then hold until released."""
    def told(q: Queue) -> None:
        if seen is not None:
            seen.append(q)

    return Held(lambda: budget.reserve(need, seconds, on_wait=told, poll_s=0.01),
                lambda: log.append(name))


def test_under_the_budget_requests_run_at_once_together():
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    log: list[str] = []
    a = runner(budget, "a", GB, 5.0, log)
    b = runner(budget, "b", GB // 2, 1.0, log)
    assert a.entered.wait(WAIT_S) and b.entered.wait(WAIT_S)
    assert budget.reserved == GB + GB // 2 and budget.queue() == (2, 0)
    a.release()
    b.release()
    assert budget.reserved == 0 and budget.peak == GB + GB // 2


def test_a_small_request_that_fits_goes_past_a_heavy_one_that_waits():
    """First come first served made c wait for b (which waits for a): head-of-line waiting."""
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    log: list[str] = []
    seen_b: list[Queue] = []
    a = runner(budget, "a", 3 * GB // 2, 8.0, log)
    assert a.entered.wait(WAIT_S)
    b = runner(budget, "b", GB, 4.0, log, seen_b)  # does not fit beside a
    wait_until(lambda: waiting(budget, 1), "b to wait")
    c = runner(budget, "c", GB // 4, 1.0, log)  # fits now: it does not wait for b
    assert c.entered.wait(WAIT_S)
    assert log == ["a", "c"] and not b.entered.is_set()
    assert seen_b[0] == Queue(ahead=1, seconds_ahead=8.0, waited_s=0.0)
    c.release()
    a.release()
    assert b.entered.wait(WAIT_S)
    assert log == ["a", "c", "b"] and budget.peak <= budget.limit
    b.release()
    assert budget.reserved == 0


def test_a_heavy_request_is_passed_at_most_max_overtakes_times_then_starts_next():
    budget = MemoryBudget(2 * GB, clock=FakeClock(), max_overtakes=2)
    log: list[str] = []
    seen_s3: list[Queue] = []
    a = runner(budget, "a", GB, 8.0, log)
    assert a.entered.wait(WAIT_S)
    heavy = runner(budget, "heavy", 3 * GB // 2, 6.0, log)  # waits for a
    wait_until(lambda: waiting(budget, 1), "heavy to wait")
    for name in ("s1", "s2"):  # one after another, each goes past heavy (and delays it:
        s = runner(budget, name, 3 * GB // 4, 0.5, log)  # 1.5 + 0.75 GiB > 2 GiB)
        assert s.entered.wait(WAIT_S)
        s.release()
    s3 = runner(budget, "s3", 3 * GB // 4, 0.5, log, seen_s3)  # fits; heavy was delayed twice
    wait_until(lambda: seen_s3, "s3 to be told")
    assert not s3.entered.is_set() and log == ["a", "s1", "s2"]
    assert seen_s3[0].ahead == 2 and seen_s3[0].seconds_ahead == 14.0  # a runs, heavy waits
    a.release()
    assert heavy.entered.wait(WAIT_S)
    heavy.release()  # s3 does not fit beside heavy: it starts after it
    assert s3.entered.wait(WAIT_S)
    assert log == ["a", "s1", "s2", "heavy", "s3"]
    assert budget.peak <= budget.limit
    s3.release()
    assert budget.reserved == 0


def test_requests_that_fit_start_in_the_order_they_came():
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    log: list[str] = []
    a = runner(budget, "a", 2 * GB, 1.0, log)
    assert a.entered.wait(WAIT_S)
    runners = []
    for n, name in enumerate("bcd"):
        runners.append(runner(budget, name, GB // 2, 1.0, log))
        wait_until(lambda n=n: waiting(budget, n + 1), f"{name} to wait")
    a.release()
    for r in runners:
        assert r.entered.wait(WAIT_S)
    assert log == ["a", "b", "c", "d"]
    for r in runners:
        r.release()


def test_small_requests_that_fit_beside_a_barrier_still_go_past_it():
    """A class's default pages beside a run at the heaviest settings: the heavy waiter was
    delayed its `max_overtakes` times, yet the small ones that fit beside it (it, they and
    the runs started while it waited all fit at once) start at once, and it still starts as
    soon as the run it waited for ends."""
    budget = MemoryBudget(4 * GB, clock=FakeClock(), max_overtakes=1)
    log: list[str] = []
    a = runner(budget, "a", 2 * GB, 8.0, log)
    assert a.entered.wait(WAIT_S)
    heavy = runner(budget, "heavy", 3 * GB, 6.0, log)  # waits for a
    wait_until(lambda: waiting(budget, 1), "heavy to wait")
    mid = runner(budget, "mid", 3 * GB // 2, 1.0, log)  # fits now; 3 + 1.5 > 4: delays heavy
    assert mid.entered.wait(WAIT_S)
    assert budget.line.waiting[0].overtaken == 1  # heavy is a barrier now
    smalls = [runner(budget, f"s{i}", GB // 2, 0.5, log) for i in range(3)]
    wait_until(lambda: waiting(budget, 4), "the small ones to wait")  # 3 + 1.5 + 0.5 > 4
    mid.release()  # now 3 + 0.5 + 0.5 fit in 4: two small ones start beside heavy, freely
    assert smalls[0].entered.wait(WAIT_S) and smalls[1].entered.wait(WAIT_S)
    wait_until(lambda: waiting(budget, 2), "the third small one to stay")  # it would delay heavy
    assert log == ["a", "mid", "s0", "s1"]
    assert budget.line.waiting[0].overtaken == 1  # they did not delay it
    a.release()  # heavy starts beside the two small ones
    assert heavy.entered.wait(WAIT_S)
    smalls[0].release()
    assert smalls[2].entered.wait(WAIT_S)
    assert log == ["a", "mid", "s0", "s1", "heavy", "s2"] and budget.peak <= budget.limit
    for r in (smalls[1], smalls[2], heavy):
        r.release()
    assert budget.reserved == 0


def line(*needs: int, overtaken: tuple[int, ...] = ()) -> list[Request]:
    return [Request(i, need, 1.0, overtaken[i] if i < len(overtaken) else 0)
            for i, need in enumerate(needs)]


def test_admissible_walks_the_line_in_order_taking_from_what_is_free():
    waiting_line = line(3, 1, 2, 1)  # with 3 free: the first takes all of it
    assert [r.ticket for r in admissible(waiting_line, 3, 8, 8)] == [0]
    assert [r.ticket for r in admissible(waiting_line, 2, 8, 8)] == [1, 3]  # 0 and 2 passed
    assert [r.ticket for r in admissible(line(0, 5), 0, 8, 8)] == [0]  # 0 bytes: at once


def test_admissible_stops_at_a_barrier_what_would_delay_it():
    waiting_line = line(5, 1, 1, overtaken=(2,))  # room 6: 5 + 1 fit together, 5 + 1 + 1 not
    assert [r.ticket for r in admissible(waiting_line, 2, 6, 2)] == [1]  # beside it: free
    assert admissible(waiting_line, 2, 5, 2) == []  # room 5: each would delay it: barrier
    assert [r.ticket for r in admissible(waiting_line, 2, 5, 3)] == [1, 2]  # not a barrier yet
    assert [r.ticket for r in admissible(waiting_line, 5, 5, 2)] == [0]  # it fits: it goes
    assert shortfall(waiting_line, waiting_line[2], 1, 6, 2) is None  # 1 + 1 + 5 > 6
    assert shortfall(waiting_line, waiting_line[2], 1, 5, 3) == 1  # after 1 takes the free byte
    assert shortfall(waiting_line, waiting_line[0], 2, 5, 2) == 3


def test_a_free_pass_counts_what_started_beside_the_waiter_still_running():
    waiter, small = Request(0, 5, 1.0), Request(1, 1, 1.0, running=True)
    waiter.beside.append(small)
    assert not passes_freely(waiter, 1, 6)  # 5 + 1 running + 1 > 6
    small.running = False  # it ended: its bytes no longer stand beside the waiter
    assert passes_freely(waiter, 1, 6)


def test_many_requests_at_random_never_exceed_the_budget_and_all_finish():
    import random

    rng = random.Random(39)
    budget = MemoryBudget(8 * GB, clock=FakeClock(), max_overtakes=3)
    log: list[str] = []
    runners = [runner(budget, str(i), rng.choice((GB // 4, GB // 2, 6 * GB)), 1.0, log)
               for i in range(24)]
    for _ in runners:  # hold each briefly, in the order they were admitted
        wait_until(lambda: any(x.entered.is_set() and not x.released.is_set() for x in runners),
                   "a run to be admitted")
        next(x for x in runners if x.entered.is_set() and not x.released.is_set()).release()
    assert sorted(log, key=int) == [str(i) for i in range(24)]
    assert budget.peak <= budget.limit and budget.reserved == 0


def test_the_waited_time_comes_from_the_clock():
    clock = FakeClock()
    budget = MemoryBudget(GB, clock=clock)
    log: list[str] = []
    seen: list[Queue] = []
    a = runner(budget, "a", GB, 3.0, log)
    assert a.entered.wait(WAIT_S)
    b = runner(budget, "b", GB, 3.0, log, seen)
    wait_until(lambda: seen, "b to be told")
    clock.now += 7.5
    wait_until(lambda: seen[-1].waited_s == 7.5, "b's notice to say 7.5 s")
    a.release()
    assert b.entered.wait(WAIT_S)
    b.release()


def test_a_request_that_could_never_fit_is_refused_at_once():
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    with pytest.raises(TooHeavyError) as err:
        with budget.reserve(3 * GB, 20.0):
            raise AssertionError("admitted")
    assert err.value.need == 3 * GB and err.value.limit == 2 * GB
    assert "3.00 GiB of a 2.00 GiB budget" in str(err.value)
    assert budget.reserved == 0 and budget.queue() == (0, 0)


def test_a_waiter_that_gives_up_leaves_the_queue_and_lets_the_next_in():
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    log: list[str] = []
    a = runner(budget, "a", 2 * GB, 1.0, log)
    assert a.entered.wait(WAIT_S)

    class Stop(BaseException):  # as Streamlit stops a script run for a rerun
        pass

    def give_up(_: Queue) -> None:
        raise Stop

    with pytest.raises(Stop):
        with budget.reserve(GB, 1.0, on_wait=give_up):
            raise AssertionError("admitted")
    assert budget.queue() == (1, 0)
    a.release()
    with budget.reserve(2 * GB):  # the whole budget is free again
        assert budget.reserved == 2 * GB


def test_an_error_inside_the_block_releases_the_reservation():
    budget = MemoryBudget(GB, clock=FakeClock())
    with pytest.raises(ValueError):
        with budget.reserve(GB):
            raise ValueError("the page failed")
    assert budget.reserved == 0


def test_what_is_held_outside_reservations_counts_and_caches_are_asked_to_make_room():
    held = {"cached": GB, "pinned": GB // 4}  # bytes the caches keep; the pinned stay
    asked: list[int] = []

    def make_room(n: int) -> None:
        asked.append(n)
        held.pop("cached", None)  # the cache drops its entry and no page holds it

    budget = MemoryBudget(2 * GB, in_use=lambda: sum(held.values()), make_room=make_room,
                          floor=lambda: held["pinned"], clock=FakeClock())
    with budget.reserve(GB // 2):  # fits beside what is held: nothing dropped
        assert not asked
    with budget.reserve(GB):  # 1.25 GiB held + 1 GiB > 2 GiB: the cache is asked first
        assert asked == [GB // 4] and budget.reserved == GB
    with pytest.raises(TooHeavyError) as err:  # more than the budget minus what never leaves
        with budget.reserve(2 * GB - GB // 8):
            raise AssertionError("admitted")
    assert err.value.limit == 2 * GB - GB // 4


def test_what_a_run_now_holds_leaves_its_reservation_and_is_counted_once():
    """A run reserves its trace, computes it and holds it: from then on the trace is in
    `in_use`, and settling takes it out of the reservation, so another run fits beside it.
    Counted twice (reserved and held), the other run waited for the whole first one."""
    held = {"a": 0}
    budget = MemoryBudget(3 * GB, in_use=lambda: sum(held.values()), clock=FakeClock())
    log: list[str] = []
    computed, settle = threading.Event(), threading.Event()
    done = threading.Event()

    def first() -> None:
        with budget.reserve(2 * GB):
            held["a"] = 3 * GB // 2  # the trace it computed, now held
            computed.set()
            assert settle.wait(WAIT_S)
            budget.settle(3 * GB // 2)
            budget.settle(GB)  # more than is left: only the rest (0.5 GiB) leaves
            log.append("first settled")
            assert done.wait(WAIT_S)
        held["a"] = 0  # the page ended and dropped it

    a = threading.Thread(target=first, daemon=True)
    a.start()
    assert computed.wait(WAIT_S)
    b = runner(budget, "second", 4 * GB // 5, 1.0, log)
    wait_until(lambda: waiting(budget, 1), "the second run to wait")
    assert not b.entered.wait(0.2)  # 2 reserved + 1.5 held + 0.8 > 3: it waits
    settle.set()
    assert b.entered.wait(WAIT_S)  # 0 reserved + 1.5 held + 0.8 ≤ 3: it starts
    assert log == ["first settled", "second"]
    assert budget.reserved == 4 * GB // 5
    done.set()
    a.join(WAIT_S)
    b.release()
    assert budget.reserved == 0
    budget.settle(GB)  # a thread outside any reservation settles nothing
    assert budget.reserved == 0


def test_freed_memory_goes_back_to_the_system_on_this_machine():
    from lens.admission import return_freed_memory

    assert return_freed_memory()  # glibc's mallopt took the fixed threshold
