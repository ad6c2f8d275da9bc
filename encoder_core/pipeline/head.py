"""After the encoder — the classification head: the model's prediction.

The output rows are pooled as the model's family does, then one linear layer gives the logits:

    pooled = output[0]                                    token       (timm, HF ViT, torchvision)
           = mean(output[n_prefix:])                      avg         (timm global_pool="avg")
           = [output[0] ‖ mean(output[n_prefix:])]        token_avg   (HF DINOv2, 2·d wide)
    pooled = LN(pooled)                                   with fc_norm (timm, avg pool)
    pooled = tanh(pooled · W_pre + b_pre)                 with pre-logits (torchvision, Google)
    logits = pooled · W_head + b_head                                       [n_classes]

DeiT distilled (token_dist) has two heads, on the [CLS] and on the [DIST] row, and at
evaluation predicts their mean: logits = ½(out[0]·W_head + b_head + out[1]·W_dist + b_dist).
The heads' rows: `head_rows` ([k, d_in], k = 2 for DeiT distilled, else 1).
"""

from __future__ import annotations

import numpy as np

from ..params import EncoderParams, HeadParams, ParamsError
from ..trace import EncoderTrace
from .attention import softmax
from .norm import layer_norm


def mean_pool(x: np.ndarray) -> np.ndarray:
    """pooled = (1/N) Σ_pos x_pos, the mean over rows. [..., N, d] -> [..., d]."""
    return x.mean(axis=-2)


def linear_head(pooled: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """logits = pooled · W + b. [..., d_in] -> [..., n_classes]."""
    return pooled @ W + b  # [..., d_in] @ [d_in, n_classes] -> [..., n_classes]


def pooled_rows(output: np.ndarray, pool: str, n_prefix: int) -> np.ndarray:
    """The rows a head reads from the encoder's output, before fc_norm / pre-logits.

    Args:
        output: [..., S, d] the encoder's output; n_prefix: rows before the patches.
    Returns:
        [..., k, d_pool]: k = 2 for token_dist ([CLS], [DIST]), else 1; d_pool = 2·d for
        token_avg, else d.
    """
    if pool == "token":
        return output[..., 0:1, :]  # [..., 1, d]
    if pool == "token_dist":
        return output[..., 0:2, :]  # [..., 2, d]
    patches = mean_pool(output[..., n_prefix:, :])[..., None, :]  # [..., 1, d]
    if pool == "avg":
        return patches
    if pool == "token_avg":
        return np.concatenate([output[..., 0:1, :], patches], axis=-1)  # [..., 1, 2d]
    raise ParamsError(f"unknown head pooling {pool!r}")


def head_rows(output: np.ndarray, head: HeadParams, n_prefix: int, eps: float) -> np.ndarray:
    """What the last linear layer reads: pooled rows, then fc_norm, then tanh pre-logits.

    output: [..., S, d]. Returns [..., k, d_in] (k = 2 for DeiT distilled, else 1).
    """
    x = pooled_rows(output, head.pool, n_prefix)  # [..., k, d_pool]
    if head.fc_norm_gamma is not None:
        x = layer_norm(x, head.fc_norm_gamma, head.fc_norm_beta, eps).out
    if head.W_pre is not None:
        x = np.tanh(linear_head(x, head.W_pre, head.b_pre))  # [..., k, d_pool] -> [..., k, d_rep]
    return x


def head_logits(rows: np.ndarray, head: HeadParams) -> np.ndarray:
    """Each head on its row: rows [..., k, d_in] -> [..., k, n_classes] (row 1: W_dist)."""
    if head.pool == "token_dist":
        return np.stack([linear_head(rows[..., 0, :], head.W_head, head.b_head),
                         linear_head(rows[..., 1, :], head.W_dist, head.b_dist)], axis=-2)
    return linear_head(rows, head.W_head, head.b_head)


def predict(trace: EncoderTrace, params: EncoderParams) -> np.ndarray:
    """The model's prediction: the logits of its classification head on this pass.

    logits = mean over the head rows k of (head_rows · W + b) — one row but for DeiT distilled.
    Args:
        trace: one encoder pass (`encode`), or a batch's (`encode_batch`); params: its weights,
            with `params.head`.
    Returns:
        [n_classes] float32 logits (softmax gives the probabilities); [B, n_classes] in the
        trace's dtype for a batch.
    Raises:
        ParamsError when the weights have no classification head.
    """
    head = params.head
    if head is None:
        raise ParamsError("these weights have no classification head: nothing to predict.")
    cfg = trace.config
    return output_logits(trace.output, head, cfg.n_prefix, cfg.ln_eps)


def output_logits(output: np.ndarray, head: HeadParams, n_prefix: int, eps: float) -> np.ndarray:
    """`predict` on an encoder output: mean over the head rows k of (head_rows · W + b).

    output: [..., S, d]; n_prefix, eps: the config's. Returns [..., n_classes] in output's
    dtype (float32 from `encode`).
    """
    rows = head_rows(output, head, n_prefix, eps)  # [..., k, d_in]
    logits = head_logits(rows, head).mean(axis=-2)  # [..., k, n] -> [..., n]
    return logits.astype(output.dtype, copy=False)


def top_classes(logits: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The k most probable classes: (indices [k], probabilities [k]), most probable first
    (ties: the lower index first). probabilities = softmax(logits)[indices]."""
    probs = softmax(np.asarray(logits, np.float64))  # [n]
    order = np.argsort(-probs, kind="stable")[:k]
    return order, probs[order]
