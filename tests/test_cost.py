"""encoder_core.cost against real traces: the trace's bytes and the weights' bytes exactly, the
peak memory of `encode` as tracemalloc measures it (within ±20 %, and its transient part too),
the time model's shape (not its seconds: no timing test); the pages' derived work
(lens.page_costs, declared by each page's registry entry) and the core's views it is made of."""

from __future__ import annotations

import tracemalloc
from dataclasses import FrozenInstanceError, fields

import numpy as np
import pytest

from encoder_core import (
    Cost,
    EncoderConfig,
    encode,
    encode_peak_bytes,
    encode_seconds,
    init_params,
    params_bytes,
    params_cost,
    trace_bytes,
    trace_cost,
)
from encoder_core.cost import encode_transient_bytes, trace_field_bytes
from encoder_core.trace import LayerNormTrace, LayerTrace
from tests.support.configs import SMALL, TRACE_CONFIGS, VIT, make_test_image

VIT_NO_PREFIX = {**VIT, "cls_token": False, "dist_token": False, "n_registers": 0}
# Every switch that changes which arrays a trace holds (or shares), on SMALL.
CONFIGS = {
    **{name: {**SMALL, **changes} for name, changes in TRACE_CONFIGS.items()},
    "vit": {**SMALL, **VIT},
    "vit_no_ffn": {**SMALL, **VIT, "use_ffn": False},
    "vit_pe_off": {**SMALL, **VIT, "use_pe": False},
    "vit_sinusoidal": {**SMALL, **VIT, "position": "sinusoidal"},
    "vit_post_norm_tanh": {**SMALL, **VIT, "norm_first": False, "activation": "gelu_tanh"},
    "vit_no_prefix": {**SMALL, **VIT_NO_PREFIX},
    "vit_no_prefix_sinusoidal": {**SMALL, **VIT_NO_PREFIX, "position": "sinusoidal"},
    "vit_no_pos_prefix": {**SMALL, **VIT, "pos_prefix": False, "final_norm": False},
    "cls_only_pe_off": {**SMALL, "cls_token": True, "use_pe": False},
    "pe_off": {**SMALL, "use_pe": False},
    "one_head": {**SMALL, "n_heads": 1},
    "one_layer_rgb_stats": {**SMALL, "n_layers": 1, "channels": 3,
                            "pixel_mean": (0.5, 0.5, 0.5), "pixel_std": (0.2, 0.2, 0.2)},
}


def measured_nbytes(obj: object, skip: object) -> int:
    """lens.digests.nbytes, written out: every distinct array reachable through dataclass fields
    and tuples, once each, leaving out the arrays reachable from `skip` (the weights)."""
    seen: set[int] = set()

    def walk(item: object, count: bool) -> int:
        if id(item) in seen:
            return 0
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            return item.nbytes if count else 0
        if isinstance(item, tuple):
            return sum(walk(x, count) for x in item)
        if hasattr(item, "__dataclass_fields__") and not isinstance(item, EncoderConfig):
            return sum(walk(getattr(item, f.name), count) for f in fields(item))
        return 0

    walk(skip, False)
    return walk(obj, True)


def run(cfg: EncoderConfig):
    image = make_test_image(cfg.image_size, cfg.channels)
    return encode(image, cfg, init_params(cfg))


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_trace_bytes_equal_the_arrays_of_a_real_trace(name):
    from lens.digests import nbytes

    cfg = EncoderConfig(**CONFIGS[name])
    tr = run(cfg)
    assert trace_bytes(cfg) == nbytes(tr) - nbytes(tr.params) == measured_nbytes(tr, tr.params)


def test_trace_field_bytes_match_each_field_of_a_real_trace():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    tr = run(cfg)
    predicted = trace_field_bytes(cfg)
    seen: set[int] = {id(a) for a in (tr.image,)}
    got = {"image": tr.image.nbytes}
    for name in ("pixels", "patches", "embedded", "pe", "tokens", "pos", "x0"):
        a = getattr(tr, name)
        got[name] = 0 if id(a) in seen else a.nbytes
        seen.add(id(a))
    for f in fields(LayerTrace):
        if f.name == "out":
            continue
        total = 0
        for layer in tr.layers:
            value = getattr(layer, f.name)
            arrays = ([getattr(value, g.name) for g in fields(LayerNormTrace)]
                      if isinstance(value, LayerNormTrace) else [value])
            for a in arrays:
                if a is not None and id(a) not in seen:
                    total += a.nbytes
                    seen.add(id(a))
        got[f.name] = total
    final = [getattr(tr.final_ln, g.name) for g in fields(LayerNormTrace)]
    got["final_ln"] = sum(a.nbytes for a in final if id(a) not in seen)
    seen |= {id(a) for a in final}
    assert all(id(layer.out) in seen for layer in tr.layers) and id(tr.output) in seen
    assert predicted == got


