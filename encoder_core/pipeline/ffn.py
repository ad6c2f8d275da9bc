"""Step 3, sub-layer 3 (the paper's; off in the note's day 01): the position-wise FFN.

FFN(x) = act(x·W_1 + b_1)·W_2 + b_2 with act = ReLU (the paper, the default), GELU (ViT:
the exact erf form) or GELU's tanh approximation (some Hugging Face checkpoints).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

# erfc(z) for z ≥ 0 (Numerical Recipes in C, 2nd ed., §6.2, `erfcc`): a Chebyshev fit with
# fractional error below 1.2e-7 everywhere, so GELU is accurate in relative terms in its tiny
# negative tail too (Abramowitz & Stegun 7.1.26 is 1.5e-7 absolute but a few % relative there).
ERFC_T = 0.5  # t = 1 / (1 + ERFC_T·z)
ERFC_C = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807,
          -1.13520398, 1.48851587, -0.82215223, 0.17087277)  # c_0 … c_9 of the exponent
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_TANH_C = 0.044715


def relu(x: np.ndarray) -> np.ndarray:
    """max(0, x), element-wise, as a new array (x is left as it was)."""
    return np.maximum(x, 0)


def erfc_positive(z: np.ndarray) -> np.ndarray:
    """erfc(z) = 1 − erf(z) for z ≥ 0: t·exp(−z² + c_0 + c_1·t + … + c_9·t⁹), t = 1/(1 + z/2).

    Fractional error < 1.2e-7 (float64 evaluation). Shape and dtype of z; a new array.
    """
    dtype = z.dtype.type
    t = z * dtype(ERFC_T)
    t += 1
    np.reciprocal(t, out=t)  # t = 1 / (1 + z/2)
    exponent = t * dtype(ERFC_C[9])  # Horner: c_0 + t·(c_1 + t·(… + t·c_9))
    for c in ERFC_C[8:0:-1]:
        exponent += dtype(c)
        exponent *= t
    exponent += dtype(ERFC_C[0])
    exponent -= z * z
    np.exp(exponent, out=exponent)
    exponent *= t
    return exponent


def gelu(x: np.ndarray) -> np.ndarray:
    """GELU(x) = x·Φ(x) = ½·x·(1 + erf(x/√2)), the exact (erf) form of timm and BERT.

    Written as max(x, 0) − ½·|x|·erfc(|x|/√2), which is the same for both signs and never
    subtracts two nearly equal numbers (the tail x ≪ 0 keeps its relative accuracy).
    Shape and dtype of x; a new array.
    """
    ax = np.abs(x)  # [...] |x|
    tail = erfc_positive(ax * x.dtype.type(1 / math.sqrt(2.0)))  # erfc(|x|/√2)
    tail *= ax
    tail *= x.dtype.type(0.5)  # ½·|x|·erfc(|x|/√2)
    out = np.maximum(x, 0)
    out -= tail
    return out


def gelu_tanh(x: np.ndarray) -> np.ndarray:
    """GELU's tanh approximation: ½·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).

    (`gelu_new` / `gelu_pytorch_tanh` in Hugging Face.) Shape and dtype of x; a new array.
    """
    dtype = x.dtype.type
    inner = x * x
    inner *= x  # x³ (x*x*x: x**3 is far slower on float32)
    inner *= dtype(GELU_TANH_C)
    inner += x
    inner *= dtype(SQRT_2_OVER_PI)
    np.tanh(inner, out=inner)
    inner += 1
    inner *= x
    inner *= dtype(0.5)
    return inner


ACTIVATIONS = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh}
CHUNK = 65_536  # values per piece in `_apply_in_place`: 256 kB of float32, stays in the cache


def _apply_in_place(fn: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
                    chunk: int = CHUNK) -> np.ndarray:
    """x[:] = fn(x), piece by piece over the flattened array; returns x.

    The same values as fn(x), about twice as fast for GELU (≈ 25 passes over its input) on these
    machines, because each piece stays in the cache across the passes. fn must be element-wise.
    x: any shape, C-contiguous and owned by the caller (it is overwritten; private for that:
    every public core function leaves its arguments alone).
    """
    flat = x.reshape(-1)  # a view: x is C-contiguous
    for start in range(0, flat.size, chunk):
        piece = flat[start:start + chunk]
        piece[...] = fn(piece)
    return x


def feed_forward(
    x: np.ndarray, W_1: np.ndarray, b_1: np.ndarray, W_2: np.ndarray, b_2: np.ndarray,
    activation: str = "relu",
) -> tuple[np.ndarray, np.ndarray]:
    """FFN(x) = act(x·W_1 + b_1)·W_2 + b_2, the same for every position (act: ReLU by default).

    Args:
        x: [..., N, d_model]; W_1: [d_model, d_ff]; b_1: [d_ff]; W_2: [d_ff, d_model];
        b_2: [d_model]; activation: "relu", "gelu" (exact erf) or "gelu_tanh".
    Returns:
        (hidden [..., N, d_ff] after the activation, out [..., N, d_model])
    """
    hidden = x @ W_1  # [..., N, d_model] @ [d_model, d_ff] -> [..., N, d_ff]
    hidden += b_1  # in place, here and below: hidden and out are this function's own arrays
    if activation == "relu":
        np.maximum(hidden, 0, out=hidden)  # relu(hidden) without a second [..., N, d_ff] array
    elif activation in ACTIVATIONS:
        _apply_in_place(ACTIVATIONS[activation], hidden)  # hidden is ours
    else:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, "
                         f"got {activation!r}.")
    out = hidden @ W_2  # [..., N, d_ff] @ [d_ff, d_model] -> [..., N, d_model]
    out += b_2
    return hidden, out
