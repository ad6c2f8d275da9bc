"""lens.cache: one computation per key however many threads ask at once, exceptions shared and
not cached, a bound on computations in flight, pinned keys and a byte budget."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from lens.cache import Fresh, LRUCache
from lens.compute_gate import ComputeGate
from lens.digests import _DIGESTS, array_digest, frozen, nbytes, value_key

THREADS = 20
JOIN_S = 30  # bounded joins: a deadlock fails the test instead of hanging it


def run_threads(target, n: int) -> list[threading.Thread]:
    """Start n threads that meet at a barrier first (so they ask at the same moment)."""
    barrier = threading.Barrier(n)

    def body(i: int) -> None:
        barrier.wait(timeout=JOIN_S)
        target(i)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=JOIN_S)
    assert not any(t.is_alive() for t in threads), "a thread never finished (deadlock?)"
    return threads


def test_twenty_threads_asking_one_key_compute_it_once_and_share_the_object():
    cache: LRUCache[object] = LRUCache(4)
    calls = []
    got: list[object] = [None] * THREADS

    def compute() -> object:
        calls.append(1)
        time.sleep(0.2)  # long enough for every other thread to arrive meanwhile
        return object()

    def ask(i: int) -> None:
        got[i] = cache.get_or_compute("k", compute)

    run_threads(ask, THREADS)
    assert len(calls) == 1
    assert all(g is got[0] for g in got) and got[0] is not None
    assert cache.misses == 1 and cache.hits + cache.waits == THREADS - 1


def test_an_exception_reaches_every_waiter_is_not_cached_and_the_next_call_retries():
    cache: LRUCache[str] = LRUCache(4)
    calls = []
    errors: list[BaseException | None] = [None] * THREADS

    def failing() -> str:
        calls.append(1)
        time.sleep(0.2)
        raise ValueError("no such image")

    def ask(i: int) -> None:
        try:
            cache.get_or_compute("k", failing)
        except ValueError as err:
            errors[i] = err

    run_threads(ask, THREADS)
    # every thread got the error; at most a few computed it (one per moment the key was free)
    assert all(isinstance(e, ValueError) for e in errors)
    assert len(calls) < THREADS // 2
    assert "k" not in cache and len(cache) == 0
    assert cache.get_or_compute("k", lambda: "fine") == "fine"  # retried, now cached
    assert cache.get_or_compute("k", lambda: "other") == "fine"


@pytest.mark.parametrize("limit", [1, 2])
def test_the_gate_bounds_computations_in_flight_across_caches(limit):
    gate = ComputeGate(limit)
    caches = [LRUCache(64, gate=gate), LRUCache(64, gate=gate)]
    lock = threading.Lock()
    running = [0]
    peak = [0]

    def compute() -> int:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return 1

    run_threads(lambda i: caches[i % 2].get_or_compute(i, compute), 12)
    assert 1 <= peak[0] <= limit
    assert gate.peak == peak[0] and gate.running == 0
    assert sum(c.misses for c in caches) == 12  # all distinct keys: every one computed


def test_without_a_gate_the_same_burst_runs_computations_side_by_side():
    """The counter above can see concurrency: ungated, computations overlap."""
    cache: LRUCache[int] = LRUCache(64)
    meet = threading.Barrier(3)

    def compute() -> int:
        meet.wait(timeout=JOIN_S)  # only passes if 3 computations run at once
        return 1

    run_threads(lambda i: cache.get_or_compute(i, compute), 3)
    assert cache.misses == 3


def test_a_gated_compute_asking_another_gated_cache_does_not_deadlock():
    gate = ComputeGate(1)
    params: LRUCache[str] = LRUCache(4, gate=gate)
    traces: LRUCache[str] = LRUCache(4, gate=gate)
    derived: LRUCache[str] = LRUCache(4)

    def trace(i: int) -> str:
        return traces.get_or_compute(i % 3, lambda: params.get_or_compute(i % 3, lambda: "p") + "t")

    results: list[str | None] = [None] * 8

    def ask(i: int) -> None:
        results[i] = derived.get_or_compute(i % 2, lambda: trace(i) + "d")

    run_threads(ask, 8)
    assert all(r == "ptd" for r in results)
    assert gate.running == 0


def test_a_compute_asking_for_its_own_key_raises_instead_of_hanging():
    cache: LRUCache[int] = LRUCache(4)

    def recursive() -> int:
        return cache.get_or_compute("k", lambda: 1) + 1

    with pytest.raises(RuntimeError, match="asked for"):
        cache.get_or_compute("k", recursive)
    assert cache.get_or_compute("k", lambda: 5) == 5  # nothing left in flight


def test_a_pinned_key_survives_any_number_of_newer_keys():
    cache: LRUCache[int] = LRUCache(2)
    cache.pin("default")
    cache.get_or_compute("default", lambda: 0)
    for i in range(10):
        cache.get_or_compute(i, lambda i=i: i)
    assert "default" in cache and 9 in cache
    assert len(cache) == 2
    unpinned: LRUCache[int] = LRUCache(2)
    unpinned.get_or_compute("default", lambda: 0)
    for i in range(10):
        unpinned.get_or_compute(i, lambda i=i: i)
    assert "default" not in unpinned


def test_the_byte_budget_evicts_least_recently_used_and_never_keeps_what_alone_exceeds_it():
    mb = 2**20
    cache: LRUCache[np.ndarray] = LRUCache(100, max_bytes=3 * mb)
    for i in range(4):
        cache.get_or_compute(i, lambda: np.zeros(mb, np.uint8))
    assert cache.total_bytes <= 3 * mb and 0 not in cache and 3 in cache
    big = cache.get_or_compute("big", lambda: np.zeros(5 * mb, np.uint8))  # alone over it
    assert big.nbytes == 5 * mb  # given to the caller, but neither kept nor evicting the rest
    assert list(cache._items) == [1, 2, 3] and cache.total_bytes == 3 * mb


def test_nbytes_counts_each_array_once_through_nested_containers():
    a = np.zeros(1000, np.float32)
    assert nbytes((a, [a, {"x": a}], np.ones(10, np.float64))) == 4000 + 80


class Stopped(BaseException):
    """Like Streamlit's StopException: not an error of the computation."""


