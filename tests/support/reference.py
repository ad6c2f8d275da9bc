"""A deliberately naive float64 reference of the encoder, written straight from the formulas.

Independent of `encoder_core`'s implementation: explicit Python loops over patches, tokens and
heads (NumPy vector operations only inside the loops), everything cast to float64. Only the
config's plain fields and the parameter arrays are read from `encoder_core` objects.

`reference_encode(image, cfg, params)` returns nested `SimpleNamespace`s whose field names mirror
`encoder_core`'s trace: pixels, patches, embedded, pe, tokens, pos, x0, final_ln, output and
layers[l].{q, k, v, scores, attn, heads, concat, attn_out, resid_1, ln_1.{mean, var, normed, out},
ffn_hidden, ffn_out, resid_2, ln_2.{...}, out}.

The Vision Transformer variants (issue 11) are written out here from their definitions too:
pixel normalisation, patch bias, prefix tokens [cls, dist, registers…], learned positions (cls
and dist rows when pos_prefix, never the registers; sinusoidal positions on the patch rows only),
biases on Q, K, V and W_O, pre-norm, GELU with `math.erf` and its tanh form with `math.tanh`,
LayerScale and the final LayerNorm.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np


def _f64(a: object) -> np.ndarray:
    return np.array(a, dtype=np.float64, copy=True)


def reference_patchify(image: np.ndarray, patch_size: int) -> np.ndarray:
    """[S, S, C] -> [N, P*P*C]; patches row-major over the grid, pixels row-major, channels last."""
    image = _f64(image)
    side = image.shape[0]
    p = patch_size
    grid = side // p
    rows = []
    for n in range(grid * grid):
        r, c = divmod(n, grid)
        rows.append(image[r * p : (r + 1) * p, c * p : (c + 1) * p, :].reshape(-1))
    return np.stack(rows)


def reference_positional_encoding(n_tokens: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same), scalar by scalar."""
    pe = np.zeros((n_tokens, d_model), dtype=np.float64)
    for pos in range(n_tokens):
        for i in range(d_model // 2):
            angle = pos / 10000.0 ** (2 * i / d_model)
            pe[pos, 2 * i] = math.sin(angle)
            pe[pos, 2 * i + 1] = math.cos(angle)
    return pe


def _softmax_row(row: np.ndarray) -> np.ndarray:
    e = np.exp(row - np.max(row))
    return e / np.sum(e)


def _layer_norm(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray, eps: float) -> SimpleNamespace:
    n, d = x.shape
    mean = np.zeros(n)
    var = np.zeros(n)
    normed = np.zeros((n, d))
    out = np.zeros((n, d))
    for t in range(n):
        row = x[t]
        mu = np.sum(row) / d
        sigma2 = np.sum((row - mu) ** 2) / d
        mean[t] = mu
        var[t] = sigma2
        normed[t] = (row - mu) / math.sqrt(sigma2 + eps)
        out[t] = gamma * normed[t] + beta
    return SimpleNamespace(mean=mean, var=var, normed=normed, out=out)


def _score_divisor(scale: str, d_head: int, d_model: int) -> float:
    if scale == "d_k":
        return math.sqrt(d_head)
    if scale == "d_model":
        return math.sqrt(d_model)
    if scale == "none":
        return 1.0
    raise ValueError(f"unknown scale {scale!r}")


def _activation(name: str, z: float) -> float:
    """One scalar through the FFN's non-linearity, from its definition."""
    if name == "relu":
        return max(0.0, z)
    if name == "gelu":  # x·Φ(x), Φ the standard normal CDF
        return 0.5 * z * (1.0 + math.erf(z / math.sqrt(2.0)))
    if name == "gelu_tanh":
        return 0.5 * z * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) * (z + 0.044715 * z**3)))
    raise ValueError(f"unknown activation {name!r}")


