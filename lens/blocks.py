"""Worked arithmetic shared by the pages: a sum written out term by term and checked against the
value the encoder stored.

One function per kind of worked sum — a dot product in LaTeX, its largest products as a table, a
long sum as a code listing, an FFN hidden unit — each called from every page that shows one. The
softmax row and the layer-norm row are in `blocks_rows`. The blocks own their texts
(`blocks.toml`, one meaning per key); the page keeps the narrative around them and decides where
they go (`where`: a column or container, the page itself by default). Each block shows its key
number (the result against the trace) and folds the long term-by-term arithmetic into an
expander (`folded`), one click away."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from encoder_core.views.explain import DotTerms, HiddenUnitTerms, largest_terms, summarise_terms

from .context import PageContext
from .i18n import Texts
from .latex import dot_latex, fixed, num, term, written_products
from .widgets import Where

GATE_TEX = {"gelu": r"\Phi(z) = z\cdot\tfrac12\big(1 + \mathrm{erf}(z/\sqrt{2})\big)",
            "gelu_tanh": r"\cdot\tfrac12\big(1 + \tanh(\sqrt{2/\pi}\,(z + 0.044715\,z^3))\big)"}
SHOWN = 4  # products written out in LaTeX before the ⋯ (then the last one)
FIRST, LARGEST = 4, 4  # terms a code listing writes out: the first ones and the largest


OWNER = "blocks"  # lens/texts/<lang>/blocks.toml



def folded(ctx: PageContext, where: Where = None) -> DeltaGenerator:
    """The expander that holds a block's long arithmetic, folded until the learner opens it."""
    t = Texts(ctx.lang, OWNER)
    return (where or st).expander(t("show_arithmetic"))


def stored_check(ctx: PageContext, mine: float, stored: float, field: str, *,
                 where: Where = None) -> None:
    """The float64 recomputation beside the float32 value the trace holds at `field`, both to
    7 significant digits (float32's precision), so a rounding difference can show."""
    t = Texts(ctx.lang, OWNER)
    (where or st).markdown(t("check_stored", mine=f"{mine:.7g}",
                               stored=f"{float(stored):.7g}", field=field))


def dot_product(ctx: PageContext, lhs: str, terms: DotTerms, stored: float, field: str, *,
                where: Where = None, bias: float | None = None, bias_tex: str = "b") -> None:
    """A dot product (plus a bias, if any) checked against the trace, then written out in
    LaTeX (folded):

        lhs = (a_0)(b_0) + (a_1)(b_1) + (a_2)(b_2) + (a_3)(b_3) + ⋯ + (a_n−1)(b_n−1) = Σ_k a_k b_k
            [+ bias = Σ_k a_k b_k + bias]

    Args:
        lhs: the entry in LaTeX, e.g. r"\\text{embedded}[3, 5]".
        terms: dot_terms(a, b) of the row a [n] and the column b [n].
        stored: the entry as the encoder stored it (float32); field: its name in the trace.
        bias: the bias added after the sum (e.g. b_E[j]), or None; bias_tex: its name in LaTeX.
    """
    t = Texts(ctx.lang, OWNER)
    where = where or st
    n = len(terms.products)
    total = terms.total if bias is None else terms.total + bias
    stored_check(ctx, total, stored, field, where=where)
    box = folded(ctx, where)
    tex = dot_latex(lhs, terms, SHOWN)
    if bias is not None:  # Σ, then + bias = result, on one more line
        tex = tex.replace(r"\end{aligned}", r" \\ &= %s + %s = %s \end{aligned}"
                          % (num(terms.total), term(bias), num(total)))
        box.latex(tex)
        box.caption(t("plus_bias", name=bias_tex, value=f"{bias:.6g}"))
    else:
        box.latex(tex)
    if n > SHOWN + 1:
        box.caption(t("dots_products", m=n - SHOWN - 1, first=SHOWN, last=n - 2, n=n))


