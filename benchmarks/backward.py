"""Benchmark: the backward pass (`encoder_core.backward`) and `relevance` against the forward.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.backward [--repeat 5] [--sizes S B]

Random ViT-S/16 and ViT-B/16 shapes (224 px RGB -> 197 tokens; d_model 384 / 768, 6 / 12
heads, 12 layers, d_ff 4·d_model; pre-norm, [CLS], learned positions, biases, GELU, final
norm, a 1000-class head) on the built-in photo. Timed in turns, median ms of `--repeat`:
`encode` (the forward, its trace kept), `backward` with the weights' gradients (what training
needs) and without (`weights=False`: every intermediate's gradient, what `relevance` needs),
and `relevance` by each method; each one's ratio to the forward, and its peak of traced memory
beyond its inputs, its result included (tracemalloc, one more call), beside the trace's
own bytes. Figures, not
pass/fail: the machine is shared.
"""

from __future__ import annotations

import argparse
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np

from encoder_core import EncoderConfig, backward, encode, init_params, load_image, relevance
from encoder_core.cost import trace_bytes
from encoder_core.params import HeadParams, check_params

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"S": (384, 6), "B": (768, 12)}  # ViT-S/16, ViT-B/16: d_model, n_heads


def vit_config(d_model: int, n_heads: int) -> EncoderConfig:
    return EncoderConfig(
        image_size=224, patch_size=16, channels=3, d_model=d_model, n_heads=n_heads,
        n_layers=12, d_ff=4 * d_model, norm_first=True, cls_token=True, position="learned",
        patch_bias=True, qkv_bias=True, proj_bias=True, activation="gelu", final_norm=True,
        ln_eps=1e-6, pixel_mean=(0.5, 0.5, 0.5), pixel_std=(0.5, 0.5, 0.5))


def peak_mb(fn) -> float:
    """The most traced memory `fn()` holds at once beyond what was held before, in MB."""
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - before) / 1e6


def in_turns(fns: dict, repeat: int) -> dict[str, float]:
    """Median ms of each function, called in turns after one warm-up call each."""
    import time

    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(1000 * (time.perf_counter() - t0))
    return {name: float(np.median(t)) for name, t in times.items()}


def run(size: str, repeat: int) -> None:
    cfg = vit_config(*SIZES[size])
    rng = np.random.default_rng(0)
    head = HeadParams(pool="token",
                      W_head=(rng.standard_normal((cfg.d_model, 1000)) * 0.02).astype(np.float32),
                      b_head=np.zeros(1000, np.float32))
    params = check_params(replace(init_params(cfg), head=head), cfg)  # frozen once: no copy
    image = load_image(ROOT / "assets" / "default.jpg", cfg)
    trace = encode(image, cfg, params)
    target = 7
    fns = {
        "encode (forward)": lambda: encode(image, cfg, params),
        "backward": lambda: backward(trace, params, target),
        "backward, weights=False": lambda: backward(trace, params, target, weights=False),
        "relevance chefer": lambda: relevance(trace, params, target, "chefer"),
        "relevance gradient_rollout": lambda: relevance(trace, params, target,
                                                        "gradient_rollout"),
    }
    ms = in_turns(fns, repeat)
    forward = ms["encode (forward)"]
    print(f"\nViT-{size}/16 (d_model {cfg.d_model}, {cfg.n_heads} heads, 12 layers, "
          f"{cfg.seq_len} tokens); trace {trace_bytes(cfg) / 1e6:.1f} MB")
    print("| step | median ms | × forward | peak MB (its result included) |")
    print("|---|---|---|---|")
    for name, fn in fns.items():
        print(f"| {name} | {ms[name]:,.0f} | {ms[name] / forward:.2f} | {peak_mb(fn):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--sizes", nargs="+", default=sorted(SIZES), choices=sorted(SIZES))
    args = parser.parse_args()
    for size in args.sizes:
        run(size, args.repeat)


if __name__ == "__main__":
    main()
