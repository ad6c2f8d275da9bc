"""Activation patching: run image A, replace the residual stream entering one layer at some
tokens by image B's, finish the pass from there — which layers and which patches carry B's
class.

With x_l^A, x_l^B the residual stream entering layer l (x_0 = `trace.x0`, x_l =
`trace.layers[l − 1].out`, x_L the last layer's output) of the same model on A and B:

    x̃_l[i] = x_l^B[i] for i in tokens,  x_l^A[i] otherwise                   [S, d]
    x̃_{m+1} = layer_m(x̃_m)  for m = l … L − 1        (`encoder_layer`, the model's own)
    patched logits = head(pool(FinalNorm(x̃_L)))      (`output_logits`)        [n_classes]

The layers before l are the traces' own: nothing is recomputed there. Patching every token at
layer 0 gives B's logits; patching none gives A's. Token indices are sequence rows: the prefix
tokens ([CLS], …) first, patch p at row n_prefix + p.

`patching_map` does it for every layer l < L and every single token t: the probability
softmax(patched logits)[target] — how much of B's class (target) token t at layer l carries
into A. Its cost is L·S partial passes, Σ_l (L − l)·S = S·L(L + 1)/2 layer evaluations (ViT-S/16:
197·78 ≈ 15 000 layers, ≈ 1 300 forwards); the S single-token patches of one layer run as one
batch through `encoder_layer` (its leading batch axis), `chunk` rows at a time to bound the
memory (about chunk × one layer's intermediates).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..config import EncoderConfig
from ..params import EncoderParams
from ..pipeline.attention import softmax
from ..pipeline.encoder import encoder_layer
from ..pipeline.head import output_logits
from ..pipeline.norm import layer_norm
from ..trace import EncoderTrace
from .logit_lens import require_head

CHUNK = 32  # single-token patches run together in `patching_map` (≈ 32 × one layer's arrays)


def stream_entering(trace: EncoderTrace, layer: int) -> np.ndarray:
    """The residual stream entering `layer` (0 … L; L: after the last layer), [S, d]."""
    return trace.x0 if layer == 0 else trace.layers[layer - 1].out


def check_pair(trace_a: EncoderTrace, trace_b: EncoderTrace, layer: int) -> None:
    """ValueError unless A and B are passes of one configuration and `layer` is 0 … L."""
    if trace_a.config != trace_b.config or trace_a.x0.shape != trace_b.x0.shape:
        raise ValueError("A and B must be passes of the same model on images of the same shape.")
    L = trace_a.config.n_layers
    if not 0 <= layer <= L:
        raise ValueError(f"layer {layer} does not exist: the stream enters layers 0 … {L - 1}, "
                         f"and {L} is after the last.")


def finish_pass(x: np.ndarray, params: EncoderParams, cfg: EncoderConfig,
                layer: int) -> np.ndarray:
    """The layers `layer` … L − 1, the final norm and the head on x [..., S, d] (leading batch
    axes allowed): the logits [..., n_classes] in x's dtype. One layer's arrays at a time."""
    for p in params.layers[layer:]:
        x = encoder_layer(x, p, cfg).out  # [..., S, d]
    if cfg.final_norm:
        x = layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps).out
    return output_logits(x, params.head, cfg.n_prefix, cfg.ln_eps)


def patch_run(trace_a: EncoderTrace, trace_b: EncoderTrace, params: EncoderParams, layer: int,
              tokens: Sequence[int] | np.ndarray) -> np.ndarray:
    """A's logits with the residual stream entering `layer` at `tokens` taken from B.

    Args:
        trace_a, trace_b: passes of one model (`encode`) on images A and B; params: its weights,
            with a head.
        layer: 0 … L (L = after the last layer: only the final norm and the head are left).
        tokens: sequence rows (prefix included: patch p is row n_prefix + p); [] patches nothing.
    Returns:
        [n_classes] float32 logits (softmax gives the probabilities).
    Raises:
        ValueError without a head, for passes of different models, a layer or token out of range.
    """
    require_head(params)
    check_pair(trace_a, trace_b, layer)
    rows = np.asarray(tokens, dtype=int).reshape(-1)
    S = trace_a.config.seq_len
    if rows.size and not (rows.min() >= 0 and rows.max() < S):
        raise ValueError(f"tokens must be sequence rows 0 … {S - 1}, got {rows.tolist()}.")
    x = np.array(stream_entering(trace_a, layer))  # [S, d] a private copy
    x[rows] = stream_entering(trace_b, layer)[rows]
    return finish_pass(x, params, trace_a.config, layer)


def single_token_patches(x_a: np.ndarray, x_b: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """One copy of x_a per row t in `rows`, its row t taken from x_b: [len(rows), S, d]."""
    batch = np.repeat(x_a[None], len(rows), axis=0)  # [B, S, d]
    batch[np.arange(len(rows)), rows] = x_b[rows]
    return batch


def patching_row(trace_a: EncoderTrace, trace_b: EncoderTrace, params: EncoderParams,
                 target: int, layer: int, chunk: int = CHUNK) -> np.ndarray:
    """One row of `patching_map`: for every token t, softmax(patch_run(A, B, layer, [t]))[target].

    layer: 0 … L − 1. Returns [S] float64. Cost: S·(L − layer) layer evaluations, `chunk`
    single-token patches per batch.
    """
    require_head(params)
    check_pair(trace_a, trace_b, layer)
    cfg = trace_a.config
    S = cfg.seq_len
    x_a, x_b = stream_entering(trace_a, layer), stream_entering(trace_b, layer)  # [S, d]
    out = np.zeros(S)
    for start in range(0, S, chunk):
        rows = np.arange(start, min(S, start + chunk))
        logits = finish_pass(single_token_patches(x_a, x_b, rows), params, cfg, layer)  # [B, n]
        out[rows] = softmax(logits.astype(np.float64))[:, target]
    return out


def patching_map(trace_a: EncoderTrace, trace_b: EncoderTrace, params: EncoderParams,
                 target: int, chunk: int = CHUNK) -> np.ndarray:
    """For every layer l < L and every token t: softmax(patch_run(A, B, l, [t]))[target].

    Args:
        trace_a, trace_b, params: as `patch_run`; target: the class read (B's, typically).
        chunk: single-token patches run as one batch (memory ≈ chunk × one layer's arrays).
    Returns:
        [L, S] float64 probabilities of `target` (rows: layers; columns: sequence rows, the
        prefix first). Cost: S·L(L + 1)/2 layer evaluations (module docstring), one
        `patching_row` per layer.
    """
    return np.stack([patching_row(trace_a, trace_b, params, target, l, chunk)
                     for l in range(trace_a.config.n_layers)])
