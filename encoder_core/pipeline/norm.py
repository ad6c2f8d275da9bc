"""Step 3, sub-layer 2 — Add & Norm: the residual sum, then layer normalisation per position."""

from __future__ import annotations

import numpy as np

from ..trace import LayerNormTrace


def layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> LayerNormTrace:
    """LayerNorm(x) = γ ⊙ (x − μ) / √(σ² + ε) + β, each row (position) on its own.

    Args:
        x: [..., N, d_model] (the residual sum; leading batch axes are allowed)
        gamma, beta: [d_model]
        eps: ε, inside the square root
    Returns:
        LayerNormTrace with mean [..., N], var [..., N], normed [..., N, d_model],
        out [..., N, d_model], in the dtype of x (with float32 γ, β: float64 x stays float64).
    """
    mean = x.mean(axis=-1)  # [..., N, d_model] -> [..., N]
    centred = x - mean[..., None]  # [..., N, d_model]
    var = np.mean(centred * centred, axis=-1)  # [..., N, d_model] -> [..., N]
    normed = centred  # the same array: scaled in place (centred is not kept)
    normed *= (1.0 / np.sqrt(var + eps))[..., None]  # [..., N, d_model]
    out = normed * gamma  # [..., N, d_model]
    out += beta  # in place on the product: one array fewer, the same values
    return LayerNormTrace(mean=mean, var=var, normed=normed, out=out)
