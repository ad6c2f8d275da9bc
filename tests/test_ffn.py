"""The position-wise feed-forward network (encoder_core/ffn.py)."""

from __future__ import annotations

import numpy as np


def test_ffn_hidden_is_non_negative(trace):
    if not trace.config.use_ffn:
        assert all(layer.ffn_hidden is None for layer in trace.layers)
        return
    for l, layer in enumerate(trace.layers):
        assert np.all(layer.ffn_hidden >= 0), f"layers[{l}].ffn_hidden is negative after ReLU"
        assert np.any(layer.ffn_hidden > 0), f"layers[{l}].ffn_hidden is all zero"
