"""What lesson mode costs a page run (issue 24), measured with Streamlit's AppTest.

    .venv/bin/python -m benchmarks.lesson [--repeat 5]

For each of the ten steps at the default settings, the median seconds of a cached rerun:
exploring freely, in the lesson with its questions open (the cards drawn, what they withhold
not drawn), and in the lesson once every question was shown (the cards folded, the whole page
drawn). Figures, not pass/fail: machines here are noisy.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from lens.steps import STEPS

ROOT = Path(__file__).resolve().parent.parent


def timed(at: AppTest) -> float:
    t0 = time.perf_counter()
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return time.perf_counter() - t0


def median_rerun(at: AppTest, repeat: int) -> float:
    return statistics.median(timed(at) for _ in range(repeat))


def opened(page: str, lesson: bool) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    if lesson:
        at.query_params["lesson"] = "1"
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    return at


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    print(f"{'step':<14} {'free s':>7} {'asking s':>9} {'shown s':>8}  tasks")
    for info in STEPS:
        free = median_rerun(opened(info.id, lesson=False), args.repeat)
        at = opened(info.id, lesson=True)
        asking = median_rerun(at, args.repeat)
        shows = [b.key for b in at.button if b.key and b.key.startswith("lesson_show_")]
        for key in shows:
            at.button(key=key).click().run()
        shown = median_rerun(at, args.repeat)
        print(f"{info.id:<14} {free:>7.3f} {asking:>9.3f} {shown:>8.3f}  {len(shows)}",
              flush=True)


if __name__ == "__main__":
    main()
