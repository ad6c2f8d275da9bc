"""A deliberately naive float64 reference of the encoder, written straight from the formulas.

Independent of `encoder_core`'s implementation: explicit Python loops over patches, tokens and
heads (NumPy vector operations only inside the loops), everything cast to float64. Only the
config's plain fields and the parameter arrays are read from `encoder_core` objects.

`reference_encode(image, cfg, params)` returns nested `SimpleNamespace`s whose field names mirror
`encoder_core`'s trace: patches, embedded, pe, x0, output and layers[l].{q, k, v, scores, attn,
heads, concat, attn_out, resid_1, ln_1.{mean, var, normed, out}, ffn_hidden, ffn_out, resid_2,
ln_2.{...}, out}.
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


def _reference_layer(x: np.ndarray, lp: object, cfg: object) -> SimpleNamespace:
    n_tokens, d = x.shape
    h = cfg.n_heads
    dh = d // h
    w_q, w_k, w_v, w_o = (_f64(getattr(lp, name)) for name in ("W_Q", "W_K", "W_V", "W_O"))

    # Projections, token by token.
    q_full = np.zeros((n_tokens, d))
    k_full = np.zeros((n_tokens, d))
    v_full = np.zeros((n_tokens, d))
    for t in range(n_tokens):
        q_full[t] = x[t] @ w_q
        k_full[t] = x[t] @ w_k
        v_full[t] = x[t] @ w_v

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
    for t in range(n_tokens):
        attn_out[t] = concat[t] @ w_o
    resid_1 = x + attn_out
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
        out=ln_1.out,
    )
    if not cfg.use_ffn:
        return layer

    w_1, b_1, w_2, b_2 = (_f64(getattr(lp, name)) for name in ("W_1", "b_1", "W_2", "b_2"))
    ffn_hidden = np.zeros((n_tokens, w_1.shape[1]))
    ffn_out = np.zeros((n_tokens, d))
    for t in range(n_tokens):
        ffn_hidden[t] = np.maximum(0.0, ln_1.out[t] @ w_1 + b_1)
        ffn_out[t] = ffn_hidden[t] @ w_2 + b_2
    resid_2 = ln_1.out + ffn_out
    ln_2 = _layer_norm(resid_2, _f64(lp.gamma_2), _f64(lp.beta_2), cfg.ln_eps)
    layer.ffn_hidden = ffn_hidden
    layer.ffn_out = ffn_out
    layer.resid_2 = resid_2
    layer.ln_2 = ln_2
    layer.out = ln_2.out
    return layer


def reference_encode(image: np.ndarray, cfg: object, params: object) -> SimpleNamespace:
    """The whole forward pass in float64, mirroring the field names of `encoder_core`'s trace."""
    patches = reference_patchify(image, cfg.patch_size)
    w_e = _f64(params.W_E)
    n_tokens = patches.shape[0]
    embedded = np.zeros((n_tokens, cfg.d_model))
    for t in range(n_tokens):
        embedded[t] = patches[t] @ w_e
    pe = reference_positional_encoding(n_tokens, cfg.d_model)
    x0 = embedded + pe if cfg.use_pe else embedded.copy()

    layers = []
    x = x0
    for lp in params.layers:
        layer = _reference_layer(x, lp, cfg)
        layers.append(layer)
        x = layer.out
    return SimpleNamespace(
        patches=patches,
        embedded=embedded,
        pe=pe,
        x0=x0,
        layers=tuple(layers),
        output=x,
    )
