"""Properties of the encoder that hold whatever the weights: each test is named after one."""

from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from encoder_core import (
    ConfigError,
    EncoderConfig,
    encode,
    init_params,
    patchify,
    positional_encoding,
    unpatchify,
)

SMALL = dict(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=3, d_ff=64)

TRACE_CONFIGS = {
    "small": {},
    "rgb_scale_none": dict(channels=3, scale="none"),
    "no_ffn_d_model": dict(use_ffn=False, scale="d_model", n_heads=2),
    "64_tokens_8_heads": dict(patch_size=4, d_model=64, n_heads=8, d_ff=128, seed=3),
}


@pytest.fixture(scope="module", params=TRACE_CONFIGS.values(), ids=TRACE_CONFIGS.keys())
def trace(request, make_image):
    cfg = EncoderConfig(**{**SMALL, **request.param})
    return encode(make_image(cfg.image_size, cfg.channels, seed=cfg.seed + 11), cfg)


def layer_norms(trace):
    """(name, LayerNormTrace) of every layer norm in the trace."""
    for l, layer in enumerate(trace.layers):
        yield f"layers[{l}].ln_1", layer.ln_1
        if layer.ln_2 is not None:
            yield f"layers[{l}].ln_2", layer.ln_2


def layer_inputs(trace):
    """The input x of each layer: x0, then the previous layer's out."""
    return [trace.x0] + [layer.out for layer in trace.layers[:-1]]


# --- attention ------------------------------------------------------------------------------


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


def test_resid_1_is_input_plus_attn_out(trace):
    for l, (x, layer) in enumerate(zip(layer_inputs(trace), trace.layers, strict=True)):
        expected = x.astype(np.float64) + layer.attn_out
        np.testing.assert_allclose(
            layer.resid_1, expected, rtol=1e-6, atol=1e-6, err_msg=f"layers[{l}].resid_1"
        )


def test_resid_2_is_ln_1_out_plus_ffn_out(trace):
    if not trace.config.use_ffn:
        assert all(layer.resid_2 is None for layer in trace.layers)
        return
    for l, layer in enumerate(trace.layers):
        expected = layer.ln_1.out.astype(np.float64) + layer.ffn_out
        np.testing.assert_allclose(
            layer.resid_2, expected, rtol=1e-6, atol=1e-6, err_msg=f"layers[{l}].resid_2"
        )


def test_ffn_hidden_is_non_negative(trace):
    if not trace.config.use_ffn:
        assert all(layer.ffn_hidden is None for layer in trace.layers)
        return
    for l, layer in enumerate(trace.layers):
        assert np.all(layer.ffn_hidden >= 0), f"layers[{l}].ffn_hidden is negative after ReLU"
        assert np.any(layer.ffn_hidden > 0), f"layers[{l}].ffn_hidden is all zero"


def test_output_is_last_layer_out(trace):
    np.testing.assert_array_equal(trace.output, trace.layers[-1].out)


# --- layer norm -----------------------------------------------------------------------------


def test_layer_norm_normed_rows_have_mean_zero(trace):
    for name, ln in layer_norms(trace):
        means = ln.normed.astype(np.float64).mean(axis=-1)
        assert np.max(np.abs(means)) <= 1e-5, f"{name}.normed row means up to {means.max():.2e}"


def test_layer_norm_normed_variance_is_var_over_var_plus_eps(trace):
    eps = trace.config.ln_eps
    for name, ln in layer_norms(trace):
        var = ln.var.astype(np.float64)
        assert np.all(var >= 0), f"{name}.var is negative"
        expected = var / (var + eps)
        got = ln.normed.astype(np.float64).var(axis=-1)
        np.testing.assert_allclose(got, expected, rtol=1e-4, err_msg=f"{name}.normed variance")


