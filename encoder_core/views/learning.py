"""One step of learning, walked: the loss of one image with its label, its gradient back through
every step (by `encoder_core.backward`, the project's one backward), two pieces of that backward
written out for one row (the softmax's Jacobian, the LayerNorm's backward), and one update of
the weights (SGD, or Adam as the trainer's) — what the page "How it learns" shows.

    loss      = −log p_y,  p = softmax(logits)           [K] -> scalar
    dL/dlogits = p − onehot(y)                            [K]
    dL/dpooled = dL/dlogits · W_headᵀ                     [K] -> [d]   (mean pool: each row /N)
    ...        = backward(trace, params, dL/dlogits)      every field, every weight
    softmax:   J = diag(a) − a aᵀ,  dL/dscores_i = J · dL/dattn_i      one query row i, [S]
    SGD:       θ ← θ − lr · g
    Adam:      m ← β₁m + (1−β₁)g,  v ← β₂v + (1−β₂)g²,  θ ← θ − lr · m̂ / (√v̂ + ε)

Pure functions on NumPy arrays: nothing is modified in place, every result is new.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import EncoderConfig
from ..gradients import backward
from ..params import EncoderParams, HeadParams, params_from_arrays, params_to_arrays
from ..pipeline.attention import softmax
from ..pipeline.encoder import encode
from ..pipeline.head import predict
from ..trace import EncoderTrace

ADAM_BETAS = (0.9, 0.999)  # the trainer's (training/train.py, `Adam`)
ADAM_EPS = 1e-8


# --- the loss ----------------------------------------------------------------------------------

def cross_entropy(logits: np.ndarray, label: int) -> tuple[float, np.ndarray, np.ndarray]:
    """loss = −log softmax(logits)[label], and dL/dlogits = p − onehot(label).

    Args:
        logits: [K] one image's raw class scores; label: its class, 0 … K−1.
    Returns:
        (loss, p [K] the probabilities, d_logits [K]) in float64.
    """
    z = np.asarray(logits, dtype=np.float64)  # [K]
    p = softmax(z)  # [K] (the row max subtracted first)
    loss = float(np.log(np.exp(z - z.max()).sum()) - (z[label] - z.max()))
    d_logits = p.copy()
    d_logits[label] -= 1.0  # p − onehot
    return loss, p, d_logits


@dataclass(frozen=True)
class LossGradients:
    """One image's loss and its gradient with respect to everything (`backward` seeded with
    dL/dlogits)."""

    label: int  # the image's class
    logits: np.ndarray  # [K] the raw class scores
    loss: float  # −log p_label
    probs: np.ndarray  # [K] softmax(logits)
    d_logits: np.ndarray  # [K] p − onehot(label)
    d_pooled: np.ndarray  # [d] dL/d(the pooled row the head reads) = d_logits · W_headᵀ
    grads: EncoderTrace  # dL/d every field of the trace (its shapes), .params: every weight


def loss_gradients(trace: EncoderTrace, params: EncoderParams, label: int) -> LossGradients:
    """The loss of the traced image with its label, and dL/d everything.

    Args:
        trace: one image's forward (`encode`, no batch axis); params: its weights with a head
            that pools by the mean or a [CLS] row (one pooled row, no pre-logits).
        label: the image's class.
    """
    head = params.head
    if (head is None or head.W_pre is not None or head.fc_norm_gamma is not None
            or head.pool not in ("avg", "token")):
        raise ValueError("the loss needs a head reading one pooled row (mean or [CLS]).")
    logits = predict(trace, params)  # [S, d] -> pooled [d] -> [K]
    loss, p, d_logits = cross_entropy(logits, label)
    seed = d_logits.astype(trace.output.dtype)  # [K] the loss's gradient as backward's target
    grads = backward(trace, params, seed)
    d_pooled = seed @ np.asarray(head.W_head).T  # [K] · [K, d] -> [d]
    return LossGradients(label=label, logits=np.asarray(logits), loss=loss, probs=p,
                         d_logits=d_logits, d_pooled=d_pooled, grads=grads)


# --- two pieces of the backward, for one row ---------------------------------------------------

def softmax_jacobian(a: np.ndarray) -> np.ndarray:
    """J = diag(a) − a aᵀ: J_ij = ∂a_i/∂z_j of a = softmax(z).

    Args:
        a: [S] one query row of attention weights.
    Returns:
        J [S, S], symmetric, every row summing to 0.
    """
    a = np.asarray(a, dtype=np.float64)
    return np.diag(a) - np.outer(a, a)  # [S, S]


def scores_row_gradient(a: np.ndarray, d_attn: np.ndarray) -> np.ndarray:
    """dL/dscores of one query row = J · dL/dattn (J symmetric: Jᵀ = J).

    Args:
        a: [S] the row's attention weights; d_attn: [S] dL/dattn of that row.
    Returns:
        [S] dL/dscores of the row (= a ⊙ (d_attn − Σ_j a_j d_attn_j)).
    """
    return softmax_jacobian(a) @ np.asarray(d_attn, dtype=np.float64)  # [S, S] · [S] -> [S]


@dataclass(frozen=True)
class SoftmaxRow:
    """One query row's softmax backward, written out."""

    a: np.ndarray  # [S] attention weights of the row
    d_attn: np.ndarray  # [S] dL/dattn of the row
    J: np.ndarray  # [S, S] diag(a) − a aᵀ
    weighted: float  # Σ_j a_j · dL/dattn_j, what every entry's gradient is measured against
    d_scores: np.ndarray  # [S] J · dL/dattn = a ⊙ (dL/dattn − weighted)

    def largest(self, k: int) -> np.ndarray:
        """The k keys with the largest weights, in key order: [k] ints."""
        return np.sort(np.argsort(-self.a, kind="stable")[:k])


