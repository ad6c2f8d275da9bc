"""lens.traces: warming computes exactly the trace a first visit at the defaults asks for, and
keeps it however many learners arrive with their own settings; lens.resources: a trace's size in
its cache leaves out its weights."""

from __future__ import annotations

import threading

import numpy as np

from lens import model_weights, resources, traces
from lens.settings import Settings
from tests.support.apptest_helpers import ALL_PAGES, assert_clean, new_app


def test_the_warmed_trace_is_the_one_a_default_visit_uses_and_it_stays_pinned():
    # an app run earlier in this process may still be warming in the background: its trace,
    # stored after the clear below, would not be the one warm() returns here
    for thread in threading.enumerate():
        if thread.name == "encoder-lens-warm":
            thread.join()
    resources._caches.clear()  # fresh caches, pins and gate: nothing left by earlier tests
    # and a fresh registry of held values: a default trace an earlier test still references
    # would be handed to warm() from there and never enter the fresh cache
    resources._held.clear()
    warmed = traces.warm()
    cached = resources.caches()["traces"]
    misses = cached.misses
    at = new_app()
    at.switch_page(dict(ALL_PAGES)["patches"]).run()
    assert_clean(at)
    assert cached.misses == misses  # the page found the warmed trace: nothing computed
    for seed in range(1, resources.MAX_TRACES + 3):  # more own settings than there are slots
        cfg = Settings(d_model=32, n_heads=2, n_layers=1, seed=seed).to_config()
        traces.trace_for("other", warmed.image, cfg, model_weights.random_params(cfg), "random")
    assert any(t is warmed for t in cached._items.values())


def test_a_traces_size_leaves_out_the_weights_it_shares_with_its_variants():
    from encoder_core import EncoderConfig, encode, init_params
    from lens import resources
    from lens.digests import nbytes

    cfg = EncoderConfig(image_size=32, patch_size=8, d_model=16, n_heads=2, n_layers=2, d_ff=32)
    params = init_params(cfg)
    image = np.random.default_rng(0).random((32, 32, 1), dtype=np.float32)
    trace = encode(image, cfg, params)
    assert resources.trace_bytes(trace) == nbytes(trace) - nbytes(params) > 0
    assert resources.caches()["traces"]._sizeof is resources.trace_bytes
