"""Benchmark: is the PCA foreground the shape? (issue 26, "Meaning, measured"), and what PCA costs.

    .venv/bin/python -m benchmarks.pca_iou [--n 200] [--seed 500] [--repeat 50]

1. IoU. On n fresh generated shapes (`encoder_core.shapes_model.dataset.make_batch(seed, n)`:
   seed 500 is used neither by training, seeds ≥ 1,000,000, nor by its evaluations, 100+ and
   900,000+), the PCA foreground of `encoder_core.views.pca` (first component, the border's
   mean made negative, > 0) against the true shape mask, for the shipped trained weights
   (`load_trained()`) and for random weights of the same architecture (`init_params` at seeds
   0, 1, 2, and at seed 0 without the positional encoding), on each layer's output (the last
   is the encoder's output), and, as a baseline that knows no encoder, on the raw patch pixels
   (`trace.patches`). Two IoUs a shape:
   pixels — the foreground's patches painted over their 16 × 16 pixels against the true pixel
   mask; patches — against the patches at least half on the shape. Printed: the mean and the
   median over the shapes, the share of shapes with IoU ≥ 0.5, and the mean pixel IoU with
   the better of the two signs (what the first component separates, before the border rule
   picks a side).
2. Time. `trace_pca` on ViT-S/16 dimensions (197 tokens: [CLS] + 14 × 14 patches, d 384) and
   ViT-S/8 (785 tokens), on the output of a random timm ViT-S of that shape (a real trace,
   structure and all), median of `--repeat` runs, in ms; the SVD alone; the section's three
   pictures (first component, foreground over the image, colours) drawn.
Figures, not pass/fail: the machine is shared.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.timing import median_ms
from encoder_core import encode
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.params import init_params
from encoder_core.shapes_model.classifier import load_trained, object_patch_mask
from encoder_core.shapes_model.dataset import make_batch
from encoder_core.views.pca import border_patches, mask_iou, on_image, patch_pca, trace_pca
from lens import figures, images
from tests.support.vit_dicts import write_timm_checkpoint

RANDOM_SEEDS = (0, 1, 2)


def ious(traces, masks: np.ndarray, features) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """IoU [n] each of the PCA foreground of `features(trace)` [N, D]: in pixels, in patches,
    and in pixels with the better of the two signs (what the first component separates,
    whatever the border rule says)."""
    px, pa, either = [], [], []
    for tr, mask in zip(traces, masks, strict=True):
        cfg = tr.config
        G, P = cfg.grid_size, cfg.patch_size
        fg = patch_pca(features(tr), border_patches(G)).foreground  # [N]
        px.append(mask_iou(on_image(fg[:, None], G, P)[..., 0], mask))
        pa.append(mask_iou(fg, object_patch_mask(mask, P, 0.5)))
        either.append(max(px[-1], mask_iou(on_image(~fg[:, None], G, P)[..., 0], mask)))
    return np.array(px), np.array(pa), np.array(either)


def summary(values: np.ndarray) -> str:
    return (f"mean {values.mean():.3f}  median {np.median(values):.3f}  "
            f"≥ 0.5: {100 * np.mean(values >= 0.5):3.0f} %")


def iou_table(n: int, seed: int) -> None:
    images, _, masks = make_batch(seed, n)  # [n, 224, 224, 1], [n], [n, 224, 224]
    cfg, trained, _ = load_trained()
    models = {"trained": (cfg, trained)}
    for s in RANDOM_SEEDS:
        rcfg = cfg.replace(seed=s)
        models[f"random (seed {s})"] = (rcfg, init_params(rcfg))
    no_pe = cfg.replace(use_pe=False)  # what the positions do to random features
    models["random, no PE"] = (no_pe, init_params(no_pe))
    print(f"{n} fresh shapes (make_batch({seed}, {n})), d_model {cfg.d_model}, "
          f"{cfg.n_layers} layers, {cfg.n_tokens} patches; IoU of the PCA foreground")
    pixels_done = False
    for name, (mcfg, params) in models.items():
        traces = [encode(img, mcfg, params) for img in images]
        if not pixels_done:
            px, pa, either = ious(traces, masks, lambda tr: tr.patches)
            print(f"  {'raw patch pixels':24s} pixels: {summary(px)} | patches: {summary(pa)}"
                  f" | either sign: mean {either.mean():.3f}")
            pixels_done = True
        for layer in range(cfg.n_layers):
            px, pa, either = ious(traces, masks, lambda tr, layer=layer: tr.layers[layer].out)
            where = "output" if layer == cfg.n_layers - 1 else f"layer {layer + 1}"
            print(f"  {name + ', ' + where:24s} pixels: {summary(px)} | patches: {summary(pa)}"
                  f" | either sign: mean {either.mean():.3f}")


def pictures(tr, pca) -> tuple[bytes, bytes, bytes]:
    """The section's three pictures as lens/sections/pca.py draws them (English-length texts)."""
    G, P = tr.config.grid_size, tr.config.patch_size
    return (figures.heatmap(pca.first.reshape(G, G), "First component", "patch column",
                            "patch row", colorbar_label="projection p", size=(4.8, 4.2)),
            figures.attention_table(tr.image, pca.foreground.astype(np.float32).reshape(
                1, 1, G, G), "Foreground", row_labels=[""], col_labels=[""], panel=3.0,
                vmax=1.0, colorbar_label="1 = foreground"),
            figures.image_with_grid(on_image(pca.rgb, G, P), P, "Colours", numbers=False,
                                    size=4.2, axis_labels=("x (pixels)", "y (pixels)")))


def timing(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for label, P in (("ViT-S/16 (197 tokens, d 384)", 16), ("ViT-S/8 (785 tokens, d 384)", 8)):
            path = write_timm_checkpoint(Path(folder) / f"vit_s{P}.safetensors", d=384, C=3, L=12,
                                         d_ff=1536, P=P, grid=224 // P)
            cfg, params, _ = load_checkpoint(path)
            _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                            cfg.channels)
            tr = encode(image, cfg, params)
            X = tr.output[cfg.n_prefix:].astype(np.float64)
            Xc = X - X.mean(axis=0)
            pca = trace_pca(tr)
            whole = median_ms(lambda tr=tr: trace_pca(tr), repeat)
            svd = median_ms(lambda Xc=Xc: np.linalg.svd(Xc, full_matrices=False), repeat)
            drawn = median_ms(lambda tr=tr, pca=pca: pictures(tr, pca), max(3, repeat // 10))
            print(f"  {label}: trace_pca {whole:.2f} ms (its first SVD alone {svd:.2f} ms); "
                  f"{pca.n_foreground} foreground patches, first share "
                  f"{100 * pca.first_share:.1f} %; its three pictures {drawn:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--seed", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    iou_table(args.n, args.seed)
    print("PCA time (median of", args.repeat, "runs):")
    timing(args.repeat)


if __name__ == "__main__":
    main()
