"""Step 3, sub-layer 1 — multi-head self-attention, every intermediate kept.

Q = X·W_Q, K = X·W_K, V = X·W_V; head h uses columns h·d_head:(h+1)·d_head of each.
scores_h = Q_h·K_hᵀ / s, attn_h = softmax(scores_h) row by row, heads_h = attn_h·V_h;
concat = [heads_0 … heads_{h−1}] side by side, attn_out = concat·W_O: `multi_head_attention`
does it all, with every intermediate. The note and the paper's formula have no biases; a ViT's
b_Q, b_K, b_V, b_O are added where its weights have them (`linear`). Heads switched off:
their slices of the concat are set to 0 before W_O (`zero_heads`), so attn_out is
the other heads' concat_h·W_O[h] summed, + b_O.

Every function takes optional leading batch axes `...` (one image: none; the trainer: [B]),
keeps the dtype of its input and never writes to its arguments.
"""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig
from ..params import LayerParams


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """Cut the columns into heads: head h = columns h·d_head:(h+1)·d_head.

    Args:
        x: [..., N, d_model], d_model a multiple of n_heads.
        n_heads: h.
    Returns:
        [..., n_heads, N, d_head], C-contiguous.
    """
    *lead, N, d_model = x.shape
    x = x.reshape(*lead, N, n_heads, d_model // n_heads)  # [..., N, d] -> [..., N, h, d_head]
    return np.ascontiguousarray(np.swapaxes(x, -3, -2))  # -> [..., h, N, d_head]


def merge_heads(heads: np.ndarray) -> np.ndarray:
    """The heads side by side (the concat), the inverse of `split_heads`.

    Args:
        heads: [..., n_heads, N, d_head]
    Returns:
        [..., N, n_heads·d_head]
    """
    *lead, n_heads, N, d_head = heads.shape
    side_by_side = np.ascontiguousarray(np.swapaxes(heads, -3, -2))  # -> [..., N, h, d_head]
    return side_by_side.reshape(*lead, N, n_heads * d_head)  # -> [..., N, h·d_head]


def zero_heads(concat: np.ndarray, heads_off: tuple[int, ...], n_heads: int) -> np.ndarray:
    """The concat with the heads `heads_off` switched off: concat[..., h·d_head:(h+1)·d_head] = 0
    for each h in heads_off (the others as they are).

    Args:
        concat: [..., N, d_model] the heads side by side (`merge_heads`).
        heads_off: 0-based heads, each in 0 … n_heads − 1 (ValueError otherwise).
        n_heads: h.
    Returns:
        [..., N, d_model], a new array.
    """
    bad = [j for j in heads_off if not 0 <= j < n_heads]
    if bad:
        raise ValueError(f"heads {bad} do not exist: there are {n_heads} (0 … {n_heads - 1}).")
    d_head = concat.shape[-1] // n_heads
    out = concat.copy()
    for j in heads_off:
        out[..., j * d_head:(j + 1) * d_head] = 0
    return out


def attention_scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """scores = Q·Kᵀ / scale, per head.

    Args:
        q, k: [..., h, N, d_head]
        scale: the divisor s (√d_head, √d_model or 1).
    Returns:
        [..., h, N, N] in the dtype of q and k.
    """
    scores = q @ np.swapaxes(k, -1, -2)  # [..., h, N, d_head] @ [..., h, d_head, N] -> [.., N, N]
    scores *= 1.0 / scale  # in place on the product made above; a Python float keeps the dtype
    return scores


def softmax(x: np.ndarray) -> np.ndarray:
    """softmax over the last axis, stable: exp(x − max) / Σ exp(x − max). Same shape as x.

    A new array; x is left as it was.
    """
    e = x - x.max(axis=-1, keepdims=True)  # a new array, so the in-place steps below are ours
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e


def linear(x: np.ndarray, W: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x·W (+ b). x: [..., in]; W: [in, out]; b: [out] or None. Returns [..., out], a new array."""
    y = x @ W  # [..., in] @ [in, out] -> [..., out]
    if b is not None:
        y += b  # in place on the product made above
    return y


def multi_head_attention(x: np.ndarray, p: LayerParams, cfg: EncoderConfig,
                         heads_off: tuple[int, ...] = ()) -> dict[str, np.ndarray]:
    """Multi-head self-attention with every intermediate, by LayerTrace field name.

    Args:
        x: [..., S, d_model] (post-norm: the layer's input; pre-norm: ln_1.out).
        heads_off: heads switched off: their slices of the concat are 0 before W_O
            (`zero_heads`); their q … heads are kept as computed. () for the model itself.
    Returns:
        q, k, v, heads [..., h, S, d_head]; scores, attn [..., h, S, S]; concat (what W_O
        reads, with the heads switched off at 0), attn_out [..., S, d_model].
    """
    h = cfg.n_heads
    q = split_heads(linear(x, p.W_Q, p.b_Q), h)  # [..., S, d] -> [..., h, S, d_head]
    k = split_heads(linear(x, p.W_K, p.b_K), h)
    v = split_heads(linear(x, p.W_V, p.b_V), h)
    scores = attention_scores(q, k, cfg.score_scale)  # [..., h, S, d_head] x2 -> [..., h, S, S]
    attn = softmax(scores)  # [..., h, S, S], rows sum to 1
    heads = attn @ v  # [..., h, S, S] @ [..., h, S, d_head] -> [..., h, S, d_head]
    concat = merge_heads(heads)  # [..., h, S, d_head] -> [..., S, d]
    if heads_off:
        concat = zero_heads(concat, heads_off, h)  # [..., S, d], those heads' columns 0
    attn_out = linear(concat, p.W_O, p.b_O)  # [..., S, d] @ [d, d] -> [..., S, d]
    return dict(q=q, k=k, v=v, scores=scores, attn=attn, heads=heads, concat=concat,
                attn_out=attn_out)