def test_layer_norm_mean_and_var_are_those_of_its_input(trace):
    d = trace.config.d_model
    for l, layer in enumerate(trace.layers):
        pairs = [("ln_1", layer.ln_1, layer.resid_1), ("ln_2", layer.ln_2, layer.resid_2)]
        for name, ln, x in pairs:
            if ln is None:
                continue
            x = x.astype(np.float64)
            mu = x.sum(axis=-1) / d
            np.testing.assert_allclose(ln.mean, mu, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(
                ln.var, ((x - mu[:, None]) ** 2).sum(axis=-1) / d, rtol=1e-4,
                err_msg=f"layers[{l}].{name}.var (population variance, divide by d_model)",
            )  # fmt: skip


def test_layer_norm_out_is_gamma_normed_plus_beta(trace):
    for layer, lp in zip(trace.layers, trace.params.layers, strict=True):
        expected = lp.gamma_1.astype(np.float64) * layer.ln_1.normed + lp.beta_1
        np.testing.assert_allclose(layer.ln_1.out, expected, rtol=1e-6, atol=1e-6)
        if layer.ln_2 is not None:
            expected = lp.gamma_2.astype(np.float64) * layer.ln_2.normed + lp.beta_2
            np.testing.assert_allclose(layer.ln_2.out, expected, rtol=1e-6, atol=1e-6)


# --- positional encoding --------------------------------------------------------------------


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


def test_trace_pe_is_positional_encoding_and_x0_is_embedded_plus_pe(trace):
    cfg = trace.config
    np.testing.assert_array_equal(trace.pe, positional_encoding(cfg.n_tokens, cfg.d_model))
    np.testing.assert_allclose(
        trace.x0, trace.embedded.astype(np.float64) + trace.pe, rtol=1e-6, atol=1e-6
    )


# --- parameters -----------------------------------------------------------------------------


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


# --- patches --------------------------------------------------------------------------------


@pytest.mark.parametrize("channels", [1, 3], ids=["grey", "rgb"])
def test_patchify_then_unpatchify_restores_the_image(channels, make_image):
    cfg = EncoderConfig(**{**SMALL, "channels": channels, "image_size": 48, "patch_size": 12})
    image = make_image(cfg.image_size, channels, seed=21)
    patches = patchify(image, cfg.patch_size)
    assert patches.shape == (cfg.n_tokens, cfg.patch_dim)
    restored = unpatchify(patches, cfg.patch_size, cfg.channels)
    assert restored.shape == image.shape
    np.testing.assert_array_equal(restored, image)


def test_patch_1_is_the_top_rows_second_patch():
    p, grid, c = 4, 3, 3
    image = np.arange((p * grid) ** 2 * c, dtype=np.float32).reshape(p * grid, p * grid, c)
    image /= image.max()
    patches = patchify(image, p)
    # Patch 1: rows 0..3, columns 4..7; its first value is pixel (0, 4) channel 0.
    assert patches[1, 0] == image[0, 4, 0]
    # Inside a patch: row-major pixels, channels last -> index (p1 * P + p2) * C + c.
    assert patches[1, (2 * p + 3) * c + 1] == image[2, 4 + 3, 1]
    # Patch `grid` starts the second row of patches: pixel (4, 0).
    assert patches[grid, 0] == image[p, 0, 0]
    np.testing.assert_array_equal(patches[1], image[0:p, p : 2 * p, :].reshape(-1))


def test_trace_patches_are_patchify_of_the_image(trace):
    np.testing.assert_array_equal(trace.patches, patchify(trace.image, trace.config.patch_size))


# --- the trace ------------------------------------------------------------------------------


def all_trace_arrays(trace):
    """(name, array) of every array reachable from the trace, params included."""
    yield "image", trace.image
    for name in ("patches", "embedded", "pe", "x0", "output"):
        yield name, getattr(trace, name)
    for l, layer in enumerate(trace.layers):
        for f in dataclasses.fields(layer):
            value = getattr(layer, f.name)
            if isinstance(value, np.ndarray):
                yield f"layers[{l}].{f.name}", value
            elif value is not None:  # a LayerNormTrace
                for g in dataclasses.fields(value):
                    yield f"layers[{l}].{f.name}.{g.name}", getattr(value, g.name)
    yield "params.W_E", trace.params.W_E
    for l, lp in enumerate(trace.params.layers):
        for f in dataclasses.fields(lp):
            yield f"params.layers[{l}].{f.name}", getattr(lp, f.name)


def test_trace_arrays_are_read_only(trace):
    names = []
    for name, array in all_trace_arrays(trace):
        names.append(name)
        assert isinstance(array, np.ndarray), name
        assert not array.flags.writeable, f"{name} is writeable"
        with pytest.raises(ValueError):
            array[(0,) * array.ndim] = 1.0
    assert "layers[0].ln_1.normed" in names and "layers[0].attn" in names


def test_trace_arrays_are_float32(trace):
    for name, array in all_trace_arrays(trace):
        assert array.dtype == np.float32, f"{name} has dtype {array.dtype}"


def test_trace_dataclasses_are_frozen(trace):
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.output = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.layers[0].attn = None
    with pytest.raises(dataclasses.FrozenInstanceError):
        trace.layers[0].ln_1.out = None


def test_encode_does_not_modify_or_alias_the_callers_image(make_image):
    cfg = EncoderConfig(**SMALL)
    image = make_image(cfg.image_size)
    before = image.copy()
    trace = encode(image, cfg)
    np.testing.assert_array_equal(image, before)
    assert image.flags.writeable
    image[0, 0, 0] = 0.123  # the trace keeps its own copy
    assert trace.image[0, 0, 0] == before[0, 0, 0]


# --- switches -------------------------------------------------------------------------------


def test_use_ffn_false_leaves_ffn_fields_none_and_out_is_ln_1_out(make_image):
    cfg = EncoderConfig(**{**SMALL, "use_ffn": False})
    trace = encode(make_image(cfg.image_size), cfg)
    for l, layer in enumerate(trace.layers):
        for name in ("ffn_hidden", "ffn_out", "resid_2", "ln_2"):
            assert getattr(layer, name) is None, f"layers[{l}].{name} is not None"
        np.testing.assert_array_equal(layer.out, layer.ln_1.out)
    np.testing.assert_array_equal(trace.output, trace.layers[-1].ln_1.out)


def test_use_ffn_true_fills_ffn_fields(make_image):
    cfg = EncoderConfig(**SMALL)
    trace = encode(make_image(cfg.image_size), cfg)
    for layer in trace.layers:
        assert layer.ffn_hidden.shape == (cfg.n_tokens, cfg.d_ff)
        assert layer.ffn_out.shape == layer.resid_2.shape == (cfg.n_tokens, cfg.d_model)
        np.testing.assert_array_equal(layer.out, layer.ln_2.out)


def test_use_pe_false_makes_x0_equal_embedded(make_image):
    cfg = EncoderConfig(**{**SMALL, "use_pe": False})
    image = make_image(cfg.image_size)
    trace = encode(image, cfg)
    np.testing.assert_array_equal(trace.x0, trace.embedded)
    with_pe = encode(image, cfg.replace(use_pe=True))
    np.testing.assert_array_equal(trace.embedded, with_pe.embedded)
    assert not np.allclose(trace.x0, with_pe.x0)


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


# --- impossible configurations --------------------------------------------------------------


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ValueError):
        EncoderConfig(image_size=225)


