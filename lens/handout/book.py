"""The walk as one PDF: each step's sheet, framed by what its registry entry says, then the
prediction of weights with a classification head, laid out by `pdf.handout_pdf`.

A sheet receives what its page receives, a `PageContext`: the page's context with the layer,
head and query the pages show in `chosen` (`lens.handout.ui` makes it), given each step's id in
turn. What the PDF holds beyond the pages — the learner's lesson answers, the head's class
names — comes as arguments."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ..note import note_plain
from ..steps import STEPS, PageInfo, step_number
from .pdf import Progress, TitlePage, handout_pdf
from .sheets import Answer, Sheet, plain, prediction, said

if TYPE_CHECKING:
    from ..context import PageContext

Answers = Mapping[str, tuple[Answer, ...]]  # page id -> the learner's answers on it


def framed(built: Sheet, info: PageInfo, ctx: PageContext, answers: Answers) -> Sheet:
    """A step's sheet with its id, "Step k of n · title", takeaway, the learner's answers on
    it and its lines of the note (the first `note_head` of them when the builder says so)."""
    k = step_number(info.id)
    title = info.title_in(ctx.lang)
    note = note_plain(info.note)
    if built.note_head:
        note = note[:built.note_head]
    t = said(ctx)
    return replace(built, step=info.id,
                   title=t("step_title", k=k, n=len(STEPS), title=title) if k else title,
                   takeaway=plain(info.takeaway_in(ctx.lang)),
                   answers=tuple(answers.get(info.id, ())),
                   note=tuple(note or [t("note_none")]))


def sheets_for(ctx: PageContext, progress: Callable[[int, int], None] | None = None, *,
               answers: Answers | None = None, labels: tuple[str, ...] = ()) -> list[Sheet]:
    """Every step's sheet in the walk's order (each given `ctx` as its own page's context),
    then the prediction when the weights have a classification head (its classes named by
    `labels`). In the lesson, or for a class's student, only the steps whose questions are
    all answered, shown or revealed (`ctx.knows`): a sheet states its step's answers."""
    out = []
    steps = [info for info in STEPS if ctx.knows(info.id)]
    for n, info in enumerate(steps):
        out.append(framed(info.sheet(replace(ctx, id=info.id)), info, ctx, answers or {}))
        if progress is not None:
            progress(n + 1, len(steps))
    predicted = prediction(ctx, labels) if ctx.knows(STEPS[-1].id) else None
    return out + ([predicted] if predicted is not None else [])


def handout(ctx: PageContext, title: TitlePage,
            progress: Callable[[float], None] | None = None, *, answers: Answers | None = None,
            labels: tuple[str, ...] = ()) -> bytes:
    """The PDF of the walk. `progress(share done)` is told as the work goes: the sheets and
    their pictures first (half the work), then their pages."""
    def told(start: float) -> Progress:
        return lambda k, n: progress(start + 0.5 * k / n) if progress is not None else None

    sheets = sheets_for(ctx, told(0.0), answers=answers, labels=labels)
    return handout_pdf(title, sheets, said(ctx), told(0.5))
