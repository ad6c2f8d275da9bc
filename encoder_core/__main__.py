"""Command line: run the encoder on an image and export every intermediate.

    python -m encoder_core IMAGE [--d-model 512 --n-heads 8 …] --out trace.npz
    python -m encoder_core IMAGE --checkpoint vit.safetensors [--image-size 224] --out trace.npz

Prints the steps with their shapes (and, for a checkpoint, what was loaded and the source of
every setting, and with a classification head its top-5 classes). Bad input: one line on stderr
and exit code 2. With --checkpoint the model's settings come from the checkpoint; of the
architecture options only --image-size may be given, and --n-heads for a file that does not say
(a torchvision ViT of no standard size).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from .checkpoints.load import load_checkpoint
from .config import ConfigError, EncoderConfig
from .export import save_trace
from .image import ImageError, load_image
from .params import ParamsError, load_params
from .pipeline.encoder import encode
from .pipeline.head import predict, top_classes
from .views.analysis import Text, Word, parameter_count, pipeline_steps, words

# The command line's own English for the steps and the words of their formulas and shapes
# (`analysis.Word`); the app words them from its text files, in every language.
STEP_NAMES = {
    "normalise": "pixel normalisation", "patches": "patches", "embedding": "input embedding",
    "prefix": "prefix tokens", "positional": "positional encoding", "ln_1": "LayerNorm 1",
    "qkv": "Q, K, V", "scores": "scores", "softmax": "softmax", "heads": "heads",
    "concat": "concat · W_O", "add_1": "residual 1", "addnorm_1": "Add & Norm 1",
    "ln_2": "LayerNorm 2", "ffn": "feed-forward", "add_2": "residual 2",
    "addnorm_2": "Add & Norm 2", "final_norm": "final LayerNorm", "output": "encoder output",
}
WORDS = {
    "divisor_d_k": "√d_k (√{n})", "divisor_d_model": "√d_model (√{n})", "divisor_none": "1",
    "normalise": "pixels = (image − mean) / std, mean = {mean}, std = {std}",
    "patches": "patches", "tokens": "tokens", "output": "output", "n_heads": "{n} heads",
    "n_registers": "{n} REG", "pe_off": " (PE off)", "positions_off": " (positions off)",
    "on_patch_rows": " on the patch rows ", "none_on_registers": " (none on the registers) ",
    "softmax_rows": "attn = softmax(scores) row by row",
    "x_not_normalised": " (x not normalised)", "after_last_layer": " after the last layer",
    "layers_stacked": "{n} layers stacked", "layer_stacked": "{n} layer stacked",
    "cls_stands_for_image": "; the CLS row output[{row}] stands for the image",
    "cls_row": " (CLS row: {shape})",
}


def english(text: Text) -> str:
    """A formula or shape of `pipeline_steps` in the command line's English."""
    def say(w: Word) -> str:
        return WORDS[w.id].format(**dict(w.values))
    return words(text, say)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    d = EncoderConfig()
    p = argparse.ArgumentParser(prog="python -m encoder_core", description=__doc__.split("\n")[0])
    p.add_argument("image", help="an image file (PNG, JPEG, WebP, BMP, TIFF, GIF)")
    p.add_argument("--out", help="write the trace to this .npz file")
    p.add_argument("--params", help="load the weights from this .npz (else seeded random)")
    p.add_argument("--checkpoint", help="a real ViT (timm / DINO / DeiT / Hugging Face ViT, "
                   "DeiT, DINOv2) as .safetensors, .npz or .pth; read without running code")
    for f in fields(EncoderConfig):  # default None: "not given" (the config's default applies)
        if f.type in ("bool",) or isinstance(f.default, bool):
            p.add_argument(f"--{f.name.replace('_', '-')}", type=_bool, default=None,
                           metavar="{on,off}", help=f"default: {'on' if f.default else 'off'}")
        elif isinstance(f.default, tuple):  # pixel_mean, pixel_std: "0.485,0.456,0.406"
            p.add_argument(f"--{f.name.replace('_', '-')}", type=_floats, default=None,
                           metavar="A,B,C", help="comma-separated, one per channel; default: off")
        else:
            kind = type(getattr(d, f.name))
            p.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=None,
                           help=f"default: {f.default}")
    return p.parse_args(argv)


def given_settings(args: argparse.Namespace) -> dict[str, object]:
    """The EncoderConfig options given on the command line (those left out are None)."""
    return {f.name: getattr(args, f.name) for f in fields(EncoderConfig)
            if getattr(args, f.name) is not None}


def _floats(s: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in s.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected numbers separated by commas, got {s!r}") from None


def _bool(s: str) -> bool:
    if s.lower() in ("on", "true", "1", "yes"):
        return True
    if s.lower() in ("off", "false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected on or off, got {s!r}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    info = None
    try:
        given = given_settings(args)
        if args.checkpoint:
            extra = (sorted(set(given) - {"image_size", "n_heads"})
                     + (["params"] if args.params else []))
            if extra:
                raise ParamsError("the checkpoint sets the model; drop "
                                  + ", ".join(f"--{n.replace('_', '-')}" for n in extra)
                                  + " (only --image-size and --n-heads, for a file that does "
                                  "not say, may be given with --checkpoint).")
            cfg, params, info = load_checkpoint(args.checkpoint, given.get("image_size"),
                                                given.get("n_heads"))
        else:
            cfg = EncoderConfig(**given)
            params = load_params(args.params, cfg) if args.params else None
        trace = encode(load_image(args.image, cfg), cfg, params)
        if args.out:
            save_trace(args.out, trace)
    except (ConfigError, ImageError, ParamsError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"error: cannot write {args.out}: {err.strerror}", file=sys.stderr)
        return 2
    if info is not None:
        print("\n".join(info.describe()) + "\n")
        if trace.params.head is not None:
            classes, probs = top_classes(predict(trace, trace.params), 5)
            print("prediction (top 5): " + "; ".join(
                f"{info.labels[c]} {100 * p:.1f} %" for c, p in zip(classes, probs, strict=True))
                + "\n")
    steps = pipeline_steps(cfg)
    w = max(len(STEP_NAMES[s.id]) for s in steps)
    print(f"{'step':<{w}}  {'shapes':<58}  parameters")
    for s in steps:
        print(f"{STEP_NAMES[s.id]:<{w}}  {english(s.shape):<58}  {s.n_params:>10,}")
    print(f"total parameters: {parameter_count(cfg):,}  (layers: {cfg.n_layers})")
    if args.out:
        print(f"trace written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
