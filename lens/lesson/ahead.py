"""What the lesson has not asked yet: the steps with a question still ahead of the learner.

A step's questions are answered by what its page shows, and by what other places show about it
— the overview's pipeline table (its shapes and formulas), the sidebar's derived values (√d_k,
d_ff), the walk's PDF (its sheets). Those places ask the page's context which steps are still
closed (`PageContext.knows`): the runner computes the set once per run (`lens.roles`); free
mode has none.

The walk opens in order: a step is closed while it, or a step before it, has a question not
answered or shown — a step's numbers build on the steps before it (the embedding's row of the
table states the patches' shape). The set holds the closed steps' page ids and the overview's
pipeline rows whose numbers their questions ask for (`PageInfo.rows`; a row named like its
page is its page's), so that the table, its picture and the PDF ask one question: `knows`.
"""

from __future__ import annotations

from collections.abc import Collection

from encoder_core import EncoderConfig

from ..steps import STEPS, PageInfo, tasks_for


def steps_ahead(cfg: EncoderConfig, recorded: Collection[str]) -> frozenset[str]:
    """The walk's steps from the first one with a task for this model not in `recorded` (task
    ids answered or shown) to the end, and their pipeline rows; empty once all are done."""
    first = next((k for k, p in enumerate(STEPS)
                  if any(s.id not in recorded for s in tasks_for(p.id, cfg))), None)
    return closed(STEPS[first:]) if first is not None else frozenset()


def closed(pages: Collection[PageInfo]) -> frozenset[str]:
    """The ids of `pages` and of the pipeline rows they answer."""
    return frozenset(p.id for p in pages) | frozenset(r for p in pages for r in p.rows)
