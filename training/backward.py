"""The encoder + classifier on a batch, forward and hand-written backward, in NumPy.

The forward *is* `encoder_core`'s: `patchify`, `embed`, `positional_encoding`, `encoder_layer`
and the head's `mean_pool`, `linear_head` (`encoder_core.pipeline.head`), called on a leading
batch axis B. It keeps
each layer's input and LayerTrace, which hold everything the backward needs. The backward is
written out here, one formula per step, and uses the core's `split_heads` / `merge_heads`.
The dtype follows the inputs: float32 for training, float64 for the gradient check.

Parameters live in one flat dict `theta` of writable arrays (`training.model`).
N = n_tokens, d = d_model, h = n_heads, d_h = d_head, K = n_classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from encoder_core import (
    EncoderConfig,
    LayerTrace,
    embed,
    encoder_layer,
    merge_heads,
    patchify,
    positional_encoding,
    split_heads,
)
from encoder_core.pipeline.head import linear_head, mean_pool

from .model import (  # noqa: F401 (re-exported: the old path's callers)
    LAYER_FIELDS,
    cross_entropy,
    layer_params,
    params_from,
    theta_from,
)

# --- small helpers of the backward --------------------------------------------------------

def linear_grad(x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """dW of y = x·W summed over every leading axis: xᵀ·dy. [..., a], [..., b] -> [a, b]."""
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


def layer_norm_backward(dy: np.ndarray, normed: np.ndarray, var: np.ndarray,
                        gamma: np.ndarray, eps: float,
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward of y = γ ⊙ x̂ + β, x̂ = (x − μ) / √(σ² + ε), per row.

    dx = (dx̂ − mean(dx̂) − x̂ · mean(dx̂ ⊙ x̂)) / √(σ² + ε),  dx̂ = dy ⊙ γ.
    Args:
        dy, normed: [B, N, d]; var: [B, N]; gamma: [d]
    Returns:
        (dx [B, N, d], dγ [d], dβ [d])
    """
    d_gamma = (dy * normed).sum(axis=(0, 1))  # [d]
    d_beta = dy.sum(axis=(0, 1))  # [d]
    d_normed = dy * gamma  # [B, N, d]
    rstd = 1.0 / np.sqrt(var + eps)  # [B, N]
    dx = d_normed - d_normed.mean(axis=-1, keepdims=True)
    dx -= normed * (d_normed * normed).mean(axis=-1, keepdims=True)
    dx *= rstd[..., None]
    return dx, d_gamma, d_beta


# --- forward --------------------------------------------------------------------------------

@dataclass
class Cache:
    patches: np.ndarray  # [B, N, P·P·C]
    inputs: list[np.ndarray]  # per layer, its input x [B, N, d] (x0, then the last layer's out)
    layers: list[LayerTrace]  # per layer, `encoder_layer`'s trace, every field with a leading B
    pooled: np.ndarray  # [B, d] mean of the encoder output over tokens


def forward(images: np.ndarray, theta: dict[str, np.ndarray],
            cfg: EncoderConfig) -> tuple[np.ndarray, Cache]:
    """Encoder + head on a batch, with the core's functions: `encode` + `predict` per image.

    Args:
        images: [B, S, S, C] in [0, 1], the dtype of the computation (float32 or float64).
        theta: the parameters (same dtype).
    Returns:
        (logits [B, K], the cache for `backward`)
    """
    if not cfg.use_ffn or not cfg.use_pe:
        raise ValueError("training covers the full encoder: use_ffn and use_pe must be on.")
    patches = patchify(images, cfg.patch_size)  # [B, S, S, C] -> [B, N, P·P·C]
    pe = positional_encoding(cfg.n_tokens, cfg.d_model, images.dtype.type)  # [N, d]
    x = embed(patches, theta["W_E"]) + pe  # [B, N, P·P·C] @ [P·P·C, d] -> [B, N, d]
    inputs, layers = [], []
    for l in range(cfg.n_layers):
        layer = encoder_layer(x, layer_params(theta, l), cfg)  # every field [B, …]
        inputs.append(x)
        layers.append(layer)
        x = layer.out  # [B, N, d]
    pooled = mean_pool(x)  # [B, N, d] -> [B, d]
    logits = linear_head(pooled, theta["W_cls"], theta["b_cls"])  # [B, d] -> [B, K]
    return logits, Cache(patches=patches, inputs=inputs, layers=layers, pooled=pooled)


# --- backward -------------------------------------------------------------------------------

