"""Step 3, sub-layer 1 — multi-head self-attention, every intermediate kept.

Q = X·W_Q, K = X·W_K, V = X·W_V; head h uses columns h·d_head:(h+1)·d_head of each.
scores_h = Q_h·K_hᵀ / s, attn_h = softmax(scores_h) row by row, heads_h = attn_h·V_h;
concat = [heads_0 … heads_{h−1}] side by side, attn_out = concat·W_O. No biases (the note
and the paper's formula have none).
"""

from __future__ import annotations

import numpy as np


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """[N, d_model] -> [n_heads, N, d_head]; head h = columns h·d_head:(h+1)·d_head."""
    N, d_model = x.shape
    return np.ascontiguousarray(x.reshape(N, n_heads, d_model // n_heads).transpose(1, 0, 2))


def merge_heads(heads: np.ndarray) -> np.ndarray:
    """[n_heads, N, d_head] -> [N, n_heads·d_head]: the heads side by side (the concat)."""
    n_heads, N, d_head = heads.shape
    return np.ascontiguousarray(heads.transpose(1, 0, 2)).reshape(N, n_heads * d_head)


def attention_scores(q: np.ndarray, k: np.ndarray, scale: float) -> np.ndarray:
    """scores = Q·Kᵀ / scale, per head.  [h, N, d_head] x2 -> [h, N, N]."""
    scores = q @ k.transpose(0, 2, 1)  # [h, N, d_head] @ [h, d_head, N] -> [h, N, N]
    scores *= np.float32(1.0 / scale)
    return scores


def softmax(x: np.ndarray) -> np.ndarray:
    """softmax over the last axis, stable: exp(x − max) / Σ exp(x − max). Same shape as x."""
    e = x - x.max(axis=-1, keepdims=True)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e
