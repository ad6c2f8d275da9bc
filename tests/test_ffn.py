"""The position-wise feed-forward network (encoder_core/pipeline/ffn.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import feed_forward
from encoder_core.pipeline.ffn import erfc_positive, gelu, gelu_tanh, relu


def test_ffn_hidden_is_non_negative(trace):
    if not trace.config.use_ffn:
        assert all(layer.ffn_hidden is None for layer in trace.layers)
        return
    for l, layer in enumerate(trace.layers):
        assert np.all(layer.ffn_hidden >= 0), f"layers[{l}].ffn_hidden is negative after ReLU"
        assert np.any(layer.ffn_hidden > 0), f"layers[{l}].ffn_hidden is all zero"


def test_relu_returns_max_0_x_as_a_new_array_and_leaves_x_alone():
    x = np.array([[-2.0, -0.0, 0.5], [3.0, -1e-9, 0.0]], dtype=np.float32)
    before = x.copy()
    out = relu(x)
    np.testing.assert_array_equal(out, np.where(x > 0, x, 0))
    np.testing.assert_array_equal(x, before)
    assert not np.shares_memory(out, x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_feed_forward_on_a_batch_is_each_items_ffn_and_keeps_the_dtype(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 5, 8)).astype(dtype)  # [B, N, d_model]
    W_1, W_2 = rng.standard_normal((8, 16)), rng.standard_normal((16, 8))
    b_1, b_2 = rng.standard_normal(16), rng.standard_normal(8)
    weights = [w.astype(dtype) for w in (W_1, b_1, W_2, b_2)]
    hidden, out = feed_forward(x, *weights)
    assert hidden.shape == (3, 5, 16) and out.shape == (3, 5, 8)
    assert hidden.dtype == out.dtype == dtype
    for b in range(3):
        h_b, o_b = feed_forward(x[b], *weights)
        np.testing.assert_allclose(hidden[b], h_b, rtol=1e-6)
        np.testing.assert_allclose(out[b], o_b, rtol=1e-6, atol=1e-6)
    x64 = x.astype(np.float64)
    expected_hidden = np.maximum(x64 @ W_1 + b_1, 0)
    np.testing.assert_allclose(hidden, expected_hidden, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, expected_hidden @ W_2 + b_2, rtol=1e-5, atol=1e-4)


# --- GELU (issue 11) -----------------------------------------------------------------------

GRID = np.linspace(-12.0, 12.0, 480_001)  # step 5e-5, 0 included


def exact_gelu(x: float) -> float:
    """x·Φ(x) from math.erf / math.erfc (erfc in the negative tail: no cancellation)."""
    if x >= 0:
        return 0.5 * x * (1.0 + math.erf(x / math.sqrt(2.0)))
    return 0.5 * x * math.erfc(-x / math.sqrt(2.0))


def test_gelu_matches_math_erf_to_1e_6_on_a_dense_grid_in_float64():
    expected = np.array([exact_gelu(v) for v in GRID])
    got = gelu(GRID)
    assert got.dtype == np.float64
    err = np.abs(got - expected)
    assert err.max() < 1e-6, f"max |gelu − x·Φ(x)| = {err.max():.3e} at x = {GRID[err.argmax()]}"
    # the negative tail keeps its relative accuracy (no 1 − erf cancellation)
    tail = GRID < -0.01
    rel = err[tail] / np.abs(expected[tail])
    assert rel.max() < 1e-6, f"relative error {rel.max():.3e} in the tail"


def test_gelu_in_float32_stays_float32_and_close_to_exact():
    x32 = GRID.astype(np.float32)
    got = gelu(x32)
    assert got.dtype == np.float32
    expected = np.array([exact_gelu(float(v)) for v in x32])
    assert np.abs(got - expected).max() < 2e-6  # float32 rounding of values up to 12


def test_gelu_has_its_known_values_and_leaves_x_alone():
    x = np.array([0.0, 1.0, -1.0, 3.0, -3.0, 20.0, -20.0])
    before = x.copy()
    got = gelu(x)
    np.testing.assert_array_equal(x, before)
    # Φ(1) = 0.8413447460685429, Φ(3) = 0.9986501019683699
    np.testing.assert_allclose(got[:5], [0.0, 0.8413447460685429, -0.15865525393145707,
                                         3 * 0.9986501019683699, -3 * 0.0013498980316301035],
                               rtol=1e-6, atol=0)
    assert got[5] == 20.0 and -1e-80 < got[6] <= 0.0


def test_erfc_positive_has_fractional_error_below_1_2e_7():
    z = np.linspace(0.0, 9.0, 90_001)
    expected = np.array([math.erfc(v) for v in z])
    rel = np.abs(erfc_positive(z) - expected) / expected
    assert rel.max() < 1.2e-7, f"{rel.max():.3e} at z = {z[rel.argmax()]}"


def test_gelu_tanh_matches_its_formula_with_math_tanh():
    def formula(v: float) -> float:
        return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3)))

    x = GRID[::10]
    expected = np.array([formula(v) for v in x])
    np.testing.assert_allclose(gelu_tanh(x), expected, rtol=1e-12, atol=1e-12)
    # the approximation is not GELU: the two differ by up to ~1e-3 (so the switch matters)
    gap = np.abs(gelu_tanh(x) - gelu(x)).max()
    assert 1e-4 < gap < 1e-2


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_feed_forward_applies_the_chosen_activation(activation):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    W_1, b_1 = rng.standard_normal((8, 16)).astype(np.float32), np.zeros(16, np.float32)
    W_2, b_2 = rng.standard_normal((16, 8)).astype(np.float32), np.zeros(8, np.float32)
    hidden, out = feed_forward(x, W_1, b_1, W_2, b_2, activation=activation)
    pre = x.astype(np.float64) @ W_1
    act = {"relu": lambda v: max(v, 0.0), "gelu": exact_gelu,
           "gelu_tanh": lambda v: 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi)
                                                           * (v + 0.044715 * v**3)))}[activation]
    expected = np.vectorize(act)(pre)
    np.testing.assert_allclose(hidden, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out, expected @ W_2, rtol=1e-4, atol=1e-4)


def test_feed_forward_refuses_an_unknown_activation():
    z = np.zeros((2, 2), np.float32)
    with pytest.raises(ValueError, match="activation.*relu.*gelu.*'swish'"):
        feed_forward(z, z, z[0], z, z[0], activation="swish")


def test_the_activation_in_pieces_equals_the_activation_of_the_whole_array():
    """feed_forward applies GELU piece by piece (cache-sized): the values must not change,
    including across piece boundaries and on a batch."""
    from encoder_core.pipeline.ffn import _apply_in_place

    x = np.random.default_rng(5).standard_normal((3, 7, 50)).astype(np.float32)
    for fn in (gelu, gelu_tanh):
        got = _apply_in_place(fn, x.copy(), chunk=64)  # 1050 values: 17 pieces, the last short
        np.testing.assert_array_equal(got, fn(x))
