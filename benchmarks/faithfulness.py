"""Benchmark: which relevance map is faithful, and what the views of issue 53 cost.

    .venv/bin/python -m benchmarks.faithfulness [--n 200] [--steps 10] [--vit-n 16]
                                                [--repeat 3] [--skip-timing]

1. Faithfulness (encoder_core/views/faithfulness.py). For every image, the predicted class's
   deletion and insertion curves (`steps` + 1 points, patches replaced by the image's mean
   colour) in the order of five maps — the last layer's attention and the attention rollout
   read through the head's row (`views.relevance.attention_readout`), Chefer et al.'s relevance
   and the gradient rollout (`encoder_core.relevance`), and a random order (seeded per image) —
   and their areas: mean ± standard error over the images, and how often the map beats the
   random order on the same image (deletion: a lower area; insertion: a higher one).
   a. the shipped shapes model (assets/shapes_encoder.npz: the note's post-norm encoder, 2
      layers, mean-pool head) on `--n` images of its training's held-out set (seeds 900 000 …,
      `training.train.held_out_set`);
   b. a ViT-Ti/16-shaped model (224 px RGB, patch 16, d 192, 3 heads, 12 layers, pre-norm,
      [CLS] + learned positions, GELU, final norm, a 10-class [CLS] head) with RANDOM weights
      (`init_params`, Glorot) on the first `--vit-n` of those images (grey made RGB): a
      model that has learned nothing, so its maps explain an arbitrary function.
2. Timing at ViT-S/16 (d 384, 6 heads, 12 layers, d_ff 1536, 197 tokens, 1000 classes, random
   weights) on one image: each new view against one forward (`encode`), median of `--repeat`.
   `patching_map` is S·L(L + 1)/2 layer evaluations: one row of it (`patching_row`, the last
   layer: S single-token patches through one layer) is measured and the whole map estimated
   from it (row l costs L − l such layers).

One BLAS thread (OPENBLAS_NUM_THREADS=1 unless set): the machine has 2 cores, often shared, so
the timings are given as this process's CPU time (the work) beside the wall time.
Figures, not pass/fail. Prints Markdown tables (docs/inside-the-model.md holds the last run).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy is imported

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

from encoder_core import (  # noqa: E402
    EncoderConfig,
    HeadParams,
    deletion_curve,
    encode,
    init_params,
    insertion_curve,
    logit_attribution,
    logit_lens,
    patch_run,
    predict,
    relevance,
    relevance_order,
)
from encoder_core.shapes_model.classifier import load_trained  # noqa: E402
from encoder_core.views.patching import patching_row  # noqa: E402
from encoder_core.views.relevance import attention_readout  # noqa: E402

MAPS = ("attention", "rollout", "chefer", "gradient_rollout", "random")
MAP_NAMES = {"attention": "last layer's attention", "rollout": "attention rollout",
             "chefer": "Chefer et al.", "gradient_rollout": "gradient rollout",
             "random": "random order"}
IMAGENET = dict(pixel_mean=(0.485, 0.456, 0.406), pixel_std=(0.229, 0.224, 0.225))
VIT = dict(image_size=224, patch_size=16, channels=3, norm_first=True, cls_token=True,
           position="learned", patch_bias=True, qkv_bias=True, proj_bias=True,
           activation="gelu", final_norm=True, ln_eps=1e-6, **IMAGENET)
VIT_TI = EncoderConfig(d_model=192, n_heads=3, n_layers=12, d_ff=768, **VIT)
VIT_S = EncoderConfig(d_model=384, n_heads=6, n_layers=12, d_ff=1536, **VIT)


def with_random_cls_head(cfg: EncoderConfig, n_classes: int, seed: int):
    """init_params(cfg) with a random [CLS] head (Glorot W_head, b_head small)."""
    rng = np.random.default_rng(seed)
    limit = np.sqrt(6.0 / (cfg.d_model + n_classes))
    W_head = rng.uniform(-limit, limit, (cfg.d_model, n_classes)).astype(np.float32)
    head = HeadParams(pool="token", W_head=W_head,
                      b_head=(0.01 * rng.standard_normal(n_classes)).astype(np.float32))
    return dataclasses.replace(init_params(cfg), head=head)


def maps_of(trace, params, target: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The five orders' scores ([N] each) for one image and class."""
    last, rolled = attention_readout(trace)
    return {"attention": last, "rollout": rolled,
            "chefer": relevance(trace, params, target, "chefer"),
            "gradient_rollout": relevance(trace, params, target, "gradient_rollout"),
            "random": rng.permutation(trace.config.n_tokens).astype(np.float64)}