def test_a_stopped_computation_is_not_passed_on_a_waiter_computes_the_key_instead():
    cache: LRUCache[str] = LRUCache(4)
    started, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def stopped() -> str:
        started.set()
        release.wait(timeout=JOIN_S)
        raise Stopped

    def first() -> None:
        try:
            cache.get_or_compute("k", stopped)
        except Stopped:
            outcome["first"] = "stopped"

    def second() -> None:
        outcome["second"] = cache.get_or_compute("k", lambda: "computed by the waiter")

    t1 = threading.Thread(target=first, daemon=True)
    t1.start()
    assert started.wait(timeout=JOIN_S)
    t2 = threading.Thread(target=second, daemon=True)
    t2.start()
    while cache.waits == 0 and t2.is_alive():
        time.sleep(0.01)
    release.set()
    for t in (t1, t2):
        t.join(timeout=JOIN_S)
    assert outcome == {"first": "stopped", "second": "computed by the waiter"}


# --- array_digest: the pictures' cache key for arrays ------------------------------------------
def test_array_digest_reads_every_value_where_streamlit_samples():
    """Over 500,000 values Streamlit's hashing samples 100,000; one changed value elsewhere
    must still give another digest (another picture)."""
    a = np.zeros(600_000, dtype=np.float32)
    b = a.copy()
    b[-1] = 1e-7
    assert array_digest(a) != array_digest(b)
    assert array_digest(a) == array_digest(a.copy())
    assert array_digest(a) != array_digest(a.reshape(1000, 600))  # shape counts
    assert array_digest(a) != array_digest(a.astype(np.float64))  # dtype counts
    assert array_digest(a[::2]) == array_digest(np.ascontiguousarray(a[::2]))
    with pytest.raises(TypeError):
        array_digest(np.array(["a", None], dtype=object))  # pointers, not values


