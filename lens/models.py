"""The Vision Transformer checkpoints the server was started with, read once and shared.

    scripts/app --checkpoint vit_small.safetensors --checkpoint dino_vits16/

`lens.serve --checkpoint PATH [--n-heads H]` (what `scripts/app` passes on) hands the paths to
the Streamlit process in the environment variable CHECKPOINTS_ENV, and the head counts given for
files that do not say theirs (a torchvision ViT of no standard size) in HEADS_ENV. Each file is
read with the safe loader (`encoder_core.checkpoints.load.load_checkpoint`: nothing in it runs);
one that cannot be read is reported by `load_models` and left out, and the app serves the
others. A model is named in links by its id, made from the file's name (two files of one name
by their folders too): a link can choose among the loaded models, never name a path.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from encoder_core import EncoderConfig, EncoderParams, ParamsError
from encoder_core.checkpoints.load import WEIGHT_FILES, CheckpointInfo, load_checkpoint

CHECKPOINTS_ENV = "ENCODER_LENS_CHECKPOINTS"  # paths joined by os.pathsep
HEADS_ENV = "ENCODER_LENS_CHECKPOINT_HEADS"  # JSON {path: n_heads}, for files that do not say
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

    @property
    def place(self) -> str:
        """The file by its folder and name, e.g. "mnist/vit_weights.pth" (what tells two files
        of one name apart; the rest of the server's path is not shown)."""
        p = Path(self.path)
        return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def checkpoint_paths(environ: dict[str, str] | os._Environ = os.environ) -> list[str]:
    """The checkpoint paths the server was started with (CHECKPOINTS_ENV), in order."""
    return [p for p in environ.get(CHECKPOINTS_ENV, "").split(os.pathsep) if p.strip()]


def checkpoint_heads(environ: dict[str, str] | os._Environ = os.environ) -> dict[str, int]:
    """{path: n_heads} given with `--n-heads` (HEADS_ENV); {} when none, or unreadable."""
    try:
        given = json.loads(environ.get(HEADS_ENV, "") or "{}")
    except json.JSONDecodeError:
        return {}
    return {str(p): h for p, h in given.items() if type(h) is int} if isinstance(given,
                                                                                 dict) else {}


def _stem(p: Path) -> str:
    return p.parent.name if p.name in WEIGHT_FILES else (p.name if p.is_dir() else p.stem)


def _safe(text: str) -> str:
    return re.sub(r"[^a-z0-9._-]+", "_", text.lower()).strip("._-")


def model_id(path: str | os.PathLike, taken: Iterable[str] = (), folder: bool = False) -> str:
    """A link-safe id from a checkpoint's name, unique among `taken`: "ViT-S 16.safetensors"
    -> "vit-s_16"; a Hugging Face folder's weights file ("…/dino-vits16/model.safetensors")
    is named after its folder; `folder`: after the folder holding it too, "mnist/w.pth" ->
    "mnist-w"."""
    p = Path(path)
    stem = _stem(p)
    where = _safe((p.parent.parent if p.name in WEIGHT_FILES else p.parent).name)
    base = _safe(stem)[:56] or "model"
    if folder and where:
        base = f"{where[:63 - len(base)]}-{base}".strip("._-")
    if base in RESERVED:
        base = f"{base}-checkpoint"
    taken = set(taken)
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def model_ids(paths: Iterable[str | os.PathLike], taken: Iterable[str] = ()) -> list[str]:
    """One id per path (`model_id`), unique: files whose names give one id are each named by
    their folder too ("runs/a/w.pth", "runs/b/w.pth" -> "a-w", "b-w"), so a list of models
    tells them apart by more than a number."""
    paths = list(paths)
    plain = [model_id(p) for p in paths]
    ids: list[str] = []
    for p, mid in zip(paths, plain, strict=True):
        ids.append(model_id(p, [*taken, *ids], folder=plain.count(mid) > 1))
    return ids


def load_models(paths: Iterable[str | os.PathLike],
                named: Mapping[str, str | os.PathLike] | None = None,
                heads: Mapping[str, int] | None = None,
                ) -> tuple[dict[str, Model], list[str]]:
    """({id: Model}, problems): every checkpoint that loads — the `paths` named after their
    files (`model_ids`), the `named` ones ({id: path}, e.g. downloaded models) by their fixed
    ids — and one line for each that does not (the file and what is wrong with it). `heads`:
    {path: n_heads} for files that do not say theirs (`--n-heads`)."""
    models: dict[str, Model] = {}
    problems: list[str] = []
    paths = list(paths)
    named = dict(named or {})
    sources = list(zip(model_ids(paths, named), paths, strict=True)) + list(named.items())
    for mid, path in sources:
        try:
            cfg, params, info = load_checkpoint(path, n_heads=(heads or {}).get(os.fspath(path)))
        except (ParamsError, OSError) as err:
            problems.append(f"{path}: {err}")
            continue
        if mid in models:
            mid = model_id(path, models)
        models[mid] = Model(id=mid, name=f"{mid} ({info.family})", cfg=cfg, params=params,
                            info=info, path=os.fspath(path))
    return models, problems


def has_head(weights: str, models: Mapping[str, Model]) -> bool:
    """Whether the weights `weights` names have a classification head: the shapes model's
    ("trained") do, a loaded checkpoint's (in `models`) when its file has one, random weights
    never."""
    return weights == "trained" or (weights in models and models[weights].params.head is not None)


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
