"""Benchmark: the NumPy encoder on real ViT shapes against timm's PyTorch forward, same run.

    .venv/bin/python -m benchmarks.vit [--repeat 7] [--threads 2]

For ViT-Ti/16 and ViT-S/16 at 224 (random timm models, every parameter perturbed, saved as
.safetensors and loaded with `load_checkpoint`): the time to load the file, the median time of
our `encode` keeping every intermediate, its peak traced memory (tracemalloc: NumPy reports its
buffers), and the median time of timm's `forward_features` on the same pixels, with its fused
attention (its fast path) and with the explicit softmax path. Give torch the same number of
threads as NumPy's OpenBLAS (2 on these machines by default). Figures, not pass/fail; the
machine is shared, so repeat when comparing. On a loaded machine (load average above the core
count) two BLAS threads spin against each other and ran 10× slower than one here; compare
single-threaded with

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.vit --threads 1
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

from encoder_core import encode, load_image
from encoder_core.bench import median_seconds, peak_bytes
from encoder_core.checkpoints.load import load_checkpoint
from tests.support.torch_shim import timm, torch  # timm beside the CPU torch

ROOT = Path(__file__).resolve().parent.parent

SHAPES = {"ViT-Ti/16": (192, 3), "ViT-S/16": (384, 6)}  # d_model, heads; 12 layers each




def measure(name: str, d: int, heads: int, folder: Path, repeat: int) -> dict[str, float]:
    model = timm.models.vision_transformer.VisionTransformer(
        img_size=224, patch_size=16, embed_dim=d, depth=12, num_heads=heads).eval()
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.02 * torch.randn(p.shape, generator=g))
    from safetensors.torch import save_file

    path = folder / f"{name.replace('/', '_')}.safetensors"
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))
    t0 = time.perf_counter()
    cfg, params, info = load_checkpoint(path)
    load_ms = 1e3 * (time.perf_counter() - t0)
    image = load_image(ROOT / "assets" / "default.jpg", cfg)
    x = (image - np.float32(cfg.pixel_mean)) / np.float32(cfg.pixel_std)
    x = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None], dtype=np.float32))
    ours = 1e3 * median_seconds(lambda: encode(image, cfg, params), repeat)
    peak = peak_bytes(lambda: encode(image, cfg, params)) / 2**20
    with torch.no_grad():
        fused = 1e3 * median_seconds(lambda: model.forward_features(x), repeat)
        for blk in model.blocks:
            blk.attn.fused_attn = False
        explicit = 1e3 * median_seconds(lambda: model.forward_features(x), repeat)
    return {"params_m": info.n_params / 1e6, "file_mb": path.stat().st_size / 2**20,
            "load_ms": load_ms, "ours_ms": ours, "peak_mb": peak, "torch_fused_ms": fused,
            "torch_explicit_ms": explicit}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.vit")
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--threads", type=int, default=2, help="torch threads (NumPy's BLAS: 2)")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    blas = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"torch {torch.__version__}, timm {timm.__version__}, numpy {np.__version__}, "
          f"torch threads {torch.get_num_threads()}, OPENBLAS_NUM_THREADS {blas}, "
          f"load average {os.getloadavg()[0]:.1f}, median of {args.repeat}\n")
    print(f"{'model':<10} {'params M':>8} {'file MB':>8} {'load ms':>8} {'ours ms':>8} "
          f"{'peak MB':>8} {'timm fused':>10} {'timm expl.':>10} {'ours/fused':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (d, heads) in SHAPES.items():
            r = measure(name, d, heads, Path(tmp), args.repeat)
            print(f"{name:<10} {r['params_m']:>8.1f} {r['file_mb']:>8.0f} {r['load_ms']:>8.0f} "
                  f"{r['ours_ms']:>8.1f} {r['peak_mb']:>8.0f} {r['torch_fused_ms']:>10.1f} "
                  f"{r['torch_explicit_ms']:>10.1f} {r['ours_ms'] / r['torch_fused_ms']:>10.2f}")


if __name__ == "__main__":
    main()