def test_a_frozen_array_is_digested_once_and_forgotten_with_it():
    a = np.arange(12.0).reshape(3, 4).copy()  # owns its memory
    a.flags.writeable = False
    first = array_digest(a)
    assert _DIGESTS[id(a)][1] == first
    _DIGESTS[id(a)] = (_DIGESTS[id(a)][0], b"remembered")  # a second call does not re-read
    assert array_digest(a) == b"remembered"
    key = id(a)
    del a
    assert key not in _DIGESTS


def test_a_writeable_array_or_a_view_of_one_is_digested_every_time():
    base = np.zeros((4, 4))
    view = base[1:]
    view.flags.writeable = False  # read-only, but its base is not
    assert frozen(base) is False and frozen(view) is False
    before = array_digest(view)
    base[2, 2] = 5.0
    assert array_digest(view) != before
    assert id(view) not in _DIGESTS and id(base) not in _DIGESTS
    base.flags.writeable = False
    assert frozen(view) is True


def test_value_key_keeps_apart_what_differs_and_together_what_does_not():
    a = np.arange(6.0).reshape(2, 3).copy()
    assert value_key((a, "t", {"vmax": 1.0, "prefix": ["CLS"]})) == \
        value_key((a.copy(), "t", {"prefix": ["CLS"], "vmax": 1.0}))
    assert value_key((a,)) != value_key((a + 1,))
    assert len({value_key(v) for v in (1, 1.0, True, "1", (1,), [1])}) == 6
    assert value_key(np.float32(0.5)) != value_key(0.5)
    with pytest.raises(TypeError):
        value_key({1, 2})  # a set: neither an array, a sequence nor hashable by content


def test_fresh_reuses_a_value_for_its_key_until_it_is_old_or_cleared():
    now = [100.0]
    fresh = Fresh(2.0, clock=lambda: now[0])
    calls = []

    def compute(v):
        calls.append(v)
        return v

    assert fresh.get("a", lambda: compute(1)) == 1
    now[0] += 1.9
    assert fresh.get("a", lambda: compute(2)) == 1  # within 2 s: the same answer
    now[0] += 0.2
    assert fresh.get("a", lambda: compute(3)) == 3  # older: asked again
    assert fresh.get("b", lambda: compute(4)) == 4  # another key: asked at once
    assert fresh.get("a", lambda: compute(5)) == 5  # only the last key is kept
    fresh.clear()
    assert fresh.get("a", lambda: compute(6)) == 6
    assert calls == [1, 3, 4, 5, 6]


def test_held_follows_a_value_while_something_holds_it_and_forgets_it_after():
    import gc

    from lens.cache import Held

    class Box:  # a weakly referenceable value, as a trace dataclass is
        def __init__(self, n: int) -> None:
            self.a = np.zeros(n, np.uint8)

    held = Held(sizeof=lambda box: box.a.nbytes)
    first, second = Box(1000), Box(24)
    held.put("first", first)
    held.put("second", second)
    assert held.get("first") is first and held.total_bytes == 1024 and len(held) == 2
    del first
    gc.collect()
    assert held.get("first") is None and held.total_bytes == 24 and len(held) == 1
    held.put("second", Box(8))  # a new value under the same key; the old one's death is no news
    gc.collect()
    assert held.total_bytes == 0 and held.get("second") is None
    assert second.a.nbytes == 24


def test_drop_oldest_frees_least_recently_used_unpinned_bytes_first():
    cache: LRUCache[np.ndarray] = LRUCache(10, max_bytes=100)
    for key, n in (("pinned", 40), ("old", 10), ("mid", 20), ("new", 30)):
        cache.get_or_compute(key, lambda n=n: np.zeros(n, np.uint8))
    cache.pin("pinned")
    cache.get_or_compute("old", lambda: None)  # used again: now the most recent
    assert cache.drop_oldest(25) == 50  # mid (20), then new (30): at least 25 bytes
    assert list(cache._items) == ["pinned", "old"] and cache.pinned_bytes == 40
    assert cache.drop_oldest(1000) == 10 and list(cache._items) == ["pinned"]
