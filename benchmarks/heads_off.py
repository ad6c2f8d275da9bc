"""Benchmark: heads switched off (issue 26, item 5) on ViT-S/16 dimensions.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.heads_off [--repeat 5]

A random timm ViT-S/16 (d_model 384, 6 heads, 12 layers, d_ff 1536, 224 px -> 197 tokens, a
10-class head), written as .safetensors by `tests/support/vit_dicts.py` and loaded with
`load_checkpoint`, on the built-in photo. For a head switched off in the first, the middle and
the last layer: one ablation as the new trace (`encode_heads_off`), as the page computes it
(`heads_off_change`: the logits, the rows' change, the last layer's [CLS] maps; one layer held
at a time) and the per-head chart's h reruns (`head_logit_effects`), each with its peak of
traced memory (tracemalloc) beside `encoder_core.cost`'s prediction of the page's term; then
the section's three pictures. Median milliseconds. With AppTest (`--no-page` skips it), the
★ ViT page's runs as the learner meets the section: the first visit (the trace computed by
the overview the app opens on; the section at its defaults, head 1 of the last layer), then
layer 1 chosen, then heads 1 and 2 of it (each new to the caches), then a cached rerun.
Figures, not pass/fail: the machine is shared.
"""

from __future__ import annotations

import argparse
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

from benchmarks.timing import median_ms, vit_page
from encoder_core import encode, predict
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.cost import encode_seconds, heads_off, layer_bytes
from encoder_core.views.heads_off import encode_heads_off, head_logit_effects, heads_off_change
from encoder_core.views.vit_views import on_grid
from lens import figures, images
from tests.support.vit_dicts import write_timm_checkpoint

ROOT = Path(__file__).resolve().parent.parent
VIT_S16 = dict(d=384, C=3, P=16, grid=14, L=12, d_ff=1536)


def peak_mb(fn) -> float:
    """The most traced memory `fn()` holds at once beyond what was held before, in MB."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - before) / 1e6


def page_latency(path: str) -> None:
    """The ★ ViT page's runs (seconds) around the section, on the checkpoint at `path`."""
    at, run = vit_page(path)

    first = run()
    at.select_slider(key="heads_off_layer_vit").set_value(0)
    layer_1 = run()
    at.multiselect(key="heads_off_heads_vit").set_value([0, 1])
    heads_12 = run()
    cached = run()
    print(f"  page: first visit {first:.2f} s, layer 1 chosen {layer_1:.2f} s, heads 1, 2 "
          f"chosen {heads_12:.2f} s, cached rerun {cached:.2f} s")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--no-page", action="store_true", help="skip the AppTest page timings")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = write_timm_checkpoint(Path(tmp) / "vit_s16.safetensors", **VIT_S16)
        cfg, params, _ = load_checkpoint(path)
        core(cfg, params, args.repeat)
        if not args.no_page:
            page_latency(path)


def core(cfg, params, repeat: int) -> None:
    """The core's functions and the section's pictures, on the built-in photo."""
    args = argparse.Namespace(repeat=repeat)
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    tr = encode(image, cfg, params)
    L, h, G = cfg.n_layers, cfg.n_heads, cfg.grid_size
    top = int(np.argmax(predict(tr, params)))
    print(f"ViT-S/16: d {cfg.d_model}, {h} heads, {L} layers, {cfg.seq_len} tokens; "
          f"one layer's arrays {layer_bytes(cfg) / 1e6:.1f} MB")
    print(f"  encode (reference)                     {median_ms(lambda: encode(image, cfg, params), args.repeat):8.1f} ms")  # noqa: E501
    for layer in (0, L // 2, L - 1):
        name = f"layer {layer + 1:>2}"
        rows = {
            f"{name}: encode_heads_off, head 1": lambda layer=layer: encode_heads_off(
                tr, layer, (0,)),
            f"{name}: heads_off_change, head 1": lambda layer=layer: heads_off_change(
                tr, layer, (0,)),
            f"{name}: head_logit_effects ({h} reruns)": lambda layer=layer: head_logit_effects(
                tr, layer, top),
        }
        for label, fn in rows.items():
            print(f"  {label:<38} {median_ms(fn, args.repeat):8.1f} ms   "
                  f"peak {peak_mb(fn):6.1f} MB")
    term = heads_off(cfg)
    print(f"  cost.py's term (last layer, head 1): kept {term.kept / 1e3:.1f} kB, transient "
          f"{term.transient / 1e6:.1f} MB, {1000 * term.seconds:.0f} ms "
          f"(encode predicted {1000 * encode_seconds(cfg):.0f} ms)")
    effects = head_logit_effects(tr, 0, top)
    change = heads_off_change(tr, 0, (0,))
    maps = np.stack([change.cls_before.mean(axis=0), change.cls_after.mean(axis=0)])
    pictures = {
        "picture: per-head chart": lambda: figures.bar_panels(
            effects[None], ["Δ"], "head", "Δ logit", "each head off",
            tick_labels=[str(j + 1) for j in range(h)], size=(5.2, 3.2)),
        "picture: rows' change": lambda: figures.bars(
            [change.row_change], ["rows"], "row", ["mean |Δ|"], "rows", highlight=0),
        "picture: [CLS] maps before / after": lambda: figures.attention_grid(
            tr.image, on_grid(maps, G), ["before", "after"], "CLS", ncols=2),
    }
    for label, fn in pictures.items():
        print(f"  {label:<38} {median_ms(fn, args.repeat):8.1f} ms")


if __name__ == "__main__":
    main()
