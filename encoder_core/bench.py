"""Benchmark: how fast and how large is one forward pass with every intermediate kept?

    python -m encoder_core.bench [--repeat 7] [--quick]
    python -m encoder_core.bench --checkpoint vit.safetensors [--image-size 224]

Prints the machine's float32 matmul rate (1024 × 1024 × 1024), then for the default
configuration and a sweep of token counts and d_model (or for one real checkpoint, loaded with
`checkpoint.load_checkpoint`): the median time of `encode`, its peak traced memory, the FLOPs of
the pass and the achieved GFLOP/s. Figures, not pass/fail. NumPy only.
"""

from __future__ import annotations

import argparse
import statistics
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from .checkpoints.load import load_checkpoint
from .config import EncoderConfig
from .params import EncoderParams, init_params
from .pipeline.encoder import encode
from .views.analysis import forward_flops


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def matmul_gflops(n: int = 1024, repeat: int = 7) -> float:
    """Measured float32 GFLOP/s of an n × n × n product (2·n³ FLOPs)."""
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    return 2 * n**3 / median_seconds(lambda: a @ b, repeat) / 1e9


def peak_bytes(fn: Callable[[], object]) -> int:
    """Peak memory traced while fn runs (NumPy reports its buffers to tracemalloc)."""
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(cfg: EncoderConfig, repeat: int,
            params: EncoderParams | None = None) -> dict[str, float]:
    image = np.random.default_rng(1).random((cfg.image_size,) * 2 + (cfg.channels,),
                                            dtype=np.float32)
    params = init_params(cfg) if params is None else params
    seconds = median_seconds(lambda: encode(image, cfg, params), repeat)
    peak = peak_bytes(lambda: encode(image, cfg, params))
    flops = forward_flops(cfg)
    return {"ms": seconds * 1e3, "peak_mb": peak / 2**20, "gflop": flops / 1e9,
            "gflops": flops / seconds / 1e9}


def row(label: str, cfg: EncoderConfig, r: dict[str, float], rate: float) -> str:
    return (f"{label:<34} {cfg.n_tokens:>6} {cfg.d_model:>6} {r['ms']:>9.1f} "
            f"{r['peak_mb']:>9.0f} {r['gflop']:>7.2f} {r['gflops']:>8.1f} "
            f"{100 * r['gflops'] / rate:>6.0f}%")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m encoder_core.bench")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--quick", action="store_true", help="default configuration only")
    p.add_argument("--checkpoint", help="time this real ViT checkpoint instead")
    p.add_argument("--image-size", type=int, help="with --checkpoint: resample to this size")
    args = p.parse_args(argv)
    rate = matmul_gflops(repeat=args.repeat)
    print(f"float32 matmul 1024×1024×1024: {rate:.1f} GFLOP/s (median of {args.repeat})\n")
    print(f"{'configuration':<34} {'N':>6} {'d':>6} {'ms':>9} {'peak MB':>9} "
          f"{'GFLOP':>7} {'GFLOP/s':>8} {'of mm':>7}")
    if args.checkpoint:
        cfg, params, info = load_checkpoint(args.checkpoint, args.image_size)
        print(row(f"{info.family}"[:34], cfg, measure(cfg, args.repeat, params), rate))
        print(f"\n{info.n_params:,} parameters, {cfg.n_layers} layers, {cfg.n_heads} heads, "
              f"{cfg.seq_len} tokens (with {cfg.n_prefix} prefix)")
        return
    default = EncoderConfig()
    print(row("default (6 layers, FFN on)", default, measure(default, args.repeat), rate))
    if args.quick:
        return
    for image_size, patch in ((112, 16), (224, 16), (448, 16), (512, 16)):
        cfg = default.replace(image_size=image_size, patch_size=patch)
        print(row(f"tokens: image {image_size}, patch {patch}", cfg,
                  measure(cfg, max(3, args.repeat // 2)), rate))
    for d in (64, 128, 256, 512, 1024):
        cfg = default.replace(d_model=d, d_ff=4 * d)
        print(row(f"d_model {d} (d_ff {4 * d})", cfg, measure(cfg, max(3, args.repeat // 2)),
                  rate))


if __name__ == "__main__":
    main()