def test_a_trace_without_ffn_or_prefix_shares_its_arrays_and_is_counted_once():
    cfg = EncoderConfig(**{**SMALL, "use_ffn": False})
    by_field = trace_field_bytes(cfg)
    assert by_field["tokens"] == by_field["pixels"] == by_field["pos"] == 0
    assert by_field["ffn_hidden"] == by_field["ln_2"] == by_field["final_ln"] == 0
    with_prefix = trace_field_bytes(cfg.replace(cls_token=True))
    assert with_prefix["tokens"] == with_prefix["pos"] == with_prefix["x0"] > 0


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_params_bytes_equal_init_params(name):
    from lens.digests import nbytes

    cfg = EncoderConfig(**CONFIGS[name])
    assert params_bytes(cfg) == nbytes(init_params(cfg))


def measured_peak(cfg: EncoderConfig) -> tuple[int, int]:
    """(peak bytes tracemalloc sees while `encode` runs, trace_bytes of the result), the image
    and weights made before tracing starts."""
    image = make_test_image(cfg.image_size, cfg.channels)
    params = init_params(cfg)
    tracemalloc.start()
    try:
        tr = encode(image, cfg, params)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    from lens.digests import nbytes

    return peak, nbytes(tr) - nbytes(tr.params)


# Ten configurations from a few kB to ~150 MB (~4 s in all): pre- and post-norm, GELU pieces,
# one head (no copies), a sinusoidal table larger than the layers, prefix tokens; the biggest
# is 1024 tokens × d_model 512 (transient 4 MB: a LayerNorm's rows at the end).
PEAK_CONFIGS = {
    "small": SMALL,
    "vit_small": {**SMALL, **VIT},
    "one_layer_wide_pe": dict(image_size=64, patch_size=4, d_model=256, n_heads=1, n_layers=1,
                              d_ff=64),
    "pre_norm_gelu": dict(image_size=64, patch_size=4, d_model=128, n_heads=4, n_layers=2,
                          d_ff=512, norm_first=True, activation="gelu"),
    "gelu_tanh": dict(image_size=64, patch_size=4, d_model=128, n_heads=4, n_layers=2, d_ff=512,
                      activation="gelu_tanh"),
    "vit_s_like": dict(image_size=112, patch_size=8, d_model=192, n_heads=3, n_layers=2,
                       d_ff=768, **{**VIT, "n_registers": 0, "dist_token": False}),
    "default": {},
    "no_ffn_784": dict(patch_size=8, use_ffn=False, n_layers=2),
    "wide_16_heads": dict(patch_size=14, d_model=1024, d_ff=4096, n_layers=1, n_heads=16),
    "1024_tokens": dict(patch_size=7, d_model=512, d_ff=2048, n_layers=1),
}


@pytest.mark.parametrize("name", list(PEAK_CONFIGS))
def test_encode_peak_bytes_within_20_percent_of_tracemalloc(name):
    cfg = EncoderConfig(**PEAK_CONFIGS[name])
    peak, traced = measured_peak(cfg)
    predicted = encode_peak_bytes(cfg)
    assert traced == trace_bytes(cfg)
    assert abs(predicted - peak) <= 0.2 * peak, (predicted, peak)
    # the part beyond the trace too, where it is large enough to measure (not Python objects)
    transient = peak - traced
    if transient > 200_000:
        assert abs(encode_transient_bytes(cfg) - transient) <= 0.2 * transient, (
            encode_transient_bytes(cfg), transient)


def test_the_transient_part_is_a_layer_norm_at_the_end_not_the_attention():
    # scores and attn are kept, softmax writes into its result: 2·S·d beyond the trace, not h·S²
    cfg = EncoderConfig(patch_size=7, d_model=64, n_heads=16, n_layers=1, d_ff=256)
    S, d = cfg.seq_len, cfg.d_model
    assert 2 * S * d * 4 <= encode_transient_bytes(cfg) < 3 * S * d * 4
    assert encode_transient_bytes(cfg) < cfg.n_heads * S * S * 4 / 10


