"""Q, K, V: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/qkv.py`, words `lens/texts/<lang>/qkv.toml`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig
from encoder_core.pipeline.attention import linear
from encoder_core.views.explain import dot_terms

from ..handout.sheets import Sheet, heatmap, layer_input, make_sheet, said, written
from ..lesson.tasks import PAGE, Fixed, Question, Spec

if TYPE_CHECKING:
    from ..context import PageContext


def qkv_d_head(ctx: PageContext, fixed: Fixed) -> Question:
    """Each head's queries, keys and values are d_model / h wide."""
    cfg = ctx.cfg
    d, h = float(cfg.d_model), float(cfg.n_heads)
    return Question((float(ctx.trace.layers[0].q.shape[-1]),),
                    {"d": cfg.d_model, "h": cfg.n_heads, "dk": cfg.d_head}, PAGE, fixed,
                    mistakes=(("times", (d * h,)), ("whole", (d,)), ("heads", (h,))))


SLIP = ("grows", "same")


def projection_input(ctx: PageContext) -> np.ndarray:
    """[T, d] what layer 1's projections read: x₀, or LN₁(x₀) in pre-norm order."""
    tr = ctx.trace
    return tr.layers[0].ln_1.out if ctx.cfg.norm_first else tr.x0


def qkv_slip(ctx: PageContext, fixed: Fixed) -> Question:
    """The note's slip: W_Q shaped by the sequence length. It is d_model × d_model, applied to
    each token alone, so any number of tokens goes through the same W_Q (a concept: the same
    answer for every model). The reveal multiplies half the tokens, and the tokens twice over,
    by the live W_Q."""
    cfg, tr = ctx.cfg, ctx.trace

    def evidence() -> dict[str, object]:
        x, lp = projection_input(ctx), tr.params.layers[0]
        T, dk = cfg.seq_len, cfg.d_head
        q = tr.layers[0].q.transpose(1, 0, 2).reshape(T, cfg.n_heads * dk)  # [T, d] stored
        half = T // 2
        alone = linear(x[:half], lp.W_Q, lp.b_Q)  # only the first half of the tokens
        twice = linear(np.concatenate([x, x]), lp.W_Q, lp.b_Q)  # the tokens twice over
        return {"T": T, "half": half, "T2": 2 * T, "rows": lp.W_Q.shape[0],
                "cols": lp.W_Q.shape[1], "gap_half": float(np.abs(alone - q[:half]).max()),
                "gap_twice": float(np.abs(twice[T:] - q).max()), "d": cfg.d_model}

    return Question("same", {}, PAGE, fixed, evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("d_head", "number", qkv_d_head),
    Spec("slip", "choice", qkv_slip, options=SLIP),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig, hd: int, bias: Mapping[str, bool]) -> list[str]:
    """Q, K, V = x · W with their shapes, and head hd's (0-based) slice of them, in LaTeX that
    KaTeX (the page's st.latex) and mathtext (the sheet, between $…$) both draw; `bias`: which
    of "Q", "K", "V" have a bias."""
    d, dh, T = cfg.d_model, cfg.d_head, cfg.seq_len
    xs = r"\tilde{x}" if cfg.norm_first else "x"  # the projections' input
    a, b = hd * dh, (hd + 1) * dh - 1
    bq = {n: (rf" + b_{n}" if bias.get(n) else "") for n in "QKV"}
    tex = [r"\tilde{x} = \mathrm{LN}_1(x)"] if cfg.norm_first else []
    if not bias.get("Q"):
        tex.append(rf"Q = {xs}\cdot W_Q,\quad K = {xs}\cdot W_K,\quad V = {xs}\cdot W_V")
    else:  # one line each: with the biases the three do not fit one column
        tex += [rf"{n} = {xs}\cdot W_{n}{bq[n]}" for n in "QKV"]
    tex.append(rf"({T} \times {d})\cdot({d} \times {d})"
               + (rf" + (1 \times {d})" if bias.get("Q") else "") + rf" = {T} \times {d}")
    tex.append(rf"Q_{{{hd + 1}}} = {xs}\cdot W_Q[:,\, {a}\!:\!{b + 1}]"
               + (rf" + b_Q[{a}\!:\!{b + 1}]" if bias.get("Q") else ""))
    tex.append(rf"({T} \times {d})\cdot({d} \times {dh})"
               + (rf" + (1 \times {dh})" if bias.get("Q") else "") + rf" = {T} \times {dh}")
    return tex


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, l, hd, i = ctx.cfg, ctx.layer, ctx.head, ctx.row(ctx.query)
    dh = cfg.d_head
    layer, lp = ctx.trace.layers[l], ctx.trace.params.layers[l]
    a = hd * dh
    bias = lp.b_Q is not None
    has = {"Q": bias, "K": lp.b_K is not None, "V": lp.b_V is not None}
    maths = [f"${f}$" for f in formulas(cfg, hd, has)]  # as the page shows them
    x = layer_input(ctx, l)
    terms = dot_terms(x[i], lp.W_Q[:, a])
    b0 = float(lp.b_Q[a]) if bias else 0.0
    plus = f" + b_Q[{a}]" if bias else ""
    worked = [t("w_where", l=l + 1, hd=hd + 1, i=i),
              f"q[{i}, 0] = x[{i}] · W_Q[:, {a}]{plus} = {written(terms)}"
              + (f" + ({b0:.3f})" if bias else "") + f" = {terms.total + b0:+.4f}",
              t("w_stored", v=float(layer.q[hd, i, 0]))]
    q = heatmap(ctx, layer.q[hd], f"Q_{hd + 1} ({t('layer_n', l=l + 1)})", row=i,
                xlabel=t("column_of_head"), tokens="rows")
    k = heatmap(ctx, layer.k[hd], f"K_{hd + 1} ({t('layer_n', l=l + 1)})", row=i,
                xlabel=t("column_of_head"), tokens="rows")
    return make_sheet(ctx, maths, worked, [q, k])
