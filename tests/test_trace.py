"""The trace (encoder_core/trace.py): every array float32, read-only, in frozen dataclasses."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from configs import SMALL

from encoder_core import EncoderConfig, encode, init_params


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
