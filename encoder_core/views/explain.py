"""One number of a product, written out: the terms behind a chosen cell, for the app to show.

These recompute a single entry from its inputs in float64, so the app can print
"x = a₁·b₁ + a₂·b₂ + … = result" next to the value the trace holds. Pure NumPy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..params import EncoderParams
from ..pipeline.head import head_logits, head_rows, predict
from ..trace import EncoderTrace
from .vit_steps import activation_gate


@dataclass(frozen=True)
class DotTerms:
    a: np.ndarray  # [n] the row
    b: np.ndarray  # [n] the column
    products: np.ndarray  # [n] a_k · b_k
    total: float  # Σ_k a_k · b_k
    divisor: float  # the result is total / divisor (1 for a plain product)

    @property
    def result(self) -> float:
        return self.total / self.divisor


def dot_terms(a: np.ndarray, b: np.ndarray, divisor: float = 1.0) -> DotTerms:
    """The terms of (a · b) / divisor. a, b: [n]."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    products = a64 * b64
    return DotTerms(a=a64, b=b64, products=products, total=float(products.sum()),
                    divisor=float(divisor))



def affine_terms(a: np.ndarray, b: np.ndarray, bias: float) -> DotTerms:
    """The terms of a · b + bias, the bias written as one more product: 1 × bias (the input
    extended by a constant 1, the weight column by the bias). a, b: [n] -> n + 1 terms."""
    return dot_terms(np.append(np.asarray(a, np.float64), 1.0),
                     np.append(np.asarray(b, np.float64), float(bias)))

@dataclass(frozen=True)
class SoftmaxTerms:
    x: np.ndarray  # [n] the row of scores
    shifted: np.ndarray  # [n] x − max(x)
    exp: np.ndarray  # [n] exp(x − max)
    total: float  # Σ exp
    p: np.ndarray  # [n] exp / Σ exp


def softmax_terms(x: np.ndarray) -> SoftmaxTerms:
    """softmax(x)_j = exp(x_j − max x) / Σ_k exp(x_k − max x), every stage kept. x: [n]."""
    x64 = np.asarray(x, np.float64)
    shifted = x64 - x64.max()
    e = np.exp(shifted)
    return SoftmaxTerms(x=x64, shifted=shifted, exp=e, total=float(e.sum()), p=e / e.sum())


@dataclass(frozen=True)
class LayerNormTerms:
    x: np.ndarray  # [d] one row (position) of the residual sum
    mean: float  # μ = Σ x / d
    var: float  # σ² = Σ (x − μ)² / d
    std: float  # √(σ² + ε)
    normed: np.ndarray  # [d] x̂ = (x − μ) / √(σ² + ε)
    out: np.ndarray  # [d] γ ⊙ x̂ + β


def layer_norm_terms(x: np.ndarray, gamma: np.ndarray, beta: np.ndarray,
                     eps: float) -> LayerNormTerms:
    """The layer-norm arithmetic of one position, in float64. x, gamma, beta: [d]."""
    x64 = np.asarray(x, np.float64)
    mean = float(x64.mean())
    var = float(((x64 - mean) ** 2).mean())
    std = float(np.sqrt(var + eps))
    normed = (x64 - mean) / std
    return LayerNormTerms(x=x64, mean=mean, var=var, std=std, normed=normed,
                          out=np.asarray(gamma, np.float64) * normed + np.asarray(beta,
                                                                                  np.float64))


def largest_terms(products: np.ndarray, k: int = 4) -> np.ndarray:
    """Indices of the k products with the largest magnitude, largest first (equal magnitudes:
    lower index first). [n] -> [≤k]."""
    k = min(k, len(products))
    return np.argsort(-np.abs(products), kind="stable")[:k]


@dataclass(frozen=True)
class LayerNormSums:
    sum_x: float  # Σ_k x_k (μ = sum_x / d)
    sq_dev: np.ndarray  # [d] (x_k − μ)²
    sum_sq_dev: float  # Σ_k (x_k − μ)² (σ² = sum_sq_dev / d)
    normed_mean: float  # mean of the row x̂ (≈ 0)
    normed_var: float  # population variance of the row x̂
    expected_var: float  # σ² / (σ² + ε), what normed_var must equal (≈ 1)


def layer_norm_sums(terms: LayerNormTerms) -> LayerNormSums:
    """The sums behind μ and σ² of one position, and the check that x̂ has mean 0, variance ≈ 1.

    Var(x̂) = σ² / (σ² + ε) exactly, since x̂ = (x − μ) / √(σ² + ε). terms: from layer_norm_terms.
    """
    dev = terms.x - terms.mean  # [d]
    sq_dev = dev * dev  # [d]
    return LayerNormSums(sum_x=float(terms.x.sum()), sq_dev=sq_dev,
                         sum_sq_dev=float(sq_dev.sum()),
                         normed_mean=float(terms.normed.mean()),
                         normed_var=float(terms.normed.var()),
                         expected_var=terms.var / (terms.std * terms.std))


