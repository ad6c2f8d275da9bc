"""The encoder (encoder_core/pipeline/encoder.py): how encode and encoder_layer put the steps
together."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from encoder_core import (
    EncoderConfig,
    ParamsError,
    encode,
    encode_batch,
    encoder_layer,
    init_params,
    patchify,
    positional_encoding,
    trace_arrays,
)
from encoder_core.params import check_params, params_from_arrays, params_to_arrays
from tests.support.configs import SMALL, VIT, make_test_image, perturb_every_parameter


def layer_inputs(trace):
    """The input x of each layer: x0, then the previous layer's out."""
    return [trace.x0] + [layer.out for layer in trace.layers[:-1]]


def test_trace_patches_are_patchify_of_the_image(trace):
    np.testing.assert_array_equal(trace.patches, patchify(trace.image, trace.config.patch_size))


def test_trace_pe_is_positional_encoding_and_x0_is_embedded_plus_pe(trace):
    cfg = trace.config
    np.testing.assert_array_equal(trace.pe, positional_encoding(cfg.n_tokens, cfg.d_model))
    np.testing.assert_allclose(
        trace.x0, trace.embedded.astype(np.float64) + trace.pe, rtol=1e-6, atol=1e-6
    )


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


def test_output_is_last_layer_out(trace):
    np.testing.assert_array_equal(trace.output, trace.layers[-1].out)


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


def test_encode_does_not_modify_or_alias_the_callers_image(make_image):
    cfg = EncoderConfig(**SMALL)
    image = make_image(cfg.image_size)
    before = image.copy()
    trace = encode(image, cfg)
    np.testing.assert_array_equal(image, before)
    assert image.flags.writeable
    image[0, 0, 0] = 0.123  # the trace keeps its own copy
    assert trace.image[0, 0, 0] == before[0, 0, 0]


def test_encode_rejects_params_that_do_not_fit_the_config():
    small = EncoderConfig(image_size=32, patch_size=8, d_model=16, n_heads=2, n_layers=2, d_ff=32)
    image = np.zeros((32, 32, 1), np.float32)
    one_layer = init_params(small.replace(n_layers=1))
    with pytest.raises(ParamsError, match="n_layers"):
        encode(image, small, one_layer)
    wider = init_params(small.replace(d_model=32, d_ff=64))
    with pytest.raises(ParamsError, match="W_E"):
        encode(image, small, wider)


# --- encoder_layer on a batch ---------------------------------------------------------------


def layer_fields(layer):
    """(name, array) of every array of a LayerTrace, layer norms included."""
    for f in dataclasses.fields(layer):
        value = getattr(layer, f.name)
        if isinstance(value, np.ndarray):
            yield f.name, value
        elif value is not None:  # a LayerNormTrace
            for g in dataclasses.fields(value):
                yield f"{f.name}.{g.name}", getattr(value, g.name)


