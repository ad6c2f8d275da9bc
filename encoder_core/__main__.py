"""Command line: run the encoder on an image and export every intermediate.

    python -m encoder_core IMAGE [--d-model 512 --n-heads 8 …] --out trace.npz
    python -m encoder_core IMAGE --checkpoint vit.safetensors [--image-size 224] --out trace.npz

Prints the steps with their shapes (and, for a checkpoint, what was loaded and the source of
every setting). Bad input: one line on stderr and exit code 2. With --checkpoint the model's
settings come from the checkpoint; of the architecture options only --image-size may be given.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from .analysis import parameter_count, pipeline_steps
from .checkpoint import load_checkpoint
from .config import ConfigError, EncoderConfig
from .encoder import encode
from .export import save_trace
from .image import ImageError, load_image
from .params import ParamsError, load_params


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
            extra = sorted(set(given) - {"image_size"}) + (["params"] if args.params else [])
            if extra:
                raise ParamsError("the checkpoint sets the model; drop "
                                  + ", ".join(f"--{n.replace('_', '-')}" for n in extra)
                                  + " (only --image-size may be given with --checkpoint).")
            cfg, params, info = load_checkpoint(args.checkpoint, given.get("image_size"))
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
    steps = pipeline_steps(cfg)
    w = max(len(s.name) for s in steps)
    print(f"{'step':<{w}}  {'shapes':<58}  parameters")
    for s in steps:
        print(f"{s.name:<{w}}  {s.shape:<58}  {s.n_params:>10,}")
    print(f"total parameters: {parameter_count(cfg):,}  (layers: {cfg.n_layers})")
    if args.out:
        print(f"trace written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
