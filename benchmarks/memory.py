"""Where the memory of one heavy session goes (issue 23, item 1): each part predicted by
`encoder_core.cost` and measured side by side.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.memory     # defaults, then heaviest
    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.memory --only default
    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.memory --calibrate  # cost.py's rates

One BLAS thread, as scripts/app and scripts/serve run the server (the times depend on it, the
bytes do not).

The heaviest settings the controls allow: 224 px, patch 7 (1,024 tokens), d_model 1024 (d_ff
4096), 8 heads, 12 layers, FFN on (lens/settings.py: the 1 GiB attention limit allows 8 heads
at 12 layers). For each configuration, one table:

- the trace's fields, grouped (q/k/v/heads, scores + attn, the [S, d] rows, the FFN's hidden
  layer, LayerNorm, the image and patches): `cost.trace_field_bytes` against the arrays of a real
  trace (each distinct array once, as `lens.digests.nbytes` counts them);
- the weights: `cost.params_bytes` against `nbytes(init_params(cfg))`;
- `encode`'s peak: `cost.encode_peak_bytes` against tracemalloc's peak while `encode` runs
  (the image and weights made before), and the process's RSS high-water mark growth (VmHWM
  reset through /proc/self/clear_refs) for comparison;
- what The stack derives (`attention_rollout`, `head_statistics`) and its explorer payload
  (`lens.explorer.payload` with the maps the page sends, or the picker alone when
  `explorer.fits` says no), predicted by `page_costs.stack(cfg)`;
- Compare's variant traces (`page_costs.compare_variants`: each its own trace, predicted by
  `trace_cost`; one trace per distinct configuration is measured, the shuffled image's have
  the same configuration as the image's) and its non-trace work (`page_costs.compare`);
- the PNG pictures of The stack (lens.figures, the figures the page draws): their bytes and
  the peak while drawing them;
- `encode`'s time: `cost.encode_seconds` against the best of `--repeat` runs.

Figures, not pass/fail. "peak" is tracemalloc's: every NumPy buffer and Python object
allocated while the part runs and still alive at its worst moment (its result included).
These machines are shared: times vary by ±50 % with the load (the best run is shown).
"""

from __future__ import annotations

import argparse
import gc
import os
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import fields

import numpy as np

from encoder_core import EncoderConfig, cost, encode, init_params
from encoder_core.trace import LayerNormTrace, LayerTrace

MB = 2**20
GROUPS = {  # the table's groups of trace fields (cost.trace_field_bytes keys)
    "q, k, v, heads [h, S, d_head]": ("q", "k", "v", "heads"),
    "scores + attn [h, S, S]": ("scores", "attn"),
    "[S, d] rows (x0, concat, attn_out, resid, ffn_out, …)": (
        "embedded", "pe", "tokens", "pos", "x0", "concat", "attn_out", "resid_1", "ffn_out",
        "resid_2"),
    "FFN hidden [S, d_ff]": ("ffn_hidden",),
    "LayerNorm (mean, var, normed, out)": ("ln_1", "ln_2", "final_ln"),
    "image, pixels, patches": ("image", "pixels", "patches"),
}


def heavy_config() -> EncoderConfig:
    from lens.settings import Settings

    return Settings(image_size=224, patch_size=7, d_model=1024, n_heads=8, n_layers=12,
                    use_ffn=True).to_config()


def default_config() -> EncoderConfig:
    from lens.settings import Settings

    return Settings().to_config()


def traced(fn: Callable[[], object]) -> tuple[object, int, float]:
    """(result, tracemalloc peak in bytes, seconds) of fn()."""
    gc.collect()
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        result = fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        seconds = time.perf_counter() - t0
        tracemalloc.stop()
    return result, peak, seconds