def test_encode_seconds_is_positive_and_grows_with_the_work():
    base = EncoderConfig(**SMALL)
    assert encode_seconds(base) > 0
    for more in (dict(n_layers=6), dict(d_model=64, d_ff=128), dict(patch_size=4),
                 dict(d_ff=512), dict(n_heads=8), dict(activation="gelu")):
        assert encode_seconds(base.replace(**more)) > encode_seconds(base), more
    assert encode_seconds(base, gflops=10.0) > encode_seconds(base, gflops=100.0)
    heavy = EncoderConfig(patch_size=7, d_model=1024, d_ff=4096, n_layers=12)
    assert encode_seconds(heavy) > 100 * encode_seconds(base)


def test_trace_cost_is_peak_and_seconds_and_cost_is_frozen():
    cfg = EncoderConfig()
    cost = trace_cost(cfg)
    assert cost == Cost(encode_peak_bytes(cfg), encode_seconds(cfg))
    with pytest.raises(FrozenInstanceError):
        cost.bytes = 0  # type: ignore[misc]


def test_page_cost_of_every_page_from_its_registry_entry():
    from lens.page_costs import page_cost
    from lens.steps import ALL_PAGES

    cfg = EncoderConfig(**{**SMALL, **VIT})
    for info in ALL_PAGES:
        cost = page_cost(cfg, info.costs)
        assert cost.bytes >= 0 and cost.seconds >= 0
        assert (cost.bytes > 0) == (info.costs is not None and bool(info.costs(cfg))), info.id
    assert page_cost(cfg, None) == Cost(0, 0.0)
    heavy = {i.id for i in ALL_PAGES if page_cost(EncoderConfig(), i.costs).bytes > 2**20}
    assert {"stack", "multihead", "scores", "compare"} <= heavy
    assert "patches" not in heavy and "class" not in heavy


def test_the_stack_costs_its_rollout_and_head_statistics():
    from lens import page_costs

    cfg = EncoderConfig(patch_size=7, d_model=1024, d_ff=4096, n_layers=12)
    S, h = cfg.seq_len, cfg.n_heads
    cost = page_costs.page_cost(cfg, page_costs.stack)
    assert cost.bytes >= S * S * 8 + 3 * h * S * S * 8  # R kept; the entropy's float64 copies
    assert page_costs.page_cost(cfg.replace(n_layers=2), page_costs.stack).seconds < cost.seconds


def test_the_payload_terms_use_the_explorers_own_limits():
    from lens import explorer, page_costs

    for panels, n in ((48, 196), (8, 1024), (1, 1024), (8, 196)):
        sent = page_costs.explorer_payload(panels, n)
        assert (sent.kept > explorer.FIXED) == explorer.fits(panels, n), (panels, n)
    assert explorer.FIXED == 2**18 and explorer.MAX_BYTES == 4 * 2**20


def test_compare_variants_leave_out_the_pages_own_trace():
    from lens.page_costs import compare_variants

    cfg = EncoderConfig(**SMALL)  # use_pe on, 4 heads
    variants = compare_variants(cfg)
    assert "pe_on" not in variants and variants["pe_off"] == cfg.replace(use_pe=False)
    assert variants["shuffled_pe_on"] == cfg and "settings_a" not in variants
    assert variants["settings_b"].n_heads == 8
    off = compare_variants(cfg.replace(use_pe=False))
    assert "pe_off" not in off and off["pe_on"].use_pe


