"""A small bounded LRU cache, shared by every session of one server process.

Streamlit's own caches are bounded too, but their size cannot be read back; this one can, so a
test can prove that memory stays flat however many different images a long-running server sees.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    """At most `max_entries` values; the least recently used is dropped first. Thread-safe."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._items)

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The cached value for `key`, computing it (outside the lock) when missing."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                self.hits += 1
                return self._items[key]
        value = compute()
        with self._lock:
            self.misses += 1
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.max_entries:
                self._items.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
