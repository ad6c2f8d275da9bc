"""Benchmark: the ViT views (encoder_core/views/vit_views.py) and the ViT page on ViT-S shapes.

    .venv/bin/python -m benchmarks.vit_views [--repeat 5] [--no-page]

Random timm ViT-S checkpoints (d_model 384, 6 heads, 12 layers, d_ff 1536; 224 px with patch
16 -> 197 tokens, and patch 8 -> 785 tokens, DINO's ViT-S/8), written as .safetensors by
`tests/support/vit_dicts.py` and loaded with `load_checkpoint`, on the built-in photo. Prints the
median milliseconds of each core view (all 12 layers' CLS rows, keep 60 % of the mass, the
whole rollout R and its [CLS] row alone for each head fusion at discard 0.9, the token norms
of all layers), of the page's
pictures (`lens.figures`, PNG bytes), and, with AppTest, of the page: its first run (the trace
already computed by the overview the app opens on; the page's derived quantities and pictures
cold), a rerun with everything cached, and reruns after moving the keep-mass slider and the
discard ratio (each value new to the caches). Figures, not pass/fail: the machine is shared.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.timing import median_ms, vit_page
from encoder_core import encode
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.views.rollout import attention_rollout
from encoder_core.views.vit_views import (
    cls_attention,
    keep_mass,
    on_grid,
    rollout_cls_map,
    scale_to_max,
    token_norms,
)
from lens import figures, images
from tests.support.vit_dicts import write_timm_checkpoint

ROOT = Path(__file__).resolve().parent.parent

VIT_S = dict(d=384, C=3, L=12, d_ff=1536)
SHAPES = {"ViT-S/16 (197 tokens)": dict(P=16, grid=14), "ViT-S/8 (785 tokens)": dict(P=8, grid=28)}


def core_and_pictures(path: str, repeat: int) -> None:
    cfg, params, _ = load_checkpoint(path)
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    t0 = time.perf_counter()
    tr = encode(image, cfg, params)
    print(f"  encode (once)                  {1000 * (time.perf_counter() - t0):8.1f} ms")
    n, G = cfg.n_prefix, cfg.grid_size
    attns = [layer.attn for layer in tr.layers]
    cls_maps = np.stack([cls_attention(a, n) for a in attns])  # [L, h, N]
    rollout = rollout_cls_map(attention_rollout(attns, "mean", 0.9), n)
    rows = {
        "cls_attention, 12 layers": lambda: [cls_attention(a, n) for a in attns],
        "keep_mass 60 %, 6 heads": lambda: keep_mass(cls_maps[-1], 0.6),
        **{f"rollout {f}, discard 0.9": (lambda f=f: rollout_cls_map(
            attention_rollout(attns, f, 0.9), n)) for f in ("mean", "max", "min")},
        **{f"rollout row 0 {f}, discard 0.9": (lambda f=f: rollout_cls_map(
            attention_rollout(attns, f, 0.9, row=0), n)) for f in ("mean", "max", "min")},
        "token_norms, 12 layers": lambda: [token_norms(layer.out) for layer in tr.layers],
        "picture: DINO grid, 6 heads": lambda: figures.attention_grid(
            tr.image, on_grid(cls_maps[-1], G), [f"head {i}" for i in range(6)], "CLS",
            ncols=6),
        "picture: layer × head, 12 × 6": lambda: figures.attention_table(
            tr.image, on_grid(scale_to_max(cls_maps), G), "grid",
            row_labels=[str(i) for i in range(12)], col_labels=[str(i) for i in range(6)],
            panel=1.0),
        "picture: rollout map": lambda: figures.attention_table(
            tr.image, on_grid(rollout, G)[None, None], "rollout", row_labels=[""],
            col_labels=[""], panel=3.0),
    }
    for name, fn in rows.items():
        print(f"  {name:<30} {median_ms(fn, repeat):8.1f} ms")


def page_latency(path: str, repeat: int) -> None:
    at, run = vit_page(path)

    cold = run()
    cached = statistics.median(run() for _ in range(repeat))
    moved_keep, moved_discard = [], []
    for i in range(repeat):
        at.slider(key="vit_keep").set_value(10 + 5 * i)
        moved_keep.append(run())
        at.slider(key="vit_discard").set_value(round(0.5 + 0.05 * i, 2))
        moved_discard.append(run())
    print(f"  page: first run {cold:.2f} s, cached rerun {cached:.2f} s, keep-mass moved "
          f"{statistics.median(moved_keep):.2f} s, discard moved "
          f"{statistics.median(moved_discard):.2f} s (medians)")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--no-page", action="store_true", help="skip the AppTest page timings")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, shape in SHAPES.items():
            slug = name.split()[0].lower().replace("/", "_").replace("-", "_")
            path = write_timm_checkpoint(Path(tmp) / f"{slug}.safetensors", **VIT_S, **shape)
            print(name)
            core_and_pictures(path, args.repeat)
            if not args.no_page:
                page_latency(path, args.repeat)


if __name__ == "__main__":
    main()
