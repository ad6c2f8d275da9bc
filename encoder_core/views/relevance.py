"""Class-specific relevance: which patches a class's logit rests on, from each layer's attention
A [h, T, T] and its gradient ∇A = d logit / d A (`encoder_core.backward`). Two methods
(docs/backward.md has the formulas and the sources):

* "chefer" — Chefer, Gur & Wolf 2021, "Generic Attention-model Explainability for Interpreting
  Bi-Modal and Encoder-Decoder Transformers", Eq. 5–6 for self-attention: R = I; per layer
  (first to last) Ā = mean over heads of (∇A ⊙ A)⁺ (clamped at 0 head by head, then averaged,
  as the paper's E_h((∇A ⊙ A)⁺) and its code's `avg_heads`), R ← R + Ā·R. The map is the [CLS]
  row of R over the patch columns, unscaled.
* "gradient_rollout" — jacobgil/vit-explain's `grad_rollout`, corrected: per layer
  Ā = (mean over heads of A ⊙ ∇A)⁺ (averaged, then clamped, as vit-explain does), the lowest
  weights discarded (`rollout.discard_lowest`: [CLS]→[CLS] kept), a = Ā + I with each row
  divided by its own sum, R = a_L ⋯ a_1, each layer's attention paired with its own gradient;
  the [CLS] row over the patch columns. vit-explain divides by the wrong axis's sums
  (`a / a.sum(dim=-1)` divides column j by row j's sum: its issue #16, as in `rollout.py`) and
  pairs layer l's attention with layer L−1−l's gradient (its backward hooks record the
  gradients last layer first: its issue #6); neither is copied here.

Without a [CLS] token (the note's encoder) the map is the mean over the patch rows (the rows
a mean-pool head reads) instead of the [CLS] row. Only the map's row is carried through the
layers, r ← r + r·Ā or r ← r·a from the last layer down (T² per layer, not T³), which is the
same row of the same product. Computed in the dtype of the trace; float32 out.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..gradients import backward
from ..params import EncoderParams
from ..trace import EncoderTrace
from .rollout import discard_lowest, fuse_heads, rollout_step

Method = Literal["chefer", "gradient_rollout"]
METHODS: tuple[str, ...] = ("chefer", "gradient_rollout")


def chefer_fusion(attn: np.ndarray, d_attn: np.ndarray) -> np.ndarray:
    """Ā = E_h((∇A ⊙ A)⁺): each head's gradient-weighted attention clamped at 0, then the mean
    over heads. attn, d_attn: [h, T, T] -> [T, T], in their dtype."""
    weighted = d_attn * attn  # [h, T, T]
    np.maximum(weighted, 0, out=weighted)
    return weighted.mean(axis=0)


def gradient_rollout_fusion(attn: np.ndarray, d_attn: np.ndarray) -> np.ndarray:
    """Ā = (E_h(A ⊙ ∇A))⁺: the mean over heads, then clamped at 0 (vit-explain's order).
    attn, d_attn: [h, T, T] -> [T, T], in their dtype."""
    return np.maximum((attn * d_attn).mean(axis=0), 0)


def gradient_rollout_step(fused: np.ndarray, discard_ratio: float) -> np.ndarray:
    """a = Ā + I after discarding Ā's lowest weights, each row divided by its own sum (≥ 1: the
    identity's share). [T, T] -> [T, T] in fused's dtype."""
    kept = discard_lowest(fused, discard_ratio).astype(fused.dtype)  # zeros set: exact
    a = kept + np.eye(fused.shape[-1], dtype=fused.dtype)
    return a / a.sum(axis=-1, keepdims=True)  # row i / Σ_j a_ij


def readout_row(n_tokens_total: int, n_prefix: int, has_cls: bool, dtype: np.dtype) -> np.ndarray:
    """The row of R the map reads: e_CLS, or the mean over the patch rows without [CLS]. [T]."""
    r = np.zeros(n_tokens_total, dtype=dtype)
    if has_cls:
        r[0] = 1
    else:
        r[n_prefix:] = 1 / (n_tokens_total - n_prefix)
    return r


def relevance(trace: EncoderTrace, params: EncoderParams, target: int, method: Method,
              discard_ratio: float = 0.0) -> np.ndarray:
    """One value per patch: how much class `target`'s logit rests on it, by `method`.

    Args:
        trace: one image's forward pass (`encode`); params: its weights, with the head.
        target: a class index (its raw logit is differentiated, not the softmax).
        method: "chefer" or "gradient_rollout" (see the module's docstring).
        discard_ratio: gradient_rollout only, in [0, 1]: the share of each layer's fused weights
            set to 0, lowest first (`rollout.discard_lowest`); 0 keeps them all.
    Returns:
        [N] float32, ≥ 0, the prefix tokens left out.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, not {method!r}")
    if method == "chefer" and discard_ratio:
        raise ValueError("discard_ratio belongs to gradient_rollout; chefer discards nothing.")
    cfg = trace.config
    grads = backward(trace, params, target, weights=False)
    attns = [layer.attn for layer in trace.layers]  # per layer [h, T, T]
    d_attns = [layer.attn for layer in grads.layers]
    T, dtype = attns[0].shape[-1], attns[0].dtype
    r = readout_row(T, cfg.n_prefix, cfg.cls_token, dtype)  # [T]
    for attn, d_attn in zip(reversed(attns), reversed(d_attns), strict=True):  # last layer first
        if method == "chefer":
            r = r + r @ chefer_fusion(attn, d_attn)  # rᵀ(I + Ā)
        else:
            r = r @ gradient_rollout_step(gradient_rollout_fusion(attn, d_attn), discard_ratio)
    return r[cfg.n_prefix:].astype(np.float32)  # [N]


def attention_readout(trace: EncoderTrace) -> tuple[np.ndarray, np.ndarray]:
    """The maps a class's relevance is shown beside, read through the same row (`readout_row`:
    the [CLS] row, or the mean of the patch rows): the last layer's attention, the heads'
    mean; and the attention rollout of every layer (`rollout.rollout_step`: the heads' mean,
    nothing discarded, ½(Ā + I) rows renormalised), carried as one row from the last layer
    down (T² a layer). Neither depends on the class. ([N], [N]) float64, the prefix left out."""
    cfg = trace.config
    attns = [layer.attn for layer in trace.layers]  # per layer [h, T, T]
    r = readout_row(attns[0].shape[-1], cfg.n_prefix, cfg.cls_token, np.dtype(np.float64))
    last = r @ fuse_heads(attns[-1], "mean")  # [T]
    rolled = r
    for attn in reversed(attns):
        rolled = rolled @ rollout_step(fuse_heads(attn, "mean"))
    return last[cfg.n_prefix:], rolled[cfg.n_prefix:]
