"""lens.hub's costs, offline: the cache look-up every page run makes, and a download's speed.

    .venv/bin/python -m benchmarks.hub                 # 2,000 look-ups, a 90 MB download
    .venv/bin/python -m benchmarks.hub --mb 20 --repeat 500

1. `hub.cached_models()`, which `model_weights.checkpoint_models()` calls on every page run to see
   the downloaded models: its time with an empty cache and with all three models cached (in a
   temporary cache with the library's layout).
2. `hub.download()` of a file of `--mb` MB from a small hub on loopback
   (`tests/support/hub_helpers.py`), with and without the progress callback: what the download
   code and the progress reports cost on top of the bytes (the network is not measured: there
   is none here).
Figures, not pass/fail: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from lens import hub
from tests.support.hub_helpers import LocalHub, put_in_cache, timm_config


def per_call_us(fn, repeat: int) -> float:
    """Median over 5 rounds of `repeat` calls, in µs per call."""
    rounds = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(repeat):
            fn()
        rounds.append((time.perf_counter() - t) / repeat * 1e6)
    return statistics.median(rounds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=2000, help="look-ups per round")
    ap.add_argument("--mb", type=float, default=90.0, help="size of the downloaded file")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "hub"
        cache.mkdir()
        empty = per_call_us(lambda: hub.cached_models(cache), args.repeat)
        weights = os.urandom(64)
        for m in hub.MODELS.values():
            put_in_cache(cache, m.repo_id, {"config.json": timm_config(m, [0.5] * 3, [0.5] * 3),
                                            "model.safetensors": weights})
        assert len(hub.cached_models(cache)) == 3
        full = per_call_us(lambda: hub.cached_models(cache), args.repeat)
        print(f"cached_models(): {empty:.0f} µs with an empty cache, {full:.0f} µs with the "
              f"3 models cached (median of 5 × {args.repeat})")

        m = hub.MODELS["dino-vits16"]
        data = os.urandom(int(args.mb * 1e6))
        files = {(m.repo_id, "config.json"): timm_config(m, [0.5] * 3, [0.5] * 3),
                 (m.repo_id, "model.safetensors"): data}
        os.environ.pop("HF_HUB_OFFLINE", None)
        with LocalHub(files) as local:
            os.environ["HF_ENDPOINT"] = local.url
            for label, with_progress in (("without progress", False), ("with progress", True)):
                target = Path(tmp) / label.replace(" ", "_")
                calls = []
                report = (lambda done, total, calls=calls: calls.append(done)) if (
                    with_progress) else None
                t = time.perf_counter()
                hub.download(m.id, progress=report, cache_dir=target)
                s = time.perf_counter() - t
                print(f"download {args.mb:.0f} MB on loopback {label}: {s:.2f} s "
                      f"({args.mb / s:.0f} MB/s), {len(calls)} progress reports")


if __name__ == "__main__":
    main()