def test_default_config_is_valid_with_documented_derived_sizes():
    cfg = EncoderConfig()
    assert cfg.grid_size == 14 and cfg.n_tokens == 196 and cfg.patch_dim == 256
    assert cfg.d_head == 64 and cfg.score_scale == pytest.approx(8.0)
    assert cfg.attention_bytes == 6 * 8 * 196**2 * 2 * 4


def test_image_size_not_a_multiple_of_patch_size_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)image_size.*multiple.*patch_size"):
        EncoderConfig(image_size=225, patch_size=16)


def test_d_model_not_divisible_by_n_heads_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)d_model.*divisible.*n_heads") as info:
        EncoderConfig(d_model=512, n_heads=6)
    assert "512" in str(info.value) and "6" in str(info.value)


def test_odd_d_model_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)d_model.*even") as info:
        EncoderConfig(d_model=511, n_heads=1)
    assert "511" in str(info.value)


NON_POSITIVE_FIELDS = ("image_size", "patch_size", "channels", "d_model", "n_heads", "n_layers",
                       "d_ff")  # fmt: skip


@pytest.mark.parametrize("value", [0, -1])
@pytest.mark.parametrize("field", NON_POSITIVE_FIELDS)
def test_non_positive_values_raise_config_error(field, value):
    with pytest.raises(ConfigError, match=rf"{field}.*positive") as info:
        EncoderConfig(**{field: value})
    assert str(value) in str(info.value)


