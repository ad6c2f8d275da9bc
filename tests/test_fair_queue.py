"""lens.fair_queue, with a toy rule (at most `slots` at once, in the order they came): tickets
in arrival order, the rule checked again when woken or polled, each waiter told its place, what
a grant passed, and a waiter whose thread is stopped leaving the line for the next."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from lens.fair_queue import FairQueue, Queue
from tests.support.held import WAIT_S, Held, wait_until


@dataclass(eq=False)
class Job:
    ticket: int
    seconds: float
    running: bool = False


class Slots:
    """A toy owner: at most `slots` jobs at once, the first in line goes first."""

    def __init__(self, slots: int, clock=None) -> None:
        self.slots = slots
        self.line: FairQueue[Job] = FairQueue(clock) if clock else FairQueue()
        self.passed: list[tuple[int, list[int]]] = []  # (ticket granted, tickets it passed)
        self.left: list[int] = []

    def may_go(self, job: Job) -> bool:
        return len(self.line.running) < self.slots and self.line.waiting[0] is job

    def granted(self, job: Job, passed: Sequence[Job]) -> None:
        self.passed.append((job.ticket, [p.ticket for p in passed]))

    def turn(self, seconds: float = 1.0, *, may_go=None, on_wait=None, poll_s=None):
        return self.line.turn(lambda ticket: Job(ticket, seconds), may_go or self.may_go,
                              on_grant=self.granted, on_leave=lambda j: self.left.append(j.ticket),
                              on_wait=on_wait, poll_s=poll_s)


def job(owner: Slots, name: str, log: list[str], seconds: float = 1.0, **kw) -> Held:
    return Held(lambda: owner.turn(seconds, **kw), lambda: log.append(name))


def test_waiters_go_in_the_order_they_came_and_hold_their_slot_until_the_block_ends():
    owner = Slots(1)
    log: list[str] = []
    first = job(owner, "a", log)
    assert first.entered.wait(WAIT_S)
    behind = []
    for n, name in enumerate("bcd"):
        behind.append(job(owner, name, log))
        wait_until(lambda n=n: owner.line.queue() == (1, n + 1), f"{name} to wait")
    assert [j.ticket for j in owner.line.waiting] == [1, 2, 3]  # tickets: the order they came
    first.release()
    for h in behind:
        assert h.entered.wait(WAIT_S)
        assert owner.line.queue()[0] == 1  # one slot: the next waits for this one's end
        h.release()
    assert log == ["a", "b", "c", "d"] and owner.left == [0, 1, 2, 3]
    assert owner.line.queue() == (0, 0)


def test_a_grant_is_told_the_waiters_it_went_past():
    """The rule may let a later waiter go first (the budget's small run beside a heavy one)."""
    owner = Slots(2)
    log: list[str] = []
    heavy_may_go = threading.Event()

    def rule(j: Job) -> bool:
        if j.ticket == 1:
            return heavy_may_go.is_set()
        return len(owner.line.running) < owner.slots

    a = job(owner, "a", log, may_go=rule)
    assert a.entered.wait(WAIT_S)
    heavy = job(owner, "heavy", log, may_go=rule)
    wait_until(lambda: owner.line.queue() == (1, 1), "heavy to wait")
    small = job(owner, "small", log, may_go=rule)
    assert small.entered.wait(WAIT_S)
    assert owner.passed == [(0, []), (2, [1])]
    heavy_may_go.set()
    owner.line.notify()  # the owner's state changed: the waiter checks its rule again
    a.release()
    assert heavy.entered.wait(WAIT_S)
    small.release()
    heavy.release()
    assert log == ["a", "small", "heavy"] and owner.passed[-1] == (1, [])


def test_a_waiter_checks_its_rule_every_poll_s_without_being_woken():
    owner = Slots(1)
    state = {"open": False}
    held = Held(lambda: owner.turn(may_go=lambda j: state["open"], poll_s=0.01))
    wait_until(lambda: owner.line.queue() == (0, 1), "the waiter to wait")
    state["open"] = True  # changed outside the lock, nobody notified
    assert held.entered.wait(WAIT_S)
    held.release()


class FakeClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_a_waiter_is_told_its_place_the_seconds_ahead_and_how_long_it_waited():
    clock = FakeClock()
    owner = Slots(1, clock)
    log: list[str] = []
    running = job(owner, "a", log, seconds=8.0)
    assert running.entered.wait(WAIT_S)
    second = job(owner, "b", log, seconds=3.0)
    wait_until(lambda: owner.line.queue() == (1, 1), "b to wait")
    seen: list[Queue] = []
    third = job(owner, "c", log, seconds=1.0, on_wait=seen.append, poll_s=0.01)
    wait_until(lambda: seen, "c to be told")
    assert seen[0] == Queue(ahead=2, seconds_ahead=11.0, waited_s=0.0)  # a runs, b waits
    clock.now += 4.5
    wait_until(lambda: seen[-1].waited_s == 4.5, "c's place to say 4.5 s")
    running.release()
    assert second.entered.wait(WAIT_S)
    wait_until(lambda: seen[-1].ahead == 1 and seen[-1].seconds_ahead == 3.0, "c to move up")
    second.release()
    assert third.entered.wait(WAIT_S)
    third.release()


def test_a_waiter_whose_thread_is_stopped_leaves_the_line_and_the_next_goes():
    owner = Slots(1)
    log: list[str] = []
    a = job(owner, "a", log)
    assert a.entered.wait(WAIT_S)

    class Stop(BaseException):  # as Streamlit stops a script run for a rerun
        pass

    def stopped(_: Queue) -> None:
        wait_until(lambda: owner.line.queue() == (1, 2), "c to queue behind")
        raise Stop

    outcome: list[BaseException] = []

    def interrupted() -> None:
        try:
            with owner.turn(on_wait=stopped):
                log.append("b")
        except Stop as err:
            outcome.append(err)

    b = threading.Thread(target=interrupted, daemon=True)
    b.start()
    wait_until(lambda: owner.line.queue() == (1, 1), "b to wait")
    c = job(owner, "c", log)
    b.join(WAIT_S)
    assert outcome and owner.line.queue() == (1, 1)  # b left the line; c waits for a
    a.release()
    assert c.entered.wait(WAIT_S)  # c was first once b left: it goes as a ends
    c.release()
    assert log == ["a", "c"] and owner.left == [0, 2]


def test_an_error_inside_the_block_still_ends_the_turn():
    owner = Slots(1)
    with pytest.raises(ValueError):
        with owner.turn():
            raise ValueError("the work failed")
    assert owner.line.queue() == (0, 0) and owner.left == [0]
    with owner.turn() as j:  # the slot is free again
        assert j.ticket == 1 and j.running
    assert not j.running
