"""Multi-head attention (encoder_core/pipeline/attention.py): softmax rows, heads, scaling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, attention_scores, encode, merge_heads, softmax, split_heads
from tests.support.configs import SMALL


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


# --- a leading batch axis, and the dtype ----------------------------------------------------


def test_split_heads_on_a_batch_splits_each_item_and_merge_heads_inverts_it():
    x = np.random.default_rng(0).standard_normal((3, 5, 12)).astype(np.float32)  # [B, N, d]
    heads = split_heads(x, 4)
    assert heads.shape == (3, 4, 5, 3)  # [B, h, N, d_head]
    for b in range(3):
        np.testing.assert_array_equal(heads[b], split_heads(x[b], 4))
        for g in range(4):
            np.testing.assert_array_equal(heads[b, g], x[b][:, g * 3:(g + 1) * 3])
    np.testing.assert_array_equal(merge_heads(heads), x)


def test_attention_scores_on_a_batch_are_each_items_q_k_transposed_over_scale():
    rng = np.random.default_rng(1)
    q, k = rng.standard_normal((2, 2, 3, 5, 4)).astype(np.float32)  # [B, h, N, d_head] each
    scores = attention_scores(q, k, 2.0)
    assert scores.shape == (2, 3, 5, 5)
    for b in range(2):
        np.testing.assert_array_equal(scores[b], attention_scores(q[b], k[b], 2.0))
    expected = np.einsum("bhid,bhjd->bhij", q.astype(np.float64), k) / 2.0
    np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_attention_functions_keep_the_dtype_of_their_input(dtype):
    x = np.random.default_rng(2).standard_normal((2, 6, 8)).astype(dtype)  # [B, N, d]
    q = split_heads(x, 2)
    scores = attention_scores(q, q, np.sqrt(4))
    for name, out in (("split_heads", q), ("merge_heads", merge_heads(q)),
                      ("attention_scores", scores), ("softmax", softmax(scores))):
        assert out.dtype == dtype, f"{name} gave {out.dtype}"
    if dtype == np.float64:  # the division is exact in float64, not rounded through float32
        np.testing.assert_allclose(scores, q @ np.swapaxes(q, -1, -2) / 2.0, rtol=1e-15)
