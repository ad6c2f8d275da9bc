"""Feed-forward: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/ffn.py`, words `lens/texts/<lang>/ffn.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, feed_forward
from encoder_core.views.analysis import relu_zero_share
from encoder_core.views.explain import hidden_unit_terms

from ..handout.sheets import Sheet, heatmap, make_sheet, said, written
from ..lesson.tasks import PAGE, Fixed, Question, Spec, cls_mistake, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def uses_ffn(cfg: EncoderConfig) -> bool:
    return cfg.use_ffn


def uses_relu(cfg: EncoderConfig) -> bool:
    """ReLU's zeros: not a ViT's GELU, which is seldom exactly 0."""
    return cfg.use_ffn and cfg.activation == "relu"


def ffn_hidden(ctx: PageContext, fixed: Fixed) -> Question:
    """The FFN widens every token: [T × d_ff]."""
    cfg = ctx.cfg
    T, d, dff = float(cfg.seq_len), float(cfg.d_model), float(cfg.d_ff)
    return shape_task(ctx.trace.layers[0].ffn_hidden,
                      {"T": cfg.seq_len, "d": cfg.d_model, "dff": cfg.d_ff,
                       "ratio": cfg.d_ff / cfg.d_model}, PAGE, fixed,
                      mistakes=(("width", (T, d)), ("weight", (d, dff)),
                                *cls_mistake(cfg, (T + 1, dff))))


MIX = ("yes", "no")


def ffn_input(ctx: PageContext, l: int) -> np.ndarray:
    """[T, d] what layer l's feed-forward reads: ln_1.out, or LN₂(resid_1) in pre-norm."""
    layer = ctx.trace.layers[l]
    return layer.ln_2.out if ctx.cfg.norm_first else layer.ln_1.out


