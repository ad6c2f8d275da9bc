"""Step 1b — the input embedding: a linear projection of each flattened patch."""

from __future__ import annotations

import numpy as np


def embed(patches: np.ndarray, W_E: np.ndarray) -> np.ndarray:
    """embedded = patches · W_E  (no bias and no √d_model factor, as in the note and ViT).

    Args:
        patches: [..., N, P·P·C] (leading batch axes allowed)
        W_E: [P·P·C, d_model]
    Returns:
        [..., N, d_model]
    """
    return patches @ W_E  # [..., N, P·P·C] @ [P·P·C, d_model] -> [..., N, d_model]
