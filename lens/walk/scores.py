"""Scores & softmax: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/scores.py`, words `lens/texts/<lang>/scores.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, softmax
from encoder_core.views.analysis import scaling_demo
from encoder_core.views.explain import dot_terms, softmax_terms
from encoder_core.views.predictions import compare_sharpness

from ..handout.sheets import Sheet, heatmap, make_sheet, said, written
from ..latex import dims, divisor_latex
from ..lesson.tasks import Fixed, Question, Spec, cls_mistake, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def divides_by_d_k(cfg: EncoderConfig) -> bool:
    """The question compares √d_model with the page's √d_k: asked when the page divides so."""
    return cfg.scale == "d_k"


SCORES_SHAPE = ("scores_formulas", "matrices", "row", "arith")
SCORES_SHIFT = ("matrices", "grid", "row", "arith")
SCORES_DIVISOR = ("scaling", "scaling_trained")
SHARPNESS = ("sharper", "flatter", "same")
SHIFTS = ("larger", "sharper", "unchanged")
SHIFT = 5.0  # what the question adds to every score of the row


def scores_shape(ctx: PageContext, fixed: Fixed) -> Question:
    """scores_h = Q_h · K_hᵀ: [T × d_k] · [d_k × T] = [T × T]."""
    cfg = ctx.cfg
    T, dk = float(cfg.seq_len), float(cfg.d_head)
    return shape_task(ctx.trace.layers[0].scores,  # [h, T, T]
                      {"T": cfg.seq_len, "dk": cfg.d_head, "h": cfg.n_heads,
                       "d": cfg.d_model}, SCORES_SHAPE, fixed,
                      mistakes=(("query_shape", (T, dk)), ("features", (dk, dk)),
                                *cls_mistake(cfg, (T + 1, T + 1))))


def scores_shift(ctx: PageContext, fixed: Fixed) -> Question:
    """Add the same number to every score of a row: the softmax does not change (a concept:
    the same answer for every model). The reveal adds it to the live row and measures."""
    cfg, tr = ctx.cfg, ctx.trace
    l, hd = min(fixed.layer, cfg.n_layers - 1), min(fixed.head, cfg.n_heads - 1)
    r = ctx.row(min(fixed.query, cfg.n_tokens - 1))

    def evidence() -> dict[str, object]:
        row = tr.layers[l].scores[hd, r].astype(np.float64)
        p, moved = softmax(row), softmax(row + SHIFT)
        one = row.copy()
        j = int(np.argmax(p))
        one[j] += SHIFT  # only the largest score moved: that one does change the row
        return {"gap": float(np.abs(moved - p).max()), "j": j, "pj": float(p[j]),
                "pj_one": float(softmax(one)[j]), "top": float(row.max()),
                "top5": float(row.max() + SHIFT)}

    return Question("unchanged", {"i": r, "l": l + 1, "hd": hd + 1, "add": SHIFT}, SCORES_SHIFT,
                    Fixed(l, hd, r - cfg.n_prefix), evidence=evidence)


def scores_divisor(ctx: PageContext, fixed: Fixed) -> Question:
    """Dividing by √d_model instead of √d_k: row i of head h sharper, flatter or the same."""
    cfg = ctx.cfg
    l, hd = min(fixed.layer, cfg.n_layers - 1), min(fixed.head, cfg.n_heads - 1)
    layer = ctx.trace.layers[l]
    cases = ctx.derived(f"scaling/{l}/{hd}",  # the page's own scaling demo, shared
                        lambda: scaling_demo(layer.q[hd:hd + 1], layer.k[hd:hd + 1], cfg.d_model))
    by_name = {c.name: c for c in cases}
    r = cfg.n_prefix + telling_row(by_name["d_k"].entropy[0, cfg.n_prefix:],
                                   by_name["d_model"].entropy[0, cfg.n_prefix:])
    e_dk, e_d = (float(by_name[n].entropy[0, r]) for n in ("d_k", "d_model"))
    outcome = compare_sharpness(e_dk, e_d)
    return Question(outcome,
                    {"i": r, "l": l + 1, "hd": hd + 1, "dk": cfg.d_head, "d": cfg.d_model,
                     "sdk": cfg.d_head ** 0.5, "sd": cfg.d_model ** 0.5,
                     "e_dk": e_dk, "e_d": e_d, "T": cfg.seq_len,
                     "p_dk": float(by_name["d_k"].attn[0, r].max()),
                     "p_d": float(by_name["d_model"].attn[0, r].max()),
                     "lnT": float(np.log(cfg.seq_len))},
                    SCORES_DIVISOR, Fixed(l, hd, r - cfg.n_prefix))


def telling_row(entropy_dk: np.ndarray, entropy_d: np.ndarray) -> int:
    """[N] → the row whose entropy the divisor changes most: where the temperature shows (on
    random weights every row is near even, ln T, and most change little)."""
    return int(np.argmax(np.abs(entropy_d.astype(np.float64) - entropy_dk)))


TASKS: tuple[Spec, ...] = (
    Spec("shape", "number", scores_shape),
    Spec("shift", "choice", scores_shift, options=SHIFTS),
    Spec("divisor", "choice", scores_divisor, applies=divides_by_d_k, options=SHARPNESS),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig) -> list[str]:
    """scores_h, the divisor s with its value and attn_h with their shapes, in LaTeX that KaTeX
    (the page's st.latex) and mathtext (the sheet, between $…$) both draw."""
    T, dk = cfg.seq_len, cfg.d_head
    return [r"\text{scores}_h = \frac{Q_h \cdot K_h^{\top}}{s}:\quad " + dims(T, dk)
            + r" \cdot " + dims(dk, T) + " = " + dims(T, T),
            divisor_latex(cfg),
            r"\text{attn}_h[i, j] = \frac{\exp(\text{scores}_h[i, j])}"
            r"{\sum_{k} \exp(\text{scores}_h[i, k])}:\quad " + dims(T, T)
            + r",\;\; \sum_j \text{attn}_h[i, j] = 1"]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, l, hd, i = ctx.cfg, ctx.layer, ctx.head, ctx.row(ctx.query)
    layer, s = ctx.trace.layers[l], cfg.score_scale
    j = int(np.argmax(layer.attn[hd, i]))
    maths = [f"${f}$" for f in formulas(cfg)]  # as the page shows them
    dot = dot_terms(layer.q[hd, i], layer.k[hd, j], divisor=s)
    soft = softmax_terms(layer.scores[hd, i])
    worked = [t("w_where", l=l + 1, hd=hd + 1, i=i),
              f"scores[{i}, {j}] = q_{i} · k_{j} / {s:.4g} = ({written(dot)}) / {s:.4g}"
              f" = {dot.result:+.4f}",
              f"attn[{i}, {j}] = e^({soft.shifted[j]:.4f}) / Σ_k e^(s_{i}k − max) = "
              f"{soft.exp[j]:.4f} / {soft.total:.4f} = {soft.p[j]:.4f}",
              t("w_stored_pair", a=float(layer.scores[hd, i, j]),
                  b=float(layer.attn[hd, i, j])),
              t("w_largest", j=j)]
    common = dict(xlabel=t("keys"), ylabel=ctx.t("queries"), row=i, col=j,
                  tokens="both")
    return make_sheet(ctx, maths, worked, [
        heatmap(ctx, layer.scores[hd], ctx.t("scores_name", l=l + 1, hd=hd + 1),
                label=ctx.t("score"), **common),
        heatmap(ctx, layer.attn[hd], ctx.t("attn_name", l=l + 1, hd=hd + 1),
                signed=False, label=ctx.t("weight"), **common)])
