"""Train the small encoder + classifier on the procedural shapes, in NumPy, and ship the weights.

    .venv/bin/python -m training.train                # ≤ 50 minutes on 2 cores
    .venv/bin/python -m training.train --minutes 3 --out /tmp/trial.npz   # a short trial
    .venv/bin/python -m training.train --out training/runs/run2.npz \
        --checkpoint-steps 0,500,750,1000,1500,2250,3500,6000   # + training/runs/run2_checkpoints/

Recipe: batch 32 of freshly generated images per step (seeds ≥ 1_000_000, disjoint from the
held-out set and the tests), cross-entropy, Adam with a linear warm-up then cosine decay,
global gradient-norm clipping. Every `--eval-every` steps the held-out accuracy is measured;
the run stops at `--target` accuracy or when `--minutes` are over, keeping the best weights.
Forward and backward are encoder_core's, on the batch (`training.model`: `encode_batch`,
`predict`, `backward`), the same functions the app runs on one image.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from encoder_core import EncoderConfig, init_params
from encoder_core.shapes_model.classifier import DEFAULT_WEIGHTS, ClassifierHead, save_trained
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_batch

from .model import cross_entropy, forward, loss_and_grads, params_from, theta_from

TRAIN_SEED_BASE = 1_000_000  # batch seed of step t: TRAIN_SEED_BASE + run_seed·10⁷ + t
HELD_OUT_SEED = 900_000  # held-out images: seeds 900_000 … (chunks of 100)


def model_config(n_layers: int = 2, d_ff: int = 128, seed: int = 0) -> EncoderConfig:
    """The shipped architecture: 224 px grey, 16 px patches, d_model 64, 4 heads."""
    return EncoderConfig(image_size=224, patch_size=16, channels=1, d_model=64, n_heads=4,
                         n_layers=n_layers, d_ff=d_ff, scale="d_k", seed=seed)


def initial_theta(cfg: EncoderConfig, seed: int) -> dict[str, np.ndarray]:
    """Glorot encoder from `init_params(cfg)`; W_cls ~ N(0, 0.02²), b_cls = 0."""
    rng = np.random.default_rng([seed, 7])
    head = ClassifierHead(W_cls=0.02 * rng.standard_normal((cfg.d_model, len(CLASS_NAMES))),
                          b_cls=np.zeros(len(CLASS_NAMES)), class_names=CLASS_NAMES)
    return theta_from(init_params(cfg), head, np.float32)


def learning_rate(step: int, base: float, warmup: int, total: int, floor: float = 0.05) -> float:
    """Linear warm-up over `warmup` steps, then cosine decay to floor·base at step `total`."""
    if step < warmup:
        return base * (step + 1) / warmup
    progress = min((step - warmup) / max(total - warmup, 1), 1.0)
    return base * (floor + (1 - floor) * 0.5 * (1 + np.cos(np.pi * progress)))


@dataclass
class Adam:
    """Adam (Kingma & Ba): m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², θ ← θ − lr·m̂/(√v̂ + ε)."""

    beta_1: float = 0.9
    beta_2: float = 0.999
    eps: float = 1e-8
    weight_decay: float = 0.0  # decoupled (AdamW), on matrices only
    t: int = 0

    def __post_init__(self) -> None:
        self.m: dict[str, np.ndarray] = {}
        self.v: dict[str, np.ndarray] = {}

    def step(self, theta: dict[str, np.ndarray], grads: dict[str, np.ndarray],
             lr: float) -> None:
        self.t += 1
        c1, c2 = 1 - self.beta_1**self.t, 1 - self.beta_2**self.t
        for name, g in grads.items():
            m = self.m.setdefault(name, np.zeros_like(g))
            v = self.v.setdefault(name, np.zeros_like(g))
            m *= self.beta_1
            m += (1 - self.beta_1) * g
            v *= self.beta_2
            v += (1 - self.beta_2) * (g * g)
            if self.weight_decay and theta[name].ndim == 2:
                theta[name] *= np.float32(1 - lr * self.weight_decay)
            theta[name] -= np.float32(lr / c1) * m / (np.sqrt(v / c2) + np.float32(self.eps))


def clip_by_global_norm(grads: dict[str, np.ndarray], max_norm: float,
                        ) -> tuple[dict[str, np.ndarray], float]:
    """All gradients scaled by min(1, max_norm / ‖g‖) (new arrays: the core's are read-only);
    returns them and ‖g‖ before clipping."""
    norm = float(np.sqrt(sum(float((g * g).sum()) for g in grads.values())))
    if max_norm > 0 and norm > max_norm:
        grads = {name: g * np.float32(max_norm / norm) for name, g in grads.items()}
    return grads, norm


def keep_freed_memory() -> None:
    """Let glibc's malloc keep freed memory for the next step instead of returning it.

    The core's backward keeps every field's gradient (the attention's [B, h, N, N] arrays are
    20 MB at batch 32), so its large arrays are all alive at once and freed together. With
    glibc's default thresholds each step then maps fresh pages for them, which the kernel
    zeroes: ~15,000 page faults and ~0.03 s of kernel time per backward (measured at batch
    32). With the mmap threshold at 32 MB (its largest) and the trim threshold at 256 MB
    the next step reuses those pages. Without glibc this does nothing.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD
    libc.mallopt(-1, 256 << 20)  # M_TRIM_THRESHOLD


def held_out_set(n: int) -> tuple[np.ndarray, np.ndarray]:
    """n held-out images and labels from seeds HELD_OUT_SEED, HELD_OUT_SEED + 1, … (100 each)."""
    images, labels = [], []
    for i, start in enumerate(range(0, n, 100)):
        x, y, _ = make_batch(HELD_OUT_SEED + i, min(100, n - start))
        images.append(x)
        labels.append(y)
    return np.concatenate(images), np.concatenate(labels)


def accuracy(theta: dict[str, np.ndarray], cfg: EncoderConfig, images: np.ndarray,
             labels: np.ndarray, chunk: int = 50) -> tuple[float, float]:
    """(accuracy, mean cross-entropy) of the model on images [n, S, S, 1], labels [n]."""
    correct, loss_sum = 0, 0.0
    for start in range(0, len(images), chunk):
        logits = forward(images[start:start + chunk], theta, cfg)[0]
        y = labels[start:start + chunk]
        correct += int((logits.argmax(axis=-1) == y).sum())
        loss_sum += cross_entropy(logits, y)[0] * len(y)
    return correct / len(images), loss_sum / len(images)


def progress(step: int, total: int, loss: float, acc: float, lr: float, elapsed: float) -> None:
    """One `\\r` progress bar line on stderr."""
    width = 30
    done = int(width * min(step / total, 1.0))
    bar = "█" * done + "·" * (width - done)
    sys.stderr.write(f"\r{bar} {step}/{total} loss {loss:.3f} acc {acc:.3f} lr {lr:.2e} "
                     f"{elapsed / 60:.1f} min ")
    sys.stderr.flush()


def save(theta: dict[str, np.ndarray], cfg: EncoderConfig, out: Path, info: dict) -> None:
    """Write the weights with `save_trained` and the run's record next to them (.json)."""
    params, head = params_from(theta, cfg.n_layers, CLASS_NAMES)
    out.parent.mkdir(parents=True, exist_ok=True)
    save_trained(out, cfg, params, head)
    out.with_suffix(".json").write_text(json.dumps(info, indent=2) + "\n")


def save_checkpoint(theta: dict[str, np.ndarray], cfg: EncoderConfig, folder: Path,
                    step: int) -> None:
    """Write the weights after `step` updates to folder/step{step}.npz (read-only: the run
    itself is unchanged)."""
    params, head = params_from(theta, cfg.n_layers, CLASS_NAMES)
    folder.mkdir(parents=True, exist_ok=True)
    save_trained(folder / f"step{step}.npz", cfg, params, head)


def steps_list(text: str) -> tuple[int, ...]:
    """'0,500,1000' -> (0, 500, 1000)."""
    return tuple(sorted({int(t) for t in text.split(",") if t.strip()}))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=50.0, help="time budget")
    ap.add_argument("--steps", type=int, default=10000, help="length of the lr schedule")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--warmup", type=int, default=300)
    ap.add_argument("--clip", type=float, default=1.0, help="global grad-norm clip (0 = off)")
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--n-layers", type=int, default=2)
    ap.add_argument("--d-ff", type=int, default=128)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-every", type=int, default=250)
    ap.add_argument("--eval-size", type=int, default=1000)
    ap.add_argument("--target", type=float, default=0.98, help="stop at this held-out accuracy")
    ap.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS)
    ap.add_argument("--checkpoint-steps", type=steps_list, default=(),
                    help="also save the weights after these steps, e.g. 0,500,1000 "
                         "(to --checkpoint-dir/step{N}.npz)")
    ap.add_argument("--checkpoint-dir", type=Path, default=None,
                    help="default: next to --out, <out stem>_checkpoints/")
    args = ap.parse_args(argv)
    checkpoint_dir = args.checkpoint_dir or args.out.with_name(args.out.stem + "_checkpoints")

    keep_freed_memory()
    cfg = model_config(args.n_layers, args.d_ff, args.seed)
    theta = initial_theta(cfg, args.seed)
    opt = Adam(weight_decay=args.weight_decay)
    eval_images, eval_labels = held_out_set(args.eval_size)
    print(f"config {cfg.to_dict()}", file=sys.stderr)
    print(f"held-out set: {len(eval_labels)} images, seeds {HELD_OUT_SEED}+", file=sys.stderr)

    start = time.perf_counter()
    loss_ema = acc_ema = None
    best_acc, best_step, history = -1.0, 0, []
    step = 0
    prefetch = ThreadPoolExecutor(max_workers=1)  # makes batch t+1 while batch t trains

    def batch_of(t: int):
        return prefetch.submit(make_batch, TRAIN_SEED_BASE + args.seed * 10_000_000 + t,
                               args.batch)

    next_batch = batch_of(0)
    if 0 in args.checkpoint_steps:
        save_checkpoint(theta, cfg, checkpoint_dir, 0)
    while step < args.steps:
        lr = learning_rate(step, args.lr, args.warmup, args.steps)
        images, labels, _ = next_batch.result()
        next_batch = batch_of(step + 1)
        loss, logits, grads = loss_and_grads(images, labels, theta, cfg)
        grads, grad_norm = clip_by_global_norm(grads, args.clip)
        opt.step(theta, grads, lr)
        step += 1
        if step in args.checkpoint_steps:
            save_checkpoint(theta, cfg, checkpoint_dir, step)

        acc = float((logits.argmax(axis=-1) == labels).mean())
        loss_ema = loss if loss_ema is None else 0.98 * loss_ema + 0.02 * loss
        acc_ema = acc if acc_ema is None else 0.98 * acc_ema + 0.02 * acc
        elapsed = time.perf_counter() - start
        if step % 10 == 0 or step == 1:
            progress(step, args.steps, loss_ema, acc_ema, lr, elapsed)
        out_of_time = elapsed > 60 * args.minutes
        if step % args.eval_every == 0 or out_of_time or step == args.steps:
            held_acc, held_loss = accuracy(theta, cfg, eval_images, eval_labels)
            history.append({"step": step, "minutes": round(elapsed / 60, 2),
                            "train_loss": round(loss_ema, 4), "held_out_loss": round(held_loss, 4),
                            "held_out_accuracy": held_acc, "grad_norm": round(grad_norm, 3)})
            sys.stderr.write(f"\nstep {step}: held-out accuracy {held_acc:.3f} "
                             f"loss {held_loss:.3f} (train loss {loss_ema:.3f}, "
                             f"grad norm {grad_norm:.2f}, {elapsed / 60:.1f} min)\n")
            if held_acc > best_acc:
                best_acc, best_step = held_acc, step
                info = {"command": "python -m training.train " + " ".join(argv or sys.argv[1:]),
                        "args": {k: str(v) for k, v in vars(args).items()},
                        "config": cfg.to_dict(), "step": step,
                        "minutes": round(elapsed / 60, 2), "held_out_accuracy": held_acc,
                        "held_out_size": len(eval_labels), "history": history}
                save(theta, cfg, args.out, info)
            if held_acc >= args.target or out_of_time:
                break
    prefetch.shutdown(cancel_futures=True)
    minutes = (time.perf_counter() - start) / 60
    if best_acc >= 0:  # the record of the whole run next to the best weights
        info.update(steps_run=step, total_minutes=round(minutes, 2), history=history)
        args.out.with_suffix(".json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"done: {step} steps in {minutes:.1f} min; best held-out accuracy {best_acc:.3f} "
          f"at step {best_step}; saved to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
