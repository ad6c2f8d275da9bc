"""What several benchmarks time the same way: the median of repeated calls, and the ★ ViT page
run in AppTest on a checkpoint file (its runs timed one by one)."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    """The median wall time of `repeat` calls of `fn()`, in milliseconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1000 * statistics.median(times)


def vit_page(path: str):  # noqa: ANN201 (an AppTest and its timed run)
    """The app in AppTest on the ★ ViT page with the checkpoint at `path` as its weights, every
    cache empty (pictures included); and `run()`, one more run of it, in seconds, clean."""
    from streamlit.testing.v1 import AppTest

    from lens import model_weights, resources
    from lens.models import CHECKPOINTS_ENV
    from lens.steps import PAGES

    os.environ[CHECKPOINTS_ENV] = path
    model_weights.clear_models()
    for cache in resources.caches().values():
        cache.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.query_params["weights"] = Path(path).stem
    at.run()
    at.switch_page(PAGES["vit"].path)

    def run() -> float:
        t0 = time.perf_counter()
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return time.perf_counter() - t0

    return at, run
