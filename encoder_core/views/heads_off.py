"""Heads switched off: the encoder run again from one layer with some of
that layer's heads' outputs set to 0 before W_O, and what that changes.

For layer l and a set H of its heads, the layers before l are the trace's own (their input
does not change: nothing is recomputed); layer l runs with

    concat'[:, j·d_head:(j+1)·d_head] = 0  for j in H,   attn_out' = concat'·W_O + b_O

(`encoder_core.pipeline.attention.zero_heads`: the heads' attention and values are computed
as before, only their share of the concat is removed), and every later layer, the final norm
and the head run on what follows. With H = {} the rerun is the trace itself, value for value;
with H = every head, attn_out' = b_O on every row.

    encode_heads_off(trace, l, H)        the new trace (layers < l the same objects)
    heads_off_change(trace, l, H)        what a page shows of it: the logits, each output
                                         row's change, the last layer's [CLS] rows
    head_logit_effects(trace, l, c)      per head j of layer l: logit_c(H = {j}) − logit_c
    row_change(before, after)            per row: mean_k |after − before|

The last two keep one layer at a time (the output and what they read of the last layer),
not the new trace: their memory is about one layer's intermediates, whatever l.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ..pipeline.encoder import encoder_layer
from ..pipeline.head import output_logits
from ..pipeline.norm import layer_norm
from ..trace import EncoderTrace, LayerNormTrace, LayerTrace, freeze
from .vit_views import cls_attention


def _checked(trace: EncoderTrace, layer: int, heads_off: tuple[int, ...]) -> tuple[int, ...]:
    L, h = trace.config.n_layers, trace.config.n_heads
    if not 0 <= layer < L:
        raise ValueError(f"layer {layer} does not exist: there are {L} (0 … {L - 1}).")
    heads_off = tuple(sorted({int(j) for j in heads_off}))
    bad = [j for j in heads_off if not 0 <= j < h]
    if bad:
        raise ValueError(f"heads {bad} do not exist: there are {h} (0 … {h - 1}).")
    return heads_off


def rerun_layers(trace: EncoderTrace, layer: int,
                 heads_off: tuple[int, ...]) -> Iterator[LayerTrace]:
    """Layers `layer` … L − 1 run again, one at a time, on the output of layer − 1 (x0 for
    layer 0) as the trace has it, the heads `heads_off` of the first switched off.

    Yields LayerTrace ([S, d] rows, attn [h, S, S], …) in order; nothing is kept here.
    """
    heads_off = _checked(trace, layer, heads_off)
    cfg, params = trace.config, trace.params
    x = trace.x0 if layer == 0 else trace.layers[layer - 1].out  # [S, d] the layer's input
    for i in range(layer, cfg.n_layers):
        lt = encoder_layer(x, params.layers[i], cfg, heads_off if i == layer else ())
        yield lt
        x = lt.out  # [S, d]


def final_norm(trace: EncoderTrace, x: np.ndarray) -> tuple[LayerNormTrace | None, np.ndarray]:
    """The encoder's final LayerNorm of the last layer's out x [S, d], when the config has one:
    (its trace or None, the output [S, d])."""
    cfg, params = trace.config, trace.params
    if not cfg.final_norm:
        return None, x
    ln = layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps)
    return ln, ln.out


def encode_heads_off(trace: EncoderTrace, layer: int,
                     heads_off: tuple[int, ...]) -> EncoderTrace:
    """The encoder run again from `layer` with the heads `heads_off` of that layer switched off
    (their slices of the concat set to 0 before W_O), on the trace's own weights.

    Args:
        trace: one encoder pass (`encode`); its layers before `layer` are reused as they are.
        layer: l, 0-based, 0 … n_layers − 1 (ValueError otherwise).
        heads_off: 0-based heads of layer l, each in 0 … n_heads − 1 (ValueError otherwise);
            () gives the trace's own values again.
    Returns:
        EncoderTrace (float32, read-only): layers[:l] are the trace's own objects; layers[l:],
        final_ln and output [S, d] are new; layers[l].concat [S, d] has the heads' columns at 0.
    """
    layers = (*trace.layers[:layer], *rerun_layers(trace, layer, heads_off))
    final_ln, output = final_norm(trace, layers[-1].out)
    new = EncoderTrace(config=trace.config, params=trace.params, image=trace.image,
                       pixels=trace.pixels, patches=trace.patches, embedded=trace.embedded,
                       pe=trace.pe, tokens=trace.tokens, pos=trace.pos, x0=trace.x0,
                       layers=layers, final_ln=final_ln, output=output)
    return freeze(new)


@dataclass(frozen=True)
class HeadsOffChange:
    """What switching heads off changed, as a page shows it (small: no layer kept)."""

    layer: int  # l, the layer whose heads were switched off (0-based)
    heads_off: tuple[int, ...]  # those heads (0-based, sorted)
    logits: np.ndarray | None  # [n_classes] float32 the new prediction; None without a head
    row_change: np.ndarray  # [S] float64 mean_k |output' − output| of each row
    cls_before: np.ndarray | None  # [h, N] float64 the last layer's [CLS] row over the
    #                                patches (`cls_attention`); None without [CLS]
    cls_after: np.ndarray | None  # [h, N] the same after the rerun (equal when l is the last)


def _rerun_output(trace: EncoderTrace, layer: int,
                  heads_off: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(the new output [S, d], the new last layer's attn [h, S, S]), one layer held at a time."""
    last = collections.deque(rerun_layers(trace, layer, heads_off), maxlen=1)[0]  # the last one
    return final_norm(trace, last.out)[1], last.attn


def heads_off_change(trace: EncoderTrace, layer: int,
                     heads_off: tuple[int, ...]) -> HeadsOffChange:
    """The rerun of `encode_heads_off(trace, layer, heads_off)`, summed up: its logits
    (`predict`), each output row's mean |Δ| (`row_change`), the last layer's [CLS] attention
    before and after. Shapes: see `HeadsOffChange`."""
    cfg, params = trace.config, trace.params
    heads_off = _checked(trace, layer, heads_off)
    output, attn = _rerun_output(trace, layer, heads_off)  # [S, d], [h, S, S]
    logits = (None if params.head is None
              else output_logits(output, params.head, cfg.n_prefix, cfg.ln_eps))
    cls = cfg.cls_token
    return HeadsOffChange(
        layer=layer, heads_off=heads_off, logits=logits,
        row_change=row_change(trace.output, output),
        cls_before=cls_attention(trace.layers[-1].attn, cfg.n_prefix) if cls else None,
        cls_after=cls_attention(attn, cfg.n_prefix) if cls else None)


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
    cfg, head = trace.config, trace.params.head
    if head is None:
        raise ValueError("these weights have no classification head: no logit to move.")

    def logit(output: np.ndarray) -> float:
        return float(output_logits(output, head, cfg.n_prefix, cfg.ln_eps)[target])

    base = logit(trace.output)
    return np.array([logit(_rerun_output(trace, layer, (j,))[0]) - base
                     for j in range(cfg.n_heads)])


def row_change(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    """How much each row moved: mean_k |after[i, k] − before[i, k]|.

    before, after: [S, d] (e.g. two outputs). Returns [S] float64.
    """
    return np.abs(np.asarray(after, np.float64) - np.asarray(before, np.float64)).mean(axis=-1)
