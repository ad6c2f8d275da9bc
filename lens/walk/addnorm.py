"""Add & Norm: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/addnorm.py`, words `lens/texts/<lang>/addnorm.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core.views.analysis import row_moments
from encoder_core.views.explain import layer_norm_terms
from encoder_core.views.predictions import share_within

from .. import figures
from ..handout.sheets import Sheet, Walk, dims, heatmap, make_sheet
from ..lesson.tasks import Fixed, Spec, Task

if TYPE_CHECKING:
    from ..context import PageContext


ADDNORM = ("normalise", "by_hand")


def _normed_row(ctx: PageContext, fixed: Fixed) -> tuple[np.ndarray, int, int]:
    cfg = ctx.cfg
    l = min(fixed.layer, cfg.n_layers - 1)
    r = ctx.row(min(fixed.query, cfg.n_tokens - 1))
    return ctx.trace.layers[l].ln_1.normed[r], l, r


def addnorm_moments(ctx: PageContext, fixed: Fixed) -> Task:
    """The normalised row x̂_i: its mean (0) and variance (σ²/(σ² + ε) ≈ 1)."""
    x_hat, l, r = _normed_row(ctx, fixed)
    mean, var = row_moments(x_hat[None, :])
    return Task("addnorm.moments", "number", (float(mean[0]), float(var[0])),
                {"i": r, "l": l + 1, "d": ctx.cfg.d_model, "eps": ctx.cfg.ln_eps,
                 "m": float(mean[0]), "v": float(var[0])},
                ADDNORM, Fixed(layer=l, query=r - ctx.cfg.n_prefix), tolerance=0.01,
                decimals=2)


def addnorm_within(ctx: PageContext, fixed: Fixed) -> Task:
    """The share of x̂_i's d values between −1 and 1, in % (a normal distribution: 68 %)."""
    x_hat, l, r = _normed_row(ctx, fixed)
    share = 100 * share_within(x_hat, 1.0)
    return Task("addnorm.within", "estimate", round(share, 1),
                {"i": r, "l": l + 1, "d": ctx.cfg.d_model, "share": share,
                 "n": int(round(share * ctx.cfg.d_model / 100))},
                ADDNORM, Fixed(layer=l, query=r - ctx.cfg.n_prefix), tolerance=10.0)


TASKS: tuple[Spec, ...] = (
    Spec("addnorm.moments", "number", addnorm_moments),
    Spec("addnorm.within", "estimate", addnorm_within),
)


# --- its sheet of the handout --------------------------------------------------------------------

def sheet(w: Walk) -> Sheet:
    cfg, tr, l, i = w.cfg, w.trace, w.layer, w.row
    T, d = cfg.seq_len, cfg.d_model
    layer, lp = tr.layers[l], tr.params.layers[l]
    x = tr.x0 if l == 0 else tr.layers[l - 1].out
    normed_in = x if cfg.norm_first else layer.resid_1  # [T, d] what LN_1 normalises
    formulas = [r"$\mathrm{LN}(x) = \gamma \odot (x - \mu)\,/\,\sqrt{\sigma^2 + \varepsilon}"
                rf" + \beta,\quad \gamma, \beta: [{d}],\ \varepsilon = {cfg.ln_eps:g}$"]
    if cfg.norm_first:
        formulas += [rf"$\tilde{{x}} = \mathrm{{LN}}_1(x):\ {dims(T, d)},\quad \mathrm{{resid\_1}}"
                     rf" = x + \mathrm{{attn\_out}}(\tilde{{x}}):\ {dims(T, d)}$"]
    else:
        formulas += [rf"$\mathrm{{resid\_1}} = x + \mathrm{{attn\_out}}:\ {dims(T, d)} + "
                     rf"{dims(T, d)},\quad \mathrm{{ln\_1}} = \mathrm{{LN}}_1(\mathrm{{resid\_1}})"
                     rf":\ {dims(T, d)}$"]
    ln = layer_norm_terms(normed_in[i], lp.gamma_1, lp.beta_1, cfg.ln_eps)
    what = "x" if cfg.norm_first else "resid_1"
    worked = [w.t("w_row", i=i, l=l + 1, what=what),
              f"μ = Σ_k {what}[{i}, k] / {d} = {ln.mean:+.4f},   "
              f"σ² = Σ_k ({what}[{i}, k] − μ)² / {d} = {ln.var:.4f}",
              f"x̂[0] = ({ln.x[0]:+.4f} − {ln.mean:+.4f}) / √({ln.var:.4f} + {cfg.ln_eps:g}) = "
              f"{ln.normed[0]:+.4f},   out[0] = γ[0]·x̂[0] + β[0] = {float(lp.gamma_1[0]):.4f}"
              f" · {ln.normed[0]:+.4f} + {float(lp.beta_1[0]):+.4f} = {ln.out[0]:+.4f}",
              w.t("w_stored", v=float(layer.ln_1.out[i, 0])),
              w.t("w_moments_after", m=float(layer.ln_1.normed[i].mean()),
                  v=float(layer.ln_1.normed[i].var()))]
    moments = figures.bars([layer.ln_1.mean, layer.ln_1.var],
                           [f"μ ({what})", f"σ² ({what})"], w.t("tokens"), ["μ", "σ²"],
                           w.t("moments_title", what=what, l=l + 1), highlight=i)
    out = heatmap(w, layer.ln_1.out, "ln_1.out", row=i, tokens="rows")
    return make_sheet(w, formulas, worked, [moments, out])
