"""Direct logit attribution: one class's logit as a sum of shares — every head of every layer,
every layer's FFN, the patch embedding, the positions, the prefix tokens, the biases and the
head's own constant terms.

A pre-norm encoder (`norm_first`, every ViT) only ever ADDS to its residual stream, so the last
layer's output is a sum of terms, each written by one part of the model:

    x_L = tokens + pos + Σ_l ls_1 ⊙ attn_out_l + Σ_l ls_2 ⊙ ffn_out_l          [S, d]
    tokens   = [cls, dist, registers…, patches·W_E + b_E]
    attn_out = Σ_h concat[:, h]·W_O[h] + b_O     (concat[:, h] = head h's d_head columns, W_O[h]
                                                  its d_head rows: the head's own output)
    ffn_out  = ffn_hidden·W_2 + b_2

From x_L to the logit: the final norm, the head's pooling, fc_norm, the linear head. The
LayerNorms divide each row by its own σ = √(var + ε), which depends on the whole row; holding
every σ at its value in the trace (the final norm's per row, fc_norm's per pooled row), the rest
is affine — centring, γ, pooling (a row or a mean), W_head — so the logit is

    logit_c = Σ_i ⟨x_L[i], G[i]⟩ + const
    G[i]    = centre(γ ⊙ g[i]) / σ_i        (centre(v) = v − mean(v); without a final norm G = g)
    g       = the pooling's transpose of centre(γ_f ⊙ W_head[:, c]) / σ_f    (fc_norm; else
              W_head[:, c]): the [CLS] row gets it, a mean spreads it as 1/N over the patch
              rows, DeiT distilled gives ½·W_head[:, c] to [CLS] and ½·W_dist[:, c] to [DIST]
    const   = b_head[c] + ⟨β_f, W_head[:, c]⟩ + Σ_i ⟨β, g[i]⟩     (head_bias)

and each term t of x_L gets the share ⟨t, G⟩ = Σ_i ⟨t[i], G[i]⟩. The shares sum to the logit
exactly (float64, up to the float32 rounding of the trace) — with the norms' scales held at the
trace's values; the share is the term's *direct* effect, not what the logit would be if the
term were removed (later layers read it too).

Where each bias goes:
    b_E (patch embedding), b_O (each layer's W_O, times ls_1), b_2 (each FFN's output, times
        ls_2)                                                  -> `biases`
    b_Q, b_K, b_V                                              -> inside each head's share (they
        shape its attention and its values: concat[:, h] already holds attn·(X·W_V + b_V))
    b_1 (inside the FFN's non-linearity)                       -> inside that FFN's share
    b_head, b_dist, fc_norm's β_f, the final norm's β           -> `head_bias`
    learned positions of the prefix rows (pos_prefix)           -> `positions`

A post-norm encoder (the note's: x ← LN(x + sublayer(x)) twice per layer) re-normalises its
residual stream after every sub-layer: each LN divides the sum by its own σ and re-centres it,
so no later state is a sum of the sub-layers' outputs and there is no additive share to give
(`NotDecomposable`). Nor for a head with tanh pre-logits (the tanh is not affine).

Cost: each weight read back once on the rows the logit reads (R·d·(d + d_ff) per layer: R = 1
for a [CLS] head, 2 for DeiT distilled, S for a mean), no recompute.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..params import EncoderParams, HeadParams
from ..pipeline.head import output_logits, pooled_rows
from ..pipeline.norm import layer_norm
from ..trace import EncoderTrace
from .logit_lens import require_head


class NotDecomposable(ValueError):  # noqa: N818  (the issue's name: what it says, not an "Error")
    """The model's logit is not a sum of its parts' outputs (post-norm, tanh pre-logits)."""


@dataclass(frozen=True)
class LogitShares:
    """The target's logit, share by share (float64). Fields sum to `logit` (`total`)."""

    heads: np.ndarray  # [L, h] ⟨ls_1 ⊙ concat[:, h]·W_O[h], G⟩ of each layer's heads
    ffn: np.ndarray  # [L] ⟨ls_2 ⊙ ffn_hidden·W_2, G⟩ (zeros without FFN)
    embedding: float  # ⟨patches·W_E, G⟩ on the patch rows, b_E NOT included (see `biases`)
    positions: float  # ⟨pos, G⟩ (every row's position; 0 when use_pe is off)
    prefix: float  # ⟨[cls, dist, registers…], G⟩ the prefix tokens' own rows; 0 without
    biases: float  # b_E on the patch rows, ls_1 ⊙ b_O and ls_2 ⊙ b_2 of every layer
    head_bias: float  # b_head (½(b_head + b_dist)), fc_norm's β_f and the final norm's β terms
    logit: float  # the model's logit of `target` (predict), what the shares sum to
    target: int  # the class

    def sum(self) -> float:
        """Every share added up (float64): equal to `logit` up to the trace's float32."""
        return total(self)


