"""Patch similarity: how alike two patches' features are, as the cosine of their rows.

On the patch rows X [N, d] of one layer's output (or of the encoder's output, after the final
norm), the prefix tokens ([CLS], [DIST], registers) left out:

    u_i = x_i / ‖x_i‖₂        (a row of zeros stays zeros: its cosine with every row is 0)
    cos(x_i, x_j) = u_i · u_j ∈ [−1, 1]

`unit_rows` gives U [N, d] (float32, normalised in float64 first); `cosine_map(U, i)` one
patch's row of cosines [N]. The explorer carries U as float16 and takes the same dot products
in the browser on every hover; the server draws `cosine_map` when U is too big to send.
"""

from __future__ import annotations

import numpy as np

from ..trace import EncoderTrace
from .pca import layer_features  # the same rows as the PCA's: one definition


def unit_rows(trace: EncoderTrace, layer: int | None = None) -> np.ndarray:
    """The patch rows of `layer` (`layer_features`: trace.output, after the final norm when
    there is one, for None; else that layer's output, 0-based; the prefix rows left out), each
    divided by its L2 norm:
    u_i = x_i / ‖x_i‖₂ (zero rows kept zero). Returns [N, d] float32, read-only."""
    X = np.asarray(layer_features(trace, layer), dtype=np.float64)  # [N, d]
    norms = np.linalg.norm(X, axis=1, keepdims=True)  # [N, 1]
    unit = (X / np.where(norms > 0, norms, 1.0)).astype(np.float32)  # [N, d]
    unit.flags.writeable = False
    return unit


def cosine_map(unit: np.ndarray, i: int) -> np.ndarray:
    """cos(x_i, x_j) = u_i · u_j for every patch j, clipped to [−1, 1] (rounding).
    Args: unit [N, d] unit rows (`unit_rows`); i the pointed patch. Returns [N] float32."""
    unit = np.asarray(unit, dtype=np.float32)
    if not 0 <= i < unit.shape[0]:
        raise IndexError(f"patch {i} is not one of the {unit.shape[0]} patches")
    return np.clip(unit @ unit[i], -1.0, 1.0)  # [N, d] @ [d] -> [N]
