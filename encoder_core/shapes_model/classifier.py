"""A classification head on the encoder, the trained weights that ship with the app, and how
well their attention sits on the object.

    pooled = mean over tokens of the encoder output          [N, d_model] -> [d_model]
    logits = pooled · W_cls + b_cls                           [d_model] -> [n_classes]
    probs  = softmax(logits)

The head is part of the weights: `load_trained` and `load_checkpoints` give EncoderParams whose
`head` is it (`HeadParams`, pooling "avg": the note's encoder has no prefix rows, so the mean
over the patch rows is the mean over all tokens), and `encoder_core.predict(trace, params)` is
the one prediction path. `ClassifierHead` is the head as the training and the files know it,
with its class names.

The trained weights (`assets/shapes_encoder.npz`, made by `python -m training.train`) are one
`.npz` read with `allow_pickle=False`: the configuration as JSON in a 0-d string array under
`config`, the encoder under `params/W_E` and `params/layer{l}/{name}` (as `load_params` reads
them), and the head under `W_cls`, `b_cls` and `class_names` (a 1-d string array).

The same model at several points of its training (`assets/shapes_checkpoints.npz`, made by
`python -m training.checkpoints`) is one `.npz` too: `config` and `class_names` once, `steps`
[n] (training steps, increasing; the last is the shipped weights), `held_out_accuracy` [n] and
`held_out_size`, then per step the same keys under `step{N}/` (`step{N}/params/W_E`, …,
`step{N}/W_cls`, `step{N}/b_cls`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from importlib import resources
from os import PathLike
from pathlib import Path
from typing import IO

import numpy as np

from ..config import EncoderConfig
from ..params import (
    EncoderParams,
    HeadParams,
    ParamsError,
    check_params,
    params_from_arrays,
    params_to_arrays,
)
from ..trace import EncoderTrace
from ..views.analysis import rollout_mean_over_queries
from ..views.rollout import attention_rollout

# The shipped files: package data of encoder_core.assets (pyproject.toml maps it from assets/),
# wherever the package is installed.
ASSETS = Path(str(resources.files("encoder_core.assets")))
DEFAULT_WEIGHTS = ASSETS / "shapes_encoder.npz"
DEFAULT_CHECKPOINTS = ASSETS / "shapes_checkpoints.npz"


@dataclass(frozen=True)
class ClassifierHead:
    W_cls: np.ndarray  # [d_model, n_classes] from the pooled token to the class scores
    b_cls: np.ndarray  # [n_classes] class biases
    class_names: tuple[str, ...]  # n_classes names, in logit order

    def __post_init__(self) -> None:
        W_cls = np.array(self.W_cls, dtype=np.float32, order="C")  # a private, read-only copy
        b_cls = np.array(self.b_cls, dtype=np.float32, order="C")
        n_classes = len(self.class_names)
        if W_cls.ndim != 2 or W_cls.shape[1] != n_classes or b_cls.shape != (n_classes,):
            raise ParamsError(
                f"W_cls {W_cls.shape} and b_cls {b_cls.shape} do not fit {n_classes} classes: "
                "W_cls must be [d_model, n_classes] and b_cls [n_classes]."
            )
        W_cls.flags.writeable = False
        b_cls.flags.writeable = False
        object.__setattr__(self, "W_cls", W_cls)
        object.__setattr__(self, "b_cls", b_cls)
        object.__setattr__(self, "class_names", tuple(str(c) for c in self.class_names))

    def params(self) -> HeadParams:
        """The head as part of the weights: the mean of the output rows, then W_cls, b_cls."""
        return HeadParams(pool="avg", W_head=self.W_cls, b_head=self.b_cls)


def with_head(params: EncoderParams, head: ClassifierHead, cfg: EncoderConfig) -> EncoderParams:
    """The encoder's parameters with `head` as their classification head, checked against cfg."""
    if head.W_cls.shape[0] != cfg.d_model:
        raise ParamsError(f"W_cls has {head.W_cls.shape[0]} rows, d_model is {cfg.d_model}.")
    return check_params(replace(params, head=head.params()), cfg)


def save_trained(path: str | PathLike | IO[bytes], cfg: EncoderConfig, params: EncoderParams,
                 head: ClassifierHead) -> None:
    """Write configuration, encoder parameters and head to one `.npz` (plain arrays, no pickle)."""
    if head.W_cls.shape[0] != cfg.d_model:
        raise ParamsError(f"W_cls has {head.W_cls.shape[0]} rows, d_model is {cfg.d_model}.")
    arrays = params_to_arrays(replace(params, head=None))  # the head: W_cls, b_cls below
    arrays["config"] = np.array(json.dumps(cfg.to_dict(), sort_keys=True))  # 0-d unicode
    arrays["W_cls"] = head.W_cls
    arrays["b_cls"] = head.b_cls
    arrays["class_names"] = np.array(head.class_names, dtype=np.str_)  # [n_classes] unicode
    np.savez(path, **arrays)