@dataclass(frozen=True)
class HiddenUnitTerms:
    dot: DotTerms  # x_i · W_1[:, j], its products and total
    bias: float  # b_1[j]
    pre: float  # x_i · W_1[:, j] + b_1[j], before the activation
    hidden: float  # act(pre): ffn_hidden[i, j]
    activation: str = "relu"  # "relu", "gelu" or "gelu_tanh"
    gate: float = 1.0  # g with act(pre) = pre · g: ReLU 1 or 0, GELU Φ(pre)


def hidden_unit_terms(x: np.ndarray, W_1: np.ndarray, b_1: np.ndarray,
                      j: int, activation: str = "relu") -> HiddenUnitTerms:
    """One FFN hidden activation written out: act(x · W_1[:, j] + b_1[j]), act = max(0, ·)
    (ReLU), or GELU(pre) = pre · Φ(pre) (erf; or its tanh form), in float64.

    Args:
        x: [d_model] one position's input to the FFN (post-norm: the ln_1.out row; pre-norm:
        the ln_2.out row); W_1: [d_model, d_ff]; b_1: [d_ff]; j: the hidden unit.
    """
    dot = dot_terms(x, W_1[:, j])
    pre = dot.total + float(b_1[j])
    gate = activation_gate(pre, activation)
    hidden = max(0.0, pre) if activation == "relu" else pre * gate
    return HiddenUnitTerms(dot=dot, bias=float(b_1[j]), pre=pre, hidden=hidden,
                           activation=activation, gate=gate)


@dataclass(frozen=True)
class PETerms:
    pos: int  # the patch number (row-major)
    column: int  # the PE column, 0 … d_model − 1
    i: int  # the pair index: column = 2i (sin) or 2i + 1 (cos)
    func: str  # "sin" for an even column, "cos" for an odd one
    exponent: float  # 2i / d_model
    denominator: float  # 10000^(2i / d_model)
    angle: float  # pos / 10000^(2i / d_model), in radians
    value: float  # sin(angle) or cos(angle)


def pe_terms(pos: int, column: int, d_model: int) -> PETerms:
    """One entry of the positional encoding, every stage kept, in float64.

    PE(pos, 2i) = sin(pos / 10000^(2i/d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).
    """
    i = column // 2
    exponent = 2 * i / d_model
    denominator = float(10000.0**exponent)
    angle = pos / denominator
    func = "sin" if column % 2 == 0 else "cos"
    value = float(np.sin(angle) if func == "sin" else np.cos(angle))
    return PETerms(pos=pos, column=column, i=i, func=func, exponent=exponent,
                   denominator=denominator, angle=angle, value=value)


@dataclass(frozen=True)
class TermSummary:
    shown: np.ndarray  # [k] indices of the terms written out (first few + largest), in order
    rest_count: int  # how many terms are not written out
    rest_sum: float  # the sum of those terms
    total: float  # the sum of all terms: Σ shown + rest_sum


def summarise_terms(terms: np.ndarray, first: int = 4, largest: int = 4) -> TermSummary:
    """Which terms of a long sum to write out: the first `first` and the `largest` largest in
    magnitude, plus the count and the sum of the others, in float64. terms: [n].

    E.g. "a₀ + a₁ + a₂ + a₃ + … + a₁₇ + (56 more terms: 0.12) = total".
    """
    t64 = np.asarray(terms, np.float64)
    shown = np.union1d(np.arange(min(first, len(t64))), largest_terms(t64, largest))
    total = float(t64.sum())
    return TermSummary(shown=shown.astype(int), rest_count=len(t64) - len(shown),
                       rest_sum=total - float(t64[shown].sum()), total=total)


@dataclass(frozen=True)
class LogitTerms:
    """One logit of a classification head, written out: per head row r (two for DeiT distilled,
    else one) rows[r] = the pooled row · W[:, c] (`dot_terms`, without the bias), biases[r] = b_c,
    stored[r] = that head's logit as the head computed it (float32); logit = their mean."""

    c: int  # the class
    rows: tuple[DotTerms, ...]  # [k] pooled row k · W_head[:, c] (W_dist for the [DIST] row)
    biases: tuple[float, ...]  # [k] b_head[c] (b_dist[c])
    stored: tuple[float, ...]  # [k] the head's logits of class c, float32
    logit: float  # predict's logit c: the mean over the k rows


def logit_terms(trace: EncoderTrace, params: EncoderParams, c: int) -> LogitTerms:
    """logit_c = pooled · W_head[:, c] + b_c (DeiT distilled: the mean of its two heads'), the
    pooled row as `head_rows` gives it (pooled, fc_norm, tanh pre-logits), in float64."""
    head, cfg = params.head, trace.config
    rows = head_rows(trace.output, head, cfg.n_prefix, cfg.ln_eps)  # [k, d_in]
    per_head = head_logits(rows, head)[:, c]  # [k] float32, as predict sums them
    weights = [(head.W_head, head.b_head), (head.W_dist, head.b_dist)][:len(rows)]
    return LogitTerms(c=int(c), rows=tuple(dot_terms(row, W[:, c]) for row, (W, _) in
                                           zip(rows, weights, strict=True)),
                      biases=tuple(float(b[c]) for _, b in weights),
                      stored=tuple(float(v) for v in per_head),
                      logit=float(predict(trace, params)[c]))
