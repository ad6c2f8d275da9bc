"""Multi-head attention (encoder_core/attention.py): softmax rows, heads, scaling."""

from __future__ import annotations

import math

import numpy as np
import pytest
from configs import SMALL

from encoder_core import EncoderConfig, encode


def test_softmax_rows_sum_to_one(trace):
    cfg = trace.config
    assert len(trace.layers) == cfg.n_layers
    for l, layer in enumerate(trace.layers):
        assert layer.attn.shape == (cfg.n_heads, cfg.n_tokens, cfg.n_tokens)
        sums = layer.attn.astype(np.float64).sum(axis=-1)
        np.testing.assert_allclose(sums, 1.0, atol=1e-5, err_msg=f"layers[{l}].attn row sums")


def test_attention_is_non_negative(trace):
    for l, layer in enumerate(trace.layers):
        assert np.all(layer.attn >= 0), f"layers[{l}].attn has negative entries"
        assert np.all(layer.attn <= 1 + 1e-6), f"layers[{l}].attn has entries above 1"


def test_attention_is_softmax_of_scores(trace):
    """Each attn row is exp(scores − max) / Σ, computed here in float64."""
    for l, layer in enumerate(trace.layers):
        s = layer.scores.astype(np.float64)
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        np.testing.assert_allclose(
            layer.attn, e / e.sum(axis=-1, keepdims=True), rtol=1e-4, atol=1e-7,
            err_msg=f"layers[{l}].attn",
        )  # fmt: skip


def test_concat_is_heads_side_by_side(trace):
    cfg = trace.config
    for l, layer in enumerate(trace.layers):
        assert layer.concat.shape == (cfg.n_tokens, cfg.d_model)
        for h in range(cfg.n_heads):
            cols = slice(h * cfg.d_head, (h + 1) * cfg.d_head)
            np.testing.assert_allclose(
                layer.concat[:, cols], layer.heads[h], rtol=1e-6, atol=1e-7,
                err_msg=f"layers[{l}].concat columns of head {h}",
            )  # fmt: skip


def test_scale_switch_divides_scores_by_the_documented_divisor(make_image):
    base = EncoderConfig(**{**SMALL, "scale": "none", "d_model": 64, "n_heads": 4})
    image = make_image(base.image_size)
    raw = encode(image, base).layers[0].scores.astype(np.float64)
    assert base.score_scale == 1.0
    for scale, divisor in [("d_k", math.sqrt(16)), ("d_model", math.sqrt(64))]:
        cfg = base.replace(scale=scale)
        assert cfg.score_scale == pytest.approx(divisor)
        scores = encode(image, cfg).layers[0].scores
        np.testing.assert_allclose(scores, raw / divisor, rtol=1e-5, atol=1e-6, err_msg=scale)
