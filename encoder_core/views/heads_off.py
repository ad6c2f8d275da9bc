"""Heads switched off (issue 26, item 5): the encoder run again from one layer with some of
that layer's heads' outputs set to 0 before W_O, and what that changes.

For layer l and a set H of its heads, the layers before l are the trace's own (their input
does not change: nothing is recomputed); layer l runs with

    concat'[:, j·d_head:(j+1)·d_head] = 0  for j in H,   attn_out' = concat'·W_O + b_O

(`encoder_core.pipeline.attention.zero_heads`: the heads' attention and values are computed
as before, only their share of the concat is removed), and every later layer, the final norm
and the head run on what follows. With H = {} the rerun is the trace itself, value for value;
with H = every head, attn_out' = b_O on every row.

    encode_heads_off(trace, l, H)        the new trace (layers < l the same objects)
    head_logit_effects(trace, l, c)      per head j of layer l: logit_c(H = {j}) − logit_c
    row_change(before, after)            per row: mean_k |after − before|
"""

from __future__ import annotations

import numpy as np

from ..pipeline.encoder import encoder_layer
from ..pipeline.head import predict
from ..pipeline.norm import layer_norm
from ..trace import EncoderTrace, freeze


def encode_heads_off(trace: EncoderTrace, layer: int,
                     heads_off: tuple[int, ...]) -> EncoderTrace:
    """The encoder run again from `layer` with the heads `heads_off` of that layer switched off
    (their slices of the concat set to 0 before W_O), on the trace's own weights.

    Args:
        trace: one encoder pass (`encode`); its layers before `layer` are reused as they are.
        layer: l, 0-based, 0 … n_layers − 1 (ValueError otherwise).
        heads_off: 0-based heads of layer l, each in 0 … n_heads − 1; () gives the trace's own
            values again.
    Returns:
        EncoderTrace (float32, read-only): layers[:l] are the trace's own objects; layers[l:],
        final_ln and output [S, d] are new; layers[l].concat [S, d] has the heads' columns at 0.
    """
    cfg, params = trace.config, trace.params
    L = cfg.n_layers
    if not 0 <= layer < L:
        raise ValueError(f"layer {layer} does not exist: there are {L} (0 … {L - 1}).")
    heads_off = tuple(sorted(set(int(j) for j in heads_off)))
    x = trace.x0 if layer == 0 else trace.layers[layer - 1].out  # [S, d] the layer's input
    layers = list(trace.layers[:layer])
    for i in range(layer, L):
        lt = encoder_layer(x, params.layers[i], cfg, heads_off if i == layer else ())
        layers.append(lt)
        x = lt.out  # [S, d]
    final_ln = None
    if cfg.final_norm:
        final_ln = layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps)
        x = final_ln.out
    new = EncoderTrace(config=cfg, params=params, image=trace.image, pixels=trace.pixels,
                       patches=trace.patches, embedded=trace.embedded, pe=trace.pe,
                       tokens=trace.tokens, pos=trace.pos, x0=trace.x0, layers=tuple(layers),
                       final_ln=final_ln, output=x)
    return freeze(new)


def head_logit_effects(trace: EncoderTrace, layer: int, target: int) -> np.ndarray:
    """How much switching off each head of `layer` alone moves the logit of class `target`:

        Δ_j = logit_target(encode_heads_off(trace, layer, (j,))) − logit_target(trace)

    (h reruns from `layer`; negative: the head was pushing towards the class).

    Args:
        trace: one encoder pass whose weights have a classification head (`params.head`);
        layer: l, 0-based; target: the class c (e.g. the top class of `predict`).
    Returns:
        [n_heads] float64, Δ_j for j = 0 … h − 1.
    """
    params = trace.params
    base = float(predict(trace, params)[target])
    return np.array([float(predict(encode_heads_off(trace, layer, (j,)), params)[target]) - base
                     for j in range(trace.config.n_heads)])


def row_change(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """How much each row moved: mean_k |after[i, k] − before[i, k]|.

    before, after: [S, d] (e.g. two outputs). Returns [S] float64.
    """
    return np.abs(np.asarray(after, np.float64) - np.asarray(before, np.float64)).mean(axis=-1)
