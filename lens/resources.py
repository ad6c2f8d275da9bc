"""What one server process keeps for all of its sessions, in one place: the bounded caches
(decoded images, random weights, traces, derived quantities, the explorer's payloads, rendered
pictures), the compute gate the weights' and traces' caches share, the registry of the traces
and weights still held anywhere, and the memory budget over them (`lens.admission`).

The modules that fill them say what goes in: `lens.images` (decoding, thumbnails),
`lens.model_weights` (random and trained weights), `lens.traces` (the forward pass, the run's
cost, the warmed default). No session state here; everything is made once per process
(`st.cache_resource`) and is safe to share between the threads of page runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Hashable

import streamlit as st

from encoder_core import EncoderConfig, EncoderTrace, cost

from .admission import MEMORY_BUDGET_MB, MemoryBudget, return_freed_memory
from .cache import Held, LRUCache
from .compute_gate import ComputeGate
from .digests import nbytes

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
# weights and traces computed at once, plus quick ones beside them (lens.compute_gate)
MAX_COMPUTES = int(os.environ.get("ENCODER_LENS_MAX_COMPUTES", "1"))
QUICK_COMPUTES = int(os.environ.get("ENCODER_LENS_QUICK_COMPUTES", "1"))
QUICK_COMPUTE_S = 1.0  # predicted seconds of a quick one (d_model ≤ 512 at 196 tokens)


def trace_bytes(trace: EncoderTrace) -> int:
    """A trace's own arrays, without its weights: those are the params cache's (or a loaded
    model's), and the traces of one model's variants (Compare: without PE, shuffled) share
    them; counted in each, four variants of a 12-layer d_model 384 model overflowed the
    budget and evicted each other on every run."""
    return nbytes(trace) - nbytes(trace.params)


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


def caches() -> dict[str, LRUCache]:
    """The image, parameter, trace, derived-quantity, payload and picture caches (tests read
    their sizes)."""
    return _caches()


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


def shared(kind: str, key: Hashable, compute: Callable[[], object],
           predict: Callable[[EncoderConfig], cost.Cost], cfg: EncoderConfig) -> object:
    """The value of `key` among the `kind` ("traces", "params") every session shares: the one
    still held anywhere, else the cached one, else computed (its predicted seconds
    `predict(cfg)`, asked only now, choose its slot of the compute gate) and held from now on,
    leaving the current run's reservation (`MemoryBudget.settle`: counted as held, not twice)."""
    value = held()[kind].get(key)
    if value is None:
        value = caches()[kind].get_or_compute(key, compute, predict(cfg).seconds)
        held()[kind].put(key, value)
        budget().settle(held()[kind].bytes_of(key))  # held now: not reserved too
    return value


def is_held(kind: str, key: Hashable) -> bool:
    """Whether the `kind` value of `key` is cached or held: a run that needs it pays nothing."""
    return key in caches()[kind] or held()[kind].get(key) is not None


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
