"""The parameters (encoder_core/params.py): shapes, dtype and the seeded streams."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from configs import SMALL

from encoder_core import EncoderConfig, init_params
from encoder_core.params import check_params, glorot_uniform, params_to_arrays


def assert_layer_params_equal(a, b, what: str) -> None:
    for f in dataclasses.fields(a):
        np.testing.assert_array_equal(
            getattr(a, f.name), getattr(b, f.name), err_msg=f"{what}.{f.name}"
        )


def test_params_have_the_documented_shapes_and_dtype():
    cfg = EncoderConfig(**{**SMALL, "channels": 3})
    params = init_params(cfg)
    d, d_ff = cfg.d_model, cfg.d_ff
    assert params.W_E.shape == (cfg.patch_dim, d) == (8 * 8 * 3, d)
    assert len(params.layers) == cfg.n_layers
    shapes = dict(
        W_Q=(d, d), W_K=(d, d), W_V=(d, d), W_O=(d, d), gamma_1=(d,), beta_1=(d,),
        W_1=(d, d_ff), b_1=(d_ff,), W_2=(d_ff, d), b_2=(d,), gamma_2=(d,), beta_2=(d,),
    )  # fmt: skip
    for lp in params.layers:
        for name, shape in shapes.items():
            assert getattr(lp, name).shape == shape, name
            assert getattr(lp, name).dtype == np.float32, name
    assert params.W_E.dtype == np.float32


def test_changing_n_layers_keeps_earlier_layers_weights():
    two = init_params(EncoderConfig(**{**SMALL, "n_layers": 2}))
    four = init_params(EncoderConfig(**{**SMALL, "n_layers": 4}))
    assert len(two.layers) == 2 and len(four.layers) == 4
    np.testing.assert_array_equal(two.W_E, four.W_E)
    for l in range(2):
        assert_layer_params_equal(two.layers[l], four.layers[l], f"layers[{l}]")


def test_changing_n_heads_keeps_all_weights():
    one = init_params(EncoderConfig(**{**SMALL, "n_heads": 1}))
    eight = init_params(EncoderConfig(**{**SMALL, "n_heads": 8}))
    np.testing.assert_array_equal(one.W_E, eight.W_E)
    for l, (a, b) in enumerate(zip(one.layers, eight.layers, strict=True)):
        assert_layer_params_equal(a, b, f"layers[{l}]")


def test_different_seed_gives_different_weights():
    a = init_params(EncoderConfig(**{**SMALL, "seed": 0}))
    b = init_params(EncoderConfig(**{**SMALL, "seed": 1}))
    assert not np.array_equal(a.W_E, b.W_E)
    for name in ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2"):
        for l in range(len(a.layers)):
            assert not np.array_equal(getattr(a.layers[l], name), getattr(b.layers[l], name))


def test_weights_differ_between_layers_and_matrices():
    p = init_params(EncoderConfig(**SMALL))
    assert not np.array_equal(p.layers[0].W_Q, p.layers[1].W_Q)
    assert not np.array_equal(p.layers[0].W_Q, p.layers[0].W_K)


def test_init_is_reproducible():
    cfg = EncoderConfig(**SMALL)
    a, b = init_params(cfg), init_params(cfg)
    np.testing.assert_array_equal(a.W_E, b.W_E)
    for l, (x, y) in enumerate(zip(a.layers, b.layers, strict=True)):
        assert_layer_params_equal(x, y, f"layers[{l}]")


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 7), (256, 512), (64, 3)])
def test_glorot_uniform_draws_numpys_float32_numbers_bit_for_bit(shape):
    """The fast path reads PCG64's raw 64-bit outputs; the numbers must be those of
    `rng.random(shape, dtype=np.float32)` (odd sizes use half of the last output)."""
    fast = glorot_uniform(np.random.default_rng([3, 1, 7]), *shape)
    limit = np.float32(np.sqrt(6.0 / sum(shape)))
    plain = (2 * np.random.default_rng([3, 1, 7]).random(shape, dtype=np.float32) - 1) * limit
    assert fast.dtype == np.float32 and fast.shape == shape
    np.testing.assert_array_equal(fast, plain)
    assert np.abs(fast).max() < limit


def test_glorot_uniform_on_another_generator_takes_numpys_own_path():
    rng = np.random.Generator(np.random.SFC64(5))
    fast = glorot_uniform(rng, 4, 6)
    limit = np.float32(np.sqrt(6.0 / 10))
    plain = (2 * np.random.Generator(np.random.SFC64(5)).random((4, 6), dtype=np.float32) - 1)
    np.testing.assert_array_equal(fast, plain * limit)


def test_init_params_returns_read_only_float32_arrays_without_a_copy_to_freeze():
    cfg = EncoderConfig(**SMALL)
    params = init_params(cfg)
    arrays = params_to_arrays(params)
    assert all(a.dtype == np.float32 and not a.flags.writeable and a.flags.c_contiguous
               for a in arrays.values())
    assert check_params(params, cfg) is params  # already frozen: shared, not copied
