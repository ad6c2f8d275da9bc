"""What the app plots beyond the raw trace (encoder_core/views/analysis.py): rollout, head
contributions, the scaling demo, attention distance and entropy."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.__main__ import english
from encoder_core.views.analysis import (
    STEP_IDS,
    attention_entropy,
    contribution_norms,
    divisor_sweep,
    head_contributions,
    head_statistics,
    head_sum_gap,
    mean_attention_distance,
    parameter_count,
    pipeline_steps,
    rollout_mean_over_queries,
    row_moments,
    scaling_demo,
    uniform_attention_reference,
)
from encoder_core.views.rollout import attention_rollout

CFG = EncoderConfig(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=2,
                    d_ff=64)


@pytest.fixture(scope="module")
def small_trace(make_image):
    cfg = EncoderConfig(image_size=32, patch_size=8, d_model=16, n_heads=4, n_layers=1, d_ff=64)
    return encode(make_image(32), cfg, init_params(cfg))


@pytest.fixture(scope="module")
def two_layer_trace(make_image):
    return encode(make_image(CFG.image_size, CFG.channels), CFG)


def test_head_contributions_sum_to_attn_out_and_head_sum_gap_is_rounding(small_trace):
    layer, W_O = small_trace.layers[0], small_trace.params.layers[0].W_O
    contrib = head_contributions(layer.heads, W_O)  # [h, N, d]
    np.testing.assert_allclose(contrib.sum(axis=0), layer.attn_out, atol=1e-5)
    gap = head_sum_gap(layer.heads, W_O, layer.attn_out)
    assert 0.0 <= gap < 1e-5


def test_head_sum_gap_sees_a_wrong_attn_out(small_trace):
    layer, W_O = small_trace.layers[0], small_trace.params.layers[0].W_O
    wrong = np.array(layer.attn_out)
    wrong[3, 5] += 0.5
    assert head_sum_gap(layer.heads, W_O, wrong) == pytest.approx(0.5, abs=1e-5)


def test_contribution_norms_are_the_row_norms_of_each_head_contribution(small_trace):
    layer, W_O = small_trace.layers[0], small_trace.params.layers[0].W_O
    contrib = head_contributions(layer.heads, W_O)
    norms = contribution_norms(contrib)
    assert norms.shape == contrib.shape[:2]
    assert norms[2, 7] == pytest.approx(float(np.sqrt((contrib[2, 7] ** 2).sum())), rel=1e-6)
    one_row = contribution_norms(head_contributions(layer.heads[:, 7:8], W_O))
    np.testing.assert_allclose(one_row[:, 0], norms[:, 7], rtol=1e-6)


def test_scaling_demo_of_one_head_slice_matches_that_head_of_the_whole_layer(small_trace):
    layer = small_trace.layers[0]
    whole = scaling_demo(layer.q, layer.k, 16)
    one = scaling_demo(layer.q[2:3], layer.k[2:3], 16)
    for a, b in zip(whole, one, strict=True):
        np.testing.assert_allclose(a.attn[2], b.attn[0], atol=1e-6)
    # the paper's case is the trace's attn at the default scaling
    np.testing.assert_allclose(one[0].attn[0], layer.attn[2], atol=1e-5)
    # flatter with √d_model, sharper without scaling: entropy ordered none < d_k < d_model
    assert one[2].entropy.mean() < one[0].entropy.mean() < one[1].entropy.mean()


def test_rollout_mean_over_queries_sums_to_one_and_averages_rows(two_layer_trace):
    R = attention_rollout([l.attn for l in two_layer_trace.layers])
    m = rollout_mean_over_queries(R)
    assert m.shape == (CFG.n_tokens,)
    assert m.sum() == pytest.approx(1.0)
    assert m[4] == pytest.approx(R[:, 4].sum() / CFG.n_tokens)


def test_uniform_reference_entropy_is_ln_n_and_bounds_the_heads(two_layer_trace):
    G, P = CFG.grid_size, CFG.patch_size
    distance, entropy = uniform_attention_reference(G, P)
    assert entropy == pytest.approx(math.log(CFG.n_tokens))
    for layer in two_layer_trace.layers:
        assert np.all(attention_entropy(layer.attn) <= entropy + 1e-6)
    # uniform attention: the mean distance between all patch-centre pairs, here 4 × 4 patches
    c = (np.arange(G) + 0.5) * P
    yy, xx = np.meshgrid(c, c, indexing="ij")
    pts = np.stack([yy.ravel(), xx.ravel()], axis=1)
    pair = np.sqrt(((pts[:, None] - pts[None]) ** 2).sum(-1)).mean()
    assert distance == pytest.approx(pair)
    one_hot = np.eye(CFG.n_tokens)[None]  # attending to oneself: distance 0
    assert mean_attention_distance(one_hot, G, P)[0] == pytest.approx(0.0)


def test_head_statistics_equal_the_per_layer_functions():
    cfg = EncoderConfig(image_size=64, patch_size=16, d_model=32, n_heads=4, n_layers=3, d_ff=64)
    image = np.random.default_rng(0).random((64, 64, 1), dtype=np.float32)
    attns = [layer.attn for layer in encode(image, cfg).layers]
    distance, entropy = head_statistics(attns, cfg.grid_size, cfg.patch_size)
    assert distance.shape == entropy.shape == (3, 4)
    for l, attn in enumerate(attns):
        np.testing.assert_allclose(distance[l], mean_attention_distance(attn, 4, 16))
        np.testing.assert_allclose(entropy[l], attention_entropy(attn))


# --- the pipeline steps: ids, not display strings ---------------------------------------------

LAYER_STEP_IDS = {"qkv", "scores", "softmax", "heads", "concat", "addnorm_1", "ffn", "addnorm_2"}


@pytest.mark.parametrize("use_ffn", [True, False], ids=["ffn", "no_ffn"])
def test_pipeline_steps_have_unique_ids_in_pipeline_order(use_ffn):
    steps = pipeline_steps(EncoderConfig(use_ffn=use_ffn))
    ids = [s.id for s in steps]
    assert len(set(ids)) == len(ids)
    assert ids == [i for i in STEP_IDS if use_ffn or i not in ("ffn", "addnorm_2")]
    assert {s.id for s in steps if s.per_layer} == LAYER_STEP_IDS & set(ids)


def test_step_ids_do_not_change_with_the_settings_that_change_the_display_text():
    ids = [s.id for s in pipeline_steps(EncoderConfig())]
    for changes in (dict(use_pe=False), dict(scale="d_model"), dict(scale="none"),
                    dict(n_layers=1), dict(image_size=64, patch_size=8, d_model=64, d_ff=128)):
        assert [s.id for s in pipeline_steps(EncoderConfig(**changes))] == ids, changes


@pytest.mark.parametrize("changes", [{}, dict(use_ffn=False), dict(channels=3, n_layers=2),
                                     dict(d_model=64, n_heads=4, d_ff=96, n_layers=3)],
                         ids=["default", "no_ffn", "rgb_2_layers", "d64_3_layers"])
def test_parameter_count_is_the_number_of_values_the_encoder_uses(changes):
    cfg = EncoderConfig(**changes)
    p = init_params(cfg)
    unused = () if cfg.use_ffn else ("W_1", "b_1", "W_2", "b_2", "gamma_2", "beta_2")
    per_layer = sum(getattr(p.layers[0], name).size for name in
                    ("W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1", "W_1", "b_1", "W_2", "b_2",
                     "gamma_2", "beta_2") if name not in unused)
    assert parameter_count(cfg) == p.W_E.size + cfg.n_layers * per_layer
    assert sum(s.n_params for s in pipeline_steps(cfg) if not s.per_layer) == p.W_E.size


def test_unshuffle_undoes_a_patch_shuffle_and_gives_the_original_attention_without_pe(
        make_image):
    from encoder_core.pipeline.patches import shuffle_patches
    from encoder_core.views.analysis import fixed_permutation, unshuffle

    cfg = CFG.replace(use_pe=False)
    perm = fixed_permutation(cfg.n_tokens)
    x = np.arange(cfg.n_tokens, dtype=np.float32)
    assert np.array_equal(unshuffle(x[perm], perm), x)
    image = make_image(cfg.image_size)
    original = encode(image, cfg)
    moved = encode(shuffle_patches(image, cfg.patch_size, perm), cfg)
    q = 5
    n = int(np.flatnonzero(perm == q)[0])  # where patch q sits in the shuffled image
    row = unshuffle(moved.layers[0].attn[:, n, :], perm)  # [h, N]
    np.testing.assert_allclose(row, original.layers[0].attn[:, q, :], atol=1e-6)
    with_pe = encode(shuffle_patches(image, cfg.patch_size, perm), cfg.replace(use_pe=True))
    changed = unshuffle(with_pe.layers[0].attn[:, n, :], perm)
    unmoved = encode(image, cfg.replace(use_pe=True)).layers[0].attn[:, q]
    assert np.abs(changed - unmoved).max() > 1e-3


@pytest.mark.parametrize("changes", [
    dict(norm_first=True, cls_token=True, dist_token=True, n_registers=2, position="learned",
         patch_bias=True, qkv_bias=True, proj_bias=True, activation="gelu", final_norm=True,
         layer_scale=True),
    dict(cls_token=True, qkv_bias=True, use_ffn=False, layer_scale=True),
], ids=["every_variant", "cls_qkv_bias_no_ffn"])
def test_parameter_count_of_a_vit_variant_is_every_parameter_it_uses(changes):
    from encoder_core.params import params_to_arrays

    cfg = EncoderConfig(**{**dict(image_size=64, patch_size=16, d_model=64, n_heads=4, d_ff=96,
                                  n_layers=3), **changes})
    arrays = params_to_arrays(init_params(cfg))
    unused = () if cfg.use_ffn else ("W_1", "b_1", "W_2", "b_2", "gamma_2", "beta_2", "ls_2")
    used = sum(a.size for k, a in arrays.items() if k.rsplit("/", 1)[-1] not in unused)
    assert parameter_count(cfg) == used
    steps = {s.id: s for s in pipeline_steps(cfg)}
    assert f"{cfg.seq_len} × {cfg.seq_len}" in english(steps["scores"].shape)  # prefix rows


def test_forward_flops_count_the_prefix_rows_in_the_layers():
    from encoder_core.views.analysis import forward_flops

    cfg = EncoderConfig(image_size=64, patch_size=16, d_model=64, n_heads=4, d_ff=96)
    with_cls = cfg.replace(cls_token=True)
    S, d = 17, 64
    layer = 2 * S * d * d * 4 + 2 * 2 * S * S * d + 2 * 2 * S * d * 96
    assert forward_flops(with_cls) == 2 * 16 * 256 * d + cfg.n_layers * layer
    assert forward_flops(with_cls) > forward_flops(cfg)


@pytest.mark.parametrize("changes", [{}, {"position": "learned", "cls_token": True},
                                     {"cls_token": True}, {"position": "learned"}])
def test_the_positional_step_adds_nothing_to_its_shape_when_positions_are_off(changes):
    """With PE (or the learned positions) off the step's formula says x0 = X: its shape must
    not show a term added either."""
    cfg = EncoderConfig(image_size=64, patch_size=16, d_model=64, n_heads=4, **changes)
    rows = f"{cfg.seq_len} × {cfg.d_model}"
    on = {s.id: s for s in pipeline_steps(cfg)}["positional"]
    off = {s.id: s for s in pipeline_steps(cfg.replace(use_pe=False))}["positional"]
    assert english(on.shape).startswith(f"{rows} + ") and english(on.shape).endswith(f" = {rows}")
    assert english(off.shape) == rows and "+" not in english(off.formula)


def naive_softmax_stats(scores: list[list[float]]) -> tuple[float, float]:
    """Mean row entropy (nats) and mean largest weight of softmax(scores), one row at a time
    with math.exp (float64)."""
    entropies, tops = [], []
    for row in scores:
        m = max(row)
        e = [math.exp(v - m) for v in row]
        total = sum(e)
        p = [v / total for v in e]
        entropies.append(-sum(v * math.log(v) for v in p if v > 0))
        tops.append(max(p))
    return sum(entropies) / len(entropies), sum(tops) / len(tops)


def test_divisor_sweep_matches_a_naive_softmax_of_the_same_draw():
    n, widths = 12, (8, 1, 4)
    sweep = divisor_sweep(n, widths, seed=3)
    assert sweep.d_head.tolist() == [1, 4, 8]  # ascending
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((n, 8)), rng.standard_normal((n, 8))
    for m, d_k in enumerate(sweep.d_head):
        raw = [[sum(q[i, c] * k[j, c] for c in range(d_k)) for j in range(n)] for i in range(n)]
        flat = [v for row in raw for v in row]
        mean = sum(flat) / len(flat)
        std = math.sqrt(sum((v - mean) ** 2 for v in flat) / len(flat))
        assert sweep.score_std[m] == pytest.approx(std, rel=1e-9)
        for name, s in (("none", 1.0), ("d_k", math.sqrt(d_k))):
            h, top = naive_softmax_stats([[v / s for v in row] for row in raw])
            assert getattr(sweep, f"entropy_{name}")[m] == pytest.approx(h, rel=1e-9)
            assert getattr(sweep, f"top_{name}")[m] == pytest.approx(top, rel=1e-9)


def test_without_a_divisor_the_softmax_saturates_as_d_k_grows_and_with_it_it_does_not():
    sweep = divisor_sweep(196)
    ln_n = math.log(196)
    assert sweep.d_head[0] == 1 and sweep.d_head[-1] == 1024
    # scores spread like √d_k …
    np.testing.assert_allclose(sweep.score_std, np.sqrt(sweep.d_head), rtol=0.15)
    # … so unscaled rows go towards one-hot, scaled rows stay as spread
    assert np.all(np.diff(sweep.entropy_none) < 0) and sweep.entropy_none[-1] < 0.3
    assert sweep.top_none[-1] > 0.9
    assert np.ptp(sweep.entropy_d_k[1:]) < 0.2 and np.all(sweep.entropy_d_k > ln_n - 1)
    assert np.all(sweep.top_d_k < 0.1)


def test_row_moments_match_a_naive_float64_loop():
    x = np.random.default_rng(0).normal(0.4, 2.0, size=(5, 7)).astype(np.float32)
    mean, var = row_moments(x)
    assert mean.shape == var.shape == (5,) and mean.dtype == np.float64
    for i, row in enumerate(x.tolist()):
        mu = sum(row) / len(row)
        assert mean[i] == pytest.approx(mu, rel=1e-12)
        assert var[i] == pytest.approx(sum((v - mu) ** 2 for v in row) / len(row), rel=1e-12)


def test_row_moments_of_ln_normed_are_zero_and_one(small_trace):
    layer = small_trace.layers[0]
    before_mean, before_var = row_moments(layer.resid_1)
    np.testing.assert_allclose(before_mean, layer.ln_1.mean, atol=1e-5)
    np.testing.assert_allclose(before_var, layer.ln_1.var, rtol=1e-4)
    mean, var = row_moments(layer.ln_1.normed)
    np.testing.assert_allclose(mean, 0.0, atol=1e-5)
    np.testing.assert_allclose(var, before_var / (before_var + 1e-5), rtol=1e-4)