def areas(images: np.ndarray, cfg: EncoderConfig, params, steps: int,
          label: str) -> dict[str, dict[str, list[float]]]:
    """Deletion and insertion areas of every map over the images, per map and kind; prints
    progress to the terminal."""
    out = {kind: {m: [] for m in MAPS} for kind in ("deletion", "insertion")}
    full, blank = [], []
    t0, c0 = time.perf_counter(), time.process_time()
    for i, image in enumerate(images):
        trace = encode(image, cfg, params)
        target = int(np.argmax(predict(trace, params)))
        for name, scores in maps_of(trace, params, target, np.random.default_rng(i)).items():
            order = relevance_order(scores)
            d = deletion_curve(image, cfg, params, order, target, steps)
            out["deletion"][name].append(d.area)
            out["insertion"][name].append(
                insertion_curve(image, cfg, params, order, target, steps).area)
        full.append(d.probs[0])
        blank.append(d.probs[-1])
        if (i + 1) % 25 == 0 or i + 1 == len(images):
            print(f"  {label}: {i + 1}/{len(images)} images, {time.perf_counter() - t0:.0f} s "
                  f"wall, {time.process_time() - c0:.0f} s CPU", flush=True)
    out["ends"] = {"full": full, "blank": blank}
    return out


def table(results: dict, n: int) -> str:
    """The Markdown table of one model's areas."""
    lines = ["| map | deletion area ↓ | beats random | insertion area ↑ | beats random |",
             "|---|---|---|---|---|"]
    for m in MAPS:
        row = [MAP_NAMES[m]]
        for kind, better in (("deletion", np.less), ("insertion", np.greater)):
            a = np.array(results[kind][m])
            se = a.std(ddof=1) / np.sqrt(len(a)) if len(a) > 1 else 0.0
            row.append(f"{a.mean():.3f} ± {se:.3f}")
            if m == "random":
                row.append("—")
            else:
                wins = better(a, np.array(results[kind]["random"])).mean()
                row.append(f"{100 * wins:.0f} %")
        lines.append("| " + " | ".join(row) + " |")
    full, blank = np.mean(results["ends"]["full"]), np.mean(results["ends"]["blank"])
    lines.append(f"\n(n = {n}; mean probability of the class on the full image {full:.3f}, "
                 f"on the all-mean image {blank:.3f})")
    return "\n".join(lines)


def shapes_images(n: int) -> np.ndarray:
    from training.train import held_out_set

    return held_out_set(n)[0]  # [n, 224, 224, 1]