def largest_products(ctx: PageContext, terms: DotTerms, a_name: str, b_name: str, *, k: int = 4,
                     extra: Mapping[str, Callable[[int], str]] | None = None,
                     where: Where = None) -> None:
    """The k products a_k · b_k of largest magnitude as a table: k, the `extra` columns,
    a_k, b_k, a_k · b_k.

    Args:
        terms: dot_terms(a, b), [n] each; a_name, b_name: the column titles of a_k and b_k.
        extra: column title -> its text for term k (e.g. the pixel (p₁, p₂, c) of k).
    """
    where = where or st
    top = largest_terms(terms.products, k)  # [≤k] term indices
    texts = Texts(ctx.lang, OWNER)
    where.markdown(f"**{texts('largest_products', k=len(top))}**")
    product = texts("col_product")
    extra = extra or {}
    rows = pd.DataFrame([{"k": int(t), **{name: text(int(t)) for name, text in extra.items()},
                          a_name: float(terms.a[t]), b_name: float(terms.b[t]),
                          product: float(terms.products[t])} for t in top])
    # a static table: four rows need no sorting or search, and a data grid's toolbar would sit
    # over the heading on a phone
    where.table(rows.style.format("{:+.4f}", subset=[a_name, b_name, product]), hide_index=True)


def with_gaps(shown: np.ndarray, row: Callable[[int], str], indent: str = "   ") -> list[str]:
    """One listing line per shown index, in order, and '…' where indices were skipped."""
    lines, prev = [], -1
    for k in shown:
        if k > prev + 1:
            lines.append(f"{indent}…")
        lines.append(indent + row(int(k)))
        prev = k
    return lines


def trace_line(ctx: PageContext, name: str, stored: float, digits: str = "+.6g", *,
               one_line: bool = False) -> str:
    """'the trace holds:\n   scores[3, 5] = +0.123', on one line if asked (inside a listing)."""
    t = Texts(ctx.lang, OWNER)
    return (f"{t('trace_holds')}:" + ("  " if one_line else "\n   ")
            + f"{name} = {float(stored):{digits}}")


def _terms_lines(ctx: PageContext, values: np.ndarray, row: Callable[[int], str], first: int,
                 largest: int, unit: str) -> tuple[list[str], float]:
    """The first and the largest terms of Σ values, the rest together; and the total."""
    t = Texts(ctx.lang, OWNER)
    summary = summarise_terms(values, first, largest)
    lines = with_gaps(summary.shown, row)
    if summary.rest_count:
        lines.append(f"   + {t(f'more_{unit}', n=summary.rest_count)} "
                     f"{fixed(summary.rest_sum)}")
    return lines, summary.total


def dot_listing(ctx: PageContext, title: str, terms: DotTerms, stored: float, name: str, *,
                size: str, divisor: str | None = None, notes: Sequence[str] | None = None,
                where: Where = None) -> None:
    """The result against the trace, then (folded) a dot product as a code listing — the first
    terms and the largest, '…' for the gaps, the others together, the total, the division by s
    if any — and what the trace holds:

        name = (Σ_k a_k b_k) / s

    Args:
        title: the first line, e.g. "q_3 · k_5 = Σ_k q_3[k] · k_5[k]".
        terms: dot_terms(a, b, s), [n] each; stored: the entry the trace holds, called `name`.
        size: the name of n for the caption ("d_k", "d_model").
        divisor: how s is written ("√d_k (√64)"), or None for a plain dot product.
        notes: [n] a note after each written term (e.g. its head), or None.
    """
    t = Texts(ctx.lang, OWNER)
    where = where or st
    n = len(terms.products)
    w = len(str(n - 1))

    def row(k: int) -> str:
        note = f"   ({notes[k]})" if notes is not None else ""
        return (f"k = {k:>{w}}:  {fixed(terms.a[k])} × {fixed(terms.b[k])} = "
                f"{fixed(terms.products[k])}{note}")

    lines, _ = _terms_lines(ctx, terms.products, row, FIRST, LARGEST, "terms")
    lines = [title, *lines, f"   = {terms.total:+.6g}"]
    if divisor is not None:
        s = terms.divisor
        lines += [f"s = {divisor} = {s:.6g}",
                  f"{name} = {terms.total:+.6g} / {s:.6g} = {terms.result:+.6g}"]
    lines.append(trace_line(ctx, name, stored))
    stored_check(ctx, terms.result, stored, name, where=where)
    box = folded(ctx, where)
    box.code("\n".join(lines), language=None, wrap_lines=True)
    box.caption(t("terms_shown", first=FIRST, largest=LARGEST, size=size, n=n))


