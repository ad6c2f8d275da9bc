"""Admission by predicted cost: a server-wide memory budget that a page run reserves before it
computes anything new, so heavy settings wait their turn instead of sinking the server.

A page run asks for the bytes its new work will take (the traces, weights and derived
quantities not yet held: `lens.traces.run_cost`, from the core's formula `encoder_core.cost`)
and holds them until it ends, less what it computed and now holds (`settle`: counted as held
from then on, not twice). A run holds one reservation for all of its work, taken before it
computes anything, so no run ever waits while holding memory another run waits for (no
deadlock). A request larger than the whole budget is refused at once (`TooHeavyError`), since
it could never fit.

Who goes first: overtaking that never delays a waiter more than a bounded number of times
(`verdicts`). The waiting requests form a line in the order they came. Walking it from the
front, each request that fits in what is still free starts, and takes its bytes out of the
free; one that does not fit keeps its place, and the ones behind it may go past it:
- freely, when the one going past fits *beside* it: it, the waiter and every run that started
  while the waiter waited fit in the budget at once (`passes_freely`). Such a run never
  delays the waiter, which starts as soon as the runs that were there before it end;
- otherwise counted: the run may make the waiter start later. After `max_overtakes` counted
  passes the waiter is a barrier: nobody who would delay it starts before it (those that fit
  beside it still do).
So
- a small run does not wait behind a heavy one that waits for memory: it goes past freely
  when it fits beside the heavy one (a class's default-sized pages beside one run at the
  heaviest settings), or counted, `max_overtakes` times;
- a heavy run is never starved: once passed `max_overtakes` times, only runs that fit beside
  it start; the runs in progress end, what caches keep is dropped (`make_room`) and it starts
  (it fits alone: it passed the `TooHeavyError` check);
- among requests that fit, the order they came is kept; a request of 0 bytes takes nothing
  from anyone and starts at once.
Plain first come first served (`max_overtakes` 0 and no free passes) made a learner whose own
page fits now wait for a heavier run queued before it to be admitted and to finish.

The budget is stated per server process (`MEMORY_BUDGET_MB`: 2816 MiB = 2.75 GiB by default,
so that the heaviest settings the controls allow — 1,024 tokens, d_model 1024, 12 layers, The
stack: ≈ 2.5 GB — fit once beside the class's default; configurable with
`ENCODER_LENS_MEMORY_BUDGET_MB`). It covers the traces and the random weights, cached or in
use, and what running pages reserved; the pictures, payloads and derived quantities have their
own small bounds on top (`lens.resources`). With `scripts/serve --replicas N` the machine's bound
is N × one process's (docs/deployment.md).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from .fair_queue import FairQueue, Queue

M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
# bytes: larger blocks are mapped, and unmapped when freed (the variable: for measuring)
MMAP_THRESHOLD = int(os.environ.get("ENCODER_LENS_MMAP_THRESHOLD_KB", "4096")) * 1024

MEMORY_BUDGET_MB = int(os.environ.get("ENCODER_LENS_MEMORY_BUDGET_MB", "2816"))  # 2.75 GiB
# runs that may start before a waiting one and delay it (those that fit beside it are not
# counted); the variable: for measuring (benchmarks/load.py heavy2class)
MAX_OVERTAKES = int(os.environ.get("ENCODER_LENS_MAX_OVERTAKES", "8"))


class TooHeavyError(Exception):
    """A request that could never fit the budget, however long it waited."""

    def __init__(self, need: int, limit: int) -> None:
        super().__init__(f"needs {need / 2**30:.2f} GiB of a {limit / 2**30:.2f} GiB budget")
        self.need = need
        self.limit = limit


@dataclass(eq=False)
class Request:
    """A page run's reservation, waiting or running (a `lens.fair_queue` waiter)."""

    ticket: int
    need: int  # bytes
    seconds: float  # predicted seconds of its work (for the notice)
    overtaken: int = 0  # requests granted while this one waited that delayed it
    beside: list[Request] = field(default_factory=list)  # granted while it waited
    running: bool = False
    settled: int = 0  # bytes of `need` now held (counted by `in_use`), no longer reserved

    def beside_bytes(self) -> int:
        """Bytes reserved by the requests granted while this one waited, still running."""
        return sum(r.need for r in self.beside if r.running)


