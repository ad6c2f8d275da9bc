"""The ViT variants (issue 11): does the note's default trace stay as fast, and how fast is a
ViT-shaped forward pass with every intermediate?

    .venv/bin/python -m benchmarks.variants [--repeat 15] [--baseline REV]

1. The default configuration (the note's encoder) timed with this worktree's `encoder_core`
   and with the one of git revision `--baseline` (default: the commit before the variants),
   extracted into a temporary folder and imported as another package. The two are timed
   alternately in the same process, so load from other processes hits both alike.
2. ViT-Ti and ViT-S shaped random models at 224 (P 16, 12 layers, pre-norm, [CLS], learned
   positions, every bias, GELU, final norm, RGB with ImageNet statistics): the median time of
   `encode` with every intermediate, its peak traced memory, and the share of GELU (12 calls
   on a [seq_len, d_ff] array).
Wall and CPU time (this process, all threads) are both printed: on a busy machine the CPU time
is the steadier figure; run with OPENBLAS_NUM_THREADS=1 to see one core's work.
Figures, not pass/fail: these machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.bench import peak_bytes
from encoder_core.pipeline.ffn import _apply_in_place, gelu

ROOT = Path(__file__).resolve().parent.parent

BASELINE = "52cd817"  # the last commit before the variants (branch point of `variants`)
VIT = dict(image_size=224, patch_size=16, channels=3, n_layers=12, norm_first=True,
           cls_token=True, position="learned", patch_bias=True, qkv_bias=True, proj_bias=True,
           activation="gelu", final_norm=True, ln_eps=1e-6,
           pixel_mean=(0.485, 0.456, 0.406), pixel_std=(0.229, 0.224, 0.225))  # fmt: skip
SHAPES = {"ViT-Ti/16": dict(d_model=192, n_heads=3, d_ff=768),
          "ViT-S/16": dict(d_model=384, n_heads=6, d_ff=1536)}


def import_baseline(rev: str, folder: Path):
    """`encoder_core` as it was at git revision `rev`, imported as `encoder_core_baseline`."""
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "encoder_core"],
                         check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        t.extractall(folder, filter="data")
    package = folder / "encoder_core_baseline"
    (folder / "encoder_core").rename(package)
    spec = importlib.util.spec_from_file_location(  # its submodules: found on its __path__
        package.name, package / "__init__.py", submodule_search_locations=[str(package)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def alternate(fns: dict[str, callable], repeat: int) -> dict[str, tuple[float, float]]:
    """(median wall seconds, median CPU seconds of this process) of each function, called in
    turn `repeat` times after one warm-up each. The CPU time (all threads) is less disturbed by
    other processes than the wall time: on a busy machine it is the steadier figure."""
    for fn in fns.values():
        fn()
    wall: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    return {name: (statistics.median(wall[name]), statistics.median(cpu[name])) for name in fns}



def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.variants")
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--baseline", default=BASELINE, help="git revision to compare the default with")
    args = p.parse_args(argv)
    rng = np.random.default_rng(1)

    with tempfile.TemporaryDirectory() as tmp:
        base = import_baseline(args.baseline, Path(tmp))
        cfg = EncoderConfig()
        image = rng.random((224, 224, 1), dtype=np.float32)
        params = init_params(cfg)
        base_cfg = base.EncoderConfig()
        base_params = base.init_params(base_cfg)
        same = np.array_equal(encode(image, cfg, params).output,
                              base.encode(image, base_cfg, base_params).output)
        t = alternate({"now": lambda: encode(image, cfg, params),
                       "baseline": lambda: base.encode(image, base_cfg, base_params)},
                      args.repeat)
        print(f"default configuration (196 tokens, d 512, 8 heads, 6 layers), median of "
              f"{args.repeat}, alternated:")
        (w0, c0), (w1, c1) = t["baseline"], t["now"]
        print(f"  baseline {args.baseline}: wall {w0 * 1e3:8.1f} ms   CPU {c0 * 1e3:8.1f} ms")
        print(f"  this worktree:     wall {w1 * 1e3:8.1f} ms   CPU {c1 * 1e3:8.1f} ms")
        print(f"  ratio now/baseline: wall {w1 / w0:.3f}, CPU {c1 / c0:.3f}; "
              f"outputs bit-identical: {same}\n")

    print(f"{'model':<10} {'params':>8} {'seq':>5} {'wall ms':>8} {'CPU ms':>8} {'peak MB':>8} "
          f"{'GELU CPU ms':>12}")
    for name, shape in SHAPES.items():
        cfg = EncoderConfig(**VIT, **shape)
        params = init_params(cfg)
        image = rng.random((224, 224, 3), dtype=np.float32)
        hidden = rng.standard_normal((cfg.seq_len, cfg.d_ff)).astype(np.float32)
        scratch = np.empty_like(hidden)

        def activation(hidden=hidden, scratch=scratch):  # as feed_forward applies it
            np.copyto(scratch, hidden)
            _apply_in_place(gelu, scratch)

        t = alternate({"encode": lambda cfg=cfg, params=params, image=image:
                       encode(image, cfg, params),
                       "gelu": activation},
                      max(3, args.repeat // 2))
        n = sum(a.size for a in [params.W_E, params.cls, params.pos_embed, params.b_E,
                                 params.norm_gamma, params.norm_beta]) + sum(
            getattr(lp, f).size for lp in params.layers for f in lp.__dataclass_fields__
            if getattr(lp, f) is not None)
        peak = peak_bytes(lambda cfg=cfg, params=params, image=image:
                          encode(image, cfg, params)) / 2**20
        print(f"{name:<10} {n / 1e6:7.2f}M {cfg.seq_len:>5} {t['encode'][0] * 1e3:8.1f} "
              f"{t['encode'][1] * 1e3:8.1f} {peak:8.0f} {t['gelu'][1] * 1e3 * cfg.n_layers:12.1f}")


if __name__ == "__main__":
    main()