@pytest.mark.parametrize("use_ffn", [True, False], ids=["ffn", "no_ffn"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_encoder_layer_on_a_batch_gives_each_items_trace_with_a_leading_axis(dtype, use_ffn):
    cfg = EncoderConfig(**{**SMALL, "use_ffn": use_ffn})
    p = init_params(cfg).layers[1]  # float32 weights, as encode uses them
    x = np.random.default_rng(0).standard_normal((3, cfg.n_tokens, cfg.d_model)).astype(dtype)
    batch = encoder_layer(x, p, cfg)
    singles = [dict(layer_fields(encoder_layer(x[b], p, cfg))) for b in range(3)]
    names = []
    for name, value in layer_fields(batch):
        names.append(name)
        assert value.dtype == dtype, f"{name} is {value.dtype}: the input's dtype was {dtype}"
        assert value.shape == (3, *singles[0][name].shape), name
        for b in range(3):
            np.testing.assert_allclose(value[b], singles[b][name], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name}[{b}]")
    assert {"q", "attn", "concat", "ln_1.var", "out"} <= set(names)
    assert ("ln_2.normed" in names) == use_ffn


def test_encoder_layer_in_float64_matches_float32_to_float32_rounding():
    cfg = EncoderConfig(**SMALL)
    p = init_params(cfg).layers[0]
    x = np.random.default_rng(1).standard_normal((2, cfg.n_tokens, cfg.d_model))  # float64
    out64 = encoder_layer(x, p, cfg).out
    out32 = encoder_layer(x.astype(np.float32), p, cfg).out
    assert out64.dtype == np.float64 and out32.dtype == np.float32
    np.testing.assert_allclose(out32, out64, rtol=1e-4, atol=1e-5)
    assert not np.array_equal(out32, out64)  # float64 really ran in float64


# --- encode_batch: the trainer's forward -----------------------------------------------------


def batch_problem(changes: dict, dtype=np.float32):
    """Three different test images [3, S, S, C] and perturbed weights, both in dtype."""
    cfg = EncoderConfig(**{**SMALL, **changes})
    params = check_params(perturb_every_parameter(init_params(cfg)), cfg)  # float32, frozen
    if dtype == np.float64:
        arrays = {k: v if k == "params/head/pool" else v.astype(np.float64)
                  for k, v in params_to_arrays(params).items()}
        params = params_from_arrays(arrays, cfg, freeze=False)
    images = np.stack([make_test_image(cfg.image_size, cfg.channels, seed=s) for s in (1, 2, 3)])
    return cfg, params, images.astype(dtype)


@pytest.mark.parametrize("changes", [{}, VIT], ids=["note", "vit_every_variant"])
def test_encode_batch_gives_each_images_encode_trace_with_a_leading_axis(changes):
    cfg, params, images = batch_problem(changes)
    batch = trace_arrays(encode_batch(images, cfg, params))
    for b, image in enumerate(images):
        one = trace_arrays(encode(image, cfg, params))
        assert sorted(one) == sorted(batch)
        for key, value in one.items():
            shared = key in ("pe", "pos")  # the same rows for every image: no batch axis
            got = batch[key] if shared else batch[key][b]
            assert got.shape == value.shape and got.dtype == np.float32, key
            np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-6, err_msg=f"{key}[{b}]")


@pytest.mark.parametrize("changes", [{}, VIT], ids=["note", "vit_every_variant"])
def test_encode_batch_in_float64_keeps_float64_everywhere_and_leaves_the_weights_alone(changes):
    cfg, params, images = batch_problem(changes, np.float64)
    trace = encode_batch(images, cfg, params)
    wrong = {k: a.dtype for k, a in trace_arrays(trace).items() if a.dtype != np.float64}
    assert not wrong, wrong
    assert trace.params is params and params.W_E.flags.writeable  # not copied, not frozen
    ref = encode(images[1].astype(np.float32), cfg, params)
    np.testing.assert_allclose(trace.output[1], ref.output, rtol=1e-4, atol=1e-4)


def test_encode_batch_refuses_one_image_an_integer_batch_and_params_that_do_not_fit():
    cfg, params, images = batch_problem({})
    with pytest.raises(ValueError, match="images have shape"):
        encode_batch(images[0], cfg, params)
    with pytest.raises(ValueError, match="float32 or float64"):
        encode_batch((images * 255).astype(np.uint8), cfg, params)
    with pytest.raises(ParamsError, match="n_layers"):
        encode_batch(images, cfg.replace(n_layers=2), params)


# --- the Vision Transformer variants (issue 11) ---------------------------------------------


@pytest.fixture(scope="module")
def vit_trace():
    """SMALL with every variant on, every parameter perturbed, on an RGB test image."""
    cfg = EncoderConfig(**{**SMALL, **VIT})
    params = perturb_every_parameter(init_params(cfg))
    return encode(make_test_image(cfg.image_size, cfg.channels, seed=3), cfg, params)


def test_vit_sequence_is_cls_dist_registers_then_patches(vit_trace):
    cfg, p, t = vit_trace.config, vit_trace.params, vit_trace
    assert (cfg.n_prefix, cfg.seq_len, cfg.n_tokens) == (4, 20, 16)
    assert t.tokens.shape == t.pos.shape == t.x0.shape == t.output.shape == (20, cfg.d_model)
    assert t.embedded.shape == t.pe.shape == (16, cfg.d_model)
    np.testing.assert_array_equal(t.tokens[0], p.cls[0])
    np.testing.assert_array_equal(t.tokens[1], p.dist[0])
    np.testing.assert_array_equal(t.tokens[2:4], p.registers)
    np.testing.assert_array_equal(t.tokens[4:], t.embedded)


def test_vit_positions_go_to_cls_dist_and_patches_never_to_registers(vit_trace):
    p, t = vit_trace.params, vit_trace
    np.testing.assert_array_equal(t.pos[:2], p.pos_embed[:2])  # cls, dist
    np.testing.assert_array_equal(t.pos[2:4], 0)  # registers
    np.testing.assert_array_equal(t.pos[4:], p.pos_embed[2:])  # patches
    np.testing.assert_array_equal(t.pe, p.pos_embed[2:])
    np.testing.assert_allclose(t.x0, t.tokens.astype(np.float64) + t.pos, rtol=1e-6, atol=1e-6)


def test_vit_pixels_are_normalised_inside_encode_and_the_image_stays_in_0_1(vit_trace):
    cfg, t = vit_trace.config, vit_trace
    assert 0.0 <= t.image.min() and t.image.max() <= 1.0
    expected = (t.image.astype(np.float64) - cfg.pixel_mean) / cfg.pixel_std
    np.testing.assert_allclose(t.pixels, expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(t.patches, patchify(t.pixels, cfg.patch_size))
    np.testing.assert_allclose(t.embedded, t.patches.astype(np.float64) @ t.params.W_E
                               + t.params.b_E, rtol=1e-5, atol=1e-5)


def test_vit_pre_norm_layers_add_scaled_sublayers_to_the_stream(vit_trace):
    for l, (x, layer, p) in enumerate(zip(layer_inputs(vit_trace), vit_trace.layers,
                                          vit_trace.params.layers, strict=True)):
        x64 = x.astype(np.float64)
        # ln_1 normalises the layer's input; ln_2 normalises resid_1
        np.testing.assert_allclose(layer.ln_1.mean, x64.mean(-1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(layer.ln_2.mean, layer.resid_1.astype(np.float64).mean(-1),
                                   rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(layer.resid_1, x64 + p.ls_1 * layer.attn_out, rtol=1e-5,
                                   atol=1e-5, err_msg=f"layers[{l}].resid_1")
        np.testing.assert_allclose(layer.resid_2, layer.resid_1.astype(np.float64)
                                   + p.ls_2 * layer.ffn_out, rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(layer.out, layer.resid_2)
        # the normalised rows have mean 0 and variance σ²/(σ² + ε) ≈ 1, over seq_len rows
        for ln in (layer.ln_1, layer.ln_2):
            normed = ln.normed.astype(np.float64)
            assert normed.shape[0] == vit_trace.config.seq_len
            np.testing.assert_allclose(normed.mean(-1), 0, atol=1e-5)
            np.testing.assert_allclose(normed.var(-1), ln.var / (ln.var + 1e-6), rtol=1e-4)


def test_vit_softmax_rows_sum_to_1_over_the_whole_sequence(vit_trace):
    S, h = vit_trace.config.seq_len, vit_trace.config.n_heads
    for layer in vit_trace.layers:
        assert layer.attn.shape == (h, S, S)
        np.testing.assert_allclose(layer.attn.sum(-1, dtype=np.float64), 1.0, atol=1e-5)
        assert np.all(layer.attn >= 0)


def test_vit_output_is_the_final_norm_of_the_last_layer(vit_trace):
    last = vit_trace.layers[-1].out.astype(np.float64)
    ln = vit_trace.final_ln
    p = vit_trace.params
    np.testing.assert_allclose(ln.mean, last.mean(-1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(vit_trace.output, ln.out)
    np.testing.assert_allclose(ln.out, ln.normed.astype(np.float64) * p.norm_gamma + p.norm_beta,
                               rtol=1e-5, atol=1e-5)


def test_vit_ffn_hidden_is_gelu_so_it_has_small_negative_values(vit_trace):
    for layer in vit_trace.layers:
        assert layer.ffn_hidden.min() < 0  # ReLU would give none
        assert layer.ffn_hidden.min() > -0.17  # GELU's minimum is ≈ −0.16997


def test_default_trace_takes_the_note_path(trace):
    """Without variants: no prefix, no statistics, no final norm — the same arrays as before."""
    cfg = trace.config
    assert trace.pixels is trace.image and trace.tokens is trace.embedded
    assert trace.pos is trace.pe and trace.final_ln is None
    assert trace.x0.shape == (cfg.n_tokens, cfg.d_model)
    np.testing.assert_array_equal(trace.output, trace.layers[-1].out)


def test_shipped_weights_give_the_note_encoders_trace(make_image):
    """The trained shapes model (assets/) runs exactly as the old path: every field of its trace
    equals the naive float64 reference of the note's encoder (which has no variant on)."""
    from encoder_core.shapes_model.classifier import load_trained
    from tests.support.reference import reference_encode
    from tests.test_encoder_reference import compare_traces

    cfg, params, _ = load_trained()
    variants = ("norm_first", "cls_token", "dist_token", "n_registers", "position", "pos_prefix",
                "patch_bias", "qkv_bias", "proj_bias", "activation", "final_norm",
                "layer_scale", "pixel_mean", "pixel_std")
    default = EncoderConfig()
    assert {k: getattr(cfg, k) for k in variants} == {k: getattr(default, k) for k in variants}
    image = make_image(cfg.image_size, cfg.channels, seed=8)
    trace = encode(image, cfg, params)
    assert trace.tokens is trace.embedded and trace.final_ln is None
    failures = compare_traces(trace, reference_encode(image, cfg, params), cfg)
    assert not failures, "\n".join(failures)


def test_encode_refuses_params_missing_a_variants_parameter(make_image):
    cfg = EncoderConfig(**{**SMALL, "cls_token": True})
    plain = init_params(EncoderConfig(**SMALL))
    with pytest.raises(ParamsError, match="missing params/cls"):
        encode(make_image(cfg.image_size), cfg, plain)
