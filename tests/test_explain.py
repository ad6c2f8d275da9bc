"""One number written out (encoder_core/views/explain.py): the terms behind a cell of the trace."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode
from encoder_core.pipeline.positional import positional_encoding
from encoder_core.views.explain import (
    hidden_unit_terms,
    largest_terms,
    layer_norm_sums,
    layer_norm_terms,
    pe_terms,
    summarise_terms,
)

CFG = EncoderConfig(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=2,
                    d_ff=64)


@pytest.fixture(scope="module")
def two_layer_trace(make_image):
    return encode(make_image(CFG.image_size, CFG.channels), CFG)


@pytest.mark.parametrize("d_model", [8, 32, 512])
def test_pe_terms_value_equals_the_positional_encoding_entry(d_model):
    n_tokens = 49
    pe = positional_encoding(n_tokens, d_model)
    for pos in (0, 1, 7, 48):
        for column in (0, 1, 2, d_model // 2, d_model - 2, d_model - 1):
            terms = pe_terms(pos, column, d_model)
            assert terms.value == pytest.approx(float(pe[pos, column]), abs=1e-6)


def test_pe_terms_pairs_sin_on_even_and_cos_on_odd_columns_with_one_frequency():
    even, odd = pe_terms(5, 6, 64), pe_terms(5, 7, 64)
    assert (even.func, odd.func) == ("sin", "cos")
    assert even.i == odd.i == 3
    assert even.angle == odd.angle
    assert even.exponent == pytest.approx(6 / 64)
    assert even.denominator == pytest.approx(10000 ** (6 / 64))
    assert even.angle == pytest.approx(5 / 10000 ** (6 / 64))
    assert even.value ** 2 + odd.value ** 2 == pytest.approx(1.0)


def test_pe_terms_at_position_zero_is_sin_0_and_cos_0():
    assert pe_terms(0, 0, 16).value == 0.0
    assert pe_terms(0, 1, 16).value == 1.0
    assert np.isclose(pe_terms(0, 15, 16).angle, 0.0)


def test_summarise_terms_shows_first_and_largest_and_accounts_for_the_rest():
    terms = np.array([0.1, -0.2, 0.3, 0.05, 0.0, 5.0, -0.01, -7.0, 0.02, 0.4])
    s = summarise_terms(terms, first=4, largest=2)
    assert list(s.shown) == [0, 1, 2, 3, 5, 7]
    assert s.rest_count == 4
    assert s.rest_sum == pytest.approx(0.0 - 0.01 + 0.02 + 0.4)
    assert s.total == pytest.approx(terms.sum())
    assert terms[s.shown].sum() + s.rest_sum == pytest.approx(s.total)


def test_largest_terms_come_largest_magnitude_first_ties_by_index():
    terms = np.array([0.1, -0.2, 0.3, 0.05, 0.0, 5.0, -0.01, -7.0, 0.02, -0.3])
    assert list(largest_terms(terms, 4)) == [7, 5, 2, 9]  # |−7| > 5 > |0.3| = |−0.3|
    assert list(largest_terms(terms[:3], 4)) == [2, 1, 0]  # fewer terms than asked: all


def test_summarise_terms_of_a_short_sum_shows_every_term_and_leaves_nothing():
    s = summarise_terms(np.array([1.0, 2.0, 3.0]))
    assert list(s.shown) == [0, 1, 2]
    assert s.rest_count == 0
    assert s.rest_sum == pytest.approx(0.0)
    assert s.total == pytest.approx(6.0)


def test_layer_norm_sums_give_the_trace_mean_and_variance(two_layer_trace):
    layer, p = two_layer_trace.layers[0], two_layer_trace.params.layers[0]
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


def test_hidden_unit_terms_equal_the_trace_ffn_hidden(two_layer_trace):
    layer, p = two_layer_trace.layers[1], two_layer_trace.params.layers[1]
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
