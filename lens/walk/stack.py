"""The stack: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/stack.py`, words `lens/texts/<lang>/stack.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import patch_rows

from .. import figures
from ..handout.sheets import MAX_HEADS, Sheet, Walk, dims, make_sheet
from ..lesson.tasks import PAGE, Fixed, Spec, Task, has_trained_attention, looks_most, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def stack_output(ctx: PageContext, fixed: Fixed) -> Task:
    """After L layers the sequence keeps its shape: [T × d_model]."""
    cfg = ctx.cfg
    return shape_task("stack.output", ctx.trace.output,
                      {"T": cfg.seq_len, "d": cfg.d_model, "L": cfg.n_layers}, PAGE, fixed)


def stack_look(ctx: PageContext, fixed: Fixed) -> Task | None:
    """Where a head of the last layer looks most from patch i."""
    return looks_most(ctx, fixed, "stack.look", PAGE, last_layer=True)


TASKS: tuple[Spec, ...] = (
    Spec("stack.output", "number", stack_output),
    Spec("stack.look", "patch", stack_look, possible=has_trained_attention),
)


# --- its sheet of the handout --------------------------------------------------------------------

MAX_LAYERS = 6  # layers of the stack's table


def spread(count: int, limit: int) -> list[int]:
    """At most `limit` of `count` indices, spread from the first to the last."""
    if count <= limit:
        return list(range(count))
    return sorted({round(k * (count - 1) / (limit - 1)) for k in range(limit)})


def sheet(w: Walk) -> Sheet:
    cfg, tr, i = w.cfg, w.trace, w.row
    T, d, L, G = cfg.seq_len, cfg.d_model, cfg.n_layers, cfg.grid_size
    out = r"\mathrm{LN}(x_{%d})" % L if tr.final_ln is not None else "x_{%d}" % L
    formulas = [rf"$x_l = \mathrm{{EncoderLayer}}_l(x_{{l-1}}),\quad l = 1, \ldots, {L}$",
                rf"$\mathrm{{output}} = {out}:\quad {dims(T, d)}$"]
    if cfg.cls_token:
        formulas.append(w.t("f_cls_row", d=d))
    row = tr.output[i]
    worked = [w.t("w_output", i=i, first=", ".join(f"{v:+.3f}" for v in row[:4]),
                  norm=float(np.linalg.norm(row)))]
    layers, heads = spread(L, MAX_LAYERS), list(range(min(cfg.n_heads, MAX_HEADS)))
    maps = np.stack([patch_rows(tr.layers[l].attn[heads, i, :], cfg).reshape(len(heads), G, G)
                     for l in layers])  # [layers, heads, G, G]
    table = figures.attention_table(
        tr.image, maps, f"attn[h, {i}, :]  ({G} × {G})",
        row_labels=[w.page("stack", "layer_label", l=l + 1) for l in layers],
        col_labels=[w.page("stack", "head_title", h=h + 1) for h in heads], query=w.query,
        colorbar_label=w.page("multihead", "weight"))
    return make_sheet(w, formulas, worked, [table])
