"""What the server computes once and shares with every session: decoded images, weights,
traces and quantities derived from traces, each in a bounded cache; the shipped model.

No session state here: every function is a pure function of its arguments plus the caches.
"""

from __future__ import annotations

import hashlib
import io
import os
import sys
import threading
from collections.abc import Callable, Hashable
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from encoder_core import (
    EncoderConfig,
    EncoderParams,
    EncoderTrace,
    cost,
    encode,
    init_params,
    read_image,
    to_model_input,
)
from encoder_core.config import valid_patch_sizes

from . import figures
from .admission import MEMORY_BUDGET_MB, MemoryBudget, return_freed_memory
from .cache import ComputeGate, Fresh, Held, LRUCache, nbytes
from .models import Model, checkpoint_heads, checkpoint_paths, has_head, load_models
from .page_costs import Terms, page_cost
from .settings import FINAL_STEP, Settings

if TYPE_CHECKING:
    from encoder_core import EncoderParams
    from encoder_core.shapes_model.classifier import Checkpoint, ClassifierHead

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_IMAGE = Path(str(files("encoder_core.assets"))) / "default.jpg"  # package data

# Traces and random weights are kept within the server's memory budget (lens.admission): the
# budget asks these two caches to drop their oldest entries when a new run needs the room.
MEMORY_BUDGET = MEMORY_BUDGET_MB * 2**20
MAX_TRACES = 8  # traces kept per server, within the budget (default ~55 MB without weights)
MAX_IMAGES = 8  # decoded images kept per server
MAX_PARAMS = 8  # random weights kept per server, within the budget (default ~73 MB)
MAX_DERIVED = 32  # derived quantities (rollout, head statistics, scaling demo) kept per server
MAX_DERIVED_BYTES = 256 * 2**20  # a rollout at 1,024 tokens is 8 MB
MAX_PAYLOADS = 16  # explorer payloads (≤ 4 MB each: explorer.MAX_BYTES) kept per server
MAX_PICTURES = 400  # rendered PNGs kept per server, within MAX_PICTURE_BYTES
MAX_PICTURE_BYTES = 128 * 2**20  # a heatmap is 20–200 kB
MAX_COMPUTES = int(os.environ.get("ENCODER_LENS_MAX_COMPUTES", "1"))  # + quick ones: lens.cache
QUICK_COMPUTES, QUICK_COMPUTE_S = int(os.environ.get("ENCODER_LENS_QUICK_COMPUTES", "1")), 1.0
DISPLAY_SIDE = 512  # the original upload is shown at most this large


@st.cache_resource(show_spinner=False)
def _caches() -> dict[str, LRUCache]:
    return_freed_memory()  # once per process, before the first trace (lens.admission)
    gate = ComputeGate(MAX_COMPUTES, quick=QUICK_COMPUTES, quick_s=QUICK_COMPUTE_S)  # leaves
    return {"images": LRUCache(MAX_IMAGES),
            "params": LRUCache(MAX_PARAMS, max_bytes=MEMORY_BUDGET, gate=gate),
            "traces": LRUCache(MAX_TRACES, max_bytes=MEMORY_BUDGET, gate=gate,
                               sizeof=trace_bytes),
            "derived": LRUCache(MAX_DERIVED, max_bytes=MAX_DERIVED_BYTES),
            "payloads": LRUCache(MAX_PAYLOADS),
            "pictures": LRUCache(MAX_PICTURES, max_bytes=MAX_PICTURE_BYTES, sizeof=len)}


@st.cache_resource(show_spinner=False)
def _held() -> dict[str, Held]:
    """The traces and random weights still referenced by a cache or a running page."""
    return {"traces": Held(sizeof=trace_bytes), "params": Held()}


def held() -> dict[str, Held]:
    """The traces and weights held now, by key (tests and benchmarks read their bytes)."""
    return _held()


@st.cache_resource(show_spinner=False)
def budget() -> MemoryBudget:
    """This server's memory budget: traces and weights held plus what runs reserved stay
    within MEMORY_BUDGET; the pinned defaults never leave."""
    def in_use() -> int:
        return sum(h.total_bytes for h in held().values())

    def make_room(n_bytes: int) -> None:
        dropped = caches()["traces"].drop_oldest(n_bytes)
        if dropped < n_bytes:
            caches()["params"].drop_oldest(n_bytes - dropped)

    def floor() -> int:
        return caches()["traces"].pinned_bytes + caches()["params"].pinned_bytes

    return MemoryBudget(MEMORY_BUDGET, in_use=in_use, make_room=make_room, floor=floor)


def run_cost(image_key: str, planned: list[tuple[str, EncoderConfig]], weights: str,
             train_step: int, terms: Terms | None) -> cost.Cost:
    """The predicted bytes and seconds of what a page run will compute that nobody holds yet:
    the trace of each planned (image tag, configuration) — the page's own first, then its
    variants (e.g. Compare's "/shuffled" image with the positional encoding off) —, their
    random weights, and the page's derived work (`terms`, its registry entry's `costs`) on a
    new main trace."""
    wid = weights_id(weights, train_step)
    total_bytes, seconds, seen = 0, 0.0, set()
    for n, (tag, cfg) in enumerate(planned):
        key = (f"{image_key}{tag}", cfg, wid)
        if key in seen or _is_held("traces", key):
            continue
        seen.add(key)
        c = cost.trace_cost(cfg)
        total_bytes += c.bytes
        seconds += c.seconds
        if n == 0:
            derived_work = page_cost(cfg, terms, has_head(weights, checkpoint_models()))
            total_bytes += derived_work.bytes
            seconds += derived_work.seconds
        pkey = params_key(cfg)
        if weights == "random" and pkey not in seen and not _is_held("params", pkey):
            seen.add(pkey)
            drawn = cost.params_cost(cfg)
            total_bytes += drawn.bytes
            seconds += drawn.seconds
    return cost.Cost(bytes=total_bytes, seconds=seconds)