def test_non_positive_ln_eps_raises_config_error():
    for eps in (0.0, -1e-5):
        with pytest.raises(ConfigError, match="ln_eps"):
            EncoderConfig(ln_eps=eps)


def test_more_than_1024_tokens_raises_config_error():
    with pytest.raises(ConfigError, match=r"4096 tokens.*1024"):
        EncoderConfig(image_size=512, patch_size=8)


def test_exactly_1024_tokens_is_allowed():
    cfg = EncoderConfig(image_size=256, patch_size=8, n_layers=1, n_heads=1)
    assert cfg.n_tokens == 1024


def test_attention_bytes_is_layers_heads_tokens_squared_times_8():
    cfg = EncoderConfig(image_size=256, patch_size=8, d_model=512, n_heads=16, n_layers=8)
    assert cfg.n_tokens == 1024
    assert cfg.attention_bytes == 8 * 16 * 1024**2 * 2 * 4 == 2**30  # exactly 1 GiB: allowed
    small = EncoderConfig(**SMALL)
    assert small.attention_bytes == 3 * 4 * 16**2 * 2 * 4


def test_attention_memory_over_1_gib_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)attention.*GiB") as info:
        EncoderConfig(image_size=256, patch_size=8, d_model=512, n_heads=64, n_layers=8)
    # 8 · 64 · 1024² · 2 · 4 bytes = 4 GiB
    assert re.search(r"\b4(\.0+)? GiB", str(info.value)), str(info.value)


def test_bad_scale_string_raises_config_error():
    with pytest.raises(ConfigError, match=r"scale.*d_k.*d_model.*none.*'sqrt'"):
        EncoderConfig(scale="sqrt")


def test_replace_validates_like_a_new_config():
    cfg = EncoderConfig(**SMALL)
    assert cfg.replace(n_heads=8).n_heads == 8
    assert cfg.n_heads == 4  # frozen: replace made a copy
    with pytest.raises(ConfigError):
        cfg.replace(n_heads=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.n_heads = 8


def test_encode_with_caller_params_gives_a_float32_read_only_trace(make_image):
    """Params built by the caller (float64, writeable) must not leak into the trace's contract."""
    cfg = EncoderConfig(**{**SMALL, "n_layers": 2})
    base = init_params(cfg)
    params = dataclasses.replace(
        base,
        W_E=base.W_E.astype(np.float64),
        layers=tuple(
            dataclasses.replace(lp, W_Q=lp.W_Q.astype(np.float64), gamma_1=np.array(lp.gamma_1))
            for lp in base.layers
        ),
    )
    trace = encode(make_image(cfg.image_size), cfg, params=params)
    problems = [
        f"{name}: dtype {a.dtype}, writeable {a.flags.writeable}"
        for name, a in all_trace_arrays(trace)
        if a.dtype != np.float32 or a.flags.writeable
    ]
    assert not problems, f"{len(problems)} trace arrays break the contract: " + "; ".join(
        problems[:6]
    )


def test_encode_rejects_params_that_do_not_fit_the_config():
    from encoder_core import ParamsError

    small = EncoderConfig(image_size=32, patch_size=8, d_model=16, n_heads=2, n_layers=2, d_ff=32)
    image = np.zeros((32, 32, 1), np.float32)
    one_layer = init_params(small.replace(n_layers=1))
    with pytest.raises(ParamsError, match="n_layers"):
        encode(image, small, one_layer)
    wider = init_params(small.replace(d_model=32, d_ff=64))
    with pytest.raises(ParamsError, match="W_E"):
        encode(image, small, wider)
