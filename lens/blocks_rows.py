"""Worked arithmetic of one normalised row: the softmax of a row of scores (page 6) and the layer
norm of one position (page 8), every stage written out and compared with the trace.

The texts are in `blocks.toml`, with those of the other worked sums.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from encoder_core.trace import LayerNormTrace
from encoder_core.views.explain import (
    LayerNormTerms,
    SoftmaxTerms,
    largest_terms,
    layer_norm_sums,
    summarise_terms,
)

from .blocks import OWNER, folded, stored_check, trace_line, with_gaps
from .context import PageContext
from .i18n import Texts
from .latex import fixed, num, term, written_sum
from .widgets import Where

EXP_SHOWN = 3  # exponentials written out: the first ones and the largest


def softmax_row(ctx: PageContext, terms: SoftmaxTerms, stored: np.ndarray, i: int, j: int, *,
                where: Where = None) -> None:
    """attn[i, j] against the trace, then (folded) row i of attn worked out as a code listing —
    the maximum, the exponentials, their sum, the division — and compared with the trace at the
    most attended key, key j and key i:

        attn[i, j] = exp(s[i, j] − m) / Σ_k exp(s[i, k] − m),   m = max_k s[i, k]

    Args:
        terms: softmax_terms(scores[i]) ([N] each); stored: attn[i] as the trace holds it, [N].
        i: the query row; j: the chosen key.
    """
    texts = Texts(ctx.lang, OWNER)
    where = where or st
    n = len(terms.x)
    arg = int(np.argmax(terms.x))
    exp_sum = summarise_terms(terms.exp, first=EXP_SHOWN, largest=EXP_SHOWN)
    m = terms.x[arg]
    m_txt = f"{m:.4f}" if m >= 0 else f"({m:.4f})"
    lines = [f"{texts('step_max')}:", f"   m = s[{i}, {arg}] = {fixed(m)}",
             texts("step_exp", i=i) + ":"]
    lines += with_gaps(exp_sum.shown, lambda k: (
        f"j = {k:>4}:  exp({fixed(terms.x[k])} − {m_txt}) = exp({fixed(terms.shifted[k])}) "
        f"= {terms.exp[k]:.4g}"))
    lines += [f"{texts('step_sum')}:",
              "   Σ = " + " + ".join(f"e_{k}" for k in exp_sum.shown)]
    if exp_sum.rest_count:
        lines.append(f"     + ({texts('more_terms', n=exp_sum.rest_count)} "
                     f"{exp_sum.rest_sum:.6g})")
    lines += [f"     = {terms.total:.6g}", texts("step_div", i=i) + ":"]
    picks = {arg: "largest_key"}  # key -> which one; the first label of a key wins
    for k, which in ((j, "chosen_key"), (i, "query_itself")):
        picks.setdefault(k, which)
    for k, which in picks.items():
        lines += [f"   j = {k:>4} ({texts(which)}):",
                  f"      {terms.exp[k]:.6g} / {terms.total:.6g} = {terms.p[k]:.6g}",
                  "      " + trace_line(ctx, f"attn[{i}, {k}]", stored[k], ".6g",
                                        one_line=True)]
    lines += [f"{texts('step_check')}:",
              f"   Σ_j attn[{i}, j] = {summarise_terms(terms.p).total:.6f}"]
    stored_check(ctx, terms.p[j], stored[j], f"attn[{i}, {j}]", where=where)
    box = folded(ctx, where)
    box.code("\n".join(lines), language=None, wrap_lines=True)
    box.caption(texts("exp_shown", first=EXP_SHOWN, n=n))


def layer_norm_row(ctx: PageContext, terms: LayerNormTerms, gamma: np.ndarray, beta: np.ndarray,
                   eps: float, k: int, stored: LayerNormTrace, i: int, field: str, *,
                   where: Where = None) -> None:
    """The layer norm of one position written out (folded) — μ, σ², √(σ² + ε), x̂_k, out_k, the
    largest squared deviations — then a table against the trace and the check that x̂ has mean 0 and
    variance σ²/(σ² + ε) ≈ 1:

        μ = Σ_k x_k / d,  σ² = Σ_k (x_k − μ)² / d,  x̂_k = (x_k − μ) / √(σ² + ε),
        out_k = γ_k x̂_k + β_k

    Args:
        terms: layer_norm_terms(x, gamma, beta, eps) of the row x = resid[i] ([d]).
        gamma, beta: [d]; k: the feature followed through x̂ and out.
        stored: the trace's layer norm (ln_1 or ln_2), row i; field: its name in the trace
            ("layers[0].ln_1").
    """
    texts = Texts(ctx.lang, OWNER)
    where = where or st
    d = len(terms.x)
    sums = layer_norm_sums(terms)
    box = folded(ctx, where)  # the sums written out; the table and the check stay in view
    box.latex(r"\begin{aligned} \mu &= \frac{%s}{%d} \\ &= \frac{%s}{%d} = %s \end{aligned}"
                % (written_sum(terms.x), d, num(sums.sum_x), d, num(terms.mean)))
    box.latex(r"\begin{aligned} \sigma^2 &= \frac{%s}{%d} \\ &= \frac{%s}{%d} = %s"
                r" \end{aligned}"
                % (written_sum(sums.sq_dev), d, num(sums.sum_sq_dev), d, num(terms.var)))
    box.latex(r"\sqrt{\sigma^2 + \varepsilon} = \sqrt{%s + %s} = %s"
                % (num(terms.var), num(eps), num(terms.std)))
    box.latex(r"\hat{x}_{%d} = \frac{x_{%d} - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
                r" = \frac{%s - %s}{%s} = %s"
                % (k, k, term(terms.x[k]), term(terms.mean), num(terms.std),
                   num(terms.normed[k])))
    box.latex(r"\text{out}_{%d} = \gamma_{%d}\,\hat{x}_{%d} + \beta_{%d} = %s \cdot %s + %s"
                r" = %s"
                % (k, k, k, k, num(float(gamma[k])), term(terms.normed[k]),
                   term(float(beta[k])), num(terms.out[k])))
    if d > 6:
        box.caption(texts("dots_features", m=d - 5, d=d, last=d - 1))
    else:
        box.caption(texts("all_features", d=d, last=d - 1))
    top = largest_terms(sums.sq_dev)
    box.caption(texts("largest_sq_dev", terms=", ".join(
        f"k = {t}: {sums.sq_dev[t]:.4g}" for t in top)))

    where.markdown(f"**{texts('compare')}**")
    rows = [("μ", terms.mean, stored.mean[i], f"{field}.mean[{i}]"),
            ("σ²", terms.var, stored.var[i], f"{field}.var[{i}]"),
            (f"x̂_{k}", terms.normed[k], stored.normed[i, k], f"{field}.normed[{i}, {k}]"),
            (f"out_{k}", terms.out[k], stored.out[i, k], f"{field}.out[{i}, {k}]")]
    where.dataframe([{texts("col_quantity"): q, texts("col_written"): f"{a:.7g}",
                      texts("col_trace"): f"{b:.7g}", texts("col_field"): name}
                     for q, a, b, name in rows], hide_index=True)
    where.success(texts("check_normed", i=i, m=f"{sums.normed_mean:.2e}",
                      v=f"{sums.normed_var:.6f}", e=f"{sums.expected_var:.6f}"))
