"""The sinusoidal positional encoding (encoder_core/pipeline/positional.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, positional_encoding
from encoder_core.pipeline.positional import patch_positions, position_rows
from tests.support.configs import SMALL


def test_positional_encoding_is_float32_of_the_requested_shape():
    for n_tokens, d_model in [(196, 512), (16, 32), (1, 2), (49, 10)]:
        pe = positional_encoding(n_tokens, d_model)
        assert isinstance(pe, np.ndarray)
        assert pe.dtype == np.float32
        assert pe.shape == (n_tokens, d_model)


def test_positional_encoding_row_0_alternates_0_and_1():
    pe = positional_encoding(10, 64)
    expected = np.tile([0.0, 1.0], 32)
    np.testing.assert_array_equal(pe[0], expected)


def test_positional_encoding_column_0_is_sin_pos_and_column_1_is_cos_pos():
    pe = positional_encoding(196, 512)
    pos = np.arange(196, dtype=np.float64)
    np.testing.assert_allclose(pe[:, 0], np.sin(pos), atol=1e-6)
    np.testing.assert_allclose(pe[:, 1], np.cos(pos), atol=1e-6)
    assert pe[1, 0] == pytest.approx(math.sin(1.0), abs=1e-7)
    assert pe[3, 1] == pytest.approx(math.cos(3.0), abs=1e-7)


@pytest.mark.parametrize("i", [1, 5, 64, 255])
def test_positional_encoding_column_pair_matches_closed_form(i):
    d_model = 512
    pe = positional_encoding(196, d_model)
    pos = np.arange(196, dtype=np.float64)
    angle = pos / 10000.0 ** (2 * i / d_model)
    np.testing.assert_allclose(pe[:, 2 * i], np.sin(angle), atol=1e-6, err_msg=f"column {2 * i}")
    np.testing.assert_allclose(pe[:, 2 * i + 1], np.cos(angle), atol=1e-6)


def test_positional_encoding_values_lie_in_minus_one_to_one():
    pe = positional_encoding(1024, 128)
    assert np.all(np.abs(pe) <= 1.0)


def test_positional_encoding_in_float64_is_the_exact_formula_and_rounds_to_the_float32_one():
    pe64 = positional_encoding(49, 16, np.float64)
    assert pe64.dtype == np.float64
    pos, i = np.arange(49.0)[:, None], np.arange(8.0)[None, :]
    angle = pos / 10000.0 ** (2 * i / 16)
    np.testing.assert_array_equal(pe64[:, 0::2], np.sin(angle))
    np.testing.assert_array_equal(pe64[:, 1::2], np.cos(angle))
    np.testing.assert_array_equal(pe64.astype(np.float32), positional_encoding(49, 16))


# --- which rows get a position (issue 11) ---------------------------------------------------


def test_sinusoidal_positions_go_to_the_patch_rows_only():
    cfg = EncoderConfig(**{**SMALL, "cls_token": True, "n_registers": 2})
    pe = patch_positions(cfg, None)
    np.testing.assert_array_equal(pe, positional_encoding(16, cfg.d_model))
    pos = position_rows(cfg, pe, None)
    assert pos.shape == (19, cfg.d_model)
    np.testing.assert_array_equal(pos[:3], 0)
    np.testing.assert_array_equal(pos[3:], pe)  # patch 0 gets PE(0), as without a prefix


@pytest.mark.parametrize(("pos_prefix", "n_rows"), [(True, 2), (False, 0)])
def test_learned_positions_go_to_cls_dist_if_pos_prefix_and_never_to_registers(pos_prefix,
                                                                              n_rows):
    cfg = EncoderConfig(**{**SMALL, "cls_token": True, "dist_token": True, "n_registers": 3,
                           "position": "learned", "pos_prefix": pos_prefix})
    table = np.arange(cfg.n_pos * cfg.d_model, dtype=np.float32).reshape(cfg.n_pos, cfg.d_model)
    assert cfg.n_pos == 16 + n_rows
    pe = patch_positions(cfg, table)
    np.testing.assert_array_equal(pe, table[n_rows:])
    pos = position_rows(cfg, pe, table)
    np.testing.assert_array_equal(pos[:n_rows], table[:n_rows])
    np.testing.assert_array_equal(pos[n_rows:5], 0)  # dist/cls without rows, the registers
    np.testing.assert_array_equal(pos[5:], table[n_rows:])


def test_no_position_is_added_when_use_pe_is_off():
    cfg = EncoderConfig(**{**SMALL, "cls_token": True, "position": "learned", "use_pe": False})
    table = np.ones((cfg.n_pos, cfg.d_model), np.float32)
    pos = position_rows(cfg, patch_positions(cfg, table), table)
    assert pos.shape == (17, cfg.d_model)
    np.testing.assert_array_equal(pos, 0)