def _is_held(kind: str, key: Hashable) -> bool:
    return key in caches()[kind] or held()[kind].get(key) is not None


def trace_bytes(trace: EncoderTrace) -> int:
    """A trace's own arrays, without its weights: those are the params cache's (or a loaded
    model's), and the traces of one model's variants (Compare: without PE, shuffled) share
    them; counted in each, four variants of a 12-layer d_model 384 model overflowed the
    budget and evicted each other on every run."""
    return nbytes(trace) - nbytes(trace.params)


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


THUMBNAIL_SIDE = 160  # px: the sidebar's picture of the image in use


def thumbnail_png(image_key: str, original: np.ndarray) -> bytes:
    """A small PNG of `original` ([h, w, 3] floats in [0, 1], the image as shown), at most
    THUMBNAIL_SIDE px a side: the sidebar's reminder of which upload is in use, drawn once per
    image for every session."""
    return picture(("thumbnail", image_key), lambda: figures.thumbnail(original, THUMBNAIL_SIDE))


def params_key(cfg: EncoderConfig) -> tuple:
    """What determines seeded random weights (not h, the scale or the FFN switch)."""
    return (cfg.seed, cfg.n_layers, cfg.patch_dim, cfg.d_model, cfg.d_ff)


def random_params(cfg: EncoderConfig) -> EncoderParams:
    """Seeded random weights, cached by what determines them; one object while anyone holds it."""
    return _shared("params", params_key(cfg), lambda: init_params(cfg), cost.params_cost, cfg)


def trace_for(image_key: str, image: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
              weights: str) -> EncoderTrace:
    """The forward pass, once per (image, configuration, weights), shared across sessions:
    from the cache, or — dropped from it but still used by a page — the one held."""
    return _shared("traces", (image_key, cfg, weights), lambda: encode(image, cfg, params),
                   cost.trace_cost, cfg)


def _shared(kind: str, key: Hashable, compute: Callable[[], object],
            predict: Callable[[EncoderConfig], cost.Cost], cfg: EncoderConfig) -> object:
    value = held()[kind].get(key)
    if value is None:  # only now its predicted seconds, for the compute gate
        value = caches()[kind].get_or_compute(key, compute, predict(cfg).seconds)
        held()[kind].put(key, value)
        budget().settle(held()[kind].bytes_of(key))  # held now: not reserved too
    return value


def warm() -> EncoderTrace:
    """Compute what a first visit at the defaults needs, and keep it: the built-in photo
    decoded, the default random weights and their trace (both pinned: learners with their own
    settings never evict the class's shared trace), the trained model's files read."""
    settings = Settings()
    cfg = settings.to_config()
    data = DEFAULT_IMAGE.read_bytes()
    _, model_input = decode_image(data, settings.image_size, settings.channels)
    key = content_key(data)
    caches()["params"].pin(params_key(cfg))
    caches()["traces"].pin((key, cfg, weights_id(settings.weights)))
    trace = trace_for(key, model_input, cfg, random_params(cfg), weights_id(settings.weights))
    model_architectures()  # the trained model's and the checkpoints' files read
    checkpoint_steps()
    return trace


@st.cache_resource(show_spinner=False)
def warming() -> threading.Thread:
    """Start `warm()` in a background thread, once per process (app.py and lens.serve call
    this; a page never waits for it: a page asking for the same trace meanwhile waits for that
    one computation instead of starting another)."""
    thread = threading.Thread(target=warm, name="encoder-lens-warm", daemon=True)
    thread.start()
    return thread


def derived(key: Hashable, compute: Callable[[], object]) -> object:
    """A quantity derived from a trace, computed once per key (which names the trace)."""
    return caches()["derived"].get_or_compute(key, compute)


def payload(key: Hashable, compute: Callable[[], bytes]) -> bytes:
    """An explorer payload, built once per key (which names the trace, the maps, the query and
    the language) instead of hashing its arrays on every run."""
    return caches()["payloads"].get_or_compute(key, compute)


def picture(key: Hashable, compute: Callable[[], bytes]) -> bytes:
    """A rendered picture's PNG bytes, drawn once per key (`widgets.render` makes the key from
    the figure's arguments) however many sessions ask for it at the same moment."""
    return caches()["pictures"].get_or_compute(key, compute)


def sample_png(seed: int) -> bytes:
    """A generated shape image as PNG bytes (the trained model's data distribution)."""
    from PIL import Image

    from encoder_core.shapes_model.dataset import make_sample

    sample = make_sample(np.random.default_rng(seed))
    grey = (np.clip(sample.image[..., 0], 0, 1) * 255).round().astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(grey, mode="L").save(buf, format="PNG")
    return buf.getvalue()


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
