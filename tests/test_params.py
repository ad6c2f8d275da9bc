"""The parameters (encoder_core/params.py): shapes, dtype and the seeded streams."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest

from encoder_core import EncoderConfig, init_params, load_params, save_params
from encoder_core.params import (
    EncoderParams,
    LayerParams,
    ParamsError,
    check_params,
    expected_shapes,
    glorot_uniform,
    params_from_arrays,
    params_to_arrays,
)
from tests.support.configs import SMALL


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


# --- the Vision Transformer variants' optional parameters (issue 11) ------------------------

VIT = dict(norm_first=True, cls_token=True, dist_token=True, n_registers=2, position="learned",
           patch_bias=True, qkv_bias=True, proj_bias=True, activation="gelu", final_norm=True,
           layer_scale=True)  # fmt: skip
LAYER_OPTIONAL = ("b_Q", "b_K", "b_V", "b_O", "ls_1", "ls_2")
ENCODER_OPTIONAL = ("b_E", "cls", "dist", "registers", "pos_embed", "norm_gamma", "norm_beta")


def test_default_params_have_no_optional_parameter_and_the_same_keys():
    p = init_params(EncoderConfig(**SMALL))
    assert all(getattr(p, name) is None for name in ENCODER_OPTIONAL)
    assert all(getattr(lp, name) is None for lp in p.layers for name in LAYER_OPTIONAL)
    names = ("W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1", "W_1", "b_1", "W_2", "b_2",
             "gamma_2", "beta_2")
    expected = {"params/W_E"} | {f"params/layer{l}/{n}" for l in range(3) for n in names}
    assert set(params_to_arrays(p)) == expected


def test_variant_params_have_the_documented_shapes_values_and_keys():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    p = init_params(cfg)
    d = cfg.d_model
    assert cfg.n_pos == 2 + 16
    shapes = dict(b_E=(d,), cls=(1, d), dist=(1, d), registers=(2, d), pos_embed=(18, d),
                  norm_gamma=(d,), norm_beta=(d,))
    for name, shape in shapes.items():
        a = getattr(p, name)
        assert a.shape == shape and a.dtype == np.float32 and not a.flags.writeable, name
        assert expected_shapes(cfg)[name] == shape
    for name in ("cls", "dist", "registers", "pos_embed"):  # ~ N(0, 0.02²), each its own draw
        a = getattr(p, name)
        assert 0.005 < float(a.std()) < 0.05 and abs(float(a.mean())) < 0.02, name
    assert not np.array_equal(p.cls[0], p.dist[0])
    np.testing.assert_array_equal(p.b_E, 0)
    np.testing.assert_array_equal(p.norm_gamma, 1)
    np.testing.assert_array_equal(p.norm_beta, 0)
    for l, lp in enumerate(p.layers):
        for name in ("b_Q", "b_K", "b_V", "b_O"):
            assert getattr(lp, name).shape == (d,)
            np.testing.assert_array_equal(getattr(lp, name), 0)
        np.testing.assert_array_equal(lp.ls_1, np.float32(0.1))
        np.testing.assert_array_equal(lp.ls_2, np.float32(0.1))
        for name in LAYER_OPTIONAL:
            assert f"params/layer{l}/{name}" in params_to_arrays(p)
    assert {f"params/{n}" for n in ENCODER_OPTIONAL} <= set(params_to_arrays(p))


def test_switching_a_variant_on_changes_no_other_parameter():
    base = init_params(EncoderConfig(**SMALL))
    vit = init_params(EncoderConfig(**{**SMALL, **VIT}))
    np.testing.assert_array_equal(base.W_E, vit.W_E)
    for l, (a, b) in enumerate(zip(base.layers, vit.layers, strict=True)):
        for f in dataclasses.fields(a):
            if f.name not in LAYER_OPTIONAL:
                np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name),
                                              err_msg=f"layers[{l}].{f.name}")


def perturbed(p):
    """Every parameter (optional ones included) moved by a seeded random amount."""
    rng = np.random.default_rng(3)

    def move(a):
        return None if a is None else (a + rng.normal(0, 0.1, a.shape)).astype(np.float32)

    layers = tuple(LayerParams(**{f.name: move(getattr(lp, f.name))
                                  for f in dataclasses.fields(lp)}) for lp in p.layers)
    top = {f.name: move(getattr(p, f.name)) for f in dataclasses.fields(p) if f.name != "layers"}
    return EncoderParams(layers=layers, **top)


@pytest.mark.parametrize("changes", [{}, VIT, dict(qkv_bias=True, n_registers=3)],
                         ids=["note", "vit", "qkv_bias_registers"])
def test_save_load_round_trip_keeps_every_parameter(changes):
    cfg = EncoderConfig(**{**SMALL, **changes})
    p = perturbed(init_params(cfg))
    buf = io.BytesIO()
    save_params(buf, p)
    buf.seek(0)
    q = load_params(buf, cfg)
    a, b = params_to_arrays(p), params_to_arrays(q)
    assert set(a) == set(b) and len(a) > 1
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    with np.load(io.BytesIO(buf.getvalue()), allow_pickle=False) as npz:
        assert set(npz.files) == set(a)


def test_a_missing_optional_parameter_is_refused_when_its_variant_is_on():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    arrays = dict(params_to_arrays(init_params(cfg)))
    del arrays["params/pos_embed"], arrays["params/layer1/b_K"]
    with pytest.raises(ParamsError, match=r"missing params/layer1/b_K.*missing params/pos_embed"):
        params_from_arrays(arrays, cfg)


def test_an_optional_parameter_is_refused_when_its_variant_is_off():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    vit = init_params(cfg)
    with pytest.raises(ParamsError, match=r"params/b_E is given.*patch_bias is off"):
        params_from_arrays(params_to_arrays(vit), cfg.replace(patch_bias=False))
    with pytest.raises(ParamsError, match=r"params/layer0/ls_1 is given.*layer_scale is off"):
        check_params(vit, cfg.replace(layer_scale=False))


def test_a_wrongly_shaped_optional_parameter_is_refused():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    arrays = dict(params_to_arrays(init_params(cfg)))
    arrays["params/pos_embed"] = np.zeros((17, cfg.d_model), np.float32)  # no dist row
    with pytest.raises(ParamsError, match=r"params/pos_embed has shape \(17, 32\).*\(18, 32\)"):
        params_from_arrays(arrays, cfg)
    with pytest.raises(ParamsError, match=r"pos_embed has shape \(18, 32\).*\(16, 32\)"):
        params_from_arrays(params_to_arrays(init_params(cfg)), cfg.replace(pos_prefix=False))


def test_variant_params_are_reproducible_and_change_with_the_seed():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    a, b = params_to_arrays(init_params(cfg)), params_to_arrays(init_params(cfg))
    assert set(a) == set(b)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key], err_msg=key)
    c = params_to_arrays(init_params(cfg.replace(seed=1)))
    for key in ("params/cls", "params/dist", "params/registers", "params/pos_embed"):
        assert not np.array_equal(a[key], c[key]), key


@pytest.mark.parametrize("shape", [(1, 1), (3, 5), (7, 7), (256, 512), (64, 3), (513, 1025)])
def test_glorot_uniform_draws_numpys_float32_numbers_bit_for_bit(shape):
    """The fast path reads PCG64's raw 64-bit outputs, DRAW_CHUNK values at a time; the numbers
    must be those of `rng.random(shape, dtype=np.float32)` (odd sizes use half of the last
    output; 513 × 1025 is eight whole chunks and an odd rest)."""
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