def passes_freely(waiter: Request, need: int, room: int, extra: int = 0) -> bool:
    """Whether a request of `need` bytes may start before `waiter` without delaying it: it,
    `waiter` and every request granted while `waiter` waited (still running, plus `extra`
    bytes about to be) fit in `room` all at once, so `waiter` starts as soon as the runs that
    were there before it end, as it would have without this one."""
    return waiter.need + waiter.beside_bytes() + extra + need <= room


def verdicts(line: Sequence[Request], free: int, room: int,
             max_overtakes: int) -> Iterator[tuple[Request, str, int]]:
    """Walk the waiting line front to back: (request, verdict, bytes free at its turn), the
    verdict "start", "memory" (it does not fit in what is free) or "barrier" (it would delay a
    request ahead of it that was already delayed `max_overtakes` times).

    A request that fits starts, and takes its bytes out of `free`, unless a request ahead of
    it that does not start is a barrier for it: one that it would delay (`passes_freely` is
    False) and that has been delayed `max_overtakes` times already.

    Args:
        line: the waiting requests in the order they came.
        free: bytes free now (limit − reserved − held).
        room: what the requests can ever have at once (limit − what is never dropped).
        max_overtakes: how often one waiting request may be delayed by later ones.
    """
    ahead: list[tuple[Request, list[int]]] = []  # not starting, with bytes started behind it
    for r in line:
        if any(w.overtaken >= max_overtakes and not passes_freely(w, r.need, room, extra[0])
               for w, extra in ahead):
            yield r, "barrier", free
        elif r.need <= free:
            yield r, "start", free
            free -= r.need
            for _, extra in ahead:
                extra[0] += r.need
            continue
        else:
            yield r, "memory", free
        ahead.append((r, [0]))


def admissible(line: Sequence[Request], free: int, room: int,
               max_overtakes: int) -> list[Request]:
    """The waiting requests that may start now, in line order (`verdicts`: "start")."""
    return [r for r, verdict, _ in verdicts(line, free, room, max_overtakes)
            if verdict == "start"]


def shortfall(line: Sequence[Request], request: Request, free: int, room: int,
              max_overtakes: int) -> int | None:
    """The bytes `request` (in `line`) lacks to be admissible, walking the line as
    `admissible` does; None when a barrier ahead of it stops it (memory would not help)."""
    for r, verdict, free_then in verdicts(line, free, room, max_overtakes):
        if r is request:
            return None if verdict == "barrier" else r.need - free_then
    raise ValueError("the request is not in the line")


