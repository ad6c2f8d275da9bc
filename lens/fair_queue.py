"""A fair queue: waiters take tickets in the order they come, wait in that line under one
condition variable until their owner's rule lets them go, and are told their place meanwhile.

Two parts of the server wait this way, each with its own rule of who may go now: the compute
gate (`lens.compute_gate.ComputeGate`: a slot for a computation; a short one never waits for a long
one, long ones go in the order they came) and the memory budget (`lens.admission.MemoryBudget`:
bytes for a page run; one that fits beside a waiting heavy run goes past it). This module holds
what they share, so the two lines cannot drift apart:
- **the line**: the waiters in the order they came, each with its ticket (drawn as it joins,
  under the lock, so ticket order is line order), and the ones running (granted, not yet done);
- **the wait**: `turn` puts a waiter at the back of the line and waits on the condition until
  the rule `may_go(waiter)` holds, checked again whenever something changes (every grant and
  every end notifies all waiters; an owner whose state changes otherwise calls `notify`) or
  every `poll_s` seconds. Then the waiter leaves the line for the running ones, `on_grant` is
  told which waiters it went past (those ahead of it in the line), and the others are woken:
  the next one may go too. When the block ends, it leaves the running ones (`on_leave`) and
  the waiters are woken again;
- **a waiter that stops waiting** (Streamlit's rerun raises inside the waiting thread, while it
  draws its notice) leaves the line and wakes the others: one behind it may go now;
- **its place**: `Queue`, how many are ahead of it (running, or ahead of it in the line), the
  seconds they are predicted to take and how long it has waited so far; `on_wait` is told it
  when the wait begins and every `poll_s` seconds after, outside the lock (drawing a notice may
  be slow; the rule is checked again before it sleeps).

The rule and the hooks are called with the lock held: they may read the line (`waiting`,
`running`) and the owner's own state kept under the same lock (`cond`), never wait on it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar


@dataclass(frozen=True)
class Queue:
    """What a waiter is told: how many are ahead of it (running or waiting), the seconds they
    are predicted to take, and how long it has waited so far."""

    ahead: int
    seconds_ahead: float
    waited_s: float


class Waiter(Protocol):
    """What the queue reads and writes of a waiter (the owner's dataclass adds its own)."""

    ticket: int  # the order it came
    seconds: float  # its work's predicted seconds (for the places of those behind it)
    running: bool  # granted and not yet done


W = TypeVar("W", bound=Waiter)


class FairQueue(Generic[W]):
    """The waiters in the order they came and the ones running, under `cond`. `clock` gives
    the waited time (a fake one in tests)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.cond = threading.Condition()
        self.waiting: list[W] = []  # the line, in the order the waiters came
        self.running: dict[int, W] = {}  # by ticket, in the order they were granted
        self._tickets = itertools.count()
        self._clock = clock

    def queue(self) -> tuple[int, int]:
        """(waiters running, waiters waiting) now."""
        with self.cond:
            return len(self.running), len(self.waiting)

    def notify(self) -> None:
        """Wake every waiter to check its rule again (the owner's state changed)."""
        with self.cond:
            self.cond.notify_all()

    @contextmanager
    def turn(self, make: Callable[[int], W], may_go: Callable[[W], bool], *,
             on_grant: Callable[[W, Sequence[W]], None] = lambda w, passed: None,
             on_leave: Callable[[W], None] = lambda w: None,
             on_wait: Callable[[Queue], None] | None = None,
             poll_s: float | None = None) -> Iterator[W]:
        """Join the line as `make(ticket)`, wait until `may_go` lets it go, run the block.

        Args:
            make: the waiter of the next ticket (the owner's record of the request).
            may_go: the owner's rule: whether this waiter may go now (lock held).
            on_grant: told the waiter, now running, and the waiters it went past.
            on_leave: told the waiter as the block ends, before the others are woken.
            on_wait: told its place when the wait begins and every `poll_s` s after,
                outside the lock; whatever it raises ends the wait (the waiter leaves).
            poll_s: how often a waiter checks its rule unprompted (None: only when woken).
        """
        with self.cond:
            waiter = make(next(self._tickets))
            self.waiting.append(waiter)
            start = self._clock()
            try:
                while not may_go(waiter):
                    if on_wait is not None:
                        place = self.place(waiter, self._clock() - start)
                        self.cond.release()
                        try:
                            on_wait(place)
                        finally:
                            self.cond.acquire()
                        if may_go(waiter):
                            break
                    self.cond.wait(poll_s)
            except BaseException:  # an interrupted thread too: the one behind may go now
                self.waiting.remove(waiter)
                self.cond.notify_all()
                raise
            at = self.waiting.index(waiter)
            passed = self.waiting[:at]
            del self.waiting[at]
            waiter.running = True
            self.running[waiter.ticket] = waiter
            on_grant(waiter, passed)
            self.cond.notify_all()  # the next in line may go too
        try:
            yield waiter
        finally:
            with self.cond:
                del self.running[waiter.ticket]
                waiter.running = False
                on_leave(waiter)
                self.cond.notify_all()

    def place(self, waiter: W, waited_s: float) -> Queue:
        """The place of `waiter`, in the line, after `waited_s` seconds (lock held)."""
        with self.cond:
            ahead = [*self.running.values(), *self.waiting[:self.waiting.index(waiter)]]
            return Queue(len(ahead), sum(w.seconds for w in ahead), waited_s)
