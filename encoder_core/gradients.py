"""The backward pass: the gradient of one logit (or of a loss) with respect to every
intermediate of a trace and every weight, read from the trace alone (docs/backward.md).

`backward(trace, params, target)` walks the forward of pipeline/ in reverse, one formula per
step, and returns the gradients in the trace's own shape: an `EncoderTrace` whose every field
holds d target / d (that field) — `grads.layers[l].attn` [h, S, S], `grads.x0` [S, d], … —
and whose `params` holds d target / d (every weight) as an `EncoderParams` (its `head` a
`HeadParams`). Nothing of the forward is run again but two cheap pieces the trace does not
keep: GELU's input x·W_1 + b_1 (the trace keeps ffn_hidden after the activation: one product
per layer, for that layer only; ReLU's mask is read off ffn_hidden itself) and the head's few
rows (pooled, fc_norm, pre-logits: k rows of d values).

The reverse of each step, with dY the gradient of its output (⊙ element-wise, ᵀ over the last
two axes, Σ over the leading axes for a weight):

    Y = X·W + b            dX = dY·Wᵀ,  dW = Xᵀ·dY,  db = Σ dY
    A = softmax(Z)         dZ = A ⊙ (dA − rowsum(dA ⊙ A))
    Z = Q·Kᵀ / s           dQ = dZ·K / s,  dK = dZᵀ·Q / s
    H = A·V                dA = dH·Vᵀ,  dV = Aᵀ·dH
    y = γ ⊙ x̂ + β          dx̂ = dy ⊙ γ;  dσ² = −½ (σ² + ε)^(−3/2) Σ_j dx̂_j (x_j − μ);
    x̂ = (x − μ)/√(σ² + ε)  dμ = −Σ_j dx̂_j / √(σ² + ε);
                           dx = dx̂ / √(σ² + ε) + (2/d) dσ² (x − μ) + dμ / d
    h = act(z)             dz = dh ⊙ act'(z): ReLU 1[h > 0]; GELU Φ(z) + z·φ(z)
    y = x + ls ⊙ f         dx = dy,  df = ls ⊙ dy,  dls = Σ dy ⊙ f

A field that is another's array in the forward (out and ln_2.out, output and the last out,
tokens and embedded, …) is the same node: its gradient is the same array. μ and σ² are the
nodes of LayerNorm as written above (x → μ → x − μ → σ² → x̂): dμ is the change of the target
when μ alone moves, x − μ and σ² following it.

Leading batch axes are allowed (the trainer works in batches): every trace field may carry a
leading [B]; the weights' gradients are then summed over the batch. Everything is computed in
the dtype of the trace (float32 from `encode`, float64 for a check). A trace made with heads
switched off (views/heads_off.py) is not the model's own: its gradients are those of the model.
"""

from __future__ import annotations

import math
from dataclasses import fields as dataclass_fields

import numpy as np

from .config import EncoderConfig
from .params import (
    EncoderParams,
    HeadParams,
    LayerParams,
    ParamsError,
    params_to_arrays,
    read_only,
)
from .pipeline.attention import merge_heads, split_heads
from .pipeline.ffn import GELU_TANH_C, SQRT_2_OVER_PI, erfc_positive
from .pipeline.head import head_rows, pooled_rows
from .pipeline.norm import layer_norm
from .pipeline.patches import unpatchify
from .trace import EncoderTrace, LayerNormTrace, LayerTrace, freeze

# --- small pieces ----------------------------------------------------------------------------


def swap(a: np.ndarray) -> np.ndarray:
    """aᵀ over the last two axes (a view). [..., m, n] -> [..., n, m]."""
    return np.swapaxes(a, -1, -2)


