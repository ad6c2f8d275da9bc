"""Patches: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/patches.py`, words `lens/texts/<lang>/patches.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .. import figures
from ..handout.sheets import Sheet, Walk, dims, heatmap, make_sheet
from ..lesson.tasks import PAGE, Fixed, Spec, Task, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def patches_shape(ctx: PageContext, fixed: Fixed) -> Task:
    """The patch matrix: one row per patch, P·P·C values each."""
    cfg = ctx.cfg
    return shape_task("patches.shape", ctx.trace.patches,
                      {"S": cfg.image_size, "P": cfg.patch_size, "C": cfg.channels,
                       "G": cfg.grid_size, "N": cfg.n_tokens, "D": cfg.patch_dim}, PAGE, fixed)


def patches_number(ctx: PageContext, fixed: Fixed) -> Task:
    """Row-major numbering: patch k is at row k // G, column k % G."""
    cfg = ctx.cfg
    G, k = cfg.grid_size, min(fixed.query, cfg.n_tokens - 1)
    hit = np.zeros(cfg.n_tokens)
    hit[k] = 1.0  # the one right patch
    return Task("patches.number", "patch", k, {"k": k, "r": k // G, "c": k % G, "G": G,
                                                "N": cfg.n_tokens, "i": -1},
                PAGE, Fixed(query=k), scores=tuple(hit), grid=G, trace=ctx.trace,
                true_map=False)  # the page's numbered grid is its map


TASKS: tuple[Spec, ...] = (
    Spec("patches.shape", "number", patches_shape),
    Spec("patches.number", "patch", patches_number),
)


# --- its sheet of the handout --------------------------------------------------------------------

def sheet(w: Walk) -> Sheet:
    cfg, tr = w.cfg, w.trace
    S, P, C, G, N, D = (cfg.image_size, cfg.patch_size, cfg.channels, cfg.grid_size,
                        cfg.n_tokens, cfg.patch_dim)
    r, c = divmod(w.query, G)
    grid = figures.image_with_grid(tr.image, P, w.page("patches", "grid_title", G=G, N=N),
                                   highlight=w.query, size=4.0)
    rows = heatmap(w, tr.patches, w.t("word_patches"), signed=cfg.normalises_pixels,
                   xlabel=w.t("pixel_in_patch"), row=w.query, label=w.t("pixel_value"))
    formulas = [rf"${dims(S, S, C)} \rightarrow ({G}\cdot{P}) \times ({G}\cdot{P}) \times {C}"
                rf" \rightarrow {dims(N, D)}$",
                w.t("f_patch_count") + rf"  $N = (S/P)^2 = ({S}/{P})^2 = {N},\quad "
                rf"P \cdot P \cdot C = {P}\cdot{P}\cdot{C} = {D}$"]
    first = ", ".join(f"{v:.3f}" for v in tr.patches[w.query, :4])
    worked = [w.t("w_patch", i=w.query, r=r, c=c, y0=r * P, y1=(r + 1) * P - 1, x0=c * P,
                  x1=(c + 1) * P - 1, D=D, first=first)]
    return make_sheet(w, formulas, worked, [grid, rows])
