"""Step 2 — the sinusoidal positional encoding of the note (and the 2017 paper)."""

from __future__ import annotations

import numpy as np


def positional_encoding(n_tokens: int, d_model: int,
                        dtype: type[np.floating] = np.float32) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).

    pos = 0 … n_tokens−1 is the patch number (row-major); i = 0 … d_model/2 − 1.
    Computed in float64, then cast to `dtype` (float32 for the encoder, float64 for the
    trainer's gradient check).

    Returns:
        [n_tokens, d_model] of `dtype`
    """
    pos = np.arange(n_tokens, dtype=np.float64)[:, None]  # [N, 1]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)[None, :]  # [1, d_model/2]
    angle = pos / np.power(10000.0, two_i / d_model)  # [N, d_model/2]
    pe = np.empty((n_tokens, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe.astype(dtype, copy=False)
