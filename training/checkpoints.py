"""Ship the shapes model at several points of its training, for the app's "training step" slider.

    .venv/bin/python -m training.train --out training/runs/run2.npz \
        --checkpoint-steps 0,500,750,1000,1500,2250,3500,6000
    .venv/bin/python -m training.checkpoints --run training/runs/run2.npz \
        --steps 0,500,750,1000,1500,2250,3500      # writes assets/shapes_checkpoints.npz

Takes the run's checkpoints (`<run stem>_checkpoints/step{N}.npz`) at `--steps` and the run's
final weights (`--run`, the file the run ships: its last entry), measures each on training's
held-out set (1,000 images, seeds 900_000+) and measures the localisation ratio on fresh
shapes (seeds 100+, as `training.evaluate`), prints a table and writes one file
(`encoder_core.shapes_model.classifier.save_checkpoints`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from encoder_core import encode, predict
from encoder_core.shapes_model.classifier import (
    DEFAULT_CHECKPOINTS,
    Checkpoint,
    load_trained,
    localisation_ratio,
    save_checkpoints,
)
from encoder_core.shapes_model.dataset import make_batch

from .evaluate import FIRST_SEED
from .model import theta_from
from .train import accuracy, held_out_set, steps_list


def fresh_shapes(n: int) -> list[tuple[np.ndarray, int, np.ndarray]]:
    """n (image, label, mask) never used in training: seeds 100, 101, … (100 each)."""
    out: list[tuple[np.ndarray, int, np.ndarray]] = []
    seed = FIRST_SEED
    while len(out) < n:
        images, labels, masks = make_batch(seed, min(100, n - len(out)))
        out += list(zip(images, labels.tolist(), masks, strict=True))
        seed += 1
    return out


def measure(cfg, checkpoint: Checkpoint, shapes) -> dict[str, float]:
    """Accuracy and mean localisation ratio of one checkpoint on the fresh `shapes`."""
    ratios, correct = [], 0
    for image, label, mask in shapes:
        trace = encode(image, cfg, checkpoint.params)
        correct += int(predict(trace, checkpoint.params).argmax()) == label
        ratios.append(localisation_ratio(trace, mask))
    return {"fresh_accuracy": correct / len(shapes), "localisation_ratio": float(np.mean(ratios))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", type=Path, required=True, help="the run's final weights (.npz)")
    ap.add_argument("--steps", type=steps_list, required=True,
                    help="checkpoint steps to ship before the final one, e.g. 0,500,1000")
    ap.add_argument("--out", type=Path, default=DEFAULT_CHECKPOINTS)
    ap.add_argument("--eval-size", type=int, default=1000)
    ap.add_argument("--localisation-images", type=int, default=200)
    args = ap.parse_args(argv)

    cfg, params, head = load_trained(args.run)
    final_step = json.loads(args.run.with_suffix(".json").read_text())["step"]
    folder = args.run.with_name(args.run.stem + "_checkpoints")
    loaded = []
    for step in args.steps:
        if step >= final_step:
            raise SystemExit(f"step {step} is not before the final step {final_step}")
        c_cfg, c_params, c_head = load_trained(folder / f"step{step}.npz")
        assert c_cfg == cfg, (c_cfg, cfg)
        loaded.append((step, c_params, c_head))
    loaded.append((final_step, params, head))

    images, labels = held_out_set(args.eval_size)
    shapes = fresh_shapes(args.localisation_images)
    checkpoints, rows = [], []
    for step, c_params, c_head in loaded:
        held, _ = accuracy(theta_from(c_params, c_head, np.float32), cfg, images, labels)
        c = Checkpoint(step=step, params=c_params, head=c_head, accuracy=held)
        checkpoints.append(c)
        rows.append({"step": step, "held_out_accuracy": held, **measure(cfg, c, shapes)})
        print(json.dumps(rows[-1]), file=sys.stderr)
    save_checkpoints(args.out, cfg, checkpoints, held_out_size=len(labels))
    print(f"| step | held-out accuracy ({len(labels)}) | fresh accuracy ({len(shapes)}) "
          f"| localisation ratio ({len(shapes)}) |\n|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['step']:,} | {100 * r['held_out_accuracy']:.1f} % "
              f"| {100 * r['fresh_accuracy']:.1f} % | {r['localisation_ratio']:.2f} |")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
