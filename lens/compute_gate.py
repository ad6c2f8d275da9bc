"""The compute gate: a bound on the computations in flight across the caches that share it
(`lens.cache.LRUCache(gate=…)`: the server's weights and traces), so a burst of different
settings cannot multiply memory or split the cores many ways.

At most `limit` computations run at once, plus `quick` short ones beside them (predicted to
take ≤ `quick_s` s: `encoder_core.cost`), so a learner's small trace never waits seconds for
one at the heaviest settings to end, while long ones keep the order they came and are never
starved by short ones. The waiting is `lens.fair_queue`'s line; the gate adds only its rule.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from .fair_queue import FairQueue


@dataclass(eq=False)
class _Computation:
    """A computation waiting for a slot, or holding one (a `FairQueue` waiter)."""

    ticket: int
    seconds: float  # predicted (unknown: inf)
    short: bool  # predicted to take ≤ quick_s: it may take a quick slot
    running: bool = False
    slot: str | None = None  # "quick" or "limit" once it may go


class ComputeGate:
    """At most `limit` computations at once, plus `quick` predicted to take ≤ `quick_s` s each:
    a short one does not wait for a long one to end (a learner's small trace behind one at the
    heaviest settings). They wait in one line (`lens.fair_queue`); the rule: a short one takes
    a quick slot when free, else a `limit` slot if no long one waits; long ones take the
    `limit` slots in the order they came (never starved by short ones). Re-entrant per thread
    (a thread that holds a slot does not queue again); `peak`: the most that ever ran at once."""

    def __init__(self, limit: int, quick: int = 0, quick_s: float = 0.0) -> None:
        self.limit = limit
        self.quick = quick
        self.quick_s = quick_s
        self.line: FairQueue[_Computation] = FairQueue()
        self._held = threading.local()
        self.peak = 0

    @property
    def running(self) -> int:
        """Computations running, in either kind of slot."""
        return self.line.queue()[0]

    @property
    def running_quick(self) -> int:
        """Computations running in quick slots."""
        with self.line.cond:
            return sum(c.slot == "quick" for c in self.line.running.values())

    def queue(self) -> tuple[int, int]:
        """(computations running, computations waiting) now."""
        return self.line.queue()

    def _may_go(self, me: _Computation) -> bool:
        """The gate's rule: whether `me` may take a slot now, and which (`me.slot`)."""
        quick = self.running_quick
        limit_free = self.running - quick < self.limit
        first_long = next((c for c in self.line.waiting if not c.short), None)
        if me.short and quick < self.quick:
            me.slot = "quick"
        elif limit_free and first_long is (None if me.short else me):
            me.slot = "limit"
        else:
            me.slot = None
        return me.slot is not None

    def _granted(self, me: _Computation, passed: Sequence[_Computation]) -> None:
        self.peak = max(self.peak, self.running)

    @contextmanager
    def slot(self, seconds: float = math.inf) -> Iterator[None]:
        """Hold a slot for a computation predicted to take `seconds` (unknown: long)."""
        depth = getattr(self._held, "depth", 0)
        if depth > 0:  # this thread holds a slot already
            self._held.depth = depth + 1
            try:
                yield
            finally:
                self._held.depth = depth
            return
        short = seconds <= self.quick_s
        with self.line.turn(lambda ticket: _Computation(ticket, seconds, short), self._may_go,
                            on_grant=self._granted):
            self._held.depth = 1
            try:
                yield
            finally:
                self._held.depth = 0