def softmax_row_backward(a: np.ndarray, d_attn: np.ndarray) -> SoftmaxRow:
    """`scores_row_gradient` with its pieces. a, d_attn: [S]."""
    a64, d64 = np.asarray(a, np.float64), np.asarray(d_attn, np.float64)
    return SoftmaxRow(a=a64, d_attn=d64, J=softmax_jacobian(a64), weighted=float(a64 @ d64),
                      d_scores=scores_row_gradient(a64, d64))


@dataclass(frozen=True)
class LayerNormRow:
    """The LayerNorm y = γ ⊙ (x − μ)/√(σ² + ε) + β of one row, forward and backward."""

    x: np.ndarray  # [d] the row in
    mean: float  # μ
    var: float  # σ² (population)
    rstd: float  # r = 1/√(σ² + ε)
    normed: np.ndarray  # [d] x̂ = (x − μ)·r
    d_out: np.ndarray  # [d] dL/dy
    d_normed: np.ndarray  # [d] dx̂ = dy ⊙ γ
    d_var: float  # dσ² = −½ r² Σ_j dx̂_j x̂_j
    d_mean: float  # dμ = −r Σ_j dx̂_j
    mean_d_normed: float  # mean(dx̂)
    mean_d_normed_x: float  # mean(dx̂ ⊙ x̂)
    dx: np.ndarray  # [d] r·(dx̂ − mean(dx̂) − x̂·mean(dx̂ ⊙ x̂))


def layer_norm_row_backward(x: np.ndarray, gamma: np.ndarray, eps: float,
                            d_out: np.ndarray) -> LayerNormRow:
    """One row's LayerNorm backward, written out (docs/backward.md, "LayerNorm").

    Args:
        x: [d] the row LayerNorm reads; gamma: [d]; eps: ε; d_out: [d] dL/dy of that row.
    """
    x = np.asarray(x, dtype=np.float64)
    mean = float(x.mean())
    var = float(((x - mean) ** 2).mean())
    rstd = 1.0 / np.sqrt(var + eps)
    normed = (x - mean) * rstd  # [d]
    d_out = np.asarray(d_out, dtype=np.float64)
    d_normed = d_out * np.asarray(gamma, dtype=np.float64)  # [d]
    d_var = float(-0.5 * rstd * rstd * (d_normed * normed).sum())
    d_mean = float(-rstd * d_normed.sum())
    m1, m2 = float(d_normed.mean()), float((d_normed * normed).mean())
    dx = rstd * (d_normed - m1 - normed * m2)  # [d]
    return LayerNormRow(x=x, mean=mean, var=var, rstd=float(rstd), normed=normed, d_out=d_out,
                        d_normed=d_normed, d_var=d_var, d_mean=d_mean, mean_d_normed=m1,
                        mean_d_normed_x=m2, dx=dx)