def _bias(lp: object, name: str, d: int) -> np.ndarray:
    """A bias or LayerScale vector, or the neutral value when the parameter is absent."""
    value = getattr(lp, name, None)
    if value is None:
        return np.ones(d) if name.startswith("ls_") else np.zeros(d)
    return _f64(value)


def _reference_layer(x: np.ndarray, lp: object, cfg: object) -> SimpleNamespace:
    n_tokens, d = x.shape
    h = cfg.n_heads
    dh = d // h
    w_q, w_k, w_v, w_o = (_f64(getattr(lp, name)) for name in ("W_Q", "W_K", "W_V", "W_O"))
    b_q, b_k, b_v, b_o = (_bias(lp, name, d) for name in ("b_Q", "b_K", "b_V", "b_O"))
    ls_1, ls_2 = _bias(lp, "ls_1", d), _bias(lp, "ls_2", d)
    pre_norm = cfg.norm_first
    x_in = x  # the residual stream entering the layer
    ln_1 = None
    if pre_norm:  # pre-norm: attention reads LN_1(x)
        ln_1 = _layer_norm(x_in, _f64(lp.gamma_1), _f64(lp.beta_1), cfg.ln_eps)
        x = ln_1.out

    # Projections, token by token.
    q_full = np.zeros((n_tokens, d))
    k_full = np.zeros((n_tokens, d))
    v_full = np.zeros((n_tokens, d))
    for t in range(n_tokens):
        q_full[t] = x[t] @ w_q + b_q
        k_full[t] = x[t] @ w_k + b_k
        v_full[t] = x[t] @ w_v + b_v

    s = _score_divisor(cfg.scale, dh, d)
    q = np.zeros((h, n_tokens, dh))
    k = np.zeros((h, n_tokens, dh))
    v = np.zeros((h, n_tokens, dh))
    scores = np.zeros((h, n_tokens, n_tokens))
    attn = np.zeros((h, n_tokens, n_tokens))
    heads = np.zeros((h, n_tokens, dh))
    concat = np.zeros((n_tokens, d))
    for head in range(h):
        cols = slice(head * dh, (head + 1) * dh)
        q[head] = q_full[:, cols]
        k[head] = k_full[:, cols]
        v[head] = v_full[:, cols]
        for i in range(n_tokens):
            # score of query i against every key j: q_i · k_j / s
            scores[head, i] = (k[head] @ q[head, i]) / s
            attn[head, i] = _softmax_row(scores[head, i])
            heads[head, i] = attn[head, i] @ v[head]
        concat[:, cols] = heads[head]

    attn_out = np.zeros((n_tokens, d))
    resid_1 = np.zeros((n_tokens, d))
    for t in range(n_tokens):
        attn_out[t] = concat[t] @ w_o + b_o
        resid_1[t] = x_in[t] + ls_1 * attn_out[t]
    if not pre_norm:  # post-norm: Add, then Norm
        ln_1 = _layer_norm(resid_1, _f64(lp.gamma_1), _f64(lp.beta_1), cfg.ln_eps)

    layer = SimpleNamespace(
        q=q,
        k=k,
        v=v,
        scores=scores,
        attn=attn,
        heads=heads,
        concat=concat,
        attn_out=attn_out,
        resid_1=resid_1,
        ln_1=ln_1,
        ffn_hidden=None,
        ffn_out=None,
        resid_2=None,
        ln_2=None,
        out=resid_1 if pre_norm else ln_1.out,
    )
    if not cfg.use_ffn:
        return layer

    w_1, b_1, w_2, b_2 = (_f64(getattr(lp, name)) for name in ("W_1", "b_1", "W_2", "b_2"))
    if pre_norm:  # the FFN reads LN_2(resid_1); its output is added to resid_1
        ln_2 = _layer_norm(resid_1, _f64(lp.gamma_2), _f64(lp.beta_2), cfg.ln_eps)
        ffn_in, skip = ln_2.out, resid_1
    else:  # the FFN reads ln_1.out; the sum is normalised afterwards
        ffn_in, skip = ln_1.out, ln_1.out
    ffn_hidden = np.zeros((n_tokens, w_1.shape[1]))
    ffn_out = np.zeros((n_tokens, d))
    resid_2 = np.zeros((n_tokens, d))
    for t in range(n_tokens):
        pre_activation = ffn_in[t] @ w_1 + b_1
        for j in range(w_1.shape[1]):
            ffn_hidden[t, j] = _activation(cfg.activation, float(pre_activation[j]))
        ffn_out[t] = ffn_hidden[t] @ w_2 + b_2
        resid_2[t] = skip[t] + ls_2 * ffn_out[t]
    if not pre_norm:
        ln_2 = _layer_norm(resid_2, _f64(lp.gamma_2), _f64(lp.beta_2), cfg.ln_eps)
    layer.ffn_hidden = ffn_hidden
    layer.ffn_out = ffn_out
    layer.resid_2 = resid_2
    layer.ln_2 = ln_2
    layer.out = resid_2 if pre_norm else ln_2.out
    return layer