def traced_peak(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_stacks_rollout_and_head_statistics_within_20_percent_of_tracemalloc():
    from encoder_core.views.analysis import head_statistics
    from encoder_core.views.rollout import attention_rollout
    from lens import page_costs

    for changes in ({}, {"cls_token": True, "image_size": 160, "patch_size": 8}):
        cfg = EncoderConfig(**{**dict(image_size=168, patch_size=7, d_model=64, n_heads=8,
                                      n_layers=2, d_ff=128), **changes})
        tr = run(cfg)
        attns = [layer.attn for layer in tr.layers]
        rollout, statistics = page_costs.stack(cfg)[:2]
        R, peak = traced_peak(lambda attns=attns: attention_rollout(attns))
        assert R.nbytes == rollout.kept
        assert abs(rollout.kept + rollout.transient - peak) <= 0.2 * peak, (rollout, peak)
        _, peak = traced_peak(lambda attns=attns, cfg=cfg: head_statistics(
            attns, cfg.grid_size, cfg.patch_size, cfg.n_prefix))
        predicted = statistics.kept + statistics.transient
        assert abs(predicted - peak) <= 0.2 * peak, (predicted, peak)


def test_the_explorer_payload_is_predicted_within_20_percent():
    from lens import explorer
    from lens.page_costs import explorer_payload

    G, panels = 14, 48  # the defaults' six layers × eight heads: 3.7 MB of maps, sent
    N = G * G
    attn = np.random.default_rng(0).random((6, 8, N, N), dtype=np.float32)
    image = make_test_image(224)
    blob = explorer.payload(image, G, 0, {}, explorer.Maps(attn, "t", "w"))
    predicted = explorer_payload(panels, N)
    assert abs(predicted.kept - len(blob)) <= 0.2 * len(blob)
    too_many = explorer_payload(8, 32 * 32)  # 16 MB of maps: the picker alone
    assert too_many.kept == explorer.FIXED and not explorer.fits(8, 32 * 32)


@pytest.mark.parametrize("changes", [
    {}, {"image_size": 224, "patch_size": 14, "d_model": 256, "d_ff": 1024}])
def test_params_cost_is_the_weights_and_a_little_within_20_percent_of_tracemalloc(changes):
    cfg = EncoderConfig(**{**SMALL, **changes})
    _, peak = traced_peak(lambda: init_params(cfg))
    predicted = params_cost(cfg)
    assert predicted.bytes > params_bytes(cfg) and predicted.seconds > 0
    assert abs(predicted.bytes - peak) <= 0.2 * peak or peak < 2**20, (predicted, peak)


@pytest.mark.parametrize("n_side, d, foreground", [(14, 64, 0.5), (14, 384, 0.3),
                                                   (28, 128, 0.9)])
def test_the_pca_term_bounds_what_tracemalloc_sees_and_adds_gesdds_workspace(n_side, d,
                                                                           foreground):
    """cost.patch_pca: the traced part (its transient less gesdd's workspace, which NumPy
    mallocs outside tracemalloc) is the worst case (every patch but one foreground): at or
    above the measured peak, and within 1.5 × of it when part of the grid is foreground."""
    from encoder_core.cost import patch_pca, svd_workspace
    from encoder_core.views.pca import border_patches
    from encoder_core.views.pca import patch_pca as run_pca

    N = n_side * n_side
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, d)).astype(np.float32)  # [N, d]
    inside = np.zeros((n_side, n_side), dtype=bool)
    m = min(round(n_side * foreground**0.5), n_side - 2)
    inside[1:1 + m, 1:1 + m] = True  # a block of the grid inside its border
    X[inside.reshape(N)] += 4 * rng.normal(size=d).astype(np.float32)
    cfg = EncoderConfig(image_size=16 * n_side, patch_size=16, d_model=d, n_heads=4,
                        d_ff=4 * d, n_layers=1)
    term = patch_pca(cfg)
    result, peak = traced_peak(lambda: run_pca(X, border_patches(n_side)))
    assert result.n_foreground == inside.sum()
    traced = term.kept + term.transient - svd_workspace(N, d)
    assert 0.95 * peak <= traced <= 1.5 * peak, (traced, peak)
    from lens import page_costs

    assert term in page_costs.stack(cfg) and term in page_costs.vit(
        cfg.replace(cls_token=True, norm_first=True, final_norm=True, position="learned"))


@pytest.mark.parametrize("changes", [{}, {"cls_token": True, "dist_token": True,
                                          "norm_first": True, "activation": "gelu"}])
def test_a_class_relevance_is_predicted_within_20_percent_of_tracemalloc(changes):
    """encoder_core.cost.relevance: the map kept, the gradients of the trace and a layer's
    softmax backward beside it (what the relevance section of The stack and the ViT page runs
    twice, one class after the other)."""
    from dataclasses import replace

    from encoder_core import relevance
    from encoder_core.cost import relevance as relevance_cost
    from tests.test_gradients import random_head

    cfg = EncoderConfig(**{**dict(image_size=96, patch_size=8, d_model=64, n_heads=4,
                                  n_layers=2, d_ff=256), **changes})
    params = init_params(cfg)
    params = replace(params, head=random_head(cfg, "token" if cfg.cls_token else "avg", ()))
    tr = encode(make_test_image(cfg.image_size, cfg.channels), cfg, params)
    term = relevance_cost(cfg)
    for method in ("chefer", "gradient_rollout"):
        m, peak = traced_peak(lambda method=method: relevance(tr, params, 1, method))
        assert m.nbytes == term.kept
        assert abs(term.kept + term.transient - peak) <= 0.2 * peak, (term, peak, method)
