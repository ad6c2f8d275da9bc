"""The logit lens: the model's own classification head read off every layer's hidden state.

The residual stream entering layer 0 is x_0 (`trace.x0`), after layer l it is x_{l+1}
(`trace.layers[l].out`). The lens sends each x_l through the path the model's last state takes
to its logits (`pipeline/head.py`), nothing else changed:

    lens_l = head(pool(FinalNorm(x_l)))        l = 0 … L          [L + 1, n_classes]
    FinalNorm = LN with the model's own γ, β (only with final_norm; else the identity)
    pool      = the head's pooling (the [CLS] row, the patches' mean, [CLS ‖ mean], or the
                [CLS] and [DIST] rows of DeiT distilled), then fc_norm and tanh pre-logits
                when the head has them
    head      = · W_head + b_head  (DeiT distilled: the mean of its two heads)

The last row is the model's prediction: lens_L = `predict(trace, params)`, value for value (it
is computed from `trace.output`, which is FinalNorm(x_L) already).

Per token (tokens=True) nothing is pooled: every row x_l[i] goes through the final norm and
then the head as if the whole output were that one row repeated (every pooling of S equal rows
is that row: the [CLS] row, the mean, [x ‖ x], and DeiT's two heads both on it):

    lens_l[i] = head(pool([FinalNorm(x_l)[i]] · S))         [L + 1, S, n_classes]

"which class this token already says". The per-token last row at [CLS] equals `predict` for a
[CLS]-pooled head.

Nothing of the encoder is recomputed: the hidden states are the trace's; the cost is one final
norm and one head per layer (per row with tokens=True: (L + 1)·S head rows).
"""

from __future__ import annotations

import numpy as np

from ..params import EncoderParams, HeadParams
from ..pipeline.head import output_logits
from ..pipeline.norm import layer_norm
from ..trace import EncoderTrace


def require_head(params: EncoderParams) -> HeadParams:
    """params.head, or a ValueError that says there is nothing to read the states with."""
    if params.head is None:
        raise ValueError("these weights have no classification head: the logit lens reads every "
                         "layer through the head, so there is nothing to read it with.")
    return params.head


def hidden_states(trace: EncoderTrace) -> np.ndarray:
    """The residual stream entering layer 0 and after every layer: [x0, out_0, …, out_{L−1}],
    [L + 1, S, d] in the trace's dtype (a new array)."""
    return np.stack([trace.x0, *(layer.out for layer in trace.layers)])


def final_normed(trace: EncoderTrace, params: EncoderParams, x: np.ndarray) -> np.ndarray:
    """FinalNorm(x) = γ ⊙ (x − μ) / √(σ² + ε) + β row by row with the model's final norm, or x
    itself without one. x: [..., S, d] -> [..., S, d]."""
    cfg = trace.config
    if not cfg.final_norm:
        return x
    return layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps).out


def as_repeated_rows(rows: np.ndarray) -> np.ndarray:
    """Each row x [..., d] as an output of 2 equal rows [..., 2, d]: with n_prefix = 1 every
    pooling reads x itself (row 0, rows 0 and 1, the mean of row 1, [x ‖ x])."""
    return np.broadcast_to(rows[..., None, :], (*rows.shape[:-1], 2, rows.shape[-1]))


def logit_lens(trace: EncoderTrace, params: EncoderParams, tokens: bool = False) -> np.ndarray:
    """The classification head read off the residual stream entering layer 0 and after every
    layer (see the module's docstring for the formula).

    Args:
        trace: one image's forward pass (`encode`); params: its weights, with a head.
        tokens: False: the head's own pooling, one row of logits per depth; True: every token
            on its own, no pooling.
    Returns:
        [L + 1, n_classes] (tokens: [L + 1, S, n_classes]) in the trace's dtype (float32 from
        `encode`); row 0 = entering layer 0 (x0), row l = after layer l − 1 … row L = after the
        last layer, equal to `predict(trace, params)` (tokens=False).
    Raises:
        ValueError when the weights have no classification head.
    """
    head = require_head(params)
    cfg = trace.config
    states = hidden_states(trace)  # [L + 1, S, d]
    if tokens:
        normed = final_normed(trace, params, states)  # [L + 1, S, d]
        normed[-1] = trace.output  # the trace's own final norm of the last layer
        return output_logits(as_repeated_rows(normed), head, 1, cfg.ln_eps)  # [L + 1, S, n]
    before = final_normed(trace, params, states[:-1])  # [L, S, d]
    last = output_logits(trace.output, head, cfg.n_prefix, cfg.ln_eps)  # [n] = predict's
    return np.concatenate([output_logits(before, head, cfg.n_prefix, cfg.ln_eps), last[None]])


def lens_ranks(lens: np.ndarray, target: int) -> np.ndarray:
    """The rank of class `target` at every depth (0 = the top class; ties: the lower index
    first, as `top_classes`). lens: [..., n_classes] -> [...] int."""
    logits = np.asarray(lens)
    above = logits > logits[..., target:target + 1]
    tied_before = (logits == logits[..., target:target + 1])[..., :target]
    return above.sum(axis=-1) + tied_before.sum(axis=-1)


def lens_probabilities(lens: np.ndarray) -> np.ndarray:
    """softmax of every row of the lens, in float64: [..., n_classes] -> [..., n_classes]."""
    x = np.asarray(lens, np.float64)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
