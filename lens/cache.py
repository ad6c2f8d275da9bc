"""A small bounded LRU cache, shared by every session of one server process, that computes each
key once.

Streamlit's own caches are bounded too, but their size cannot be read back; this one can, so a
test can prove that memory stays flat however many different images a long-running server sees.

Three things matter when a class arrives at once:
- **One computation per key.** The first thread that misses a key computes it; every other
  thread asking for that key meanwhile waits for that result (an in-flight entry with an
  Event) instead of computing it again. An exception is re-raised to every waiter and nothing
  is cached, so the next call tries again; if the computing thread is stopped instead (a
  BaseException such as Streamlit's rerun), one of the waiters computes the key.
- **A bound on computations in flight.** Caches may share a `ComputeGate`
  (`lens.compute_gate`): at most `limit` computations run at once across them, so a burst of
  different settings cannot multiply memory or split the cores many ways, plus `quick` short
  ones beside them, so a small one does not wait seconds for a long one to end. Only *leaf*
  computations (that ask no other gated cache) should be gated; a thread that holds the gate
  re-enters it without waiting, so a gated compute that calls another gated cache does not
  deadlock on itself.
- **Bounded by entries and by bytes, with pinned keys.** A pinned key (the class's shared
  default trace) is never evicted; the others go least recently used first while there are
  more than `max_entries` or more than `max_bytes` (as measured by `sizeof`). A value larger
  than `max_bytes` by itself is returned to its callers but never stored.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from .compute_gate import ComputeGate
from .digests import nbytes

V = TypeVar("V")


class Fresh(Generic[V]):
    """The last value computed for a key, reused for `ttl_s` seconds: a cheap answer to a
    question a page run asks several times (which checkpoints are there?) without asking a
    slower cache each time. A new key, `clear()` or age recomputes it."""

    def __init__(self, ttl_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._last: tuple[Hashable, float, V] | None = None

    def get(self, key: Hashable, compute: Callable[[], V]) -> V:
        now = self._clock()
        with self._lock:
            last = self._last
        if last is not None and last[0] == key and now - last[1] < self.ttl_s:
            return last[2]
        value = compute()
        with self._lock:
            self._last = (key, now, value)
        return value

    def clear(self) -> None:
        with self._lock:
            self._last = None


class Held:
    """The values still referenced anywhere, by key, with their sizes: weak references, so a
    value that every holder (a page run, a cache) has dropped leaves, and its bytes with it.
    A key asked for while its value is held gets that same object: a heavy trace too large
    for its cache is still computed once for the sessions that use it at the same time."""

    def __init__(self, sizeof: Callable[[object], int] = nbytes) -> None:
        self._sizeof = sizeof
        self._refs: dict[Hashable, weakref.ref] = {}
        self._sizes: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> object | None:
        """The value of `key` if something still holds it, else None."""
        with self._lock:
            ref = self._refs.get(key)
        return ref() if ref is not None else None

    def put(self, key: Hashable, value: object) -> None:
        """Follow `value` (a weakly referenceable object) under `key` until it is dropped."""
        size = self._sizeof(value)

        def gone(ref: weakref.ref, key: Hashable = key) -> None:
            with self._lock:
                if self._refs.get(key) is ref:
                    del self._refs[key]
                    del self._sizes[key]

        with self._lock:
            self._refs[key] = weakref.ref(value, gone)
            self._sizes[key] = size

    def bytes_of(self, key: Hashable) -> int:
        """Bytes of the value held under `key` (0: none)."""
        with self._lock:
            return self._sizes.get(key, 0)

    @property
    def total_bytes(self) -> int:
        """Bytes of the values held now."""
        with self._lock:
            return sum(self._sizes.values())

    def __len__(self) -> int:
        with self._lock:
            return len(self._refs)


class _InFlight:
    """A computation under way: its owner thread, and (once set) its value or exception."""

    def __init__(self) -> None:
        self.owner = threading.get_ident()
        self.done = threading.Event()
        self.value: object = None
        self.stored = False  # the value is set
        self.error: Exception | None = None


class LRUCache(Generic[V]):
    """At most `max_entries` values (and `max_bytes` of them by `sizeof`, when given); the
    least recently used unpinned one is dropped first. Thread-safe; each key is computed once
    at a time however many threads ask for it."""

    def __init__(self, max_entries: int, *, max_bytes: int | None = None,
                 sizeof: Callable[[object], int] = nbytes,
                 gate: ComputeGate | None = None) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._sizeof = sizeof
        self._gate = gate
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._sizes: dict[Hashable, int] = {}
        self._pinned: set[Hashable] = set()
        self._inflight: dict[Hashable, _InFlight] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0  # computations that finished and were stored
        self.waits = 0  # calls that waited for another thread's computation of their key

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    @property
    def total_bytes(self) -> int:
        """Bytes held, as `sizeof` measured each value when it was stored."""
        return sum(self._sizes.values())

    def get_or_compute(self, key: Hashable, compute: Callable[[], V],
                       seconds: float = math.inf) -> V:
        """The cached value for `key`; when missing, computed once (outside the cache's lock)
        by the first caller while any other caller of the same key waits for that result.
        `seconds`: the computation's predicted time, for the gate (unknown: long)."""
        while True:
            with self._lock:
                if key in self._items:
                    self._items.move_to_end(key)
                    self.hits += 1
                    return self._items[key]
                flight = self._inflight.get(key)
                if flight is None:
                    flight = self._inflight[key] = _InFlight()
                    break  # ours to compute
                if flight.owner == threading.get_ident():
                    raise RuntimeError(f"computing {key!r} asked for {key!r} again")
                self.waits += 1
            flight.done.wait()
            if flight.error is not None:
                raise flight.error
            if flight.stored:
                return flight.value  # type: ignore[return-value]
            # the computing thread was stopped (not an error of the computation): ask again
        try:
            if self._gate is None:
                value = compute()
            else:
                with self._gate.slot(seconds):
                    value = compute()
        except BaseException as err:
            with self._lock:
                del self._inflight[key]
            # an error of the computation is every waiter's; a stop of the computing thread
            # (a Streamlit rerun, an interrupt) is not: the waiters then try again themselves
            flight.error = err if isinstance(err, Exception) else None
            flight.done.set()
            raise
        size = self._sizeof(value) if self.max_bytes is not None else 0
        with self._lock:
            self.misses += 1
            # a value larger than the whole byte budget is handed over but not kept: it would
            # evict everything else and then sit outside every bound (`lens.admission`)
            if self.max_bytes is None or size <= self.max_bytes:
                self._items[key] = value
                self._sizes[key] = size
                self._items.move_to_end(key)
                self._evict(keep=key)
            del self._inflight[key]
        flight.value, flight.stored = value, True
        flight.done.set()
        return value

    def _evict(self, keep: Hashable) -> None:
        """Drop least recently used unpinned values (never `keep`) until within bounds."""
        def over() -> bool:
            return (len(self._items) > self.max_entries
                    or (self.max_bytes is not None and self.total_bytes > self.max_bytes))

        for key in list(self._items):
            if not over():
                break
            if key != keep and key not in self._pinned:
                del self._items[key]
                del self._sizes[key]

    def drop_oldest(self, n_bytes: int) -> int:
        """Drop least recently used unpinned values until `n_bytes` (by `sizeof`) are dropped
        or none is left to drop; returns the bytes dropped (their memory is freed once no one
        else holds them)."""
        dropped = 0
        with self._lock:
            for key in list(self._items):
                if dropped >= n_bytes:
                    break
                if key not in self._pinned:
                    dropped += self._sizes.pop(key)
                    del self._items[key]
        return dropped

    @property
    def pinned_bytes(self) -> int:
        """Bytes of the pinned values held (never dropped)."""
        with self._lock:
            return sum(size for key, size in self._sizes.items() if key in self._pinned)

    def pin(self, key: Hashable) -> None:
        """Never evict `key` (whether or not it is cached yet)."""
        with self._lock:
            self._pinned.add(key)

    def clear(self) -> None:
        """Forget every value (pins stay; computations in flight finish and are stored)."""
        with self._lock:
            self._items.clear()
            self._sizes.clear()