def total(shares: LogitShares) -> float:
    """heads + ffn + embedding + positions + prefix + biases + head_bias (float64)."""
    return float(shares.heads.sum() + shares.ffn.sum() + shares.embedding + shares.positions
                 + shares.prefix + shares.biases + shares.head_bias)


def require_decomposable(trace: EncoderTrace, head: HeadParams) -> None:
    """NotDecomposable when the model is post-norm or its head has a tanh pre-logits layer."""
    if not trace.config.norm_first:
        raise NotDecomposable(
            "this is a post-norm encoder (LayerNorm after every Add): the residual stream is "
            "re-normalised after every sub-layer, each LayerNorm dividing the whole sum by its "
            "own scale, so the sub-layers' outputs are not additive terms of the final state "
            "and the logit has no per-head shares. Direct logit attribution needs pre-norm.")
    if head.W_pre is not None:
        raise NotDecomposable(
            "this head has a tanh pre-logits layer: the logit is not an affine function of the "
            "encoder's output, so it has no additive shares.")


def head_weights(head: HeadParams, target: int) -> tuple[np.ndarray, float]:
    """What the linear head(s) read for class `target`: w [k, d_in] (each row's column of
    W_head / W_dist, times 1/k: the mean over DeiT's two heads) and the bias mean (float64)."""
    if head.pool == "token_dist":
        w = 0.5 * np.stack([head.W_head[:, target], head.W_dist[:, target]]).astype(np.float64)
        return w, 0.5 * float(head.b_head[target]) + 0.5 * float(head.b_dist[target])
    return head.W_head[:, target][None].astype(np.float64), float(head.b_head[target])


def centre(v: np.ndarray) -> np.ndarray:
    """v − mean(v) over the last axis (the LayerNorm's centring, its own transpose)."""
    return v - v.mean(axis=-1, keepdims=True)


def pooled_readout(trace: EncoderTrace, head: HeadParams,
                   target: int) -> tuple[np.ndarray, float]:
    """d logit / d pooled rows with fc_norm's scale held: [k, d_pool], and the constant the
    head adds: mean of b + ⟨β_f, w⟩ (float64)."""
    w, const = head_weights(head, target)  # [k, d_pool]
    if head.fc_norm_gamma is None:
        return w, const
    cfg = trace.config
    pooled = pooled_rows(trace.output.astype(np.float64), head.pool, cfg.n_prefix)  # [k, d_pool]
    sigma = np.sqrt(layer_norm(pooled, head.fc_norm_gamma, head.fc_norm_beta, cfg.ln_eps).var
                    + cfg.ln_eps)  # [k]
    gamma, beta = head.fc_norm_gamma.astype(np.float64), head.fc_norm_beta.astype(np.float64)
    return centre(gamma * w) / sigma[:, None], const + float((w @ beta).sum())


def unpool(g: np.ndarray, pool: str, S: int, n_prefix: int) -> np.ndarray:
    """The pooling's transpose: g [k, d_pool] on the pooled rows -> [S, d] on the output rows
    (the [CLS] / [DIST] row; 1/N on each patch row for a mean; both for [CLS ‖ mean])."""
    d = g.shape[-1] // 2 if pool == "token_avg" else g.shape[-1]
    out = np.zeros((S, d))
    N = S - n_prefix
    if pool == "token":
        out[0] = g[0]
    elif pool == "token_dist":
        out[0:2] = g
    elif pool == "avg":
        out[n_prefix:] = g[0] / N
    else:  # token_avg
        out[0] = g[0, :d]
        out[n_prefix:] = g[0, d:] / N
    return out