def sum_listing(ctx: PageContext, values: np.ndarray, labels: Sequence[str], stored: float,
                name: str, *, first: int, largest: int = 0, unit: str = "terms",
                where: Where = None) -> None:
    """The sum against the trace, then (folded) its named terms as a code listing — each term,
    the others together, Σ — and what the trace holds: name = Σ_k values_k.

    Args:
        values: [n] the terms; labels: [n] the name of each ("head 1 (k = 0…63)").
        first, largest: how many terms to write out; unit: "terms" or "heads", for the rest.
    """
    lines, total = _terms_lines(ctx, values, lambda k: f"{labels[k]}:  {fixed(values[k])}",
                                first, largest, unit)
    lines += [f"   Σ = {total:+.6g}", trace_line(ctx, name, stored)]
    stored_check(ctx, total, stored, name, where=where)
    folded(ctx, where).code("\n".join(lines), language=None, wrap_lines=True)


def hidden_unit(ctx: PageContext, unit: HiddenUnitTerms, stored: float, i: int, j: int, field: str,
                *, where: Where = None) -> None:
    """One FFN hidden activation: its formula, then (folded) written out — the dot product, the
    bias, the activation — with its largest products; then the activation's verdict and the
    check against the trace:

        ffn_hidden[i, j] = max(0, Σ_k x_k W_1[k, j] + b_1[j])            (ReLU)
        ffn_hidden[i, j] = z · Φ(z),  z = Σ_k x_k W_1[k, j] + b_1[j]     (GELU; or its tanh gate)

    Args:
        unit: hidden_unit_terms(x, W_1, b_1, j, activation) for x = the FFN's input row
            ([d_model]: ln_1.out post-norm, ln_2.out pre-norm).
        i: the row in the trace (a ViT's sequence row); stored: ffn_hidden[i, j] as the encoder
            stored it; field: its name in the trace.
    """
    t = Texts(ctx.lang, OWNER)
    where = where or st
    dot = unit.dot
    n = len(dot.products)
    gelu = unit.activation != "relu"
    if gelu:
        where.latex(r"\text{ffn\_hidden}_{%d,%d} = \mathrm{GELU}(z) = z\,%s,\quad"
                    r" z = \sum_{k} x_{%d,k}\, W_1[k, %d] + b_1[%d]"
                    % (i, j, GATE_TEX[unit.activation], i, j, j))
    else:
        where.latex(r"\text{ffn\_hidden}_{%d,%d} = \max\Big(0,\; \sum_{k} x_{%d,k}\, W_1[k, %d]"
                    r" + b_1[%d]\Big)" % (i, j, i, j, j))
    parts = [*written_products(dot, SHOWN), term(unit.bias)]
    body = r" \\ &\qquad + ".join(" + ".join(p) for p in (parts[:3], parts[3:]) if p)
    box = folded(ctx, where)
    if gelu:
        box.latex(r"\begin{aligned} z &= %s \\ &= %s + %s = %s \\"
                  r" \mathrm{GELU}(z) &= %s \times %s = %s \end{aligned}"
                  % (body, num(dot.total), term(unit.bias), num(unit.pre), term(unit.pre),
                     num(unit.gate), num(unit.hidden)))
    else:
        box.latex(r"\begin{aligned} &= \max\big(0,\; %s\big) \\"
                  r" &= \max(0,\; %s + %s) = \max(0,\; %s) = %s \end{aligned}"
                  % (body, num(dot.total), term(unit.bias), num(unit.pre), num(unit.hidden)))
    if n > SHOWN + 1:
        box.caption(t("dots_products", m=n - SHOWN - 1, first=SHOWN, last=n - 2, n=n))
    top = largest_terms(dot.products)
    box.caption(t("largest_products_list", k=len(top), terms=", ".join(
        f"k = {k}: {dot.a[k]:.4g} · {dot.b[k]:.4g} = {dot.products[k]:.4g}" for k in top)))
    if gelu:
        where.write(t("gelu_gate", z=f"{unit.pre:.4g}", g=f"{unit.gate:.4g}",
                        h=f"{unit.hidden:.4g}"))
    else:
        where.write(t("relu_zero") if unit.pre <= 0 else t("relu_pass"))
    stored_check(ctx, unit.hidden, stored, field, where=where)