# --- one update ----------------------------------------------------------------------------------

def trainable(params: EncoderParams) -> dict[str, np.ndarray]:
    """The weights as the flat `.npz` scheme (`params_to_arrays`), the head's pooling left out:
    what an optimiser moves."""
    return {k: v for k, v in params_to_arrays(params).items() if v.dtype.kind == "f"}


def rebuilt(params: EncoderParams, arrays: dict[str, np.ndarray],
            cfg: EncoderConfig) -> EncoderParams:
    """`params` with its weights replaced by `arrays` (the flat scheme), frozen."""
    flat = params_to_arrays(params) | arrays
    return params_from_arrays(flat, cfg)


def sgd_step(params: EncoderParams, grads: EncoderParams, lr: float,
             cfg: EncoderConfig) -> EncoderParams:
    """θ ← θ − lr·g for every weight (a new EncoderParams; `grads`: `backward(…).params`)."""
    g = trainable(grads)
    new = {k: (v - np.float32(lr) * g[k]).astype(v.dtype) for k, v in trainable(params).items()}
    return rebuilt(params, new, cfg)


@dataclass(frozen=True)
class AdamState:
    """Adam's moments after t steps (empty before the first)."""

    t: int = 0
    m: dict[str, np.ndarray] = field(default_factory=dict)  # first moments, the weights' keys
    v: dict[str, np.ndarray] = field(default_factory=dict)  # second moments


def adam_step(params: EncoderParams, grads: EncoderParams, state: AdamState, lr: float,
              cfg: EncoderConfig, betas: tuple[float, float] = ADAM_BETAS,
              eps: float = ADAM_EPS) -> tuple[EncoderParams, AdamState]:
    """One Adam step, the trainer's (no weight decay):
    m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², θ ← θ − lr·(m/(1−β₁ᵗ)) / (√(v/(1−β₂ᵗ)) + ε).

    Returns:
        (the new weights, the new state); `params` and `state` are left as they were.
    """
    b1, b2 = betas
    t = state.t + 1
    c1, c2 = 1 - b1**t, 1 - b2**t
    g = trainable(grads)
    new, m, v = {}, {}, {}
    for k, theta in trainable(params).items():
        m[k] = b1 * state.m.get(k, 0.0) + (1 - b1) * g[k]
        v[k] = b2 * state.v.get(k, 0.0) + (1 - b2) * (g[k] * g[k])
        step = (lr / c1) * m[k] / (np.sqrt(v[k] / c2) + eps)
        new[k] = (theta - step).astype(theta.dtype)
    return rebuilt(params, new, cfg), AdamState(t=t, m=m, v=v)


@dataclass(frozen=True)
class Step:
    """What one step on one image leaves: the weights after it and the loss before it."""

    params: EncoderParams  # the weights after the step
    adam: AdamState  # Adam's moments (untouched by SGD)
    loss_before: float  # the loss the step's gradient was taken at


def train_step(image: np.ndarray, label: int, cfg: EncoderConfig, params: EncoderParams,
               optimiser: str, lr: float, adam: AdamState = AdamState()) -> Step:
    """Forward, loss, backward and one update ("sgd" or "adam") on one image.

    Args:
        image: [S_img, S_img, C] in [0, 1]; label: its class; params: the weights with a head.
    """
    trace = encode(image, cfg, params)
    lg = loss_gradients(trace, params, label)
    if optimiser == "sgd":
        return Step(sgd_step(params, lg.grads.params, lr, cfg), adam, lg.loss)
    if optimiser == "adam":
        new, state = adam_step(params, lg.grads.params, adam, lr, cfg)
        return Step(new, state, lg.loss)
    raise ValueError(f"unknown optimiser {optimiser!r}: 'sgd' or 'adam'.")


