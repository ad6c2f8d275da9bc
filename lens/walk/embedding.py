"""Input embedding: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/embedding.py`, words `lens/texts/<lang>/embedding.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, embed, prefix_names
from encoder_core.views.explain import affine_terms, dot_terms

from ..handout.sheets import Sheet, heatmap, make_sheet, said, written
from ..latex import dims
from ..lesson.tasks import PAGE, Fixed, Question, Spec, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def embedding_shape(ctx: PageContext, fixed: Fixed) -> Question:
    """W_E maps a patch's P·P·C values to d_model: [P·P·C × d_model]."""
    cfg = ctx.cfg
    N, D, d = float(cfg.n_tokens), float(cfg.patch_dim), float(cfg.d_model)
    return shape_task(ctx.trace.params.W_E,
                      {"P": cfg.patch_size, "C": cfg.channels, "D": cfg.patch_dim,
                       "d": cfg.d_model, "N": cfg.n_tokens}, PAGE, fixed,
                      mistakes=(("output", (N, d)), ("patches", (N, D)), ("bias", (D + 1, d))))


def adds_positions(cfg: EncoderConfig) -> bool:
    """The second half of the question (after adding the positions) needs them added."""
    return cfg.use_pe


TWINS = ("equal_equal", "differ_differ", "equal_differ")


def embedding_twins(ctx: PageContext, fixed: Fixed) -> Question:
    """Two patches with the same pixels: equal rows after W_E (one matrix for every patch),
    different once their positions are added (a concept: the same answer for every model
    that adds positions). The reveal gives patch j patch i's pixels and embeds both."""
    cfg, tr = ctx.cfg, ctx.trace
    i = min(fixed.query, cfg.n_tokens - 1)
    j = (i + cfg.grid_size + 1) % cfg.n_tokens  # one row down, one column on

    def evidence() -> dict[str, object]:
        twins = tr.patches[[i, i]]  # patch j's pixels replaced by patch i's
        rows = embed(twins, tr.params.W_E, tr.params.b_E)  # [2, d]
        with_pos = rows + tr.pos[[ctx.row(i), ctx.row(j)]]
        return {"after_w": float(np.abs(rows[0] - rows[1]).max()),
                "after_pe": float(np.abs(with_pos[0] - with_pos[1]).max()),
                "size": float(np.abs(rows[0]).max())}

    return Question("equal_differ", {"i": i, "j": j, "d": cfg.d_model}, PAGE, Fixed(query=i),
                    evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("shape", "number", embedding_shape),
    Spec("twins", "choice", embedding_twins, applies=adds_positions, options=TWINS),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig, embedded: str = "embedded", patches: str = "patches") -> list[str]:
    """embedded = patches · W_E (+ b_E) with its shapes, in LaTeX that KaTeX (the page's
    st.latex) and mathtext (the sheet, between $…$) both draw; `embedded`, `patches`: their
    names (the page's words; mathtext cannot draw 中文)."""
    N, D, d = cfg.n_tokens, cfg.patch_dim, cfg.d_model
    b_tex = rf" + \underset{{{d}}}{{b_E}}" if cfg.patch_bias else ""
    return [rf"\underset{{{N} \times {d}}}{{\text{{{embedded}}}}} \;=\; "
            rf"\underset{{{N} \times {D}}}{{\text{{{patches}}}}}\;\cdot\;"
            rf"\underset{{{D} \times {d}}}{{W_E}}{b_tex}",
            r"(N \times P\!\cdot\!P\!\cdot\!C)\cdot(P\!\cdot\!P\!\cdot\!C \times d_{model}) = "
            rf"N \times d_{{model}}:\quad ({N} \times {D})\cdot({D} \times {d}) = {N} \times {d}"]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr = ctx.cfg, ctx.trace
    d, i, j = cfg.d_model, ctx.query, 0
    b = tr.params.b_E
    maths = [f"${f}$" for f in formulas(cfg)]  # as the page shows them
    if cfg.n_prefix:
        names = ", ".join(prefix_names(cfg))
        maths.append(t("f_prefix", names=names) + rf"  ${dims(cfg.seq_len, d)}$")
    terms = (affine_terms(tr.patches[i], tr.params.W_E[:, j], float(b[j])) if b is not None
             else dot_terms(tr.patches[i], tr.params.W_E[:, j]))
    worked = [f"embedded[{i}, {j}] = Σ_k patches[{i}, k] · W_E[k, {j}]"
              + (f" + b_E[{j}]" if b is not None else ""),
              f"  = {written(terms)} = {terms.result:+.4f}",
              t("w_stored", v=float(tr.embedded[i, j]))]
    shown = tr.tokens if cfg.n_prefix else tr.embedded
    name = (ctx.t("tokens_name", names=", ".join(prefix_names(cfg)))
            if cfg.n_prefix else ctx.t("embedded_name"))
    return make_sheet(ctx, maths, worked,
                 [heatmap(ctx, shown, name, row=ctx.row(ctx.query), tokens="rows")])
