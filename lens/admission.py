"""Admission by predicted cost: a server-wide memory budget that a page run reserves before it
computes anything new, so heavy settings wait their turn instead of sinking the server.

A page run asks for the bytes its new work will take (the traces, weights and derived
quantities not yet held: `lens.compute.run_cost`, from the core's formula `encoder_core.cost`)
and holds them until it ends. Reservations are granted strictly in the order they were asked
for (first come, first served: a small request does not overtake a large one that waits, so
a heavy session is never starved); a request larger than the whole budget is refused at once
(`TooHeavyError`), since it could never fit. A run holds one reservation for all of its work, taken
before it computes anything, so no run ever waits while holding memory another run waits for
(no deadlock).

The budget is stated per server process (`MEMORY_BUDGET_MB`: 2816 MiB = 2.75 GiB by default,
so that the heaviest settings the controls allow — 1,024 tokens, d_model 1024, 12 layers, The
stack: ≈ 2.5 GB — fit once beside the class's default; configurable with
`ENCODER_LENS_MEMORY_BUDGET_MB`). It covers the traces and the random weights, cached or in
use, and what running pages reserved; the pictures, payloads and derived quantities have their
own small bounds on top (`lens.compute`). With `scripts/serve --replicas N` the machine's bound
is N × one process's (docs/deployment.md).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024  # bytes: larger blocks are mapped, and unmapped when freed

MEMORY_BUDGET_MB = int(os.environ.get("ENCODER_LENS_MEMORY_BUDGET_MB", "2816"))  # 2.75 GiB


class TooHeavyError(Exception):
    """A request that could never fit the budget, however long it waited."""

    def __init__(self, need: int, limit: int) -> None:
        super().__init__(f"needs {need / 2**30:.2f} GiB of a {limit / 2**30:.2f} GiB budget")
        self.need = need
        self.limit = limit


@dataclass(frozen=True)
class Queue:
    """What a waiting request is told: how many requests are ahead of it (running or waiting),
    the seconds they are predicted to take, and how long it has waited so far."""

    ahead: int
    seconds_ahead: float
    waited_s: float


@dataclass
class _Request:
    ticket: int
    need: int
    seconds: float


class MemoryBudget:
    """At most `limit` bytes in use at once; requests are granted in the order they came.

    In use: what is reserved plus `in_use()`, the bytes held outside any reservation (the
    traces and weights that caches or running pages still hold, `lens.cache.Held`).
    `reserve(need, seconds)` is a context manager: it returns at once when the request is first
    in line and fits, else it first asks `make_room(bytes)` to drop what caches keep (which
    frees memory once no page holds it any more) and then waits, calling `on_wait(Queue)` when
    it starts waiting and every `poll_s` seconds after (to refresh a notice). A request over
    `limit − floor()` (`floor`: what is never dropped, e.g. the class's pinned default trace)
    could never fit: TooHeavyError at once. `clock` gives the waited time (a fake one in tests).
    """

    def __init__(self, limit: int, *, in_use: Callable[[], int] = lambda: 0,
                 make_room: Callable[[int], None] | None = None,
                 floor: Callable[[], int] = lambda: 0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = limit
        self._in_use = in_use
        self._make_room = make_room
        self._floor = floor
        self._clock = clock
        self._cond = threading.Condition()
        self._tickets = itertools.count()
        self._waiting: deque[_Request] = deque()
        self._running: dict[int, _Request] = {}
        self.reserved = 0
        self.peak = 0  # the most ever reserved at once
        self.granted: list[int] = []  # tickets in the order they were granted (tests)

    def queue(self) -> tuple[int, int]:
        """(requests running, requests waiting) now."""
        with self._cond:
            return len(self._running), len(self._waiting)

    @contextmanager
    def reserve(self, need: int, seconds: float = 0.0, *,
                on_wait: Callable[[Queue], None] | None = None,
                poll_s: float = 0.5) -> Iterator[int]:
        """Hold `need` bytes for the block (0 bytes: nothing to wait for). Yields the ticket."""
        if need > self.limit - self._floor():
            raise TooHeavyError(need, self.limit - self._floor())
        with self._cond:
            request = _Request(next(self._tickets), max(0, int(need)), seconds)
            self._waiting.append(request)
            start = self._clock()
            try:
                while not self._fits(request):
                    if on_wait is not None:
                        # the notice is drawn outside the lock: drawing may be slow
                        info = self._queue_for(request, self._clock() - start)
                        self._cond.release()
                        try:
                            on_wait(info)
                        finally:
                            self._cond.acquire()
                        if self._fits(request):
                            break
                    self._cond.wait(poll_s)
            except BaseException:
                self._waiting.remove(request)
                self._cond.notify_all()  # the one behind may now be first and fit
                raise
            self._waiting.popleft()
            self._running[request.ticket] = request
            self.reserved += request.need
            self.peak = max(self.peak, self.reserved)
            self.granted.append(request.ticket)
            self._cond.notify_all()  # the next in line may fit too
        try:
            yield request.ticket
        finally:
            with self._cond:
                del self._running[request.ticket]
                self.reserved -= request.need
                self._cond.notify_all()

    def _fits(self, request: _Request) -> bool:
        if self._waiting[0] is not request:
            return False
        over = self.reserved + self._in_use() + request.need - self.limit
        if over > 0 and self._make_room is not None:
            self._make_room(over)
            over = self.reserved + self._in_use() + request.need - self.limit
        return over <= 0

    def _queue_for(self, request: _Request, waited_s: float) -> Queue:
        ahead = list(self._running.values())
        for r in self._waiting:
            if r is request:
                break
            ahead.append(r)
        return Queue(len(ahead), sum(r.seconds for r in ahead), waited_s)


def return_freed_memory() -> bool:
    """Make every freed array's memory go back to the system at once (glibc only; True when
    set). glibc maps a large block on its own and unmaps it when freed, but it raises that
    threshold (up to 32 MB) each time one is freed: after one trace, the [S, d] and
    [h, S, S] arrays of the next come from the heap of the thread that computes them, which
    keeps them when they are freed. With a page run per thread, the server's memory grew by
    about 0.5 GB per heavy session although the budget had freed it (benchmarks/load.py
    heavy4: 4.5 GB peak, 2.8 GB with the threshold fixed). Fixing it (as the environment
    variable MALLOC_MMAP_THRESHOLD_ would) also stops the raising."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):  # not glibc
        return False
