"""Add & Norm: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/addnorm.py`, words `lens/texts/<lang>/addnorm.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, layer_norm
from encoder_core.views.explain import layer_norm_terms
from encoder_core.views.predictions import share_within

from .. import figures
from ..handout.sheets import Sheet, drawn, heatmap, make_sheet, said
from ..latex import num
from ..lesson.tasks import Fixed, Question, Spec

if TYPE_CHECKING:
    from ..context import PageContext


ADDNORM = ("normalise", "scale_shift", "by_hand")  # ln_1.out's numbers state x̂'s


def _normed_row(ctx: PageContext, fixed: Fixed) -> tuple[np.ndarray, int, int]:
    cfg = ctx.cfg
    l = min(fixed.layer, cfg.n_layers - 1)
    r = ctx.row(min(fixed.query, cfg.n_tokens - 1))
    return ctx.trace.layers[l].ln_1.normed[r], l, r


def ln_input(ctx: PageContext, l: int) -> np.ndarray:
    """[T, d] what LN₁ of layer l normalises: resid_1 (the note's order), or the layer's
    input x (pre-norm)."""
    tr = ctx.trace
    if not ctx.cfg.norm_first:
        return tr.layers[l].resid_1
    return tr.x0 if l == 0 else tr.layers[l - 1].out


SCALE = 10.0  # what the question multiplies the row by
SCALES = ("times", "root", "same")


def addnorm_scale(ctx: PageContext, fixed: Fixed) -> Question:
    """Multiply a row of LayerNorm's input by 10: its output does not change (up to ε) — the
    row is measured in units of its own spread (a concept: the same answer for every model).
    The reveal normalises the live row and ten times it."""
    cfg, tr = ctx.cfg, ctx.trace
    l = min(fixed.layer, cfg.n_layers - 1)
    r = ctx.row(min(fixed.query, cfg.n_tokens - 1))

    def evidence() -> dict[str, object]:
        lp = tr.params.layers[l]
        x = ln_input(ctx, l)[r:r + 1].astype(np.float64)
        once = layer_norm(x, lp.gamma_1, lp.beta_1, cfg.ln_eps)
        tenfold = layer_norm(SCALE * x, lp.gamma_1, lp.beta_1, cfg.ln_eps)
        return {"gap": float(np.abs(tenfold.out - once.out).max()),
                "size": float(np.abs(once.out).max()), "mu": float(once.mean[0]),
                "sigma": float(np.sqrt(once.var[0])), "mu10": float(tenfold.mean[0]),
                "sigma10": float(np.sqrt(tenfold.var[0])), "eps": cfg.ln_eps}

    return Question("same", {"i": r, "l": l + 1, "k": SCALE}, ADDNORM,
                    Fixed(layer=l, query=r - cfg.n_prefix), evidence=evidence)


def addnorm_within(ctx: PageContext, fixed: Fixed) -> Question:
    """The share of x̂_i's d values between −1 and 1, in % (a normal distribution: 68 %)."""
    x_hat, l, r = _normed_row(ctx, fixed)
    share = 100 * share_within(x_hat, 1.0)
    return Question(round(share, 1),
                    {"i": r, "l": l + 1, "d": ctx.cfg.d_model, "share": share,
                     "n": int(round(share * ctx.cfg.d_model / 100))},
                    ADDNORM, Fixed(layer=l, query=r - ctx.cfg.n_prefix), tolerance=10.0,
                    mistakes=(("all", (95.0, 100.0)), ("two", (90.0, 94.9))))


TASKS: tuple[Spec, ...] = (
    Spec("scale", "choice", addnorm_scale, options=SCALES),
    Spec("within", "estimate", addnorm_within),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig) -> list[str]:
    """LayerNorm and where it sits, pre-norm (a ViT) or post-norm (the note), in LaTeX that
    KaTeX (the page's st.latex) and mathtext (the sheet, between $…$) both draw."""
    if cfg.norm_first:
        ls = r"\mathrm{ls}_1 \odot " if cfg.layer_scale else ""
        return [r"\mathrm{LN}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
                r" + \beta",
                r"\text{ln\_1} = \mathrm{LN}_1(x),\qquad \text{resid\_1} = x + %s"
                r"\mathrm{MultiHead}(\text{ln\_1.out})" % ls]
    return [r"\mathrm{LayerNorm}(x) = \gamma \odot \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}}"
            r" + \beta",
            r"\text{ln\_1.out} = \mathrm{LayerNorm}(x + \text{attn\_out})"]


def norm_formulas(cfg: EncoderConfig) -> list[str]:
    """LN₁ and the residual add with their shapes (post-norm, the note's: μ, σ², x̂ term by
    term too), in LaTeX that KaTeX and mathtext both draw: the page's formulas beside its
    layer and query, the sheet's after `formulas`."""
    T, d = cfg.seq_len, cfg.d_model
    x, gb = rf"\underset{{{T} \times {d}}}{{x}}", rf"\mathbb{{R}}^{{{d}}}"
    if cfg.norm_first:
        ls = r"\mathrm{ls}_1 \odot " if cfg.layer_scale else ""
        return [rf"\underset{{{T} \times {d}}}{{\text{{ln\_1.out}}}} = \gamma_1 \odot"
                rf" \frac{{x - \mu}}{{\sqrt{{\sigma^2 + \varepsilon}}}} + \beta_1,\quad {x},"
                rf"\quad \gamma_1, \beta_1 \in {gb}",
                rf"\underset{{{T} \times {d}}}{{\text{{resid\_1}}}} = {x} + {ls}"
                rf"\underset{{{T} \times {d}}}{{\text{{attn\_out}}}}"]
    return [rf"\underset{{{T} \times {d}}}{{\text{{resid\_1}}}} = {x} + "
            rf"\underset{{{T} \times {d}}}{{\text{{attn\_out}}}}",
            r"\mu_i = \frac{1}{d}\sum_{k} x_{ik}, \qquad \sigma_i^2 = \frac{1}{d}\sum_{k}"
            r"(x_{ik} - \mu_i)^2",
            r"\hat{x}_{ik} = \frac{x_{ik} - \mu_i}{\sqrt{\sigma_i^2 + \varepsilon}}, \qquad"
            r"\text{out}_{ik} = \gamma_k\,\hat{x}_{ik} + \beta_k",
            rf"\underset{{{T} \times {d}}}{{\text{{ln\_1.out}}}} = \gamma \odot \hat{{x}}"
            rf" + \beta,\quad \gamma, \beta \in {gb}"]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr, l, i = ctx.cfg, ctx.trace, ctx.layer, ctx.row(ctx.query)
    d = cfg.d_model
    layer, lp = tr.layers[l], tr.params.layers[l]
    x = tr.x0 if l == 0 else tr.layers[l - 1].out
    normed_in = x if cfg.norm_first else layer.resid_1  # [T, d] what LN_1 normalises
    # as the page shows them: LN at its top, the rest beside its layer and query; then ε
    maths = [f"${f}$" for f in formulas(cfg) + norm_formulas(cfg)]
    maths.append(rf"$\varepsilon = {num(cfg.ln_eps)}$")
    ln = layer_norm_terms(normed_in[i], lp.gamma_1, lp.beta_1, cfg.ln_eps)
    what = "x" if cfg.norm_first else "resid_1"
    worked = [t("w_row", i=i, l=l + 1, what=what),
              f"μ = Σ_k {what}[{i}, k] / {d} = {ln.mean:+.4f},   "
              f"σ² = Σ_k ({what}[{i}, k] − μ)² / {d} = {ln.var:.4f}",
              f"x̂[0] = ({ln.x[0]:+.4f} − {ln.mean:+.4f}) / √({ln.var:.4f} + {cfg.ln_eps:g}) = "
              f"{ln.normed[0]:+.4f},   out[0] = γ[0]·x̂[0] + β[0] = {float(lp.gamma_1[0]):.4f}"
              f" · {ln.normed[0]:+.4f} + {float(lp.beta_1[0]):+.4f} = {ln.out[0]:+.4f}",
              t("w_stored", v=float(layer.ln_1.out[i, 0])),
              t("w_moments_after", m=float(layer.ln_1.normed[i].mean()),
                  v=float(layer.ln_1.normed[i].var()))]
    moments = drawn(ctx, figures.bars, [layer.ln_1.mean, layer.ln_1.var],
                    [f"μ ({what})", f"σ² ({what})"], t("tokens"), ["μ", "σ²"],
                    t("moments_title", what=what, l=l + 1), highlight=i)
    out = heatmap(ctx, layer.ln_1.out, "ln_1.out", row=i, tokens="rows")
    return make_sheet(ctx, maths, worked, [moments, out])
