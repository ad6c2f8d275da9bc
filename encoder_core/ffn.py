"""Step 3, sub-layer 3 (the paper's; off in the note's day 01): the position-wise FFN."""

from __future__ import annotations

import numpy as np


def relu(x: np.ndarray) -> np.ndarray:
    """max(0, x), element-wise, as a new array (x is left as it was)."""
    return np.maximum(x, 0)


def feed_forward(
    x: np.ndarray, W_1: np.ndarray, b_1: np.ndarray, W_2: np.ndarray, b_2: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """FFN(x) = max(0, x·W_1 + b_1)·W_2 + b_2, the same for every position.

    Args:
        x: [..., N, d_model]; W_1: [d_model, d_ff]; b_1: [d_ff]; W_2: [d_ff, d_model];
        b_2: [d_model]
    Returns:
        (hidden [..., N, d_ff] after the ReLU, out [..., N, d_model])
    """
    hidden = x @ W_1  # [..., N, d_model] @ [d_model, d_ff] -> [..., N, d_ff]
    hidden += b_1  # in place, here and below: hidden and out are this function's own arrays
    np.maximum(hidden, 0, out=hidden)  # relu(hidden) without a second [..., N, d_ff] array
    out = hidden @ W_2  # [..., N, d_ff] @ [d_ff, d_model] -> [..., N, d_model]
    out += b_2
    return hidden, out
