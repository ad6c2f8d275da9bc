"""The input embedding and the prefix tokens (encoder_core/pipeline/embedding.py)."""

from __future__ import annotations

import numpy as np

from encoder_core import embed
from encoder_core.pipeline.embedding import prefix_tokens


def test_embed_is_patches_times_W_E_plus_the_optional_bias():
    rng = np.random.default_rng(0)
    patches = rng.standard_normal((2, 5, 12)).astype(np.float32)  # [B, N, P·P·C]
    W_E = rng.standard_normal((12, 6)).astype(np.float32)
    b_E = rng.standard_normal(6).astype(np.float32)
    expected = patches.astype(np.float64) @ W_E
    np.testing.assert_allclose(embed(patches, W_E), expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(embed(patches, W_E, b_E), expected + b_E, rtol=1e-5, atol=1e-5)


def test_prefix_tokens_are_cls_dist_then_registers():
    cls, dist = np.full((1, 4), 1.0), np.full((1, 4), 2.0)
    registers = np.arange(12, dtype=np.float32).reshape(3, 4)
    rows = prefix_tokens(cls, dist, registers, 4)
    assert rows.dtype == np.float32 and rows.shape == (5, 4)
    np.testing.assert_array_equal(rows[0], 1.0)
    np.testing.assert_array_equal(rows[1], 2.0)
    np.testing.assert_array_equal(rows[2:], registers)
    assert prefix_tokens(None, None, None, 4).shape == (0, 4)
    np.testing.assert_array_equal(prefix_tokens(None, None, registers, 4), registers)


def test_token_names_and_patch_rows_follow_the_prefix_order():
    from encoder_core import EncoderConfig, patch_rows, prefix_names, token_names

    vit = EncoderConfig(image_size=32, patch_size=16, d_model=8, n_heads=1, n_layers=1, d_ff=8,
                        cls_token=True, dist_token=True, n_registers=2, position="learned")
    assert prefix_names(vit) == ["CLS", "DIST", "REG1", "REG2"]
    assert token_names(vit)[4:] == ["0", "1", "2", "3"] and len(token_names(vit)) == vit.seq_len
    a = np.arange(vit.seq_len * 3).reshape(vit.seq_len, 3)
    assert np.array_equal(patch_rows(a, vit, axis=0), a[4:])
    assert np.array_equal(patch_rows(a.T, vit), a.T[:, 4:])
    note = EncoderConfig(image_size=32, patch_size=16, d_model=8, n_heads=1, n_layers=1, d_ff=8)
    assert prefix_names(note) == [] and patch_rows(a[:4], note, axis=0).shape == (4, 3)
