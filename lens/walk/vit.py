"""What a ViT looks at: its lesson task (`TASKS`); page `pages/vit.py`, words
`lens/texts/<lang>/vit.toml`. A page beyond the note, like /learn: lesson mode asks its task on
the page, the walk's progress does not count it (`lens.steps`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core.views.logit_lens import logit_lens
from encoder_core.views.predictions import settles_at

from ..lesson.tasks import Fixed, Question, Spec

if TYPE_CHECKING:
    from ..context import PageContext


def has_head(ctx: PageContext) -> bool:
    """The weights end in a classification head, read by the logit lens."""
    return ctx.trace.params.head is not None


LENS = ("logit_lens",)  # withheld: the logit lens's section (lens.sections.logit_lens)


def vit_settles(ctx: PageContext, fixed: Fixed) -> Question | None:
    """From which depth on is the predicted class the top-1 of the logit lens, and stays it?
    (0 = what enters layer 1, l = what leaves layer l); answered by the lens, the head read
    off every layer's residual stream (`encoder_core.views.logit_lens`,
    `predictions.settles_at`)."""
    cfg, tr = ctx.cfg, ctx.trace
    if not has_head(ctx):
        return None  # nothing reads the states: not asked (its Spec's `possible` says so too)
    lens = ctx.derived("inside/lens", lambda: logit_lens(tr, tr.params))  # [L+1, n_classes]
    target = int(np.argmax(lens[-1]))  # the prediction: the lens's last row is `predict`
    depth = settles_at(lens, target)
    assert depth is not None  # the last row's top-1 is the target
    mistakes = (("last", (float(cfg.n_layers),)),) if depth < cfg.n_layers else ()
    return Question((float(depth),), {"L": cfg.n_layers, "depth": depth}, LENS, fixed,
                    mistakes=mistakes)


TASKS: tuple[Spec, ...] = (
    Spec("settles", "number", vit_settles, possible=has_head),
)
