"""The helpers appended for the Add & Norm, feed-forward and stack pages: each test names the
property it proves."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode
from encoder_core.analysis import (
    attention_entropy,
    attention_rollout,
    mean_attention_distance,
    rollout_mean_over_queries,
    uniform_attention_reference,
)
from encoder_core.explain import hidden_unit_terms, layer_norm_sums, layer_norm_terms

CFG = EncoderConfig(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=2,
                    d_ff=64)


@pytest.fixture(scope="module")
def trace(make_image):
    return encode(make_image(CFG.image_size, CFG.channels), CFG)


def test_layer_norm_sums_give_the_trace_mean_and_variance(trace):
    layer, p = trace.layers[0], trace.params.layers[0]
    for i in (0, 5, CFG.n_tokens - 1):
        terms = layer_norm_terms(layer.resid_1[i], p.gamma_1, p.beta_1, CFG.ln_eps)
        sums = layer_norm_sums(terms)
        d = CFG.d_model
        assert sums.sum_x / d == pytest.approx(float(layer.ln_1.mean[i]), abs=1e-5)
        assert sums.sum_sq_dev / d == pytest.approx(float(layer.ln_1.var[i]), rel=1e-4)
        assert sums.sq_dev.shape == (d,)


def test_normalised_row_has_mean_zero_and_variance_sigma2_over_sigma2_plus_eps():
    x = np.array([1.0, 2.0, 4.0, 9.0, -3.0, 0.5])
    terms = layer_norm_terms(x, np.ones(6), np.zeros(6), 1e-5)
    sums = layer_norm_sums(terms)
    assert sums.normed_mean == pytest.approx(0.0, abs=1e-12)
    assert sums.normed_var == pytest.approx(sums.expected_var, rel=1e-12)
    assert sums.expected_var == pytest.approx(terms.var / (terms.var + 1e-5), rel=1e-12)
    assert sums.expected_var < 1.0


def test_constant_row_normalises_to_zero_with_variance_check_zero():
    terms = layer_norm_terms(np.full(8, 3.0), np.ones(8), np.zeros(8), 1e-5)
    sums = layer_norm_sums(terms)
    assert sums.sum_sq_dev == 0.0 and sums.expected_var == 0.0 and sums.normed_var == 0.0


def test_hidden_unit_terms_equal_the_trace_ffn_hidden(trace):
    layer, p = trace.layers[1], trace.params.layers[1]
    for i, j in ((0, 0), (3, 17), (CFG.n_tokens - 1, CFG.d_ff - 1)):
        t = hidden_unit_terms(layer.ln_1.out[i], p.W_1, p.b_1, j)
        assert t.hidden == pytest.approx(float(layer.ffn_hidden[i, j]), abs=1e-5)
        assert t.dot.products.shape == (CFG.d_model,)


def test_hidden_unit_terms_add_the_bias_then_clip_at_zero():
    x = np.array([1.0, -2.0])
    W_1 = np.array([[1.0, 3.0], [1.0, 0.5]])
    b_1 = np.array([0.25, -5.0])
    t0 = hidden_unit_terms(x, W_1, b_1, 0)  # 1 − 2 + 0.25 = −0.75 -> 0
    assert (t0.pre, t0.hidden, t0.bias) == (pytest.approx(-0.75), 0.0, 0.25)
    t1 = hidden_unit_terms(x, W_1, b_1, 1)  # 3 − 1 − 5 = −3 -> 0
    assert t1.pre == pytest.approx(-3.0) and t1.hidden == 0.0
    t2 = hidden_unit_terms(x, W_1, np.array([2.0, 0.0]), 0)  # 1 − 2 + 2 = 1
    assert t2.hidden == pytest.approx(1.0)


def test_rollout_mean_over_queries_sums_to_one_and_averages_rows(trace):
    R = attention_rollout([l.attn for l in trace.layers])
    m = rollout_mean_over_queries(R)
    assert m.shape == (CFG.n_tokens,)
    assert m.sum() == pytest.approx(1.0)
    assert m[4] == pytest.approx(R[:, 4].sum() / CFG.n_tokens)


def test_uniform_reference_entropy_is_ln_n_and_bounds_the_heads(trace):
    G, P = CFG.grid_size, CFG.patch_size
    distance, entropy = uniform_attention_reference(G, P)
    assert entropy == pytest.approx(math.log(CFG.n_tokens))
    for layer in trace.layers:
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
    from encoder_core import EncoderConfig, encode
    from encoder_core.analysis import attention_entropy, head_statistics, mean_attention_distance

    cfg = EncoderConfig(image_size=64, patch_size=16, d_model=32, n_heads=4, n_layers=3, d_ff=64)
    image = np.random.default_rng(0).random((64, 64, 1), dtype=np.float32)
    attns = [layer.attn for layer in encode(image, cfg).layers]
    distance, entropy = head_statistics(attns, cfg.grid_size, cfg.patch_size)
    assert distance.shape == entropy.shape == (3, 4)
    for l, attn in enumerate(attns):
        np.testing.assert_allclose(distance[l], mean_attention_distance(attn, 4, 16))
        np.testing.assert_allclose(entropy[l], attention_entropy(attn))