def weight_grad(x: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """dW of y = x·W, summed over every leading axis: xᵀ·dy. [..., a], [..., b] -> [a, b]."""
    return x.reshape(-1, x.shape[-1]).T @ dy.reshape(-1, dy.shape[-1])


def vector_grad(dy: np.ndarray) -> np.ndarray:
    """db of y = … + b (or of a row token added to every batch item): Σ dy over every leading
    axis. [..., n] -> [n]."""
    return dy.reshape(-1, dy.shape[-1]).sum(axis=0)


def linear_backward(dy: np.ndarray, W: np.ndarray) -> np.ndarray:
    """dX of Y = X·W + b: dY·Wᵀ. [..., out], W [in, out] -> [..., in]."""
    return dy @ W.T


def softmax_backward(d_attn: np.ndarray, attn: np.ndarray) -> np.ndarray:
    """dZ of A = softmax(Z) row by row: A ⊙ (dA − Σ_j dA_j A_j). [..., S, S] -> [..., S, S]."""
    d_scores = d_attn - (d_attn * attn).sum(axis=-1, keepdims=True)  # a new array
    d_scores *= attn
    return d_scores


def layer_norm_backward(d_out: np.ndarray, ln: LayerNormTrace, gamma: np.ndarray, eps: float,
                        ) -> tuple[LayerNormTrace, np.ndarray]:
    """The gradients of y = γ ⊙ x̂ + β, x̂ = (x − μ) / √(σ² + ε), from the forward's own fields.

    Args:
        d_out: [..., S, d] d target / d y; ln: the forward's LayerNormTrace (mean, var [..., S];
            normed [..., S, d]); gamma: [d]; eps: ε.
    Returns:
        (LayerNormTrace of the gradients: mean [..., S], var [..., S], normed [..., S, d],
        out = d_out; dx [..., S, d])
    """
    d = d_out.shape[-1]
    rstd = 1.0 / np.sqrt(ln.var + eps)  # [..., S] 1/√(σ² + ε)
    d_normed = d_out * gamma  # [..., S, d] dx̂ = dy ⊙ γ
    # x − μ = x̂·√(σ² + ε), so Σ_j dx̂_j (x_j − μ) = Σ_j dx̂_j x̂_j / rstd
    d_var = -0.5 * rstd * rstd * (d_normed * ln.normed).sum(axis=-1)  # [..., S]
    d_mean = -rstd * d_normed.sum(axis=-1)  # [..., S] (σ²'s path adds Σ_j (x_j − μ) = 0)
    dx = d_normed * rstd[..., None]  # [..., S, d] dx̂ / √(σ² + ε)
    dx += (2.0 / d) * (d_var / rstd)[..., None] * ln.normed  # (2/d)·dσ²·(x − μ)
    dx += (d_mean / d)[..., None]  # dμ / d
    return LayerNormTrace(mean=d_mean, var=d_var, normed=d_normed, out=d_out), dx


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """Φ(z) = ½·erfc(−z/√2), from erfc of |z| (pipeline/ffn.py's `erfc_positive`). Shape and
    dtype of z."""
    tail = 0.5 * erfc_positive(np.abs(z) * z.dtype.type(1 / math.sqrt(2.0)))  # ½·erfc(|z|/√2)
    return np.where(z >= 0, 1 - tail, tail)


def gelu_derivative(z: np.ndarray) -> np.ndarray:
    """d/dz (z·Φ(z)) = Φ(z) + z·φ(z), φ(z) = exp(−z²/2)/√(2π). Shape and dtype of z."""
    pdf = np.exp(z * z * z.dtype.type(-0.5)) * z.dtype.type(1 / math.sqrt(2 * math.pi))
    return normal_cdf(z) + z * pdf


def gelu_tanh_derivative(z: np.ndarray) -> np.ndarray:
    """d/dz ½z(1 + tanh u), u = √(2/π)(z + c·z³): ½(1 + tanh u) + ½z(1 − tanh² u)·√(2/π)(1 +
    3c·z²), c = 0.044715. Shape and dtype of z."""
    t = z.dtype.type
    u = np.tanh((z + t(GELU_TANH_C) * z * z * z) * t(SQRT_2_OVER_PI))
    du = t(SQRT_2_OVER_PI) * (1 + t(3 * GELU_TANH_C) * z * z)
    return t(0.5) * (1 + u) + t(0.5) * z * (1 - u * u) * du


def activation_backward(d_hidden: np.ndarray, hidden: np.ndarray, ffn_in: np.ndarray,
                        p: LayerParams, activation: str) -> np.ndarray:
    """dz of hidden = act(z), z = ffn_in·W_1 + b_1: dhidden ⊙ act'(z).

    ReLU reads its mask off hidden (z > 0 ⇔ hidden > 0); GELU needs z, which the trace does not
    keep: it is computed again here, for this layer only (one product [..., S, d]·[d, d_ff]).
    d_hidden, hidden: [..., S, d_ff]; ffn_in: [..., S, d]. Returns [..., S, d_ff], a new array.
    """
    if activation == "relu":
        return d_hidden * (hidden > 0)
    z = ffn_in @ p.W_1  # [..., S, d] @ [d, d_ff] -> [..., S, d_ff]
    z += p.b_1
    slope = gelu_derivative(z) if activation == "gelu" else gelu_tanh_derivative(z)
    slope *= d_hidden
    return slope


def scaled_backward(d_sum: np.ndarray, ls: np.ndarray | None, f: np.ndarray, name: str,
                    weights: bool) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """y = x + ls ⊙ f in reverse (dx = dy is the caller's): (df = ls ⊙ dy, or dy without
    LayerScale; {name: dls = Σ dy ⊙ f} when weights and LayerScale, else {}).
    Shapes [..., S, d]; ls [d] or None."""
    if ls is None:
        return d_sum, {}
    return d_sum * ls, ({name: vector_grad(d_sum * f)} if weights else {})


# --- one layer -------------------------------------------------------------------------------

def attention_backward(d_attn_out: np.ndarray, x: np.ndarray, c: LayerTrace, p: LayerParams,
                       cfg: EncoderConfig, weights: bool,
                       ) -> tuple[dict[str, np.ndarray], np.ndarray, dict[str, np.ndarray]]:
    """Multi-head attention in reverse, every intermediate's gradient by LayerTrace field name.

    Args:
        d_attn_out: [..., S, d]; x: [..., S, d] what the attention read (post-norm: the layer's
            input; pre-norm: ln_1.out); c: the layer's trace; p: its weights.
    Returns:
        ({q, k, v, heads [..., h, S, d_head]; scores, attn [..., h, S, S]; concat, attn_out
        [..., S, d]}, dx [..., S, d] through Q, K and V, the weights' gradients by name:
        W_Q … b_O, {} when weights is False)
    """
    grads: dict[str, np.ndarray] = {}
    s = cfg.score_scale
    d_concat = linear_backward(d_attn_out, p.W_O)  # [..., S, d] @ [d, d] -> [..., S, d]
    d_heads = split_heads(d_concat, cfg.n_heads)  # -> [..., h, S, d_head]
    d_attn = d_heads @ swap(c.v)  # [..., h, S, d_head] @ [..., h, d_head, S] -> [..., h, S, S]
    d_v = swap(c.attn) @ d_heads  # [..., h, S, S] @ [..., h, S, d_head] -> [..., h, S, d_head]
    d_scores = softmax_backward(d_attn, c.attn)  # [..., h, S, S]
    d_q = d_scores @ c.k  # [..., h, S, S] @ [..., h, S, d_head] -> [..., h, S, d_head]
    d_q *= 1.0 / s
    d_k = swap(d_scores) @ c.q  # [..., h, S, d_head]
    d_k *= 1.0 / s
    dx = None
    for name, d_proj in (("Q", d_q), ("K", d_k), ("V", d_v)):
        d_rows = merge_heads(d_proj)  # [..., h, S, d_head] -> [..., S, d]
        W = getattr(p, f"W_{name}")
        dx = linear_backward(d_rows, W) if dx is None else dx + linear_backward(d_rows, W)
        if weights:
            grads[f"W_{name}"] = weight_grad(x, d_rows)  # [d, d]
            if getattr(p, f"b_{name}") is not None:
                grads[f"b_{name}"] = vector_grad(d_rows)  # [d]
    if weights:
        grads["W_O"] = weight_grad(c.concat, d_attn_out)  # [d, d]
        if p.b_O is not None:
            grads["b_O"] = vector_grad(d_attn_out)
    fields = dict(q=d_q, k=d_k, v=d_v, scores=d_scores, attn=d_attn, heads=d_heads,
                  concat=d_concat, attn_out=d_attn_out)
    return fields, dx, grads


def ffn_backward(d_ffn_out: np.ndarray, ffn_in: np.ndarray, c: LayerTrace, p: LayerParams,
                 cfg: EncoderConfig, weights: bool,
                 ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """FFN(x) = act(x·W_1 + b_1)·W_2 + b_2 in reverse.

    d_ffn_out: [..., S, d]; ffn_in: [..., S, d] what the FFN read. Returns (d_ffn_hidden
    [..., S, d_ff], dx [..., S, d], {W_1, b_1, W_2, b_2: their gradients}, {} without
    weights)."""
    grads: dict[str, np.ndarray] = {}
    d_hidden = linear_backward(d_ffn_out, p.W_2)  # [..., S, d] @ [d, d_ff] -> [..., S, d_ff]
    d_z = activation_backward(d_hidden, c.ffn_hidden, ffn_in, p, cfg.activation)  # [.., d_ff]
    if weights:
        grads["W_2"] = weight_grad(c.ffn_hidden, d_ffn_out)  # [d_ff, d]
        grads["b_2"] = vector_grad(d_ffn_out)  # [d]
        grads["W_1"] = weight_grad(ffn_in, d_z)  # [d, d_ff]
        grads["b_1"] = vector_grad(d_z)  # [d_ff]
    dx = linear_backward(d_z, p.W_1)  # [..., S, d_ff] @ [d_ff, d] -> [..., S, d]
    return d_hidden, dx, grads


def layer_backward(d_out: np.ndarray, x: np.ndarray, c: LayerTrace, p: LayerParams,
                   cfg: EncoderConfig, weights: bool = True,
                   ) -> tuple[LayerTrace, np.ndarray, dict[str, np.ndarray]]:
    """One encoder layer (`encoder_layer`) in reverse.

    Post-norm:  resid_1 = x + ls_1 ⊙ attn_out(x),  ln_1 = LN(resid_1),
                resid_2 = ln_1.out + ls_2 ⊙ FFN(ln_1.out),  ln_2 = LN(resid_2),  out = ln_2.out
    Pre-norm:   ln_1 = LN(x),  resid_1 = x + ls_1 ⊙ attn_out(ln_1.out),  ln_2 = LN(resid_1),
                resid_2 = resid_1 + ls_2 ⊙ FFN(ln_2.out),  out = resid_2

    Args:
        d_out: [..., S, d] d target / d out; x: [..., S, d] the layer's input; c: its trace;
        p: its weights; weights: False leaves the weights' gradients out.
    Returns:
        (LayerTrace of the gradients, d target / d x [..., S, d], the weights' gradients by
        LayerParams name — {} when weights is False)
    """
    g: dict[str, np.ndarray] = {}
    eps = cfg.ln_eps
    d_ffn_hidden = d_ffn_out = d_resid_2 = d_ln_2 = None
    if cfg.norm_first:
        d_resid_1 = d_out  # out = resid_1 without the FFN
        if cfg.use_ffn:
            d_resid_2 = d_out  # out = resid_2
            d_ffn_out, g_ls = scaled_backward(d_resid_2, p.ls_2, c.ffn_out, "ls_2", weights)
            d_ffn_hidden, d_ffn_in, g_ffn = ffn_backward(d_ffn_out, c.ln_2.out, c, p, cfg,
                                                         weights)
            g |= g_ls | g_ffn
            d_ln_2, dx_ln_2 = layer_norm_backward(d_ffn_in, c.ln_2, p.gamma_2, eps)
            d_resid_1 = d_resid_2 + dx_ln_2  # the residual path + the FFN's
        d_attn_out, g_ls = scaled_backward(d_resid_1, p.ls_1, c.attn_out, "ls_1", weights)
        d_attention, dx_qkv, g_attn = attention_backward(d_attn_out, c.ln_1.out, c, p, cfg,
                                                         weights)
        g |= g_ls | g_attn
        d_ln_1, dx_ln_1 = layer_norm_backward(dx_qkv, c.ln_1, p.gamma_1, eps)
        dx = d_resid_1 + dx_ln_1  # the residual path + attention's
    else:
        d_ln_1_out = d_out  # out = ln_1.out without the FFN
        if cfg.use_ffn:
            d_ln_2, d_resid_2 = layer_norm_backward(d_out, c.ln_2, p.gamma_2, eps)
            d_ffn_out, g_ls = scaled_backward(d_resid_2, p.ls_2, c.ffn_out, "ls_2", weights)
            d_ffn_hidden, d_ffn_in, g_ffn = ffn_backward(d_ffn_out, c.ln_1.out, c, p, cfg,
                                                         weights)
            g |= g_ls | g_ffn
            d_ln_1_out = d_resid_2 + d_ffn_in  # the residual path + the FFN's
        d_ln_1, d_resid_1 = layer_norm_backward(d_ln_1_out, c.ln_1, p.gamma_1, eps)
        d_attn_out, g_ls = scaled_backward(d_resid_1, p.ls_1, c.attn_out, "ls_1", weights)
        d_attention, dx_qkv, g_attn = attention_backward(d_attn_out, x, c, p, cfg, weights)
        g |= g_ls | g_attn
        dx = d_resid_1 + dx_qkv
    if weights:
        g["gamma_1"], g["beta_1"] = vector_grad(d_ln_1.out * c.ln_1.normed), vector_grad(d_ln_1.out)
        if cfg.use_ffn:
            g["gamma_2"] = vector_grad(d_ln_2.out * c.ln_2.normed)
            g["beta_2"] = vector_grad(d_ln_2.out)
    grads = LayerTrace(**d_attention, resid_1=d_resid_1, ln_1=d_ln_1, ffn_hidden=d_ffn_hidden,
                       ffn_out=d_ffn_out, resid_2=d_resid_2, ln_2=d_ln_2, out=d_out)
    return grads, dx, g


# --- the head --------------------------------------------------------------------------------

def logit_seed(target: int | np.ndarray, lead: tuple[int, ...], n_classes: int,
               dtype: np.dtype) -> np.ndarray:
    """d target / d logits [..., n_classes]: one-hot at a class index (the raw logit, not the
    softmax), or the given array (e.g. d loss / d logits of a cross-entropy)."""
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        if not 0 <= target < n_classes:
            raise ValueError(f"class {target} does not exist: there are {n_classes} "
                             f"(0 … {n_classes - 1}).")
        seed = np.zeros((*lead, n_classes), dtype=dtype)
        seed[..., target] = 1
        return seed
    seed = np.asarray(target, dtype=dtype)
    if seed.shape != (*lead, n_classes):
        raise ValueError(f"d logits has shape {seed.shape}; the trace needs "
                         f"{(*lead, n_classes)}.")
    return seed


def head_backward(d_logits: np.ndarray, output: np.ndarray, head: HeadParams,
                  cfg: EncoderConfig, weights: bool = True,
                  ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The classification head (`pipeline/head.py`) in reverse: logits = mean over its k rows of
    (rows · W + b), rows = [tanh pre-logits of] [fc_norm of] the pooled rows.

    The head's rows are not in the trace: they are computed again from output (k rows).
    Args:
        d_logits: [..., n_classes]; output: [..., S, d] the encoder's output.
    Returns:
        (d target / d output [..., S, d], the head's gradients by HeadParams name)
    """
    g: dict[str, np.ndarray] = {}
    n = cfg.n_prefix
    pooled = pooled_rows(output, head.pool, n)  # [..., k, d_pool]
    rows = head_rows(output, head, n, cfg.ln_eps)  # [..., k, d_in]
    k = rows.shape[-2]
    d_each = d_logits * (1.0 / k)  # [..., n_classes] each row's share of the mean
    heads = [("W_head", "b_head"), ("W_dist", "b_dist")][:k]
    d_rows = np.stack([linear_backward(d_each, getattr(head, W)) for W, _ in heads],
                      axis=-2)  # [..., k, d_in]
    if weights:
        for i, (W, b) in enumerate(heads):
            g[W] = weight_grad(rows[..., i, :], d_each)  # [d_in, n_classes]
            g[b] = vector_grad(d_each)  # [n_classes]
    normed = (layer_norm(pooled, head.fc_norm_gamma, head.fc_norm_beta, cfg.ln_eps)
              if head.fc_norm_gamma is not None else None)
    if head.W_pre is not None:  # rows = tanh(z), z = pooled' · W_pre + b_pre
        d_z = d_rows * (1 - rows * rows)  # [..., k, d_rep]
        pre_in = pooled if normed is None else normed.out  # [..., k, d_pool]
        if weights:
            g["W_pre"], g["b_pre"] = weight_grad(pre_in, d_z), vector_grad(d_z)
        d_rows = linear_backward(d_z, head.W_pre)  # [..., k, d_pool]
    if normed is not None:
        if weights:
            g["fc_norm_gamma"] = vector_grad(d_rows * normed.normed)
            g["fc_norm_beta"] = vector_grad(d_rows)
        d_rows = layer_norm_backward(d_rows, normed, head.fc_norm_gamma, cfg.ln_eps)[1]
    d_output = np.zeros_like(output)  # [..., S, d]
    d = output.shape[-1]
    if head.pool in ("token", "token_dist"):
        d_output[..., :k, :] = d_rows  # the [CLS] (and [DIST]) rows
    elif head.pool == "avg":
        d_output[..., n:, :] = d_rows[..., 0:1, :] / (output.shape[-2] - n)  # the mean's share
    else:  # token_avg: [output[0] ‖ mean of the patch rows]
        d_output[..., 0, :] = d_rows[..., 0, :d]
        d_output[..., n:, :] = d_rows[..., 0:1, d:] / (output.shape[-2] - n)
    return d_output, g


# --- the whole pass --------------------------------------------------------------------------

def backward(trace: EncoderTrace, params: EncoderParams, target: int | np.ndarray, *,
             weights: bool = True) -> EncoderTrace:
    """The gradient of a logit (or a loss) with respect to every field of the trace.

    Args:
        trace: a forward pass (`encode`; or the same fields with a leading batch axis, as the
            trainer's cache); params: its weights, with the head (`params.head`).
        target: a class index: the gradient of that raw logit (not of its softmax); or
            d target / d logits [..., n_classes] (e.g. the shapes model's cross-entropy loss).
        weights: False leaves the weights' gradients out (`grads.params` is None then):
            ~40 % fewer products, what `relevance` needs.
    Returns:
        An EncoderTrace of gradients, in the trace's dtype and shapes: grads.layers[l].attn
        [..., h, S, S] is d target / d attn of layer l, grads.x0 [..., S, d], grads.image
        [..., S_img, S_img, C], …; grads.params the weights' gradients (an EncoderParams, its
        head a HeadParams; summed over a batch). Read-only arrays.
    Raises:
        ParamsError when params has no classification head; ValueError for a class that does
        not exist.
    """
    head = params.head
    if head is None:
        raise ParamsError("these weights have no classification head: no logit to derive.")
    cfg = trace.config
    dtype = trace.output.dtype
    lead = trace.output.shape[:-2]  # () for one image, (B,) for a batch
    d_logits = logit_seed(target, lead, head.n_classes, dtype)
    d_output, head_grads = head_backward(d_logits, trace.output, head, cfg, weights)
    final_ln = None
    d_x = d_output
    top: dict[str, np.ndarray] = {}
    if trace.final_ln is not None:
        final_ln, d_x = layer_norm_backward(d_output, trace.final_ln, params.norm_gamma,
                                            cfg.ln_eps)
        if weights:
            top["norm_gamma"] = vector_grad(d_output * trace.final_ln.normed)
            top["norm_beta"] = vector_grad(d_output)
    layers, layer_grads = [], []
    for l in reversed(range(cfg.n_layers)):
        x = trace.layers[l - 1].out if l else trace.x0  # [..., S, d] the layer's input
        grads, d_x, g = layer_backward(d_x, x, trace.layers[l], params.layers[l], cfg, weights)
        layers.append(grads)
        layer_grads.append(g)
    layers.reverse()
    layer_grads.reverse()
    d_x0 = d_x  # [..., S, d]
    inputs, top_inputs = input_backward(d_x0, trace, params, weights)
    top.update(top_inputs)
    grads_params = None
    if weights:
        grads_params = weight_gradients(params, top, layer_grads, head_grads)
        for a in params_to_arrays(grads_params).values():
            read_only(a)
    grads = EncoderTrace(config=cfg, params=grads_params, **inputs, x0=d_x0,
                         layers=tuple(layers), final_ln=final_ln, output=d_output)
    return freeze(grads)


def input_backward(d_x0: np.ndarray, trace: EncoderTrace, params: EncoderParams,
                   weights: bool = True,
                   ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The embedding, the positions and the pixels in reverse:
    x0 = tokens + pos, tokens = [cls, dist, registers…, embedded], pos = [learned prefix rows,
    0…, pe], embedded = patches·W_E + b_E, patches = patchify(pixels),
    pixels = (image − mean) / std.

    d_x0: [..., S, d]. Returns (the gradients of image, pixels, patches, embedded, pe, tokens,
    pos by field name; of W_E, b_E, cls, dist, registers, pos_embed by EncoderParams name, {}
    when weights is False)."""
    cfg = trace.config
    n = cfg.n_prefix
    d_tokens = d_x0
    d_pos = d_x0 if cfg.use_pe else np.zeros_like(d_x0)  # nothing is added with PE off
    d_embedded = d_tokens[..., n:, :]  # [..., N, d]
    d_pe = d_pos[..., n:, :]  # [..., N, d]
    d_patches = linear_backward(d_embedded, params.W_E)  # [..., N, d] @ [d, P·P·C]
    d_pixels = unpatchify(d_patches, cfg.patch_size, cfg.channels)  # [..., S_img, S_img, C]
    d_image = d_pixels
    if cfg.normalises_pixels:
        d_image = d_pixels / np.asarray(cfg.pixel_std, dtype=d_pixels.dtype)
    fields = dict(image=d_image, pixels=d_pixels, patches=d_patches, embedded=d_embedded,
                  pe=d_pe, tokens=d_tokens, pos=d_pos)
    if not weights:
        return fields, {}
    g = {"W_E": weight_grad(trace.patches, d_embedded)}  # [P·P·C, d]
    if params.b_E is not None:
        g["b_E"] = vector_grad(d_embedded)
    rows = {"cls": (0, 1), "dist": (1, 2), "registers": (n - cfg.n_registers, n)}
    for name, (a, b) in rows.items():
        if getattr(params, name) is not None:
            g[name] = d_tokens[..., a:b, :].reshape(-1, b - a, cfg.d_model).sum(axis=0)
    if params.pos_embed is not None:
        n_rows = cfg.n_pos - cfg.n_tokens  # cls and dist rows when pos_prefix
        g["pos_embed"] = np.concatenate([d_pos[..., :n_rows, :], d_pe], axis=-2).reshape(
            -1, cfg.n_pos, cfg.d_model).sum(axis=0)  # [n_pos, d]
    return fields, g


def weight_gradients(params: EncoderParams, top: dict[str, np.ndarray],
                     layers: list[dict[str, np.ndarray]], head: dict[str, np.ndarray],
                     ) -> EncoderParams:
    """The weights' gradients as an EncoderParams (the dicts' arrays, not copied): None where
    the weight is None, zero for the FFN's weights when the FFN is off (they exist, and nothing
    reads them). params: the weights, for their shapes and the head's pooling."""
    full = []
    for g, lp in zip(layers, params.layers, strict=True):
        unused = {f.name: np.zeros_like(getattr(lp, f.name)) for f in dataclass_fields(lp)
                  if f.name not in g and getattr(lp, f.name) is not None}
        full.append({**g, **unused})
    grads_head = HeadParams(pool=params.head.pool, **head)
    return EncoderParams(layers=tuple(LayerParams(**g) for g in full), head=grads_head, **top)