def best_seconds(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` runs (the least disturbed by other work on the machine)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def rss_growth(fn: Callable[[], object]) -> tuple[object, int | None]:
    """(result, growth of the RSS high-water mark while fn runs), None where /proc cannot reset
    it."""
    def status(key: str) -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * 1024
        raise KeyError(key)

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # resets VmHWM to the current RSS
        before = status("VmRSS")
    except OSError:
        return fn(), None
    result = fn()
    return result, status("VmHWM") - before


def field_bytes(tr) -> dict[str, int]:
    """Bytes of the real trace by field, each distinct array once (in the trace's order)."""
    seen: set[int] = set()
    out: dict[str, int] = {}

    def add(name: str, a: np.ndarray | None) -> None:
        if a is not None and id(a) not in seen:
            seen.add(id(a))
            out[name] = out.get(name, 0) + a.nbytes

    for name in ("image", "pixels", "patches", "embedded", "pe", "tokens", "pos", "x0"):
        add(name, getattr(tr, name))
    for layer in tr.layers:
        for f in fields(LayerTrace):
            value = getattr(layer, f.name)
            if isinstance(value, LayerNormTrace):
                for g in fields(LayerNormTrace):
                    add(f.name, getattr(value, g.name))
            else:
                add(f.name, value)
    if tr.final_ln is not None:
        for g in fields(LayerNormTrace):
            add("final_ln", getattr(tr.final_ln, g.name))
    add("output", tr.output)
    return out


class Table:
    def __init__(self, title: str) -> None:
        self.title = title
        self.rows: list[tuple[str, str, str, str]] = []

    def add(self, what: str, predicted: float | None, measured: float | None,
            note: str = "", unit: str = "MB") -> None:
        def fmt(v: float | None) -> str:
            if v is None:
                return "—"
            return f"{v / MB:,.1f} MB" if unit == "MB" else f"{v:,.2f} s"

        self.rows.append((what, fmt(predicted), fmt(measured), note))

    def print(self) -> None:
        print(f"\n### {self.title}\n")
        print("| part | predicted | measured | note |")
        print("|---|---:|---:|---|")
        for row in self.rows:
            print("| " + " | ".join(row) + " |")


def error(predicted: float, measured: float) -> str:
    return f"{100 * (predicted / measured - 1):+.1f} %" if measured else ""


def session_table(name: str, cfg: EncoderConfig, repeat: int) -> None:
    from encoder_core.pipeline.patches import shuffle_patches
    from encoder_core.views.analysis import (
        attention_entropy,
        fixed_permutation,
        head_statistics,
        patch_block,
        permute_tokens,
    )
    from encoder_core.views.rollout import attention_rollout
    from lens import explorer, figures, page_costs
    from lens.digests import nbytes
    from lens.images import DEFAULT_IMAGE, decode_image
    from lens.steps import PAGES

    S, N, G, L, h = cfg.seq_len, cfg.n_tokens, cfg.grid_size, cfg.n_layers, cfg.n_heads
    t = Table(f"{name}: {cfg.image_size} px, patch {cfg.patch_size} → S = {S} tokens, "
              f"d_model {cfg.d_model}, d_ff {cfg.d_ff}, {h} heads, {L} layers")
    _, image = decode_image(DEFAULT_IMAGE.read_bytes(), cfg.image_size, cfg.channels)

    params, params_peak, params_s = traced(lambda: init_params(cfg))
    tr, peak, _ = traced(lambda: encode(image, cfg, params))
    measured_fields = field_bytes(tr)
    predicted_fields = cost.trace_field_bytes(cfg)
    for group, names in GROUPS.items():
        p = sum(predicted_fields[n] for n in names)
        m = sum(measured_fields.get(n, 0) for n in names)
        t.add(f"trace: {group}", p, m, f"{100 * m / cost.trace_bytes(cfg):.0f} % of the trace")
    traced_bytes = nbytes(tr) - nbytes(tr.params)
    t.add("**trace, all fields** (`trace_bytes`)", cost.trace_bytes(cfg), traced_bytes,
          "exact" if traced_bytes == cost.trace_bytes(cfg) else "DIFFERS")
    t.add("weights (`params_bytes`)", cost.params_bytes(cfg), nbytes(params),
          "exact" if nbytes(params) == cost.params_bytes(cfg) else "DIFFERS")
    t.add("weights: drawing them (`params_cost`, peak)", cost.params_cost(cfg).bytes,
          params_peak, f"{params_s:.2f} s (predicted {cost.params_cost(cfg).seconds:.2f} s); "
          "cached apart from the traces, shared by Compare's variants")
    t.add("encode: transient beyond the trace", cost.encode_transient_bytes(cfg),
          peak - traced_bytes, "a LayerNorm's rows at the end (2·S·d·4) + Python objects")
    del tr
    tr, rss = rss_growth(lambda: encode(image, cfg, params))
    t.add("**encode: peak** (`encode_peak_bytes`)", cost.encode_peak_bytes(cfg), peak,
          f"{error(cost.encode_peak_bytes(cfg), peak)}; RSS high-water growth "
          + (f"{rss / MB:,.0f} MB" if rss is not None else "—"))

    # --- The stack: rollout, head statistics, explorer payload, pictures -----------------------
    terms = page_costs.stack(cfg)
    attns = [layer.attn for layer in tr.layers]
    R, m_peak, r_s = traced(lambda: attention_rollout(attns))
    t.add("The stack: rollout R [S, S] float64 (peak)", terms[0].kept + terms[0].transient,
          m_peak, f"result {R.nbytes / MB:,.1f} MB; {r_s:.2f} s (predicted "
          f"{terms[0].seconds:.2f} s)")
    stats, m_peak, s_s = traced(lambda: head_statistics(attns, G, cfg.patch_size, cfg.n_prefix))
    t.add("The stack: head statistics (peak)", terms[1].kept + terms[1].transient, m_peak,
          f"[h, N, S] float64 temporaries; {s_s:.2f} s (predicted {terms[1].seconds:.2f} s)")
    heads = list(range(min(h, 8)))
    n_l = min(L, 6)
    layers = sorted({round(i * (L - 1) / (n_l - 1)) for i in range(n_l)}) if L > n_l \
        else list(range(L))
    live = layers if explorer.fits(len(layers) * len(heads), N) else (
        [0] if explorer.fits(len(heads), N) else [])
    text = {"hint": "hover", "aria": "picker", "patch": "patch {i}", "weight": "weight"}

    def build_payload() -> bytes:
        maps = None
        if live:
            maps = explorer.Maps(np.stack([patch_block(tr.layers[l].attn[heads], cfg.n_prefix)
                                           for l in live]), "attn[h, {i}, :]", "weight")
        return explorer.payload(tr.image, G, N // 2, text, maps)

    blob, m_peak, _ = traced(build_payload)
    predicted = terms[2]
    t.add(f"The stack: explorer payload ({len(live) * len(heads)} maps sent"
          f"{'' if live else ': over 4 MB, picker only'})", predicted.kept, len(blob),
          f"building it peaked at {m_peak / MB:,.1f} MB (predicted "
          f"{(predicted.kept + predicted.transient) / MB:,.1f})")
    t.add("**The stack: derived work** (`page_cost(cfg, 'stack')`)",
          page_costs.page_cost(cfg, page_costs.stack).bytes, None,
          "results kept + the largest temporaries of one computation")

    i = N // 2 + G // 2
    r = cfg.n_prefix + i
    maps = np.stack([tr.layers[l].attn[heads, r, cfg.n_prefix:].reshape(len(heads), G, G)
                     for l in layers])
    distance, entropy = stats

    def draw_stack() -> list[bytes]:
        return [
            figures.attention_table(tr.image, maps, f"attn[h, {i}, :]",
                                    row_labels=[f"layer {l + 1}" for l in layers],
                                    col_labels=[f"head {k + 1}" for k in heads], query=i,
                                    colorbar_label="weight"),
            figures.attention_table(tr.image, R[r, cfg.n_prefix:].reshape(1, 1, G, G),
                                    "rollout", row_labels=[""], col_labels=[""], query=i,
                                    panel=3.0, colorbar_label="rollout weight"),
            figures.attention_table(tr.image, R[cfg.n_prefix:].mean(axis=0)[cfg.n_prefix:]
                                    .reshape(1, 1, G, G), "rollout mean", row_labels=[""],
                                    col_labels=[""], panel=3.0, colorbar_label="weight"),
            figures.value_grid(distance, "distance", "head", "layer", fmt="{:.1f}", row0=1,
                               col0=1),
            figures.value_grid(entropy, "entropy", "head", "layer", row0=1, col0=1),
            figures.heatmap(tr.output, f"output  [{S} × {cfg.d_model}]", "feature", "token",
                            highlight_row=r, window=(0, 0, 32, 32)),
        ]

    draw_stack()  # once first: fonts and colour tables loaded, as in a running server
    pngs, m_peak, p_s = traced(draw_stack)
    drawn = page_costs.pictures([len(layers) * len(heads), 1, 1, 0, 0, 0])
    table = "the page draws the table" if len(live) < len(layers) else (
        "the explorer carries the maps: the page draws the other 5")
    t.add(f"The stack: its {len(pngs)} PNG pictures (bytes)", drawn.kept,
          sum(len(p) for p in pngs), f"{table}; {p_s:.2f} s (predicted {drawn.seconds:.2f} s)")
    t.add("The stack: drawing them (peak)", drawn.kept + drawn.transient, m_peak,
          f"the {len(layers)} × {len(heads)} table the largest")
    blob = pngs = None  # let them go before the variant traces

    # --- Compare: variant traces and the non-trace work ------------------------------------------
    variants = page_costs.compare_variants(cfg)
    perm = fixed_permutation(N)
    shuffled = shuffle_patches(tr.image, cfg.patch_size, perm)
    measured_by_cfg: dict[EncoderConfig, int] = {cfg: peak}
    kept_variants = {}
    for vname, vcfg in variants.items():
        picture = shuffled if vname.startswith("shuffled") else tr.image
        if vcfg not in measured_by_cfg:
            vtr, vpeak, _ = traced(lambda vcfg=vcfg, picture=picture: encode(picture, vcfg,
                                                                             params))
            measured_by_cfg[vcfg] = vpeak
            if vname in ("pe_off", "pe_on"):
                kept_variants[vname] = vtr
            del vtr
        same = " (the main trace's configuration)" if vcfg == cfg else ""
        t.add(f"Compare: variant trace `{vname}`{same}", cost.trace_cost(vcfg).bytes,
              measured_by_cfg[vcfg], f"{error(cost.trace_cost(vcfg).bytes, measured_by_cfg[vcfg])}"
              f"; ≈ {cost.encode_seconds(vcfg):.1f} s predicted")
    total = sum(cost.trace_cost(v).bytes for v in variants.values())
    t.add("**Compare: its variant traces together**", total, None,
          f"{len(variants)} traces beside the page's own; the weights are shared")
    other = next(iter(kept_variants.values()), tr)
    kp = cfg.n_prefix

    def compare_work() -> object:
        gaps = [np.abs(other.output - permute_tokens(tr.output, perm, kp)) for _ in range(2)]
        ent = [attention_entropy(tr.layers[0].attn[:, kp:, :]) for _ in range(2)]
        return gaps, ent

    _, m_peak, _ = traced(compare_work)
    t.add("Compare: non-trace work (`page_cost(cfg, 'compare')`)",
          page_costs.page_cost(cfg, page_costs.compare).bytes, m_peak,
          "gaps [S, d], entropies [h, N, S] f64")
    kept_variants.clear()
    other = None

    # --- time -----------------------------------------------------------------------------------
    load = os.getloadavg()[0]
    cpu = time.process_time()
    seconds = best_seconds(lambda: encode(image, cfg, params), repeat)
    cpu = (time.process_time() - cpu) / repeat
    t.add("encode: time (`encode_seconds`, an idle machine)", cost.encode_seconds(cfg), seconds,
          f"best of {repeat} (CPU {cpu:.2f} s a run, BLAS threads as set; load average "
          f"{load:.1f}); {cost.matmul_flops(cfg) / 1e9:,.0f} GFLOP of products; "
          f"{error(cost.encode_seconds(cfg), seconds)}", unit="s")
    t.print()
    print("\n`page_cost(cfg, page)` (derived work beyond the trace; Compare without its variant "
          "traces): " + ", ".join(f"{page} {c.bytes / MB:,.0f} MB / {c.seconds:.1f} s"
                                  for page, info in PAGES.items()
                                  if (c := page_costs.page_cost(cfg, info.costs)).bytes))


def calibrate(repeat: int) -> None:
    """The rates of encoder_core.cost, measured here (the best of `repeat` runs each)."""
    from encoder_core.pipeline.attention import softmax
    from encoder_core.pipeline.ffn import _apply_in_place, gelu

    rng = np.random.default_rng(0)
    a, b = rng.random((1024, 1024), dtype=np.float32), rng.random((1024, 1024), dtype=np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    fresh = 256 * MB // 4  # float32 values: above glibc's mmap threshold, fresh pages each time
    scores = rng.random((8, 1024, 1024), dtype=np.float32)
    hidden = rng.random((1024, 4096), dtype=np.float32) - 0.5
    x64 = rng.random(8 * MB)  # 64 MB: from memory, not from the cache, as the views' arrays
    rates = {
        "MATMUL_GFLOPS": 2 * 1024**3 / best_seconds(lambda: a @ b, repeat) / 1e9,
        "MATMUL64_GFLOPS": 2 * 1024**3 / best_seconds(lambda: a64 @ b64, repeat) / 1e9,
        "fresh pages (not a constant)": 4 * fresh / best_seconds(
            lambda: np.full(fresh, 1.0, dtype=np.float32), repeat),
        "EXP_PER_S": scores.size / best_seconds(lambda: softmax(scores), repeat),
        "GELU_PER_S": hidden.size / best_seconds(
            lambda: _apply_in_place(gelu, hidden.copy()), repeat),
        "ELEMENTWISE64_PER_S": 2 * x64.size / (best_seconds(lambda: np.log(x64), repeat)
                                               + best_seconds(lambda: x64 * x64, repeat)),
    }
    # the write rate is fitted: encode's time at the defaults beyond its products and softmax,
    # per byte of its trace (fresh pages, residual sums, LayerNorm passes)
    cfg = default_config()
    image = rng.random((cfg.image_size, cfg.image_size, cfg.channels), dtype=np.float32)
    params = init_params(cfg)
    seconds = best_seconds(lambda: encode(image, cfg, params), repeat)
    S, h, L = cfg.seq_len, cfg.n_heads, cfg.n_layers
    rest = (seconds - cost.matmul_flops(cfg) / (rates["MATMUL_GFLOPS"] * 1e9)
            - L * h * S * S / rates["EXP_PER_S"])
    rates["WRITE_BYTES_PER_S"] = cost.trace_bytes(cfg) / rest if rest > 0 else float("nan")
    print(f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', '(unset)')}; "
          f"load average {os.getloadavg()[0]:.1f}; the best of {repeat} runs each; encode at "
          f"the defaults {1e3 * seconds:.0f} ms")
    for key, value in rates.items():
        now = f"(encoder_core.cost: {getattr(cost, key):.3g})" if hasattr(cost, key) else ""
        print(f"{key:<28} {value:.3g}   {now}")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m benchmarks.memory", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", choices=("heavy", "default"), help="one configuration")
    p.add_argument("--repeat", type=int, default=3, help="runs of encode timed (best shown)")
    p.add_argument("--calibrate", action="store_true", help="measure the rates of cost.py")
    args = p.parse_args(argv)
    if args.calibrate:
        calibrate(max(args.repeat, 5))
        return
    print(f"load average {os.getloadavg()[0]:.1f} at the start; OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS', '(unset: all cores)')}")
    # the defaults first: the RSS high-water mark only grows where this process has not
    # already freed as much memory as the part needs
    if args.only in (None, "default"):
        session_table("Defaults", default_config(), args.repeat)
    if args.only in (None, "heavy"):
        session_table("Heaviest settings", heavy_config(), args.repeat)


if __name__ == "__main__":
    main()
