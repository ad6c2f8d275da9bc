"""Per-page latency on a ViT-S shaped model, against the note's encoder at the same size.

    .venv/bin/python -m benchmarks.vit_pages                 # every page, 3 warm visits each
    .venv/bin/python -m benchmarks.vit_pages --pages multihead,stack --warm 5

Writes a random checkpoint in timm's layout with ViT-S/16's shapes (224 px, P 16, CLS + 196
patches = 197 tokens, d 384, h 6, 12 layers, d_ff 1536, pre-norm, learned positions, GELU,
biases), starts the app as `scripts/app --checkpoint FILE` does (`python -m lens.serve`, one
BLAS thread) on a free loopback port, and for each page opens fresh headless sessions through
Streamlit's websocket (`benchmarks/load.py`'s client): first with that model (`weights=<id>`),
then with the note's encoder at the same size (random weights, 224 px, P 16, d_model 384,
h 6, 12 layers: 196 tokens). For each: the first visit (`cold`: its trace and pictures
computed) and the median of `--warm` more visits (`warm`: everything cached), time from the
session's start to `script_finished`, plus the server's CPU-seconds of each. Figures, not
pass/fail: the machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

from benchmarks.load import Visit, cpu_seconds, session, started_server
from lens.models import CHECKPOINTS_ENV
from lens.steps import ALL_PAGES

# ViT-S/16's shapes in the test helper's terms (tests/support/vit_dicts.py: timm's key names)
VIT_S = dict(d=384, C=3, P=16, grid=14, L=12, d_ff=1536, head=False)
NOTE_SAME_SIZE = {"image_size": "224", "patch_size": "16", "d_model": "384", "n_heads": "6",
                  "n_layers": "12", "channels": "3"}


def write_vit_s(folder: Path) -> Path:
    """A random checkpoint with ViT-S/16's shapes (h = 384 / 64 = 6 by the loader's rule), as
    .safetensors (written with the dev dependency `safetensors`)."""
    from tests.support.vit_dicts import write_timm_checkpoint

    return Path(write_timm_checkpoint(folder / "vit_s_bench.safetensors", **VIT_S))


def page_names(chosen: str) -> list[str]:
    """Page names as the websocket knows them (file name without its number)."""
    names = [Path(p.path).stem.split("_", 1)[1] for p in ALL_PAGES]
    wanted = [c.strip() for c in chosen.split(",") if c.strip()]
    return [n for n in names if not wanted or n in wanted]


def visit_times(url: str, pid: int, visit: Visit, warm: int, timeout: float
                ) -> tuple[float, float, float, float, str]:
    """(cold s, cold CPU s, warm median s, warm CPU s per visit, errors) of one page and link."""
    def one() -> tuple[float, float, list[str]]:
        cpu0 = cpu_seconds([pid])
        result = asyncio.run(session(visit, url, timeout, None, None))
        return result.finish_s, cpu_seconds([pid]) - cpu0, result.errors

    cold, cold_cpu, errors = one()
    warm_runs = [one() for _ in range(warm)]
    errors += [e for r in warm_runs for e in r[2]]
    return (cold, cold_cpu, statistics.median(r[0] for r in warm_runs),
            statistics.median(r[1] for r in warm_runs), "; ".join(sorted(set(errors)))[:200])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", default="", help="comma-separated page names (default: all)")
    ap.add_argument("--warm", type=int, default=3, help="warm visits per page and model")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_vit_s(Path(tmp))
        links = {"ViT-S (checkpoint)": urllib.parse.urlencode({"weights": path.stem}),
                 "note encoder, same size": urllib.parse.urlencode(NOTE_SAME_SIZE)}
        rows = []
        with started_server([], env={CHECKPOINTS_ENV: str(path)}) as (url, proc):
            for page in page_names(args.pages):
                for model, query in links.items():
                    t0 = time.perf_counter()
                    figures = visit_times(url, proc.pid, Visit(page, query), args.warm,
                                          args.timeout)
                    rows.append((page, model, *figures))
                    print(f"{page:10} {model:24} {time.perf_counter() - t0:6.1f} s",
                          file=sys.stderr, flush=True)
    print("| page | model | first visit | its CPU s | next visits (median) | their CPU s "
          "| errors |\n|---|---|---|---|---|---|---|")
    for page, model, cold, cold_cpu, warm, warm_cpu, errors in rows:
        print(f"| {page} | {model} | {cold:.2f} s | {cold_cpu:.2f} | {warm:.2f} s "
              f"| {warm_cpu:.2f} | {errors or '—'} |")
    return 0 if not any(r[-1] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
