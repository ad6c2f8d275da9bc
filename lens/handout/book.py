"""The walk as one PDF: each step's sheet, framed by what its registry entry says, then the
prediction of weights with a classification head, laid out by `pdf.handout_pdf`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..note import note_plain
from ..steps import STEPS, PageInfo, step_number
from .pdf import Progress, TitlePage, handout_pdf
from .sheets import Sheet, Walk, plain, prediction


def framed(built: Sheet, info: PageInfo, walk: Walk) -> Sheet:
    """A step's sheet with its id, "Step k of n · title", takeaway, the learner's answers on
    it and its lines of the note (the first `note_head` of them when the builder says so)."""
    k = step_number(info.id)
    title = info.title_in(walk.lang)
    note = note_plain(info.note)
    if built.note_head:
        note = note[:built.note_head]
    return replace(built, step=info.id,
                   title=walk.t("step_title", k=k, n=len(STEPS), title=title) if k else title,
                   takeaway=plain(info.takeaway_in(walk.lang)),
                   answers=walk.answers.get(info.id, ()),
                   note=tuple(note or [walk.t("note_none")]))


def sheets_for(walk: Walk, progress: Callable[[int, int], None] | None = None) -> list[Sheet]:
    """Every step's sheet in the walk's order, then the prediction when the weights have a
    classification head."""
    out = []
    for n, info in enumerate(STEPS):
        out.append(framed(info.sheet(walk), info, walk))
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
