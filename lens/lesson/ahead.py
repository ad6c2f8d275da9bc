"""What the lesson has not asked yet: the steps with a question still ahead of the learner.

A step's questions are answered by what its page shows, and by what other places show about it
— the overview's pipeline table (its shapes and formulas), the sidebar's derived values (√d_k,
d_ff), the walk's PDF (its sheets). Those places ask `ahead` which steps to keep closed: a step
opens there once every question it asks is answered or shown (`lens.lesson.ui.cards`' records).
The runner computes the set once per run (`lens.roles`) and puts it in the page's context
(`PageContext.ahead`); free mode has none.
"""

from __future__ import annotations

from collections.abc import Collection

from encoder_core import EncoderConfig

# lens.steps is imported when asked: the registry imports the steps' modules (lens.walk), whose
# sheets ask this module what is open


def steps_ahead(cfg: EncoderConfig, recorded: Collection[str]) -> frozenset[str]:
    """The walk's pages (ids) with a task for this model not in `recorded` (task ids answered
    or shown)."""
    from ..steps import STEPS, tasks_for

    return frozenset(p.id for p in STEPS
                     if any(s.id not in recorded for s in tasks_for(p.id, cfg)))


# the overview's pipeline steps (encoder_core.views.analysis.pipeline_steps) and the page whose
# questions their row answers
PIPELINE_PAGE = {
    "normalise": "patches", "patches": "patches", "embedding": "embedding",
    "prefix": "embedding", "positional": "positional", "qkv": "qkv", "scores": "scores",
    "softmax": "scores", "heads": "multihead", "concat": "multihead", "addnorm_1": "addnorm",
    "addnorm_2": "addnorm", "add_1": "addnorm", "add_2": "addnorm", "ln_1": "addnorm",
    "ln_2": "addnorm",
    "ffn": "ffn", "output": "stack", "final_norm": "stack",
}


def row_page(step_id: str) -> str:
    """The page whose questions the pipeline step's row answers (its own id by default)."""
    return PIPELINE_PAGE.get(step_id, step_id)


def opened_through(page_id: str, ahead: Collection[str]) -> bool:
    """Whether `page_id` and every page before it in the walk have no question ahead: a row
    of the overview's table states numbers of the steps before its own (the embedding's row,
    the patches' shape), so the table opens row by row, in the walk's order."""
    from ..steps import STEPS

    order = [p.id for p in STEPS]
    upto = order[:order.index(page_id) + 1] if page_id in order else order
    return not any(p in ahead for p in upto)
