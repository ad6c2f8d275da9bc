"""Benchmark: the page "How it learns" — its core's pieces against the forward, and the page's
first and warm runs.

    OPENBLAS_CORETYPE=Haswell .venv/bin/python -m benchmarks.learn [--repeat 21]

On the shapes model (224 px grey -> 196 patches, d_model 64, 4 heads, 2 layers, d_ff 128) and
generated shape 0, median ms of `--repeat`, timed in turns: `encode` (the forward), `backward`
seeded with the loss (every field's and weight's gradient: what the page shows), and one
training step (`train_step`: forward, loss, backward and the update) for SGD and Adam; each
one's ratio to the forward. Then the page in AppTest (the entry script, then the page, as a
learner opens it), trained and random weights: its first run in a fresh process's caches, a
warm rerun, and a click on "ten more steps". Figures, not pass/fail: the machine is shared.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from encoder_core import encode
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import make_sample
from encoder_core.views.learning import loss_gradients, train_step


def timed_in_turns(runs: dict, repeat: int) -> dict[str, float]:
    """Median ms of each of `runs` over `repeat` rounds, one call of each per round (so a
    neighbour's load falls on all of them alike), after one call of each to warm up."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for fn in runs.values():
        fn()
    for _ in range(repeat):
        for name, fn in runs.items():
            t = time.perf_counter()
            fn()
            times[name].append(1e3 * (time.perf_counter() - t))
    return {name: statistics.median(v) for name, v in times.items()}


def core(repeat: int) -> None:
    cfg, params, _ = load_trained()
    s = make_sample(np.random.default_rng(0))
    trace = encode(s.image, cfg, params)
    runs = {
        "encode (forward)": lambda: encode(s.image, cfg, params),
        "loss + backward": lambda: loss_gradients(trace, params, s.label),
        "train_step sgd": lambda: train_step(s.image, s.label, cfg, params, "sgd", 1e-3),
        "train_step adam": lambda: train_step(s.image, s.label, cfg, params, "adam", 1e-4),
    }
    ms = timed_in_turns(runs, repeat)
    forward = ms["encode (forward)"]
    for name, v in ms.items():
        print(f"{name:<20} {v:8.1f} ms   {v / forward:5.2f} × forward")


def page() -> None:
    from tests.support.apptest_helpers import new_app  # noqa: PLC0415

    for weights in ("trained", "random"):
        at = new_app(weights=weights)
        at.run()  # the entry script first (its page's trace), then the page, as a learner
        t = time.perf_counter()
        at.switch_page("pages/learn.py").run()
        first = time.perf_counter() - t
        assert not at.exception, at.exception
        t = time.perf_counter()
        at.run()
        warm = time.perf_counter() - t
        t = time.perf_counter()
        at.button(key="learn_more").click().run()
        more = time.perf_counter() - t
        print(f"page ({weights:<7}) first {first:6.2f} s   warm {warm:6.2f} s   "
              f"ten more steps {more:6.2f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args(argv)
    core(args.repeat)
    page()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
