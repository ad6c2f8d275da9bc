"""Patches: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/patches.py`, words `lens/texts/<lang>/patches.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, patchify

from .. import figures
from ..handout.sheets import Sheet, drawn, heatmap, make_sheet, said
from ..lesson.tasks import PAGE, Fixed, Question, Spec, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def patches_shape(ctx: PageContext, fixed: Fixed) -> Question:
    """The patch matrix: one row per patch, P·P·C values each."""
    cfg = ctx.cfg
    N, P = float(cfg.n_tokens), float(cfg.patch_size)
    mistakes: list[tuple[str, object]] = [("grid", (float(cfg.grid_size),) * 2),
                                          ("bias", (N, float(cfg.patch_dim + 1)))]
    if not cfg.n_prefix:
        mistakes.append(("cls", (N + 1, float(cfg.patch_dim))))  # a ViT's [CLS] row added
    if cfg.channels > 1:
        mistakes.append(("channels", (N, P * P)))  # a grey patch's values: C forgotten
    return shape_task(ctx.trace.patches,
                      {"S": cfg.image_size, "P": cfg.patch_size, "C": cfg.channels,
                       "G": cfg.grid_size, "N": cfg.n_tokens, "D": cfg.patch_dim,
                       "PP": cfg.patch_size ** 2}, PAGE, fixed, mistakes=tuple(mistakes))


SHIFTS = ("same", "moved", "changed")


def shift_patches(pixels: np.ndarray, patch_size: int, shift: int) -> np.ndarray:
    """The patch matrix of the image moved `shift` pixels to the left (wrapping round)."""
    return patchify(np.roll(pixels, -shift, axis=1), patch_size)


def patches_shift(ctx: PageContext, fixed: Fixed) -> Question:
    """Move the image left by exactly one patch width: the same rows, renumbered (a concept:
    the same answer for every image); the reveal cuts the moved image and, for contrast, the
    image moved by half a patch."""
    cfg, tr = ctx.cfg, ctx.trace
    G, P = cfg.grid_size, cfg.patch_size

    def evidence() -> dict[str, object]:
        old = tr.patches
        whole = shift_patches(tr.pixels, P, P)  # new patch (r, c) is old patch (r, c + 1)
        moved = (np.arange(cfg.n_tokens) // G) * G + (np.arange(cfg.n_tokens) % G + 1) % G
        half = shift_patches(tr.pixels, P, max(P // 2, 1))
        kept_half = sum(bool(np.any(np.all(old == row, axis=1))) for row in half)
        return {"gap": float(np.abs(whole - old[moved]).max()),
                "same_place": int(np.sum(np.all(whole == old, axis=1))),
                "kept_half": kept_half, "N": cfg.n_tokens, "half": max(P // 2, 1),
                "G1": G - 1}

    return Question("moved", {"P": P, "G": G}, PAGE, fixed, evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("shape", "number", patches_shape),
    Spec("shift", "choice", patches_shift, options=SHIFTS),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig, image: str = "image", patches: str = "patches") -> list[str]:
    """The image cut into patches, [S × S × C] → [N × P·P·C], then how many and how long, in
    LaTeX that KaTeX (the page's st.latex) and mathtext (the sheet, between $…$) both draw;
    `image`, `patches`: their names (the page's words; mathtext cannot draw 中文)."""
    S, P, C, N, D = cfg.image_size, cfg.patch_size, cfg.channels, cfg.n_tokens, cfg.patch_dim
    return [r"\underset{\text{%s}}{[%d \times %d \times %d]}\;\overset{(h\,p_1)(w\,p_2)\,c"
            r"\;\to\;(h\,w)(p_1\,p_2\,c)}{\longrightarrow}\;\underset{\text{%s}}{[%d \times %d]}"
            % (image, S, S, C, patches, N, D),
            rf"N = (S/P)^2 = ({S}/{P})^2 = {N},\quad P \cdot P \cdot C = {P}\cdot{P}\cdot{C}"
            rf" = {D}"]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr = ctx.cfg, ctx.trace
    P, G, N, D = cfg.patch_size, cfg.grid_size, cfg.n_tokens, cfg.patch_dim
    r, c = divmod(ctx.query, G)
    grid = drawn(ctx, figures.image_with_grid, tr.image, P, ctx.t("grid_title", G=G, N=N),
                 highlight=ctx.query, size=4.0)
    rows = heatmap(ctx, tr.patches, t("word_patches"), signed=cfg.normalises_pixels,
                   xlabel=t("pixel_in_patch"), row=ctx.query, label=t("pixel_value"))
    maths = [f"${f}$" for f in formulas(cfg)]  # as the page shows them
    first = ", ".join(f"{v:.3f}" for v in tr.patches[ctx.query, :4])
    worked = [t("w_patch", i=ctx.query, r=r, c=c, y0=r * P, y1=(r + 1) * P - 1, x0=c * P,
                  x1=(c + 1) * P - 1, D=D, first=first)]
    return make_sheet(ctx, maths, worked, [grid, rows])
