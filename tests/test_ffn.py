"""The position-wise feed-forward network (encoder_core/ffn.py)."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import feed_forward
from encoder_core.ffn import relu


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
