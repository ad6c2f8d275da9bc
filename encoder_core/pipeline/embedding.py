"""Step 1b — the input embedding: a linear projection of each flattened patch, and the tokens
a ViT puts before the patches ([CLS], DeiT's distillation token, DINOv2's registers)."""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig


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


def prefix_names(cfg: EncoderConfig) -> list[str]:
    """Names of the rows before the patches, in their order: ["CLS", "DIST", "REG1", …]
    ([] for the note's encoder); row n_prefix + i of every per-token array is patch i."""
    return (["CLS"] * cfg.cls_token + ["DIST"] * cfg.dist_token
            + [f"REG{r + 1}" for r in range(cfg.n_registers)])


def token_names(cfg: EncoderConfig) -> list[str]:
    """A name for each of the seq_len rows: the prefix names, then the patch numbers."""
    return prefix_names(cfg) + [str(i) for i in range(cfg.n_tokens)]


def patch_rows(a: np.ndarray, cfg: EncoderConfig, axis: int = -1) -> np.ndarray:
    """The patches' part of a per-token axis (the prefix rows left out): a view.

    [..., seq_len, ...] -> [..., N, ...] along `axis`; the note's encoder: `a` itself.
    """
    index = [slice(None)] * a.ndim
    index[axis] = slice(cfg.n_prefix, None)
    return a[tuple(index)]
