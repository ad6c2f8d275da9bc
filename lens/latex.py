"""Numbers and sums written for st.latex: the arithmetic the pages spell out."""

from __future__ import annotations

from collections.abc import Sequence

from encoder_core import EncoderConfig
from encoder_core.views.explain import DotTerms


def num(v: float, digits: int = 4) -> str:
    """A number for LaTeX: `digits` significant digits, powers of ten written out."""
    s = f"{v:.{digits}g}"
    if "e" in s:
        mantissa, exponent = s.split("e")
        s = rf"{mantissa}\times 10^{{{int(exponent)}}}"
    return s


def fixed(v: float) -> str:
    """A signed number with four decimals: +0.1234."""
    return f"{v:+.4f}"


def term(v: float) -> str:
    """A factor or summand: negative numbers in parentheses."""
    return rf"({num(v)})" if v < 0 else num(v)


def written_sum(values: Sequence[float], first: int = 4) -> str:
    """'a + b + c + d + ⋯ + z' for a long vector, every term when it is short."""
    if len(values) <= first + 2:
        return " + ".join(term(v) for v in values)
    return " + ".join(term(v) for v in values[:first]) + r" + \cdots + " + term(values[-1])


def dims(*sizes: int) -> str:
    """A shape in LaTeX: [196 \\times 64]."""
    return "[" + r" \times ".join(str(n) for n in sizes) + "]"


def written_products(terms: DotTerms, shown: int = 4) -> list[str]:
    """The products (a_k)(b_k) of a dot product in LaTeX: the first `shown`, ⋯, the last one;
    every product when there are at most shown + 1."""
    n = len(terms.products)

    def product(k: int) -> str:
        return rf"({num(terms.a[k])})\,({num(terms.b[k])})"

    parts = [product(k) for k in range(min(shown, n))]
    if n > shown + 1:
        parts.append(r"\cdots")
    if n > shown:
        parts.append(product(n - 1))
    return parts


def dot_latex(lhs: str, terms: DotTerms, shown: int = 4) -> str:
    """lhs = (a_0)(b_0) + … + (a_3)(b_3) + ⋯ + (a_n-1)(b_n-1) = total, two terms a line."""
    parts = written_products(terms, shown)
    lines = [" + ".join(parts[r:r + 2]) for r in range(0, len(parts), 2)]
    body = r" \\ &\quad + ".join(lines)
    return (r"\begin{aligned}" + lhs + " &= " + body + rf" \\ &= {num(terms.total)}"
            r"\end{aligned}")


def divisor_latex(cfg: EncoderConfig) -> str:
    """The scores' divisor with its value: s = √d_k = √64 = 8 (or √d_model, or 1)."""
    root = {"d_k": (r"\sqrt{d_k}", cfg.d_head), "d_model": (r"\sqrt{d_\text{model}}", cfg.d_model)}
    if cfg.scale not in root:
        return "s = 1"
    name, n = root[cfg.scale]
    return rf"s = {name} = \sqrt{{{n}}} = {cfg.score_scale:.4g}"