def reference_pixels(image: np.ndarray, cfg: object) -> np.ndarray:
    """(image − mean_c) / std_c channel by channel, or the image itself without statistics."""
    image = _f64(image)
    if not cfg.pixel_mean:
        return image
    out = np.zeros_like(image)
    for c in range(image.shape[-1]):
        out[..., c] = (image[..., c] - cfg.pixel_mean[c]) / cfg.pixel_std[c]
    return out


def reference_encode(image: np.ndarray, cfg: object, params: object) -> SimpleNamespace:
    """The whole forward pass in float64, mirroring the field names of `encoder_core`'s trace."""
    pixels = reference_pixels(image, cfg)
    patches = reference_patchify(pixels, cfg.patch_size)
    w_e = _f64(params.W_E)
    b_e = _bias(params, "b_E", cfg.d_model)
    n_tokens = patches.shape[0]
    d = cfg.d_model
    embedded = np.zeros((n_tokens, d))
    for t in range(n_tokens):
        embedded[t] = patches[t] @ w_e + b_e

    # The sequence: [cls, dist, registers…, patches…]; which rows get a position.
    prefix = []  # (row, position row of a learned pos_embed or None)
    n_cls_dist = 0
    for name, on in (("cls", cfg.cls_token), ("dist", cfg.dist_token)):
        if on:
            prefix.append(_f64(getattr(params, name))[0])
            n_cls_dist += 1
    for r in range(cfg.n_registers):
        prefix.append(_f64(params.registers)[r])
    n_prefix = len(prefix)
    seq = n_prefix + n_tokens
    tokens = np.zeros((seq, d))
    for t, row in enumerate(prefix):
        tokens[t] = row
    tokens[n_prefix:] = embedded

    if cfg.position == "learned":
        table = _f64(params.pos_embed)
        first_patch_row = n_cls_dist if cfg.pos_prefix else 0
        pe = table[first_patch_row : first_patch_row + n_tokens]
    else:
        pe = reference_positional_encoding(n_tokens, d)
    pos = np.zeros((seq, d))
    if cfg.use_pe:
        for t in range(n_tokens):  # patch t is row n_prefix + t
            pos[n_prefix + t] = pe[t]
        if cfg.position == "learned" and cfg.pos_prefix:
            for t in range(n_cls_dist):  # cls, dist (never the registers)
                pos[t] = table[t]
    x0 = tokens + pos

    layers = []
    x = x0
    for lp in params.layers:
        layer = _reference_layer(x, lp, cfg)
        layers.append(layer)
        x = layer.out
    final_ln = None
    if cfg.final_norm:
        final_ln = _layer_norm(x, _f64(params.norm_gamma), _f64(params.norm_beta), cfg.ln_eps)
        x = final_ln.out
    return SimpleNamespace(
        pixels=pixels,
        patches=patches,
        embedded=embedded,
        pe=pe,
        tokens=tokens,
        pos=pos,
        x0=x0,
        layers=tuple(layers),
        final_ln=final_ln,
        output=x,
    )
