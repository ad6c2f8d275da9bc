"""What the server computes once and shares with every session: decoded images, weights,
traces and quantities derived from traces, each in a bounded cache; the shipped model.

No session state here: every function is a pure function of its arguments plus the caches.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Hashable
from pathlib import Path

import numpy as np
import streamlit as st

from encoder_core import (
    EncoderConfig,
    EncoderParams,
    EncoderTrace,
    encode,
    init_params,
    read_image,
    to_model_input,
)
from encoder_core.config import valid_patch_sizes

from .cache import LRUCache
from .settings import FINAL_STEP

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IMAGE = ROOT / "assets" / "default.jpg"
DEFAULT_IMAGE_NAME = "Grace Hopper (built-in)"

MAX_TRACES = 4  # traces kept per server; a default trace is ~50 MB
MAX_IMAGES = 8  # decoded images kept per server
MAX_PARAMS = 4  # random weights kept per server
MAX_DERIVED = 32  # derived quantities (rollout, head statistics, scaling demo) kept per server
DISPLAY_SIDE = 512  # the original upload is shown at most this large


@st.cache_resource
def _caches() -> dict[str, LRUCache]:
    return {"images": LRUCache(MAX_IMAGES), "params": LRUCache(MAX_PARAMS),
            "traces": LRUCache(MAX_TRACES), "derived": LRUCache(MAX_DERIVED)}


def caches() -> dict[str, LRUCache]:
    """The image, parameter, trace and derived-quantity caches (tests read their sizes)."""
    return _caches()


def content_key(data: bytes) -> str:
    """The cache key of an image file: the sha256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def decode_image(data: bytes, image_size: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """(original for display [h, w, 3], model input [S, S, C]) of an image file, cached by
    content. Raises ImageError for anything that is not a usable image."""
    key = (content_key(data), image_size, channels)

    def compute() -> tuple[np.ndarray, np.ndarray]:
        rgb = read_image(data)
        step = max(1, -(-max(rgb.shape[:2]) // DISPLAY_SIDE))
        shown = np.ascontiguousarray(rgb[::step, ::step])  # a light copy to show, not to model
        cfg = EncoderConfig(image_size=image_size, patch_size=valid_patch_sizes(image_size)[-1],
                            channels=channels, d_model=8, n_heads=1, n_layers=1, d_ff=8)
        return _read_only(shown), _read_only(to_model_input(rgb, cfg))

    return caches()["images"].get_or_compute(key, compute)


def random_params(cfg: EncoderConfig) -> EncoderParams:
    """Seeded random weights, cached by what determines them (not by h, scale or FFN switch)."""
    key = (cfg.seed, cfg.n_layers, cfg.patch_dim, cfg.d_model, cfg.d_ff)
    return caches()["params"].get_or_compute(key, lambda: init_params(cfg))


def trace_for(image_key: str, image: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
              weights: str) -> EncoderTrace:
    """The forward pass, once per (image, configuration, weights), shared across sessions."""
    key = (image_key, cfg, weights)
    return caches()["traces"].get_or_compute(key, lambda: encode(image, cfg, params))


def derived(key: Hashable, compute: Callable[[], object]) -> object:
    """A quantity derived from a trace, computed once per key (which names the trace)."""
    return caches()["derived"].get_or_compute(key, compute)


def sample_png(seed: int) -> bytes:
    """A generated shape image as PNG bytes (the trained model's data distribution)."""
    from PIL import Image

    from encoder_core.shapes import make_sample

    sample = make_sample(np.random.default_rng(seed))
    grey = (np.clip(sample.image[..., 0], 0, 1) * 255).round().astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(grey, mode="L").save(buf, format="PNG")
    return buf.getvalue()


def trained_model():
    """(config, params, head) of the shipped trained weights, or None when absent."""
    from encoder_core.classifier import DEFAULT_WEIGHTS

    if not Path(DEFAULT_WEIGHTS).exists():
        return None
    return _trained_cached()


@st.cache_resource
def _trained_cached():
    from encoder_core.classifier import load_trained

    return load_trained()


def model_architectures() -> dict[str, EncoderConfig]:
    """Weights id -> the architecture that model fixes ("random" fixes none)."""
    trained = trained_model()
    return {"trained": trained[0]} if trained else {}


def trained_checkpoints():
    """The trained model at several points of its training (`Checkpoint`s in step order; the
    last is the shipped weights), or () when the file is absent."""
    from encoder_core.classifier import DEFAULT_CHECKPOINTS

    if trained_model() is None or not Path(DEFAULT_CHECKPOINTS).exists():
        return ()
    return _checkpoints_cached()


@st.cache_resource
def _checkpoints_cached():
    from encoder_core.classifier import load_checkpoints

    return load_checkpoints()[1]


def checkpoint_steps() -> tuple[int, ...]:
    """The training steps the trained model ships at (the last is its final weights)."""
    return tuple(c.step for c in trained_checkpoints())


def checkpoint_at(step: int):
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


def weights_for(weights: str, cfg: EncoderConfig, train_step: int = FINAL_STEP):
    """(encoder params, classifier head or None) of the weights `weights` at `cfg`; trained
    weights after `train_step` training steps (FINAL_STEP: the shipped ones)."""
    if weights == "trained":
        checkpoint = checkpoint_at(train_step) if train_step != FINAL_STEP else None
        if checkpoint is not None:
            return checkpoint.params, checkpoint.head
        _, params, head = trained_model()
        return params, head
    return random_params(cfg), None
