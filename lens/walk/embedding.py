"""Input embedding: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/embedding.py`, words `lens/texts/<lang>/embedding.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from encoder_core import prefix_names
from encoder_core.views.explain import affine_terms, dot_terms

from ..handout.sheets import Sheet, Walk, dims, heatmap, make_sheet, written
from ..lesson.tasks import PAGE, Fixed, Spec, Task, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def embedding_shape(ctx: PageContext, fixed: Fixed) -> Task:
    """W_E maps a patch's P·P·C values to d_model: [P·P·C × d_model]."""
    cfg = ctx.cfg
    return shape_task("embedding.shape", ctx.trace.params.W_E,
                      {"P": cfg.patch_size, "C": cfg.channels, "D": cfg.patch_dim,
                       "d": cfg.d_model, "N": cfg.n_tokens}, PAGE, fixed)


def embedding_params(ctx: PageContext, fixed: Fixed) -> Task:
    """The trainable numbers of the embedding: W_E, and b_E when the model has it."""
    cfg, params = ctx.cfg, ctx.trace.params
    bias = params.b_E.size if cfg.patch_bias and params.b_E is not None else 0
    return Task("embedding.params", "number", (float(params.W_E.size + bias),),
                {"D": cfg.patch_dim, "d": cfg.d_model, "w": int(params.W_E.size), "b": bias},
                PAGE, fixed, variant="_bias" if bias else "")


TASKS: tuple[Spec, ...] = (
    Spec("embedding.shape", "number", embedding_shape),
    Spec("embedding.params", "number", embedding_params),
)


# --- its sheet of the handout --------------------------------------------------------------------

def sheet(w: Walk) -> Sheet:
    cfg, tr = w.cfg, w.trace
    N, D, d, i, j = cfg.n_tokens, cfg.patch_dim, cfg.d_model, w.query, 0
    b = tr.params.b_E
    bias = " + b_E" if b is not None else ""
    formulas = [rf"$\mathrm{{embedded}} = \mathrm{{patches}} \cdot W_E{bias}:\quad "
                rf"{dims(N, D)} \cdot {dims(D, d)} = {dims(N, d)}$"]
    if cfg.n_prefix:
        names = ", ".join(prefix_names(cfg))
        formulas.append(w.t("f_prefix", names=names)
                        + rf"  ${dims(cfg.seq_len, d)}$")
    terms = (affine_terms(tr.patches[i], tr.params.W_E[:, j], float(b[j])) if b is not None
             else dot_terms(tr.patches[i], tr.params.W_E[:, j]))
    worked = [f"embedded[{i}, {j}] = Σ_k patches[{i}, k] · W_E[k, {j}]"
              + (f" + b_E[{j}]" if b is not None else ""),
              f"  = {written(terms)} = {terms.result:+.4f}",
              w.t("w_stored", v=float(tr.embedded[i, j]))]
    shown = tr.tokens if cfg.n_prefix else tr.embedded
    name = (w.page("embedding", "tokens_name", names=", ".join(prefix_names(cfg)))
            if cfg.n_prefix else w.page("embedding", "embedded_name"))
    return make_sheet(w, formulas, worked,
                 [heatmap(w, shown, name, row=w.row, tokens="rows")])