def image_loss(image: np.ndarray, label: int, cfg: EncoderConfig,
               params: EncoderParams) -> float:
    """The loss of one image with its label under `params` (a forward, no backward)."""
    return cross_entropy(predict(encode(image, cfg, params), params), label)[0]


def random_head(cfg: EncoderConfig, n_classes: int, seed: int = 0) -> HeadParams:
    """A mean-pool head at random, as a model before training has one: W_head
    [d_model, n_classes] ~ U(±√(6/(d + K))) (Glorot), b_head = 0."""
    rng = np.random.default_rng(seed)
    limit = np.sqrt(6.0 / (cfg.d_model + n_classes))
    W = rng.uniform(-limit, limit, (cfg.d_model, n_classes)).astype(np.float32)
    return HeadParams(pool="avg", W_head=W, b_head=np.zeros(n_classes, np.float32))


# --- the answers of the page's questions --------------------------------------------------------

Direction = str  # "up", "down" or "same"


def logit_move(before: np.ndarray, after: np.ndarray, label: int,
               tol: float = 1e-6) -> tuple[Direction, float]:
    """Which way the label's logit moved between two predictions of the same image, and by
    how much (after − before). Not always "up": the step lowers the loss, which it may do by
    lowering the other logits more than the label's.

    Args:
        before, after: [K] the logits before and after a step; label: the image's class.
    """
    delta = float(after[label]) - float(before[label])
    return ("same" if abs(delta) <= tol else "up" if delta > 0 else "down"), delta


@dataclass(frozen=True)
class ValueGradients:
    """One head's dL/dV row by row beside the attention each key receives: a key no query
    attends to passes no gradient to its value row (dV = attnᵀ · dL/dheads), so none to W_V
    through that head's columns from its token."""

    received: np.ndarray  # [S] Σ_i attn[i, j]: the attention key j receives from every query
    dv_norm: np.ndarray  # [S] ‖dL/dv_j‖ of the head's value rows


def value_gradients(attn: np.ndarray, d_heads: np.ndarray) -> ValueGradients:
    """dL/dV = attnᵀ · dL/dheads for one head, summarised per key.

    Args:
        attn: [S, S] one head's attention (queries × keys); d_heads: [S, d_head] dL/dheads.
    """
    a = np.asarray(attn, dtype=np.float64)
    dv = a.T @ np.asarray(d_heads, dtype=np.float64)  # [S, S]ᵀ · [S, d_head] -> [S, d_head]
    return ValueGradients(received=a.sum(axis=0), dv_norm=np.linalg.norm(dv, axis=-1))


@dataclass(frozen=True)
class AttentionChange:
    """What an update moved in the attention of one image: after − before, and where its
    largest change is (the largest |after − before| over every layer, head, query and key)."""

    delta: np.ndarray  # [n_layers, n_heads, T, T] attn after − attn before
    layer: int  # where the largest |delta| is (0-based indices)
    head: int
    query: int
    key: int
    value: float  # delta there (signed)


def attention_change(before: EncoderTrace, after: EncoderTrace) -> AttentionChange:
    """Δattn = attn_after − attn_before for every layer, and its largest |Δ|.

    Args:
        before, after: two traces of the same image (before and after a step).
    """
    delta = np.stack([b.attn.astype(np.float64) - a.attn.astype(np.float64) for a, b in
                      zip(before.layers, after.layers, strict=True)])  # [L, h, T, T]
    delta.setflags(write=False)
    l, h, i, j = (int(v) for v in np.unravel_index(int(np.argmax(np.abs(delta))), delta.shape))
    return AttentionChange(delta, l, h, i, j, float(delta[l, h, i, j]))
