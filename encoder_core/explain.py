"""One number of a product, written out: the terms behind a chosen cell, for the app to show.

These recompute a single entry from its inputs in float64, so the app can print
"x = a₁·b₁ + a₂·b₂ + … = result" next to the value the trace holds. Pure NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DotTerms:
    a: np.ndarray  # [n] the row
    b: np.ndarray  # [n] the column
    products: np.ndarray  # [n] a_k · b_k
    total: float  # Σ_k a_k · b_k
    divisor: float  # the result is total / divisor (1 for a plain product)

    @property
    def result(self) -> float:
        return self.total / self.divisor


def dot_terms(a: np.ndarray, b: np.ndarray, divisor: float = 1.0) -> DotTerms:
    """The terms of (a · b) / divisor. a, b: [n]."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    products = a64 * b64
    return DotTerms(a=a64, b=b64, products=products, total=float(products.sum()),
                    divisor=float(divisor))


@dataclass(frozen=True)
class SoftmaxTerms:
    x: np.ndarray  # [n] the row of scores
    shifted: np.ndarray  # [n] x − max(x)
    exp: np.ndarray  # [n] exp(x − max)
    total: float  # Σ exp
    p: np.ndarray  # [n] exp / Σ exp


def softmax_terms(x: np.ndarray) -> SoftmaxTerms:
    """softmax(x)_j = exp(x_j − max x) / Σ_k exp(x_k − max x), every stage kept. x: [n]."""
    x64 = np.asarray(x, np.float64)
    shifted = x64 - x64.max()
    e = np.exp(shifted)
    return SoftmaxTerms(x=x64, shifted=shifted, exp=e, total=float(e.sum()), p=e / e.sum())


@dataclass(frozen=True)
class LayerNormTerms:
    x: np.ndarray  # [d] one row (position) of the residual sum
    mean: float  # μ = Σ x / d
    var: float  # σ² = Σ (x − μ)² / d
    std: float  # √(σ² + ε)
    normed: np.ndarray  # [d] x̂ = (x − μ) / √(σ² + ε)
    out: np.ndarray  # [d] γ ⊙ x̂ + β


def layer_norm_terms(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                     eps: float) -> LayerNormTerms:
    """The layer-norm arithmetic of one position, in float64. x, gamma, beta: [d]."""
    x64 = np.asarray(x, np.float64)
    mean = float(x64.mean())
    var = float(((x64 - mean) ** 2).mean())
    std = float(np.sqrt(var + eps))
    normed = (x64 - mean) / std
    return LayerNormTerms(x=x64, mean=mean, var=var, std=std, normed=normed,
                          out=np.asarray(gamma, np.float64) * normed + np.asarray(beta,
                                                                                  np.float64))


def largest_terms(products: np.ndarray, k: int = 4) -> np.ndarray:
    """Indices of the k products with the largest magnitude, in index order. [n] -> [≤k]."""
    k = min(k, len(products))
    return np.sort(np.argsort(-np.abs(products))[:k])
