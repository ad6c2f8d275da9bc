"""The forward passes a page shows, computed once per (image, configuration, weights) and
shared by every session (`trace_for`); what a page run will compute that nobody holds yet, for
the memory budget (`run_cost`); and the default trace, computed in the background when the
server starts and pinned, so the class's first visits find it (`warm`, `warming`).
"""

from __future__ import annotations

import threading

import numpy as np
import streamlit as st

from encoder_core import EncoderConfig, EncoderParams, EncoderTrace, cost, encode

from . import images, model_weights, resources
from .models import has_head
from .page_costs import Terms, page_cost
from .settings import Settings


def trace_for(image_key: str, image: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
              weights: str) -> EncoderTrace:
    """The forward pass, once per (image, configuration, weights), shared across sessions:
    from the cache, or — dropped from it but still used by a page — the one held."""
    return resources.shared("traces", (image_key, cfg, weights),
                            lambda: encode(image, cfg, params), cost.trace_cost, cfg)


def run_cost(image_key: str, planned: list[tuple[str, EncoderConfig]], weights: str,
             train_step: int, terms: Terms | None) -> cost.Cost:
    """The predicted bytes and seconds of what a page run will compute that nobody holds yet:
    the trace of each planned (image tag, configuration) — the page's own first, then its
    variants (e.g. Compare's "/shuffled" image with the positional encoding off) —, their
    random weights, and the page's derived work (`terms`, its registry entry's `costs`) on a
    new main trace."""
    wid = model_weights.weights_id(weights, train_step)
    total_bytes, seconds, seen = 0, 0.0, set()
    for n, (tag, cfg) in enumerate(planned):
        key = (f"{image_key}{tag}", cfg, wid)
        if key in seen or resources.is_held("traces", key):
            continue
        seen.add(key)
        c = cost.trace_cost(cfg)
        total_bytes += c.bytes
        seconds += c.seconds
        if n == 0:
            derived_work = page_cost(cfg, terms,
                                     has_head(weights, model_weights.checkpoint_models()))
            total_bytes += derived_work.bytes
            seconds += derived_work.seconds
        pkey = model_weights.params_key(cfg)
        if weights == "random" and pkey not in seen and not resources.is_held("params", pkey):
            seen.add(pkey)
            drawn = cost.params_cost(cfg)
            total_bytes += drawn.bytes
            seconds += drawn.seconds
    return cost.Cost(bytes=total_bytes, seconds=seconds)


def warm() -> EncoderTrace:
    """Compute what a first visit at the defaults needs, and keep it: the built-in photo
    decoded, the default random weights and their trace (both pinned: learners with their own
    settings never evict the class's shared trace), the trained model's files read."""
    settings = Settings()
    cfg = settings.to_config()
    data = images.DEFAULT_IMAGE.read_bytes()
    _, model_input = images.decode_image(data, settings.image_size, settings.channels)
    key = images.content_key(data)
    wid = model_weights.weights_id(settings.weights)
    resources.caches()["params"].pin(model_weights.params_key(cfg))
    resources.caches()["traces"].pin((key, cfg, wid))
    trace = trace_for(key, model_input, cfg, model_weights.random_params(cfg), wid)
    model_weights.model_architectures()  # the trained model's and the checkpoints' files read
    model_weights.checkpoint_steps()
    return trace


@st.cache_resource(show_spinner=False)
def warming() -> threading.Thread:
    """Start `warm()` in a background thread, once per process (app.py and lens.serve call
    this; a page never waits for it: a page asking for the same trace meanwhile waits for that
    one computation instead of starting another)."""
    thread = threading.Thread(target=warm, name="encoder-lens-warm", daemon=True)
    thread.start()
    return thread
