"""Overview: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/overview.py`, words `lens/texts/<lang>/overview.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig
from encoder_core.views.analysis import channel_values, parameter_count, pipeline_steps
from encoder_core.views.vit_steps import vit_differences

from .. import figures
from ..handout.sheets import Sheet, Walk, dims, make_sheet
from ..i18n import Texts, worded
from ..lesson.tasks import PAGE, Fixed, Question, Spec
from ..pipeline_words import pipeline_captions, pipeline_stages

if TYPE_CHECKING:
    from ..context import PageContext


def prefix_variant(cfg: EncoderConfig) -> str:
    return "_vit" if cfg.n_prefix else ""


def overview_tokens(ctx: PageContext, fixed: Fixed) -> Question:
    """How many tokens the encoder reads: (S/P)² patches (and a ViT's prefix tokens)."""
    cfg = ctx.cfg
    mistakes: list[tuple[str, object]] = [("side", (float(cfg.grid_size),)),
                                          ("pixels", (float(cfg.patch_size ** 2),))]
    if cfg.n_prefix:
        mistakes.append(("prefix", (float(cfg.n_tokens),)))  # the patches, no [CLS]
    return Question((float(ctx.trace.x0.shape[0]),),
                    {"S": cfg.image_size, "P": cfg.patch_size, "G": cfg.grid_size,
                     "N": cfg.n_tokens, "T": cfg.seq_len, "k": cfg.n_prefix,
                     "PP": cfg.patch_size ** 2},
                    PAGE, fixed, variant=prefix_variant(cfg), mistakes=tuple(mistakes))


OUTPUTS = ("class", "one_vector", "per_token")


def overview_output(ctx: PageContext, fixed: Fixed) -> Question:
    """What the encoder gives back: one vector per token — not one for the image, not a class
    (a concept: the same answer for every model); the reveal measures how different two of
    the output's rows are."""
    cfg, tr = ctx.cfg, ctx.trace
    i = min(fixed.query, cfg.n_tokens - 1)
    j = cfg.n_tokens - 1 - i if cfg.n_tokens - 1 - i != i else (i + 1) % cfg.n_tokens

    def evidence() -> dict[str, object]:
        out = tr.output.astype(np.float64)
        a, b = out[ctx.row(i)], out[ctx.row(j)]
        return {"T": cfg.seq_len, "d": cfg.d_model, "L": cfg.n_layers,
                "cos": float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))),
                "gap": float(np.abs(a - b).max())}

    return Question("per_token", {"i": i, "j": j, "L": cfg.n_layers}, PAGE, Fixed(query=i),
                    evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("tokens", "number", overview_tokens),
    Spec("output", "choice", overview_output, options=OUTPUTS),
)


# --- its sheet of the handout --------------------------------------------------------------------

def sheet(w: Walk) -> Sheet:
    cfg = w.cfg
    N, D, d, L, S = cfg.n_tokens, cfg.patch_dim, cfg.d_model, cfg.n_layers, cfg.image_size
    o = Texts(w.lang, "overview")
    pipeline = figures.pipeline(w.trace.image, cfg.patch_size, pipeline_captions(o, cfg),
                                pipeline_stages(o, cfg))
    formulas = [w.t("f_image_to_patches") + rf"  ${dims(S, S, cfg.channels)} \rightarrow "
                rf"{dims(N, D)} \rightarrow {dims(cfg.seq_len, d)}$"]
    for s in pipeline_steps(cfg):
        formulas.append(f"{o('step_' + s.id)}:  {worded(s.shape, w.lang)}")
    worked = [w.t("w_parameters", n=parameter_count(cfg), L=L)]
    lines = [o("diff_" + name, mean=channel_values(cfg.pixel_mean),
               std=channel_values(cfg.pixel_std), S=cfg.seq_len,
               R=cfg.n_registers, n=cfg.n_pos, d=d, eps=cfg.ln_eps)
             for name in vit_differences(cfg)]
    # the page shows the whole note; here each step has its own part: the note's title only
    return make_sheet(w, formulas, worked, [pipeline], lines, note_head=2)
