"""A thread that enters a context (a gate's slot, a memory reservation) and holds it until
released: for the tests of who waits for whom. Every wait is bounded (`WAIT_S`): a deadlock
fails the test instead of hanging it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager

WAIT_S = 30


class Held:
    """`enter()` in a thread of its own; once inside, `on_enter()` (e.g. note the order) and
    `entered` is set; it stays inside until `release()`."""

    def __init__(self, enter: Callable[[], AbstractContextManager],
                 on_enter: Callable[[], None] = lambda: None) -> None:
        self.entered = threading.Event()
        self.released = threading.Event()

        def body() -> None:
            with enter():
                on_enter()
                self.entered.set()
                assert self.released.wait(WAIT_S)

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def release(self) -> None:
        """Leave the context and end the thread (bounded)."""
        self.released.set()
        self.thread.join(WAIT_S)
        assert not self.thread.is_alive()


def wait_until(condition: Callable[[], bool], what: str = "the condition") -> None:
    """Poll `condition` until it is true; AssertionError after `WAIT_S`."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.005)
