"""What pictures cost: CPU time per figure kind at the default settings, and a new-settings
visit to The stack with fresh caches (issue 13, item 3).

    .venv/bin/python -m benchmarks.pictures [--repeat 5] [--visits 4] [--repo PATH]

1. Each figure kind the pages draw, with the arguments a page passes at the defaults
   (224 × 224 grey image, N = 196, d_model = 512, h = 8, 6 layers): median CPU milliseconds
   (`time.process_time`, so BLAS threads count) of `figures.<kind>(...)` → PNG bytes.
2. The parts of a cache miss: drawing the random weights (`init_params`) and the forward pass.
3. The Stack page under AppTest: each visit sets a new seed (a trace and pictures nobody has
   computed), and the script's CPU seconds are measured around `at.run()`.

`--repo` measures another checkout with the same figure functions (the "before"): this file
runs again in a child process whose working directory is that checkout (`python -c`, so its
`lens` and `encoder_core` come before this checkout's editable install). Figures, not
pass/fail: these machines are noisy (other work shares their two cores).
"""

from __future__ import annotations

import argparse
import cProfile
import importlib.util
import pstats
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Run a file as __main__ with the working directory first on the path (the child of --repo).
RUN_FILE = ("import runpy, sys; sys.argv = sys.argv[1:]; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")


def checkout_imported() -> Path:
    """The checkout whose `lens` this process imports."""
    return Path(importlib.util.find_spec("lens").origin).resolve().parents[1]


