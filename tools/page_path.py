"""How straight one run of a page is: the `lens/` and `pages/` modules one AppTest run of a step
page enters (in lesson mode by default), and how often it comes back to a module it had already
entered from another one.

    .venv/bin/python -m tools.page_path [page] [--free] [--list]

The page is opened in a new AppTest (the concept check before the lesson skipped) and run once
to warm the caches; the run counted is the next one, a rerun of the same page as a click makes.
A profiler (`sys.setprofile`, and `threading.setprofile` for AppTest's script thread) sees every
call of a Python function whose file is under lens/ or pages/. Of those:

- places: the distinct functions entered from another module (module, qualified name);
- modules: the distinct modules;
- crossings: the calls from a function of one module into a function of another;
- returns: the crossings into a module the run had already entered before (it was left and is
  entered again): a run that is one straight path, runner → role → page sections → runner,
  enters each module once from the outside and returns little; one that goes back and forth
  between the frame's modules returns often;
- calls back up the stack: a crossing into a module that an outer frame of the same call
  chain is in (not the caller's own), e.g. runner → chrome.header → a runner's lambda: a
  module below calling back into one above it.

`--list` prints each return's crossing (caller module → callee function).
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APP_DIRS = (ROOT / "lens", ROOT / "pages")


def module_of(filename: str) -> str | None:
    """The dotted module of a file under lens/ or pages/, else None."""
    path = Path(filename)
    if not any(path.is_relative_to(d) for d in APP_DIRS):
        return None
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class PathCounter:
    """A profile function that records the app's cross-module calls (from any thread), and
    which of them were leaves: calls that crossed into no other module of the app before they
    returned (a text looked up, a property of the context read)."""

    def __init__(self) -> None:
        self.places: set[tuple[str, str]] = set()
        # each crossing: [caller module, callee module, callee's qualified name, leaf?]
        self.crossings: list[list] = []
        # calls back up the stack: into a module that an outer frame of the call is in, not the
        # caller's (a module below calling back into one above it: runner → chrome → runner)
        self.callbacks: list[tuple[str, str, str]] = []
        self._open: dict[object, int] = {}  # a crossing's frame -> its index, until it returns
        self._lock = threading.Lock()

    def __call__(self, frame, event: str, arg: object) -> None:  # noqa: ANN001
        if event == "return":
            self._open.pop(frame, None)
            return
        if event != "call":
            return
        callee = module_of(frame.f_code.co_filename)
        if callee is None:
            return
        caller, back, enclosing = None, frame.f_back, None
        outer: set[str] = set()  # the app's modules further down the stack than the caller
        while back is not None:
            module = module_of(back.f_code.co_filename)
            if caller is None:  # the nearest app frame below
                caller = module
            elif module is not None:
                outer.add(module)
            if enclosing is None:
                enclosing = self._open.get(back)
            back = back.f_back
        with self._lock:
            self.places.add((callee, frame.f_code.co_qualname))
            if caller == callee:
                return
            if callee in outer - {caller}:
                self.callbacks.append((caller or "-", callee, frame.f_code.co_qualname))
            if enclosing is not None:
                self.crossings[enclosing][3] = False
            self._open[frame] = len(self.crossings)
            self.crossings.append([caller or "-", callee, frame.f_code.co_qualname, True])

    def counts(self, leaves: bool) -> tuple[int, int, int, int, list[tuple[str, str, str]]]:
        """(places, modules, crossings, returns, the returns) with or without the leaves."""
        kept = [c for c in self.crossings if leaves or not c[3]]
        places = {(c[1], c[2]) for c in kept}
        entered: set[str] = set()
        returns = []
        for caller, callee, name, _ in kept:
            if callee in entered:
                returns.append((caller, callee, name))
            entered.add(callee)
        return len(places), len({m for m, _ in places}), len(kept), len(returns), returns


def measure(page: str, lesson: bool = True) -> PathCounter:
    """Count one rerun of `page` (see the module's docstring)."""
    from tests.support.apptest_helpers import new_app, open_page
    from tests.test_app_lesson import CHECK_SKIPPED

    query = {"lesson": "1", **CHECK_SKIPPED} if lesson else {}
    at = new_app(**query)
    open_page(at, page)
    counter = PathCounter()
    threading.setprofile(counter)
    sys.setprofile(counter)
    try:
        at.run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    if at.exception:
        raise SystemExit(f"the page raised: {[e.value for e in at.exception]}")
    return counter


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("page", nargs="?", default="multihead", help="a step's id (lens.steps)")
    parser.add_argument("--free", action="store_true", help="free mode instead of the lesson")
    parser.add_argument("--list", action="store_true", help="print every return of the path")
    args = parser.parse_args(argv)
    c = measure(args.page, lesson=not args.free)
    print(f"{args.page} ({'free' if args.free else 'lesson'} mode), one rerun:")
    for leaves, what in ((True, "every call"), (False, "the path (leaf calls left out)")):
        places, modules, crossings, n_returns, returns = c.counts(leaves)
        print(f"  {what}: {places} places in {modules} modules, {crossings} crossings, "
              f"{n_returns} returns to a module already entered")
        by_module = Counter(callee for _, callee, _ in returns)
        print("    returns per module: "
              + ", ".join(f"{m} {n}" for m, n in by_module.most_common()))
    back = Counter(f"{caller} → {callee}" for caller, callee, _ in c.callbacks)
    print(f"  calls back up the stack (into a module an outer frame is in): {len(c.callbacks)}"
          + (": " + ", ".join(f"{k} {n}" for k, n in back.most_common()) if back else ""))
    if args.list:
        for caller, callee, name in c.counts(False)[4]:
            print(f"  {caller} → {callee}.{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