class MemoryBudget:
    """At most `limit` bytes in use at once; who starts when is `admissible`'s rule, the
    requests waiting in a `lens.fair_queue` line.

    In use: what is reserved plus `in_use()`, the bytes held outside any reservation (the
    traces and weights that caches or running pages still hold, `lens.cache.Held`).
    `reserve(need, seconds)` is a context manager: it returns at once when the request may
    start, else, if only memory stands in the way, it first asks `make_room(bytes)` to drop
    what caches keep (which frees memory once no page holds it any more) and then waits, calling
    `on_wait(Queue)` when it starts waiting and every `poll_s` seconds after (to refresh a
    notice). A request over `limit − floor()` (`floor`: what is never dropped, e.g. the class's
    pinned default trace) could never fit: TooHeavyError at once; `limit − floor()` is also the
    room that `passes_freely` fits a waiter and those going past it in. `clock` gives the waited
    time (a fake one in tests); `max_overtakes` bounds how often a waiter can be delayed.
    """

    def __init__(self, limit: int, *, in_use: Callable[[], int] = lambda: 0,
                 make_room: Callable[[int], None] | None = None,
                 floor: Callable[[], int] = lambda: 0,
                 clock: Callable[[], float] = time.monotonic,
                 max_overtakes: int = MAX_OVERTAKES) -> None:
        self.limit = limit
        self.max_overtakes = max_overtakes
        self._in_use = in_use
        self._make_room = make_room
        self._floor = floor
        self.line: FairQueue[Request] = FairQueue(clock)  # its lock guards what follows too
        self._mine = threading.local()  # the request the current thread's run holds
        self.reserved = 0
        self.peak = 0  # the most ever reserved at once
        self.granted: list[int] = []  # tickets in the order they were granted (tests)

    def queue(self) -> tuple[int, int]:
        """(requests running, requests waiting) now."""
        return self.line.queue()

    @contextmanager
    def reserve(self, need: int, seconds: float = 0.0, *,
                on_wait: Callable[[Queue], None] | None = None,
                poll_s: float = 0.5) -> Iterator[int]:
        """Hold `need` bytes for the block (0 bytes: nothing to wait for). Yields the ticket."""
        if need > self.limit - self._floor():
            raise TooHeavyError(need, self.limit - self._floor())
        with self.line.turn(lambda ticket: Request(ticket, max(0, int(need)), seconds),
                            self._may_start, on_grant=self._grant, on_leave=self._release,
                            on_wait=on_wait, poll_s=poll_s) as request:
            self._mine.request = request
            try:
                yield request.ticket
            finally:
                self._mine.request = None

    def settle(self, n_bytes: int) -> None:
        """`n_bytes` of what the current thread's run reserved are now held (a trace or weights
        it computed, counted by `in_use` from now on): they leave its reservation, so as not
        to be counted twice. Without this a heavy run's trace, reserved and then held, took
        twice its bytes until the page ended, and every run that came meanwhile waited for
        it (issue 39). The rest of the reservation (the computation's temporaries, what the
        page derives) stays until the run ends. Outside a reservation: nothing."""
        request = getattr(self._mine, "request", None)
        if request is None:
            return
        with self.line.cond:
            part = max(0, min(int(n_bytes), request.need - request.settled))
            request.settled += part
            self.reserved -= part
            self.line.cond.notify_all()  # what now fits may start

    def _free(self) -> int:
        return self.limit - self.reserved - self._in_use()

    def _room(self) -> int:
        return self.limit - self._floor()

    def _may_start(self, request: Request) -> bool:
        """The budget's rule: whether `request` is the first of the admissible ones (they start
        one by one, in line order); when only memory stands in its way (no barrier ahead of
        it), the caches are first asked to make room for what it lacks."""
        line = self.line.waiting
        starts = admissible(line, self._free(), self._room(), self.max_overtakes)
        if starts:
            if starts[0] is not request:
                self.line.cond.notify_all()  # wake the one whose turn it is (memory may have
                # been freed outside any reservation, which notifies nobody)
            return starts[0] is request
        lacking = shortfall(line, request, self._free(), self._room(), self.max_overtakes)
        if lacking is None or self._make_room is None:
            return False
        self._make_room(lacking)
        starts = admissible(line, self._free(), self._room(), self.max_overtakes)
        return bool(starts) and starts[0] is request

    def _grant(self, request: Request, passed: Sequence[Request]) -> None:
        """`request` started before the waiters in `passed`: count it against those it may
        delay, and beside each."""
        room = self._room()
        for r in passed:
            if not passes_freely(r, request.need, room):
                r.overtaken += 1  # it may now start later than it would have
            r.beside = [b for b in r.beside if b.running] + [request]
        self.reserved += request.need
        self.peak = max(self.peak, self.reserved)
        self.granted.append(request.ticket)

    def _release(self, request: Request) -> None:
        self.reserved -= request.need - request.settled


def return_freed_memory() -> bool:
    """Make every freed array's memory go back to the system at once (glibc only; True when
    set). glibc maps a large block on its own and unmaps it when freed, but it raises that
    threshold (up to 32 MB) each time one is freed: after one trace, the [S, d] and
    [h, S, S] arrays of the next come from the heap of the thread that computes them, which
    keeps them when they are freed. With a page run per thread, the server's memory grew by
    about 0.5 GB per heavy session although the budget had freed it (benchmarks/load.py
    heavy4: 4.5 GB peak, 2.8 GB with the threshold fixed). Fixing it (as the environment
    variable MALLOC_MMAP_THRESHOLD_ would) also stops the raising. Fixed at 4 MB, not 128 kB:
    at 128 kB every array of every trace was a fresh mapping, paid in page faults (encode at
    the defaults +5–7 % CPU); at 4 MB the heavy settings' [S, d] and [h, S, S]
    arrays are still mapped (heavy4: 2839 MB peak against 2828 MB at 128 kB)."""
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
