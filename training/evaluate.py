"""Measure trained weights on fresh shapes: accuracy, and where the attention rollout looks.

    .venv/bin/python -m training.evaluate [--weights assets/shapes_encoder.npz]

Images come from seeds 100, 101, … (100 images each), never used in training (seeds ≥ 1_000_000)
nor by its held-out set (900_000+). Each image goes through `encoder_core.encode`, exactly what
the app shows. The localisation ratio (see `encoder_core.shapes_model.classifier`) is reported
for the trained weights and for random weights `init_params(cfg)` of the same configuration."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from encoder_core import encode, init_params, predict
from encoder_core.shapes_model.classifier import (
    DEFAULT_WEIGHTS,
    load_trained,
    localisation_ratio,
)
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_batch

FIRST_SEED = 100


def evaluate(weights: Path, n_images: int, n_localisation: int) -> dict[str, float]:
    """Accuracy on n_images fresh images and the mean localisation ratio, trained and random."""
    cfg, params, head = load_trained(weights)
    random_params = init_params(cfg)
    correct, confusion = 0, np.zeros((len(CLASS_NAMES),) * 2, dtype=int)
    ratios, random_ratios = [], []
    seen = 0
    for seed in range(FIRST_SEED, FIRST_SEED + (n_images + 99) // 100):
        images, labels, masks = make_batch(seed, min(100, n_images - seen))
        for image, label, mask in zip(images, labels, masks, strict=True):
            trace = encode(image, cfg, params)
            predicted = int(predict(trace, params).argmax())
            correct += predicted == label
            confusion[label, predicted] += 1
            if seen < n_localisation:
                ratios.append(localisation_ratio(trace, mask))
                random_ratios.append(localisation_ratio(encode(image, cfg, random_params), mask))
            seen += 1
    print("confusion (rows = true, columns = predicted):", CLASS_NAMES, file=sys.stderr)
    print(confusion, file=sys.stderr)
    return {"accuracy": correct / seen, "n_images": seen,
            "localisation_ratio_trained": float(np.mean(ratios)),
            "localisation_ratio_random": float(np.mean(random_ratios)),
            "n_localisation": len(ratios)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", type=Path, default=DEFAULT_WEIGHTS)
    ap.add_argument("--images", type=int, default=1000)
    ap.add_argument("--localisation-images", type=int, default=200)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    result = evaluate(args.weights, args.images, args.localisation_images)
    print(f"accuracy {result['accuracy']:.4f} on {result['n_images']} fresh images; "
          f"localisation ratio trained {result['localisation_ratio_trained']:.2f}, "
          f"random {result['localisation_ratio_random']:.2f} "
          f"(mean over {result['n_localisation']} images); "
          f"{time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