def logit_readout(trace: EncoderTrace, params: EncoderParams,
                  target: int) -> tuple[np.ndarray, float]:
    """G [S, d] and const (float64): logit_target = Σ_i ⟨x_L[i], G[i]⟩ + const for the last
    layer's output x_L, every LayerNorm's σ held at the trace's value (module docstring).
    Raises ValueError without a head, NotDecomposable for a post-norm model or tanh head."""
    head = require_head(params)
    require_decomposable(trace, head)
    cfg = trace.config
    g_pooled, const = pooled_readout(trace, head, target)  # [k, d_pool]
    g = unpool(g_pooled, head.pool, cfg.seq_len, cfg.n_prefix)  # [S, d]
    if not cfg.final_norm:
        return g, const
    sigma = np.sqrt(trace.final_ln.var.astype(np.float64) + cfg.ln_eps)  # [S]
    gamma, beta = params.norm_gamma.astype(np.float64), params.norm_beta.astype(np.float64)
    return centre(gamma * g) / sigma[:, None], const + float((g @ beta).sum())


def scaled(ls: np.ndarray | None, G: np.ndarray) -> np.ndarray:
    """ls ⊙ G row by row (LayerScale moved onto the readout), or G itself. [S, d]."""
    return G if ls is None else G * ls.astype(np.float64)


def head_shares(concat: np.ndarray, W_O: np.ndarray, G: np.ndarray, n_heads: int) -> np.ndarray:
    """⟨concat[:, h]·W_O[h], G⟩ for every head h: Σ_i Σ_j concat[i, h, j]·(G·W_Oᵀ)[i, h, j].
    concat [R, d] (the rows read), W_O [d, d], G [R, d] (LayerScale applied) -> [h]."""
    back = G @ W_O.T.astype(np.float64)  # [R, d] @ [d, d] -> [R, d], what each concat column adds
    S, d = concat.shape
    return (concat.astype(np.float64) * back).reshape(S, n_heads, d // n_heads).sum(axis=(0, 2))


def logit_attribution(trace: EncoderTrace, params: EncoderParams, target: int) -> LogitShares:
    """The shares of class `target`'s logit (module docstring: the formula, where each bias
    goes). trace: one image's pre-norm pass (`encode`); params: its weights, with a head.

    Returns LogitShares (heads [L, h], ffn [L], floats), float64, summing to `logit`.
    Raises ValueError without a head; NotDecomposable (a ValueError) for a post-norm model or a
    head with tanh pre-logits, saying why.
    """
    G, head_bias = logit_readout(trace, params, target)  # [S, d], float
    cfg = trace.config
    n = cfg.n_prefix
    rows = np.flatnonzero(np.any(G != 0, axis=1))  # the rows the logit reads ([CLS]: one)
    G = G[rows]  # [R, d]; every term below is read on these rows only
    patch_rows = rows >= n
    embedding = float(((trace.patches[rows[patch_rows] - n].astype(np.float64)
                        @ params.W_E.astype(np.float64)) * G[patch_rows]).sum())  # ⟨patches·W_E, G⟩
    biases = (0.0 if params.b_E is None
              else float(params.b_E.astype(np.float64) @ G[patch_rows].sum(axis=0)))
    heads, ffn = np.zeros((cfg.n_layers, cfg.n_heads)), np.zeros(cfg.n_layers)
    for l, (lt, p) in enumerate(zip(trace.layers, params.layers, strict=True)):
        G_attn, G_ffn = scaled(p.ls_1, G), scaled(p.ls_2, G)  # [R, d]
        heads[l] = head_shares(lt.concat[rows], p.W_O, G_attn, cfg.n_heads)
        if p.b_O is not None:
            biases += float(p.b_O.astype(np.float64) @ G_attn.sum(axis=0))
        if lt.ffn_hidden is not None:
            ffn[l] = float((lt.ffn_hidden[rows].astype(np.float64)
                            * (G_ffn @ p.W_2.T.astype(np.float64))).sum())
            biases += float(p.b_2.astype(np.float64) @ G_ffn.sum(axis=0))
    positions = float((trace.pos[rows].astype(np.float64) * G).sum()) if cfg.use_pe else 0.0
    prefix = float((trace.tokens[rows[~patch_rows]].astype(np.float64) * G[~patch_rows]).sum())
    logit = float(output_logits(trace.output, params.head, n, cfg.ln_eps)[target])
    return LogitShares(heads=heads, ffn=ffn, embedding=embedding, positions=positions,
                       prefix=prefix, biases=biases, head_bias=head_bias, logit=logit,
                       target=int(target))
