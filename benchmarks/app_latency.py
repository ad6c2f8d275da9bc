"""App latency per page, measured with Streamlit's AppTest (issue 3's targets).

    .venv/bin/python -m benchmarks.app_latency [--repeat 3]

For each page at the default settings: the first run (cold caches), a rerun with the forward
pass and pictures cached, a rerun after a d_model change and one after an h change (each change
is new to the caches: a fresh forward pass and fresh pictures). Median seconds. Figures, not
pass/fail: machines here are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from lens import keys
from lens.resources import caches
from lens.steps import ALL_PAGES

ROOT = Path(__file__).resolve().parent.parent


def clear_caches() -> None:
    """Forget traces and pictures, so each page's measurements start cold."""
    for cache in caches().values():  # pictures included
        cache.clear()


def timed(at: AppTest) -> float:
    t0 = time.perf_counter()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    print(f"{'page':<22} {'cold s':>7} {'cached s':>9} {'d_model s':>10} {'h s':>6}")
    d_models = [256, 384, 768, 1024, 128, 192]
    heads = [4, 16, 2, 32, 1, 64]
    for page in ALL_PAGES:
        path, title = page.path, page.title_in("en")
        clear_caches()
        k = 0
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.session_state[keys.ADVANCED] = True  # its controls exist only while it is open
        at.run()
        at.switch_page(path)
        cold = timed(at)
        cached = statistics.median(timed(at) for _ in range(args.repeat))
        after_d, after_h = [], []
        for _ in range(args.repeat):
            at.sidebar.select_slider(key="d_model").set_value(d_models[k % len(d_models)])
            after_d.append(timed(at))
            at.sidebar.select_slider(key="n_heads").set_value(heads[k % len(heads)])
            after_h.append(timed(at))
            k += 1
        print(f"{title:<22} {cold:>7.2f} {cached:>9.2f} {statistics.median(after_d):>10.2f} "
              f"{statistics.median(after_h):>6.2f}", flush=True)


if __name__ == "__main__":
    main()