def layer_backward(dy: np.ndarray, x: np.ndarray, c: LayerTrace, theta: dict[str, np.ndarray],
                   l: int, cfg: EncoderConfig, grads: dict[str, np.ndarray]) -> np.ndarray:
    """Backward of one layer: fills grads[`layer{l}/…`], returns d loss / d x [B, N, d].

    Args:
        dy: d loss / d (the layer's out) [B, N, d]; x: the layer's input [B, N, d];
        c: its forward trace (`encoder_layer` on the batch).
    """
    p = {name: theta[f"layer{l}/{name}"] for name in LAYER_FIELDS}
    g = f"layer{l}/"
    eps = cfg.ln_eps
    # ln_2 = LayerNorm(ln_1.out + FFN(ln_1.out))
    d_resid_2, grads[g + "gamma_2"], grads[g + "beta_2"] = layer_norm_backward(
        dy, c.ln_2.normed, c.ln_2.var, p["gamma_2"], eps)  # [B, N, d]
    # FFN: out = max(0, x·W_1 + b_1)·W_2 + b_2
    grads[g + "W_2"] = linear_grad(c.ffn_hidden, d_resid_2)  # [d_ff, d]
    grads[g + "b_2"] = d_resid_2.sum(axis=(0, 1))  # [d]
    d_hidden = d_resid_2 @ p["W_2"].T  # [B, N, d] @ [d, d_ff] -> [B, N, d_ff]
    d_hidden *= c.ffn_hidden > 0  # ReLU
    grads[g + "W_1"] = linear_grad(c.ln_1.out, d_hidden)  # [d, d_ff]
    grads[g + "b_1"] = d_hidden.sum(axis=(0, 1))  # [d_ff]
    d_ln_1 = d_resid_2 + d_hidden @ p["W_1"].T  # residual + FFN path, [B, N, d]
    # ln_1 = LayerNorm(x + concat·W_O)
    d_resid_1, grads[g + "gamma_1"], grads[g + "beta_1"] = layer_norm_backward(
        d_ln_1, c.ln_1.normed, c.ln_1.var, p["gamma_1"], eps)  # [B, N, d]
    grads[g + "W_O"] = linear_grad(c.concat, d_resid_1)  # [d, d]
    d_heads = split_heads(d_resid_1 @ p["W_O"].T, cfg.n_heads)  # [B, h, N, d_h]
    # heads = attn·V
    d_attn = d_heads @ c.v.transpose(0, 1, 3, 2)  # [B, h, N, d_h] @ [B, h, d_h, N] -> [.., N, N]
    d_v = c.attn.transpose(0, 1, 3, 2) @ d_heads  # [B, h, N, N] @ [B, h, N, d_h] -> [.., d_h]
    # attn = softmax(scores): d_scores = attn ⊙ (d_attn − Σ_j d_attn ⊙ attn)
    d_attn -= (d_attn * c.attn).sum(axis=-1, keepdims=True)
    d_scores = d_attn
    d_scores *= c.attn
    d_scores *= dy.dtype.type(1.0 / cfg.score_scale)  # scores = Q·Kᵀ / s
    d_q = d_scores @ c.k  # [B, h, N, N] @ [B, h, N, d_h] -> [B, h, N, d_h]
    d_k = d_scores.transpose(0, 1, 3, 2) @ c.q  # [B, h, N, d_h]
    dx = d_resid_1.copy()  # the residual path
    for name, d_proj in (("W_Q", d_q), ("W_K", d_k), ("W_V", d_v)):
        d_proj = merge_heads(d_proj)  # [B, N, d]
        grads[g + name] = linear_grad(x, d_proj)  # [d, d]
        dx += d_proj @ p[name].T  # [B, N, d]
    return dx


def backward(dlogits: np.ndarray, cache: Cache, theta: dict[str, np.ndarray],
             cfg: EncoderConfig) -> dict[str, np.ndarray]:
    """d loss / d θ for every parameter, given d loss / d logits [B, K]. Keys as `theta`."""
    grads: dict[str, np.ndarray] = {}
    B, N = cache.patches.shape[:2]
    grads["W_cls"] = cache.pooled.T @ dlogits  # [d, B] @ [B, K] -> [d, K]
    grads["b_cls"] = dlogits.sum(axis=0)  # [K]
    d_pooled = dlogits @ theta["W_cls"].T  # [B, d]
    dy = np.broadcast_to(d_pooled[:, None, :] / N, (B, N, d_pooled.shape[-1]))  # mean pool
    for l in reversed(range(cfg.n_layers)):
        dy = layer_backward(dy, cache.inputs[l], cache.layers[l], theta, l, cfg, grads)
    grads["W_E"] = linear_grad(cache.patches, dy)  # PE is a constant: [P·P·C, d]
    return grads
