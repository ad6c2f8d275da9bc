"""The Vision Transformer checkpoints the server was started with, read once and shared.

    scripts/app --checkpoint vit_small.safetensors --checkpoint dino_vits16/

`lens.serve --checkpoint PATH` (what `scripts/app` passes on) hands the paths to the Streamlit
process in the environment variable CHECKPOINTS_ENV. Each file is read with the safe loader
(`encoder_core.checkpoints.load.load_checkpoint`: nothing in it runs); one that cannot be read is
reported by `load_models` and left out, and the app serves the others. A model is named in
links by its id, made from the file's name: a link can choose among the loaded models, never
name a path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from encoder_core import EncoderConfig, EncoderParams, ParamsError
from encoder_core.checkpoints.load import WEIGHT_FILES, CheckpointInfo, load_checkpoint

CHECKPOINTS_ENV = "ENCODER_LENS_CHECKPOINTS"  # paths joined by os.pathsep
RESERVED = ("random", "trained")  # the note encoder's weights ids
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # what a link may name


@dataclass(frozen=True)
class Model:
    """A loaded checkpoint: its link id, its name, the encoder it fixes and its weights."""

    id: str  # link-safe, e.g. "vit_small_patch16_224"
    name: str  # shown to the learner, e.g. "vit_small_patch16_224 (DINO, timm layout)"
    cfg: EncoderConfig
    params: EncoderParams
    info: CheckpointInfo
    path: str


def checkpoint_paths(environ: dict[str, str] | os._Environ = os.environ) -> list[str]:
    """The checkpoint paths the server was started with (CHECKPOINTS_ENV), in order."""
    return [p for p in environ.get(CHECKPOINTS_ENV, "").split(os.pathsep) if p.strip()]


def model_id(path: str | os.PathLike, taken: Iterable[str] = ()) -> str:
    """A link-safe id from a checkpoint's name, unique among `taken`: "ViT-S 16.safetensors"
    -> "vit-s_16"; a Hugging Face folder's weights file ("…/dino-vits16/model.safetensors")
    is named after its folder."""
    p = Path(path)
    stem = p.parent.name if p.name in WEIGHT_FILES else (p.name if p.is_dir() else p.stem)
    base = re.sub(r"[^a-z0-9._-]+", "_", stem.lower()).strip("._-")[:56] or "model"
    if base in RESERVED:
        base = f"{base}-checkpoint"
    taken = set(taken)
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def load_models(paths: Iterable[str | os.PathLike],
                named: Mapping[str, str | os.PathLike] | None = None,
                ) -> tuple[dict[str, Model], list[str]]:
    """({id: Model}, problems): every checkpoint that loads — the `paths` named after their
    files, the `named` ones ({id: path}, e.g. downloaded models) by their fixed ids — and one
    line for each that does not (the file and what is wrong with it)."""
    models: dict[str, Model] = {}
    problems: list[str] = []
    sources = [(None, p) for p in paths] + list((named or {}).items())
    for given_id, path in sources:
        try:
            cfg, params, info = load_checkpoint(path)
        except (ParamsError, OSError) as err:
            problems.append(f"{path}: {err}")
            continue
        mid = given_id if given_id and given_id not in models else model_id(path, models)
        models[mid] = Model(id=mid, name=f"{mid} ({info.family})", cfg=cfg, params=params,
                            info=info, path=os.fspath(path))
    return models, problems


def describe(model: Model) -> str:
    """The architecture in one line, e.g. "ViT: d_model 384, h 6, 12 layers, d_ff 1536,
    pre-norm, CLS token, learned positions, GELU, 21,665,664 parameters"."""
    c = model.cfg
    parts = [f"d_model {c.d_model}", f"h {c.n_heads}", f"{c.n_layers} layers", f"d_ff {c.d_ff}",
             f"{c.image_size} px, P {c.patch_size}",
             "pre-norm" if c.norm_first else "post-norm"]
    prefix = [name for name, on in (("CLS", c.cls_token), ("distillation", c.dist_token)) if on]
    if c.n_registers:
        prefix.append(f"{c.n_registers} registers")
    if prefix:
        parts.append(" + ".join(prefix) + " token" + ("s" if len(prefix) > 1 else ""))
    parts += [f"{c.position} positions", c.activation.upper().replace("_", "-"),
              f"{model.info.n_params:,} parameters"]
    return ", ".join(parts)