def cpu_ms(fn, repeat: int) -> float:
    """Median CPU milliseconds of fn() over `repeat` calls (after one warm-up call)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(1000 * (time.process_time() - t0))
    return statistics.median(times)


def figure_cases(figures, tr, cfg, original):
    """(name, figure function, args, kwargs) of the pictures the pages draw at these settings
    (`figures`: the checkout's lens.figures)."""
    import numpy as np

    N, d, G = cfg.n_tokens, cfg.d_model, cfg.grid_size
    i = N // 2 + G // 2  # the centre patch
    lt = tr.layers[0]
    attn_row = lt.attn[:, i, :].reshape(cfg.n_heads, G, G)
    table = np.stack([lt_.attn[:, i, :].reshape(cfg.n_heads, G, G) for lt_ in tr.layers])
    L, H = len(tr.layers), cfg.n_heads
    stat = np.random.default_rng(0).random((L, H)) * 100
    return [
        ("heatmap output 196×512", figures.heatmap,
         (tr.output, "output  [196 × 512]", "feature j", "token i"),
         dict(highlight_row=i, window=(0, 0, 32, 32))),
        ("heatmap attn 196×196", figures.heatmap,
         (lt.attn[0], "attn  [196 × 196]", "key j", "query i"),
         dict(signed=False, highlight_row=i, highlight_col=i, size=(5.0, 4.4),
              window=(0, 0, 32, 32))),
        ("heatmap W_1 512×2048", figures.heatmap,
         (tr.params.layers[0].W_1, "W_1  [512 × 2048]", "hidden unit", "in feature"),
         dict(window=(0, 0, 32, 32))),
        ("value_grid 6×8 (stack)", figures.value_grid,
         (stat, "mean attention distance (pixels)  [6 × 8]", "head", "layer"),
         dict(signed=False, fmt="{:.1f}", row0=1, col0=1)),
        ("attention_table 1×1 (rollout)", figures.attention_table,
         (tr.image, table[:1, :1], "rollout: row R[i, :]"),
         dict(row_labels=[""], col_labels=[""], query=i, panel=3.0,
              colorbar_label="rollout weight")),
        ("attention_table 6×8 (stack)", figures.attention_table,
         (tr.image, table, "attn[h, i, :]  (14 × 14)"),
         dict(row_labels=[f"layer {l + 1}" for l in range(L)],
              col_labels=[f"head {h + 1}" for h in range(H)], query=i,
              colorbar_label="attention weight")),
        ("attention_grid 8 (multihead)", figures.attention_grid,
         (tr.image, attn_row, [f"head {h + 1}" for h in range(H)], "attn"),
         dict(ncols=4, query=i, colorbar_label="attention weight")),
        ("row_heatmap 8×512 (multihead)", figures.row_heatmap,
         (np.random.default_rng(1).standard_normal((H, d)), "contributions", "out feature",
          "head", [str(h + 1) for h in range(H)]), dict(highlight_col=3)),
        ("bars 2×196 (scores)", figures.bars,
         ([lt.scores[0, i], lt.attn[0, i]], ["before", "after"], "key j",
          ["score", "weight"], "row"), dict(highlight=i)),
        ("bar_panels 3×196 (scores)", figures.bar_panels,
         (np.stack([lt.attn[0, i]] * 3), ["a", "b", "c"], "key j", "weight", "scaling"),
         dict(highlight=i, uniform_line=True, size=(12.0, 3.4))),
        ("lines (positional)", figures.lines,
         (list(range(N)), [tr.pe[:, c] for c in (0, 1, 2, 3)], ["a", "b", "c", "d"], "PE",
          "pos", "value"), {}),
        ("image_with_grid (patches)", figures.image_with_grid,
         (tr.image, cfg.patch_size, "14 × 14 = 196 patches"), dict(highlight=i)),
        ("patch_gallery 64 (patches)", figures.patch_gallery,
         (tr.patches, cfg.patch_size, cfg.channels, "patches 0 … 63"), {}),
        ("image_pair (overview)", figures.image_pair,
         (original, tr.image, ("upload", "model input")), {}),
        ("pipeline (overview)", figures.pipeline,
         (tr.image, cfg.patch_size, ["image", "patches", "encoder"],
          ["x0 = patches·W_E + PE  [196 × 512]", "encoder layer × 6", "output  [196 × 512]"]),
         {}),
    ]


def default_setup():
    from encoder_core import encode, init_params
    from lens.images import DEFAULT_IMAGE, decode_image
    from lens.settings import Settings

    cfg = Settings().to_config()
    original, image = decode_image(DEFAULT_IMAGE.read_bytes(), cfg.image_size, cfg.channels)
    return cfg, original, image, init_params, encode


def breakdown() -> dict[str, list[float]]:
    """Wrap the parts of a visit to add up their CPU seconds (the page's thread only runs
    them, so process time is theirs). Returns {part: [seconds]}, filled as the visits run."""
    from lens import explorer, model_weights, resources, traces, widgets

    parts: dict[str, list[float]] = {}

    def timed(owner, name: str, label: str) -> None:
        inner = getattr(owner, name)
        total = parts.setdefault(label, [0.0])

        def wrapper(*a, **kw):
            t0 = time.process_time()
            try:
                return inner(*a, **kw)
            finally:
                total[0] += time.process_time() - t0

        setattr(owner, name, wrapper)

    timed(model_weights, "init_params", "random weights (init_params)")
    timed(traces, "encode", "forward pass (encode)")
    timed(widgets, "render", "pictures (figures.*, cached by content)")
    timed(widgets, "number_window", "number windows (pandas Styler)")
    timed(explorer, "payload", "attention explorer (payload, component)")  # when built
    timed(explorer, "show", "attention explorer (payload, component)")  # every run
    timed(resources, "derived", "derived quantities (rollout, head stats)")
    return parts


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--visits", type=int, default=4, help="new-settings visits to The stack")
    p.add_argument("--repo", type=Path, default=ROOT, help="the checkout to measure")
    p.add_argument("--skip-page", action="store_true")
    p.add_argument("--breakdown", action="store_true",
                   help="CPU seconds of the visits' parts: weights, forward pass, pictures, …")
    p.add_argument("--profile", type=int, default=0,
                   help="print the N costliest functions of the visits (cProfile)")
    p.add_argument("--in-checkout", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    args.repo = args.repo.resolve()
    if checkout_imported() != args.repo:
        if args.in_checkout:
            sys.exit(f"{args.repo} has no lens package of its own to measure")
        child = [sys.executable, "-c", RUN_FILE, __file__, *sys.argv[1:], "--repo",
                 str(args.repo), "--in-checkout"]
        sys.exit(subprocess.run(child, cwd=args.repo).returncode)

    from lens import figures

    cfg, original, image, init_params, encode = default_setup()
    params = init_params(cfg)
    tr = encode(image, cfg, params)
    print(f"checkout: {args.repo}")
    print(f"{'picture (defaults)':<34} {'CPU ms':>8} {'PNG kB':>8}")
    for name, fn, a, kw in figure_cases(figures, tr, cfg, original):
        ms = cpu_ms(lambda fn=fn, a=a, kw=kw: fn(*a, **kw), args.repeat)
        kb = len(fn(*a, **kw)) / 1024
        print(f"{name:<34} {ms:>8.1f} {kb:>8.1f}", flush=True)
    print(f"{'init_params (defaults)':<34} "
          f"{cpu_ms(lambda: init_params(cfg), args.repeat):>8.1f}")
    encode_ms = cpu_ms(lambda: encode(image, cfg, params), args.repeat)
    print(f"{'encode (defaults)':<34} {encode_ms:>8.1f}")
    if args.skip_page:
        return

    from streamlit.testing.v1 import AppTest

    from lens import keys
    from lens.resources import caches
    from lens.steps import PAGES

    at = AppTest.from_file(str(args.repo / "app.py"), default_timeout=600)
    at.session_state[keys.ADVANCED] = True  # its controls exist only while it is open
    at.run()
    at.switch_page(PAGES["stack"].path)
    at.run()  # imports and the default trace: not a new-settings visit
    parts = breakdown() if args.breakdown else {}
    cpu, wall = [], []
    profiler = cProfile.Profile() if args.profile else None
    if profiler:  # the script runs in AppTest's own thread: profile the threads it starts
        threading.setprofile(lambda *_: profiler.enable())
    for k in range(args.visits):
        for cache in caches().values():  # pictures included
            cache.clear()
        at.sidebar.number_input(key="seed").set_value(1000 + k)
        t0, w0 = time.process_time(), time.perf_counter()
        at.run()
        cpu.append(time.process_time() - t0)
        wall.append(time.perf_counter() - w0)
        assert not at.exception, [e.value for e in at.exception]
    threading.setprofile(None)
    for name, seconds in parts.items():
        print(f"  {name:<40} CPU s per visit {seconds[0] / args.visits:.3f}")
    if profiler:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
    print(f"The stack, new seed, fresh caches: CPU s median {statistics.median(cpu):.3f} "
          f"(each {', '.join(f'{c:.3f}' for c in cpu)}), wall s median "
          f"{statistics.median(wall):.3f}")


if __name__ == "__main__":
    main()
