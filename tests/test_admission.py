"""The admission rule (lens/admission.py), with fake costs and a fake clock: under the budget a
request runs at once, over it waits its turn in the order it came, a request that could never
fit is refused at once."""

from __future__ import annotations

import threading

import pytest

from lens.admission import MemoryBudget, Queue, TooHeavyError

GB = 2**30
WAIT_S = 10  # bound on every wait of a test thread (a failure, never a hang)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def waiting(budget: MemoryBudget, n: int) -> bool:
    """Whether `n` requests wait now."""
    return budget.queue()[1] == n


def until(condition, what: str) -> None:
    for _ in range(WAIT_S * 100):
        if condition():
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"timed out waiting for {what}")


class Runner:
    """A request in its own thread: reserve, then hold until released."""

    def __init__(self, budget: MemoryBudget, name: str, need: int, seconds: float,
                 log: list[str], seen: list[Queue] | None = None) -> None:
        self.go = threading.Event()
        self.admitted = threading.Event()

        def run() -> None:
            def told(q: Queue) -> None:
                if seen is not None:
                    seen.append(q)

            with budget.reserve(need, seconds, on_wait=told, poll_s=0.01):
                log.append(name)
                self.admitted.set()
                assert self.go.wait(WAIT_S)

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()

    def release(self) -> None:
        self.go.set()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive()


def test_under_the_budget_requests_run_at_once_together():
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    log: list[str] = []
    a = Runner(budget, "a", GB, 5.0, log)
    b = Runner(budget, "b", GB // 2, 1.0, log)
    assert a.admitted.wait(WAIT_S) and b.admitted.wait(WAIT_S)
    assert budget.reserved == GB + GB // 2 and budget.queue() == (2, 0)
    a.release()
    b.release()
    assert budget.reserved == 0 and budget.peak == GB + GB // 2


def test_over_the_budget_requests_wait_in_the_order_they_came():
    budget = MemoryBudget(2 * GB, clock=FakeClock())
    log: list[str] = []
    seen_b: list[Queue] = []
    seen_c: list[Queue] = []
    a = Runner(budget, "a", 3 * GB // 2, 8.0, log)
    assert a.admitted.wait(WAIT_S)
    b = Runner(budget, "b", GB, 4.0, log, seen_b)  # does not fit beside a
    until(lambda: waiting(budget, 1), "b to wait")
    c = Runner(budget, "c", GB // 4, 1.0, log, seen_c)  # would fit, but b came first
    until(lambda: waiting(budget, 2), "c to wait")
    until(lambda: seen_c, "c to be told")
    assert not b.admitted.is_set() and not c.admitted.is_set()
    assert seen_b[0] == Queue(ahead=1, seconds_ahead=8.0, waited_s=0.0)
    assert seen_c[0].ahead == 2 and seen_c[0].seconds_ahead == 12.0  # a runs, b waits
    a.release()
    assert b.admitted.wait(WAIT_S) and c.admitted.wait(WAIT_S)
    assert log == ["a", "b", "c"]
    assert budget.peak <= budget.limit
    b.release()
    c.release()
    assert budget.reserved == 0


def test_the_waited_time_comes_from_the_clock():
    clock = FakeClock()
    budget = MemoryBudget(GB, clock=clock)
    log: list[str] = []
    seen: list[Queue] = []
    a = Runner(budget, "a", GB, 3.0, log)
    assert a.admitted.wait(WAIT_S)
    b = Runner(budget, "b", GB, 3.0, log, seen)
    until(lambda: seen, "b to be told")
    clock.now += 7.5
    until(lambda: seen[-1].waited_s == 7.5, "b's notice to say 7.5 s")
    a.release()
    assert b.admitted.wait(WAIT_S)
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
    a = Runner(budget, "a", 2 * GB, 1.0, log)
    assert a.admitted.wait(WAIT_S)

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


def test_freed_memory_goes_back_to_the_system_on_this_machine():
    from lens.admission import return_freed_memory

    assert return_freed_memory()  # glibc's mallopt took the fixed threshold
