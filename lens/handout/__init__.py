"""The walk as a handout: one PDF of the ten steps with the live numbers.

    sheets.py        `Walk` (the trace and the learner's choices), `Sheet` (one step: title,
                     takeaway, formulas with the live shapes, the worked entry, pictures, the
                     lesson's answers, the note's lines); steps 1–4
    sheets_layer.py  steps 5–10 and the prediction of weights with a head
    pdf.py           the layout: a title page, then each sheet, on A4 (matplotlib's PDF backend)

`handout(walk, title)` gives the PDF's bytes; `lens.handout_ui` is its sidebar button.
"""

from __future__ import annotations

from collections.abc import Callable

from ..steps import STEPS
from .pdf import Progress, TitlePage, can_draw, handout_pdf
from .sheets import INPUT_SHEETS, Answer, Sheet, Walk
from .sheets_layer import LAYER_SHEETS, prediction

BUILDERS = {**INPUT_SHEETS, **LAYER_SHEETS}  # step id -> its sheet


def sheets_for(walk: Walk, progress: Callable[[int, int], None] | None = None) -> list[Sheet]:
    """The ten steps' sheets in the walk's order, then the prediction when the weights have a
    classification head."""
    out = []
    for n, step in enumerate(STEPS):
        out.append(BUILDERS[step.id](walk))
        if progress is not None:
            progress(n + 1, len(STEPS))
    predicted = prediction(walk)
    return out + ([predicted] if predicted is not None else [])


def handout(walk: Walk, title: TitlePage, progress: Callable[[float], None] | None = None,
            ) -> bytes:
    """The PDF of the walk. `progress(share done)` is told as the work goes: the sheets and
    their pictures first (half the work), then their pages."""
    def told(start: float) -> Progress:
        return lambda k, n: progress(start + 0.5 * k / n) if progress is not None else None

    sheets = sheets_for(walk, told(0.0))
    return handout_pdf(title, sheets, walk.t, told(0.5))


__all__ = ["Answer", "BUILDERS", "Sheet", "TitlePage", "Walk", "can_draw", "handout",
           "sheets_for"]
