"""Run a coroutine to the end from a test, whatever the test process is doing.

Playwright's sync API (the browser tests, session-scoped) keeps an event loop running in the
main thread, so `asyncio.run` there raises "cannot be called from a running event loop" once a
browser test has run in the same pytest process. A fresh thread has no loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


def run_async(coro: Coroutine[object, object, T]) -> T:
    """`asyncio.run(coro)` in a thread of its own; returns its result (or raises its error)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()
