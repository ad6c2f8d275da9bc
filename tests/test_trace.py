"""The trace (encoder_core/trace.py): every array float32, read-only, in frozen dataclasses."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params, trace_arrays
from encoder_core.export import trace_npz_bytes
from encoder_core.params import params_from_arrays
from tests.support.configs import SMALL, VIT, perturb_every_parameter


def all_trace_arrays(trace):
    """(name, array) of every array reachable from the trace, params included."""
    yield "image", trace.image
    for name in ("pixels", "patches", "embedded", "pe", "tokens", "pos", "x0", "output"):
        yield name, getattr(trace, name)
    for l, layer in enumerate(trace.layers):
        for f in dataclasses.fields(layer):
            value = getattr(layer, f.name)
            if isinstance(value, np.ndarray):
                yield f"layers[{l}].{f.name}", value
            elif value is not None:  # a LayerNormTrace
                for g in dataclasses.fields(value):
                    yield f"layers[{l}].{f.name}.{g.name}", getattr(value, g.name)
    if trace.final_ln is not None:
        for g in dataclasses.fields(trace.final_ln):
            yield f"final_ln.{g.name}", getattr(trace.final_ln, g.name)
    for f in dataclasses.fields(trace.params):
        if f.name != "layers" and getattr(trace.params, f.name) is not None:
            yield f"params.{f.name}", getattr(trace.params, f.name)
    for l, lp in enumerate(trace.params.layers):
        for f in dataclasses.fields(lp):
            if getattr(lp, f.name) is not None:  # None: an optional parameter that is off
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


def test_no_trace_array_is_a_view_of_a_writeable_array(trace):
    """A read-only view of a writeable array could still change through its base: the pictures'
    cache remembers a frozen array's digest (lens.digests.array_digest), so none may."""
    from lens.digests import frozen

    loose = [name for name, array in all_trace_arrays(trace) if not frozen(array)]
    assert not loose, loose


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


# --- the keys of the flat map and of the export, with the variants (issue 11) -----------------


def test_trace_arrays_of_the_note_encoder_have_the_documented_keys(trace):
    cfg = trace.config
    keys = set(trace_arrays(trace))
    top = {"pixels", "patches", "embedded", "pe", "tokens", "pos", "x0", "output"}
    layer = {"q", "k", "v", "scores", "attn", "heads", "concat", "attn_out", "resid_1",
             "ln_1/mean", "ln_1/var", "ln_1/normed", "ln_1/out", "out"}
    if cfg.use_ffn:
        layer |= {"ffn_hidden", "ffn_out", "resid_2", "ln_2/mean", "ln_2/var", "ln_2/normed",
                  "ln_2/out"}
    expected = top | {f"layer{l}/{name}" for l in range(cfg.n_layers) for name in layer}
    assert keys == expected


def test_a_vit_trace_exports_its_variant_arrays_and_loads_back_without_pickle(make_image):
    cfg = EncoderConfig(**{**SMALL, **VIT, "n_layers": 2})
    params = perturb_every_parameter(init_params(cfg))
    trace = encode(make_image(cfg.image_size, cfg.channels), cfg, params)
    buf = io.BytesIO(trace_npz_bytes(trace))
    with np.load(buf, allow_pickle=False) as npz:
        names = set(npz.files)
        for key in ("final_ln/mean", "final_ln/var", "final_ln/normed", "final_ln/out",
                    "params/cls", "params/dist", "params/registers", "params/pos_embed",
                    "params/b_E", "params/norm_gamma", "params/layer1/b_Q", "params/layer1/ls_2"):
            assert key in names, key
        assert npz["tokens"].shape == npz["x0"].shape == (cfg.seq_len, cfg.d_model)
        assert npz["layer1/attn"].shape == (cfg.n_heads, cfg.seq_len, cfg.seq_len)
        np.testing.assert_array_equal(npz["output"], trace.output)
        np.testing.assert_array_equal(npz["pixels"], trace.pixels)
        again = EncoderConfig(**json.loads(str(npz["config"])))
        assert again == cfg
        reloaded = params_from_arrays({k: npz[k] for k in names if k.startswith("params/")},
                                      again)
    np.testing.assert_array_equal(encode(trace.image, again, reloaded).output, trace.output)


def test_a_vit_trace_is_float32_and_read_only_everywhere(make_image):
    cfg = EncoderConfig(**{**SMALL, **VIT, "n_layers": 2})
    base = perturb_every_parameter(init_params(cfg))  # float32 but writeable: encode freezes
    trace = encode(make_image(cfg.image_size, cfg.channels), cfg, base)
    named = dict(all_trace_arrays(trace))
    for name in ("final_ln.out", "params.cls", "params.pos_embed", "params.layers[1].ls_2",
                 "tokens", "pos", "pixels"):
        assert name in named, name
    bad = [n for n, a in named.items() if a.dtype != np.float32 or a.flags.writeable]
    assert not bad, bad
