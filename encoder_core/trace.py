"""The trace: every intermediate tensor of one forward pass, named and shaped.

Like llm.c's activation struct, each field has a name and a shape comment. N = n_tokens,
d = d_model, h = n_heads. The shapes are those of one image; `encoder_layer` on a batch
x [B, N, d] gives every LayerTrace and LayerNormTrace field the same leading B (the trainer's
cache), in the dtype of x. `encode` returns float32, read-only arrays, so a cache can share them.
These field names are fixed: the `.npz` export and outside tools use them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass

import numpy as np

from .config import EncoderConfig
from .params import EncoderParams


@dataclass(frozen=True)
class LayerNormTrace:
    mean: np.ndarray  # [N] μ of each row
    var: np.ndarray  # [N] σ² of each row (population: divide by d_model)
    normed: np.ndarray  # [N, d] x̂ = (x − μ) / √(σ² + ε)
    out: np.ndarray  # [N, d] γ ⊙ x̂ + β


@dataclass(frozen=True)
class LayerTrace:
    q: np.ndarray  # [h, N, d_head] queries, X·W_Q split into heads
    k: np.ndarray  # [h, N, d_head] keys
    v: np.ndarray  # [h, N, d_head] values
    scores: np.ndarray  # [h, N, N] Q·Kᵀ / s, scaled, before softmax
    attn: np.ndarray  # [h, N, N] softmax of each row of scores
    heads: np.ndarray  # [h, N, d_head] attn · V
    concat: np.ndarray  # [N, d] the heads side by side
    attn_out: np.ndarray  # [N, d] concat · W_O
    resid_1: np.ndarray  # [N, d] x + attn_out
    ln_1: LayerNormTrace  # LayerNorm(resid_1)
    ffn_hidden: np.ndarray | None  # [N, d_ff] max(0, ln_1.out·W_1 + b_1); None without FFN
    ffn_out: np.ndarray | None  # [N, d] ffn_hidden·W_2 + b_2
    resid_2: np.ndarray | None  # [N, d] ln_1.out + ffn_out
    ln_2: LayerNormTrace | None  # LayerNorm(resid_2)
    out: np.ndarray  # [N, d] the layer's output: ln_2.out, or ln_1.out without FFN


@dataclass(frozen=True)
class EncoderTrace:
    config: EncoderConfig  # the settings of this pass
    params: EncoderParams  # the weights used
    image: np.ndarray  # [S, S, C] the image the model received, in [0, 1]
    patches: np.ndarray  # [N, P·P·C] flattened patches, row-major
    embedded: np.ndarray  # [N, d] patches · W_E
    pe: np.ndarray  # [N, d] positional encoding
    x0: np.ndarray  # [N, d] embedded + pe (embedded alone when use_pe is off)
    layers: tuple[LayerTrace, ...]  # one per encoder layer
    output: np.ndarray  # [N, d] the encoder's output: the last layer's out


def freeze(obj):
    """Make every array in a (nested) trace dataclass read-only, in place; returns obj."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
        elif is_dataclass(value) and not isinstance(value, (EncoderConfig, EncoderParams)):
            freeze(value)
        elif isinstance(value, tuple):
            for item in value:
                if is_dataclass(item):
                    freeze(item)
    return obj


def trace_arrays(trace: EncoderTrace) -> dict[str, np.ndarray]:
    """Flat key → array map of the trace: `patches`, …, `layer{l}/{field}`, `layer{l}/ln_1/mean`."""
    arrays = {name: getattr(trace, name) for name in ("patches", "embedded", "pe", "x0", "output")}
    for l, layer in enumerate(trace.layers):
        for f in fields(LayerTrace):
            value = getattr(layer, f.name)
            if isinstance(value, LayerNormTrace):
                for g in fields(LayerNormTrace):
                    arrays[f"layer{l}/{f.name}/{g.name}"] = getattr(value, g.name)
            elif value is not None:
                arrays[f"layer{l}/{f.name}"] = value
    return arrays
