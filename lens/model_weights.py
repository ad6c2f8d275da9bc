"""The weights a page runs with, by their id: seeded random weights ("random", drawn once per
what determines them and shared within the memory budget), the shipped trained model
("trained") and its weights at earlier training steps ("trained@500"), and the ViT checkpoints
the server was started with or that were downloaded (read by `lens.models`, listed here once
per set of files). `weights_for` hands a page its encoder weights and classifier head;
`weights_id` names them in cache keys.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import streamlit as st

from encoder_core import EncoderConfig, EncoderParams, cost, init_params

from . import resources
from .cache import Fresh
from .models import Model, checkpoint_heads, checkpoint_paths, load_models
from .settings import FINAL_STEP

if TYPE_CHECKING:
    from encoder_core.shapes_model.classifier import Checkpoint, ClassifierHead


def params_key(cfg: EncoderConfig) -> tuple:
    """What determines seeded random weights (not h, the scale or the FFN switch)."""
    return (cfg.seed, cfg.n_layers, cfg.patch_dim, cfg.d_model, cfg.d_ff)


def random_params(cfg: EncoderConfig) -> EncoderParams:
    """Seeded random weights, cached by what determines them; one object while anyone holds it."""
    return resources.shared("params", params_key(cfg), lambda: init_params(cfg),
                            cost.params_cost, cfg)


def trained_model() -> tuple[EncoderConfig, EncoderParams, ClassifierHead] | None:
    """(config, params, head) of the shipped trained weights, or None when absent."""
    from encoder_core.shapes_model.classifier import DEFAULT_WEIGHTS

    if not Path(DEFAULT_WEIGHTS).exists():
        return None
    return _trained_cached()


@st.cache_resource
def _trained_cached():
    from encoder_core.shapes_model.classifier import load_trained

    return load_trained()


def model_architectures() -> dict[str, EncoderConfig]:
    """Weights id -> the architecture that model fixes ("random" fixes none): the trained
    model's, then each loaded checkpoint's."""
    trained = trained_model()
    found = {"trained": trained[0]} if trained else {}
    return found | {mid: m.cfg for mid, m in checkpoint_models().items()}


def checkpoint_models() -> dict[str, Model]:
    """The checkpoints the server was started with (`lens.models.CHECKPOINTS_ENV`) and the
    named models downloaded into the cache, by id; read once per set of files."""
    return _models_now()[0]


def model_problems() -> list[str]:
    """One line per checkpoint that could not be read (the app serves the others)."""
    return _models_now()[1]


# A page run asks for the models about seven times: the answer of the last 2 s is reused, so
# the download folder is looked at once and Streamlit's cache of loaded models asked once
# (each ask hashed its arguments: ~2 ms of a page run).
_RECENT_MODELS: Fresh[tuple[dict[str, Model], list[str]]] = Fresh(2.0)


def _models_now() -> tuple[dict[str, Model], list[str]]:
    paths = tuple(checkpoint_paths())
    heads = tuple(sorted(checkpoint_heads().items()))
    return _RECENT_MODELS.get((paths, heads), lambda: _models_cached(paths, _downloaded(), heads))


def _downloaded() -> tuple[tuple[str, str], ...]:
    """(id, path) of the named public models already in the download cache."""
    from . import hub

    return tuple((mid, str(path)) for mid, path in hub.cached_models().items())


@st.cache_resource(show_spinner=False, max_entries=4)
def _models_cached(paths: tuple[str, ...], named: tuple[tuple[str, str], ...],
                   heads: tuple[tuple[str, int], ...] = ()):
    from . import hub

    models, problems = load_models(paths, dict(named), dict(heads))
    for mid, model in models.items():  # a named model by its own name: "DINO ViT-S/16"
        if mid in hub.MODELS and dict(named).get(mid) == model.path:
            models[mid] = replace(model, name=hub.MODELS[mid].name)
    for line in problems:
        print(f"Encoder Lens: checkpoint not loaded: {line}", file=sys.stderr)
    return models, problems


def clear_models() -> None:
    """Forget the loaded checkpoints and the download cache's listing (tests; after a
    download)."""
    _models_cached.clear()
    _RECENT_MODELS.clear()


def trained_checkpoints() -> tuple[Checkpoint, ...]:
    """The trained model at several points of its training (`Checkpoint`s in step order; the
    last is the shipped weights), or () when the file is absent."""
    from encoder_core.shapes_model.classifier import DEFAULT_CHECKPOINTS

    if trained_model() is None or not Path(DEFAULT_CHECKPOINTS).exists():
        return ()
    return _checkpoints_cached()


@st.cache_resource
def _checkpoints_cached():
    from encoder_core.shapes_model.classifier import load_checkpoints

    return load_checkpoints()[1]


def checkpoint_steps() -> tuple[int, ...]:
    """The training steps the trained model ships at (the last is its final weights)."""
    return tuple(c.step for c in trained_checkpoints())


def checkpoint_at(step: int) -> Checkpoint | None:
    """The `Checkpoint` shown for train_step `step` (FINAL_STEP: the last), or None."""
    shipped = trained_checkpoints()
    if not shipped:
        return None
    return shipped[-1] if step == FINAL_STEP else next(
        (c for c in shipped if c.step == step), None)


def weights_id(weights: str, train_step: int = FINAL_STEP) -> str:
    """The name of the weights in cache keys: "random", "trained" (final) or "trained@500"."""
    if weights == "trained" and train_step != FINAL_STEP:
        return f"trained@{train_step}"
    return weights


def weights_for(weights: str, cfg: EncoderConfig, train_step: int = FINAL_STEP,
                ) -> tuple[EncoderParams, ClassifierHead | None]:
    """(encoder params, classifier head or None) of the weights `weights` at `cfg`; trained
    weights after `train_step` training steps (FINAL_STEP: the shipped ones)."""
    if weights in checkpoint_models():
        return checkpoint_models()[weights].params, None
    if weights == "trained":
        checkpoint = checkpoint_at(train_step) if train_step != FINAL_STEP else None
        if checkpoint is not None:
            return checkpoint.params, checkpoint.head
        _, params, head = trained_model()
        return params, head
    return random_params(cfg), None