def median_ms(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The median (wall, CPU) milliseconds of `repeat` calls: with one BLAS thread the CPU time
    of this process is the work done, whatever else runs on the machine."""
    wall, cpu = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - w0)
        cpu.append(time.process_time() - c0)
    return 1000 * float(np.median(wall)), 1000 * float(np.median(cpu))


def timing(repeat: int) -> str:
    """The views at ViT-S/16 against one forward, a Markdown table."""
    cfg, params = VIT_S, with_random_cls_head(VIT_S, 1000, seed=1)
    rng = np.random.default_rng(0)
    image_a, image_b = (rng.random((224, 224, 3), dtype=np.float32) for _ in range(2))
    trace_a, trace_b = encode(image_a, cfg, params), encode(image_b, cfg, params)
    target = int(np.argmax(predict(trace_a, params)))
    order = relevance_order(relevance(trace_a, params, target, "chefer"))
    L, S = cfg.n_layers, cfg.seq_len
    rows: list[tuple[str, Callable[[], object], int]] = [
        ("`encode` (the forward, every intermediate kept)", lambda: encode(image_a, cfg, params),
         repeat),
        ("`logit_lens`", lambda: logit_lens(trace_a, params), repeat),
        ("`logit_lens(tokens=True)`", lambda: logit_lens(trace_a, params, tokens=True), repeat),
        ("`logit_attribution` ([CLS] head)", lambda: logit_attribution(trace_a, params, target),
         repeat),
        ("`patch_run` from layer 0 (all 12 layers)",
         lambda: patch_run(trace_a, trace_b, params, 0, [1]), repeat),
        ("`patch_run` from layer 6", lambda: patch_run(trace_a, trace_b, params, 6, [1]), repeat),
        (f"`patching_row` at layer {L - 1} ({S} single-row patches × 1 layer)",
         lambda: patching_row(trace_a, trace_b, params, target, L - 1), 1),
        ("`deletion_curve`, 10 steps (11 forwards, no trace kept)",
         lambda: deletion_curve(image_a, cfg, params, order, target, 10), 1),
        ("`relevance` (Chefer; for comparison)",
         lambda: relevance(trace_a, params, target, "chefer"), 1),
    ]
    measured = {name: median_ms(fn, n) for name, fn, n in rows}  # (wall, CPU) ms
    forward = measured[rows[0][0]][1]
    lines = ["| view | CPU ms | × forward (CPU) | wall ms |", "|---|---|---|---|"]
    for name, _, _ in rows:
        wall, cpu = measured[name]
        lines.append(f"| {name} | {cpu:.1f} | {cpu / forward:.2f} | {wall:.1f} |")
    row_wall, row_cpu = measured[rows[6][0]]
    pairs = L * (L + 1) / 2
    lines.append(f"| `patching_map` (estimated: the row above × L(L + 1)/2 = {pairs:.0f}) "
                 f"| {row_cpu * pairs:.0f} | {row_cpu * pairs / forward:.0f} | "
                 f"{row_wall * pairs:.0f} |")
    return "\n".join(lines)


def machine() -> str:
    cpu = platform.processor() or "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{cpu}, {os.cpu_count()} cores, load average {load:.1f} at the start; NumPy "
            f"{np.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=200, help="shapes held-out images")
    ap.add_argument("--steps", type=int, default=10, help="steps of every curve")
    ap.add_argument("--vit-n", type=int, default=16, help="images for the ViT-shaped model")
    ap.add_argument("--repeat", type=int, default=3, help="timing repeats")
    ap.add_argument("--skip-timing", action="store_true")
    args = ap.parse_args(argv)
    print(f"machine: {machine()}\n", flush=True)
    started, cpu_started = time.perf_counter(), time.process_time()
    images = shapes_images(max(args.n, args.vit_n))
    cfg, params, _ = load_trained()
    shapes = areas(images[:args.n], cfg, params, args.steps, "shapes model")
    print(f"\n### Shapes model (trained), held-out set, {args.steps} steps\n")
    print(table(shapes, args.n), flush=True)
    rgb = np.repeat(images[:args.vit_n], 3, axis=-1)
    vit_params = with_random_cls_head(VIT_TI, 10, seed=0)
    vit = areas(rgb, VIT_TI, vit_params, args.steps, "ViT-Ti/16 random")
    print(f"\n### ViT-Ti/16-shaped model, random weights, {args.steps} steps\n")
    print(table(vit, args.vit_n), flush=True)
    if not args.skip_timing:
        print("\n### The views at ViT-S/16 (random weights), one image\n")
        print(timing(args.repeat))
    print(f"\ntotal {time.perf_counter() - started:.0f} s wall, "
          f"{time.process_time() - cpu_started:.0f} s CPU", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