def load_trained(path: str | PathLike | IO[bytes] = DEFAULT_WEIGHTS,
                 ) -> tuple[EncoderConfig, EncoderParams, ClassifierHead]:
    """Read what `save_trained` wrote: (config, encoder parameters with their head, the head
    with its class names), all checked."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, EOFError) as err:
        raise ParamsError(f"Cannot read trained weights from {path!r}: {err}") from None
    missing = [k for k in ("config", "W_cls", "b_cls", "class_names") if k not in arrays]
    if missing:
        raise ParamsError(f"{path!r} holds no trained classifier: missing {', '.join(missing)}.")
    cfg = EncoderConfig(**json.loads(str(arrays["config"])))
    params = params_from_arrays({k: v for k, v in arrays.items() if k.startswith("params/")}, cfg)
    head = ClassifierHead(W_cls=arrays["W_cls"], b_cls=arrays["b_cls"],
                          class_names=tuple(arrays["class_names"].tolist()))
    return cfg, with_head(params, head, cfg), head


@dataclass(frozen=True)
class Checkpoint:
    """The trained model as it was after `step` training steps."""

    step: int  # Adam updates done (0 = the initialisation)
    params: EncoderParams  # the encoder at that step, with its head (params.head)
    head: ClassifierHead  # the classification head at that step
    accuracy: float  # held-out accuracy at that step (training's held-out set)


def save_checkpoints(path: str | PathLike | IO[bytes], cfg: EncoderConfig,
                     checkpoints: tuple[Checkpoint, ...] | list[Checkpoint],
                     held_out_size: int) -> None:
    """Write checkpoints of one model (increasing steps) to one `.npz` (no pickle)."""
    steps = [c.step for c in checkpoints]
    if not steps or steps != sorted(set(steps)):
        raise ParamsError(f"checkpoint steps must be increasing and not empty, got {steps}.")
    names = checkpoints[0].head.class_names
    arrays: dict[str, np.ndarray] = {
        "config": np.array(json.dumps(cfg.to_dict(), sort_keys=True)),  # 0-d unicode
        "class_names": np.array(names, dtype=np.str_),  # [n_classes]
        "steps": np.array(steps, dtype=np.int64),  # [n]
        "held_out_accuracy": np.array([c.accuracy for c in checkpoints], dtype=np.float64),
        "held_out_size": np.array(held_out_size, dtype=np.int64),
    }
    for c in checkpoints:
        if c.head.class_names != names or c.head.W_cls.shape[0] != cfg.d_model:
            raise ParamsError(f"the head of step {c.step} does not fit the others.")
        for key, a in params_to_arrays(replace(c.params, head=None)).items():
            arrays[f"step{c.step}/{key}"] = a
        arrays[f"step{c.step}/W_cls"] = c.head.W_cls
        arrays[f"step{c.step}/b_cls"] = c.head.b_cls
    np.savez(path, **arrays)


def load_checkpoints(path: str | PathLike | IO[bytes] = DEFAULT_CHECKPOINTS,
                     ) -> tuple[EncoderConfig, tuple[Checkpoint, ...]]:
    """Read what `save_checkpoints` wrote: (config, checkpoints in step order), all checked."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError, EOFError) as err:
        raise ParamsError(f"Cannot read checkpoints from {path!r}: {err}") from None
    missing = [k for k in ("config", "class_names", "steps", "held_out_accuracy")
               if k not in arrays]
    if missing:
        raise ParamsError(f"{path!r} holds no checkpoints: missing {', '.join(missing)}.")
    cfg = EncoderConfig(**json.loads(str(arrays["config"])))
    names = tuple(arrays["class_names"].tolist())
    steps, acc = arrays["steps"].tolist(), arrays["held_out_accuracy"].tolist()
    if len(steps) != len(acc) or steps != sorted(set(steps)):
        raise ParamsError(f"{path!r}: steps {steps} and accuracies {acc} do not match.")
    out = []
    for step, accuracy in zip(steps, acc, strict=True):
        prefix = f"step{step}/"
        mine = {k[len(prefix):]: v for k, v in arrays.items() if k.startswith(prefix)}
        if "W_cls" not in mine or "b_cls" not in mine:
            raise ParamsError(f"{path!r}: step {step} has no head.")
        params = params_from_arrays({k: v for k, v in mine.items() if k.startswith("params/")},
                                    cfg)
        head = ClassifierHead(W_cls=mine["W_cls"], b_cls=mine["b_cls"], class_names=names)
        params = with_head(params, head, cfg)
        out.append(Checkpoint(step=int(step), params=params, head=head, accuracy=float(accuracy)))
    return cfg, tuple(out)


def object_patch_mask(mask: np.ndarray, patch_size: int, min_share: float = 0.25) -> np.ndarray:
    """The patches that hold the object: at least `min_share` of their pixels in `mask`.

    Args:
        mask: [S, S] bool, True on the object's pixels.
        patch_size: P.
    Returns:
        [N] bool in patch order (row-major, as `patchify`).
    """
    G = mask.shape[0] // patch_size  # patches per side
    share = mask.reshape(G, patch_size, G, patch_size).mean(axis=(1, 3))  # [G, G]
    return (share >= min_share).reshape(G * G)  # [N]


def localisation_ratio(trace: EncoderTrace, mask: np.ndarray, min_share: float = 0.25) -> float:
    """How much more rollout mass sits on the object than its size predicts.

    ratio = Σ_{object patches} m / (n_object_patches / N), m = the mean over query rows of the
    attention rollout R (`attention_rollout`, `rollout_mean_over_queries`): where the whole
    image looks.
    1 = attention spread as if blind to the object; larger = attention on the object.
    Args:
        trace: one encoder pass; mask: [S, S] bool object pixels of the same image.
    Returns:
        The ratio (nan when no patch holds the object).
    """
    on_object = object_patch_mask(mask, trace.config.patch_size, min_share)  # [N]
    if not on_object.any():
        return float("nan")
    R = attention_rollout([layer.attn for layer in trace.layers])  # [N, N]
    m = rollout_mean_over_queries(R)  # [N, N] -> [N], sums to 1
    return float(m[on_object].sum() / on_object.mean())
