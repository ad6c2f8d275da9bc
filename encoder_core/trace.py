"""The trace: every intermediate tensor of one forward pass, named and shaped.

Like llm.c's activation struct, each field has a name and a shape comment. N = n_tokens (the
patches), S = seq_len = n_prefix + N (the rows of the sequence: N for the note's encoder; with
prefix tokens rows 0 … n_prefix−1 are [cls, dist, registers…] and the patches follow),
d = d_model, h = n_heads. The shapes are those of one image; `encoder_layer` on a batch
x [B, N, d] gives every LayerTrace and LayerNormTrace field the same leading B (the trainer's
cache), in the dtype of x. `encode` returns float32, read-only arrays, so a cache can share them.
These field names are fixed: the `.npz` export and outside tools use them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, is_dataclass
from typing import TypeVar

import numpy as np

from .config import EncoderConfig
from .params import EncoderParams, read_only

T = TypeVar("T")


@dataclass(frozen=True)
class LayerNormTrace:
    mean: np.ndarray  # [S] μ of each row
    var: np.ndarray  # [S] σ² of each row (population: divide by d_model)
    normed: np.ndarray  # [S, d] x̂ = (x − μ) / √(σ² + ε)
    out: np.ndarray  # [S, d] γ ⊙ x̂ + β


@dataclass(frozen=True)
class LayerTrace:
    """One layer. Post-norm (the note) as written beside each field; pre-norm (norm_first, ViT):
    ln_1 = LN(x) of the layer's input x, q/k/v from ln_1.out, resid_1 = x + ls_1 ⊙ attn_out,
    ln_2 = LN(resid_1), FFN on ln_2.out, resid_2 = resid_1 + ls_2 ⊙ ffn_out, out = resid_2
    (resid_1 without FFN). ls_1, ls_2: LayerScale, only with layer_scale (else 1)."""

    q: np.ndarray  # [h, S, d_head] queries, X·W_Q (+ b_Q) split into heads
    k: np.ndarray  # [h, S, d_head] keys, X·W_K (+ b_K)
    v: np.ndarray  # [h, S, d_head] values, X·W_V (+ b_V)
    scores: np.ndarray  # [h, S, S] Q·Kᵀ / s, scaled, before softmax
    attn: np.ndarray  # [h, S, S] softmax of each row of scores
    heads: np.ndarray  # [h, S, d_head] attn · V
    concat: np.ndarray  # [S, d] the heads side by side
    attn_out: np.ndarray  # [S, d] concat · W_O (+ b_O), before LayerScale
    resid_1: np.ndarray  # [S, d] x + ls_1 ⊙ attn_out
    ln_1: LayerNormTrace  # LayerNorm(resid_1); pre-norm: LayerNorm(x)
    ffn_hidden: np.ndarray | None  # [S, d_ff] act(ln_1.out·W_1 + b_1); None without FFN
    ffn_out: np.ndarray | None  # [S, d] ffn_hidden·W_2 + b_2, before LayerScale
    resid_2: np.ndarray | None  # [S, d] ln_1.out + ls_2 ⊙ ffn_out; pre-norm: resid_1 + …
    ln_2: LayerNormTrace | None  # LayerNorm(resid_2); pre-norm: LayerNorm(resid_1)
    out: np.ndarray  # [S, d] the layer's output: ln_2.out (ln_1.out without FFN); pre-norm:
    #                  resid_2 (resid_1 without FFN)


@dataclass(frozen=True)
class EncoderTrace:
    config: EncoderConfig  # the settings of this pass
    params: EncoderParams  # the weights used
    image: np.ndarray  # [S_img, S_img, C] the image the model received, in [0, 1]
    pixels: np.ndarray  # [S_img, S_img, C] (image − pixel_mean) / pixel_std; image itself
    #                     when the config has no pixel statistics
    patches: np.ndarray  # [N, P·P·C] flattened patches of pixels, row-major
    embedded: np.ndarray  # [N, d] patches · W_E (+ b_E)
    pe: np.ndarray  # [N, d] the patches' positions: sinusoidal table, or learned patch rows
    tokens: np.ndarray  # [S, d] [cls, dist, registers…, embedded], before positions
    #                     (embedded itself without prefix tokens)
    pos: np.ndarray  # [S, d] what is added to tokens: pe on the patch rows, learned cls/dist
    #                  rows (pos_prefix), zero elsewhere; all zero when use_pe is off
    x0: np.ndarray  # [S, d] tokens + pos (tokens alone when use_pe is off)
    layers: tuple[LayerTrace, ...]  # one per encoder layer
    final_ln: LayerNormTrace | None  # LayerNorm of the last layer's out (final_norm), or None
    output: np.ndarray  # [S, d] the encoder's output: final_ln.out, or the last layer's out


def freeze(obj: T) -> T:
    """Make every array in a (nested) trace dataclass read-only, in place, and the arrays it is a
    view of (so that no other name can change its values); returns obj."""
    for f in fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, np.ndarray):
            read_only(value)
        elif is_dataclass(value) and not isinstance(value, (EncoderConfig, EncoderParams)):
            freeze(value)
        elif isinstance(value, tuple):
            for item in value:
                if is_dataclass(item):
                    freeze(item)
    return obj


def trace_arrays(trace: EncoderTrace) -> dict[str, np.ndarray]:
    """Flat key → array map of the trace: `pixels`, `patches`, `embedded`, `pe`, `tokens`,
    `pos`, `x0`, `output`, `layer{l}/{field}`, `layer{l}/ln_1/mean`, …, `final_ln/{mean, …}`."""
    arrays = {name: getattr(trace, name)
              for name in ("pixels", "patches", "embedded", "pe", "tokens", "pos", "x0", "output")}
    if trace.final_ln is not None:
        for g in fields(LayerNormTrace):
            arrays[f"final_ln/{g.name}"] = getattr(trace.final_ln, g.name)
    for l, layer in enumerate(trace.layers):
        for f in fields(LayerTrace):
            value = getattr(layer, f.name)
            if isinstance(value, LayerNormTrace):
                for g in fields(LayerNormTrace):
                    arrays[f"layer{l}/{f.name}/{g.name}"] = getattr(value, g.name)
            elif value is not None:
                arrays[f"layer{l}/{f.name}"] = value
    return arrays
