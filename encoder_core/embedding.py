"""Step 1b — the input embedding: a linear projection of each flattened patch, and the tokens
a ViT puts before the patches ([CLS], DeiT's distillation token, DINOv2's registers)."""

from __future__ import annotations

import numpy as np


def embed(patches: np.ndarray, W_E: np.ndarray, b_E: np.ndarray | None = None) -> np.ndarray:
    """embedded = patches · W_E (+ b_E)  (no bias and no √d_model factor in the note; a ViT's
    patch embedding is a P × P stride-P convolution with a bias, the same map).

    Args:
        patches: [..., N, P·P·C] (leading batch axes allowed)
        W_E: [P·P·C, d_model]; b_E: [d_model] or None (no bias)
    Returns:
        [..., N, d_model]
    """
    embedded = patches @ W_E  # [..., N, P·P·C] @ [P·P·C, d_model] -> [..., N, d_model]
    if b_E is not None:
        embedded += b_E  # in place on the product made above
    return embedded


def prefix_tokens(cls: np.ndarray | None, dist: np.ndarray | None,
                  registers: np.ndarray | None, d_model: int) -> np.ndarray:
    """The learned rows before the patches, in ViT's order: [cls, dist, registers…].

    Args:
        cls: [1, d_model] or None; dist: [1, d_model] or None; registers: [R, d_model] or None.
    Returns:
        [n_prefix, d_model] float32 (n_prefix = 0 when all are None), a new array.
    """
    rows = [np.asarray(t, dtype=np.float32) for t in (cls, dist, registers) if t is not None]
    if not rows:
        return np.zeros((0, d_model), dtype=np.float32)
    return np.concatenate(rows, axis=0)  # [1 + 1 + R, d_model]