def ffn_mix(ctx: PageContext, fixed: Fixed) -> Question:
    """Does the feed-forward mix information between tokens? No: row i of its output depends
    on row i alone (a concept: the same answer for every model). The reveal changes another
    row of its input and runs the live FFN again."""
    cfg, tr = ctx.cfg, ctx.trace
    l = min(fixed.layer, cfg.n_layers - 1)
    i = min(fixed.query, cfg.n_tokens - 1)
    j = (i + cfg.n_tokens // 2) % cfg.n_tokens

    def evidence() -> dict[str, object]:
        lp = tr.params.layers[l]
        x = ffn_input(ctx, l).astype(np.float64)
        changed = x.copy()
        changed[ctx.row(j)] = x[ctx.row(j)][::-1]  # row j: its values in reverse order
        _, before = feed_forward(x, lp.W_1, lp.b_1, lp.W_2, lp.b_2, cfg.activation)
        _, after = feed_forward(changed, lp.W_1, lp.b_1, lp.W_2, lp.b_2, cfg.activation)
        gap = np.abs(after - before).max(axis=1)  # [T]
        return {"gap_i": float(gap[ctx.row(i)]), "gap_j": float(gap[ctx.row(j)]),
                "others": int(np.sum(gap > 0)) - int(gap[ctx.row(j)] > 0)}

    return Question("no", {"i": i, "j": j, "l": l + 1}, PAGE, Fixed(layer=l, query=i),
                    evidence=evidence)


def ffn_relu(ctx: PageContext, fixed: Fixed) -> Question:
    """The share of layer l's hidden activations that ReLU sets to 0, in %."""
    cfg = ctx.cfg
    l = min(fixed.layer, cfg.n_layers - 1)
    share = 100 * relu_zero_share(ctx.trace.layers[l].ffn_hidden)
    return Question(round(share, 1),
                    {"l": l + 1, "share": share, "T": cfg.seq_len, "dff": cfg.d_ff},
                    PAGE, Fixed(layer=l), tolerance=10.0,
                    mistakes=(("none", (0.0, 10.0)), ("all", (90.0, 100.0))))


TASKS: tuple[Spec, ...] = (
    Spec("hidden", "number", ffn_hidden, applies=uses_ffn),
    Spec("mix", "choice", ffn_mix, applies=uses_ffn, options=MIX),
    Spec("relu", "estimate", ffn_relu, applies=uses_relu),
)


# --- its sheet of the handout --------------------------------------------------------------------

# the activation applied to its argument (%s) in LaTeX: plain parentheses, which mathtext draws
ACT_TEX = {"relu": r"\max(0,\; %s)", "gelu": r"\mathrm{GELU}(%s)",
           "gelu_tanh": r"\mathrm{GELU}_{\tanh}(%s)"}


def formulas(cfg: EncoderConfig) -> list[str]:
    """FFN(x), in LaTeX that KaTeX (the page's st.latex) and mathtext (the sheet, between
    $…$) both draw."""
    hidden = ACT_TEX[cfg.activation] % r"x \cdot W_1 + b_1"
    return [r"\mathrm{FFN}(x) = %s \cdot W_2 + b_2" % hidden]


def sublayer_formulas(cfg: EncoderConfig) -> list[str]:
    """ffn_hidden and ffn_out with their shapes, then the residual after them (pre-norm: x is
    LN₂(resid_1); post-norm: the second Add & Norm), in LaTeX that KaTeX and mathtext both
    draw: the page's formulas beside its layer and query, the sheet's after `formulas`."""
    T, d, dff = cfg.seq_len, cfg.d_model, cfg.d_ff
    hidden = ACT_TEX[cfg.activation] % (rf"\underset{{{T} \times {d}}}{{x}} \cdot "
                                        rf"\underset{{{d} \times {dff}}}{{W_1}} + "
                                        rf"\underset{{{dff}}}{{b_1}}")
    maths = [rf"\underset{{{T} \times {dff}}}{{\text{{ffn\_hidden}}}} = {hidden}",
             rf"\underset{{{T} \times {d}}}{{\text{{ffn\_out}}}} = "
             rf"\underset{{{T} \times {dff}}}{{\text{{ffn\_hidden}}}} \cdot "
             rf"\underset{{{dff} \times {d}}}{{W_2}} + \underset{{{d}}}{{b_2}}"]
    if cfg.norm_first:
        ls = r"\mathrm{ls}_2 \odot " if cfg.layer_scale else ""
        return maths + [r"x = \text{ln\_2.out} = \mathrm{LN}_2(\text{resid\_1}), \qquad"
                        r"\text{resid\_2} = \text{resid\_1} + %s\text{ffn\_out}" % ls]
    return maths + [r"x = \text{ln\_1.out}, \qquad \text{resid\_2} = x + \text{ffn\_out},"
                    r" \qquad\text{ln\_2.out} = \mathrm{LayerNorm}(\text{resid\_2})"]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr, l, i = ctx.cfg, ctx.trace, ctx.layer, ctx.row(ctx.query)
    layer, lp = tr.layers[l], tr.params.layers[l]
    if not cfg.use_ffn or layer.ffn_hidden is None:
        return make_sheet(ctx, [], [t("w_ffn_off")], [])
    x = layer.ln_2.out if cfg.norm_first else layer.ln_1.out  # [T, d] the FFN's input
    src = "ln_2.out" if cfg.norm_first else "ln_1.out"
    # as the page shows them: FFN(x) at its top, the rest beside its layer and query
    maths = [f"${f}$" for f in formulas(cfg) + sublayer_formulas(cfg)]
    j = int(np.argmax(layer.ffn_hidden[i]))
    unit = hidden_unit_terms(x[i], lp.W_1, lp.b_1, j, cfg.activation)
    name = "ReLU" if cfg.activation == "relu" else "GELU"
    worked = [t("w_unit", i=i, j=j, l=l + 1),
              f"ffn_hidden[{i}, {j}] = {name}({src}[{i}] · W_1[:, {j}] + b_1[{j}]) = "
              f"{name}({written(unit.dot)} + ({unit.bias:+.3f})) = {name}({unit.pre:+.4f}) = "
              f"{unit.hidden:+.4f}",
              t("w_stored", v=float(layer.ffn_hidden[i, j]))]
    return make_sheet(ctx, maths, worked, [
        heatmap(ctx, layer.ffn_hidden, f"ffn_hidden ({t('layer_n', l=l + 1)})", row=i,
                xlabel=ctx.t("hidden_unit"), signed=cfg.activation != "relu",
                tokens="rows"),
        heatmap(ctx, layer.ffn_out, f"ffn_out ({t('layer_n', l=l + 1)})", row=i,
                tokens="rows")])
