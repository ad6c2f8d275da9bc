"""A class on one page: the PDF summary the teacher downloads beside the CSV (`teacher.ending`).

What it says: the class's code and day; per question the class was asked (`Store.asked_tasks`,
as the CSV), every round of it in the order asked (a question asked again: "asked twice,
round 1", then "round 2"), its short title, the share right at vote 1 and at vote 2 (of those
who answered that vote; a vote 2 not sent counts as the student's vote 1, carried at its
close) and how the students who voted twice moved (`tally.transitions`); the concept check's
per-question share right before and after, its gain g and the overall row
(`concepts.gain_table`; its "students" column counts students, not answers), with how many
students answered in both rounds. What it never says: a nickname, a pseudonym, a token.

Laid out with the handout's machinery (`lens.handout.pdf`: A4, DejaVu Sans with the shipped CJK
subset behind it, both embedded as Type 42), on one page: the rows shrink to fit, down to
`MIN_PT`; questions beyond that are counted, not listed (the CSV has them). Pure: no
Streamlit, no store; `summary_pdf` takes the store's rows.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from matplotlib import rc_context
from matplotlib.backends.backend_pdf import PdfPages
from matplotlib.lines import Line2D

from ..handout.pdf import GREY, LEADING, MARGIN, PAGE_H, PAGE_W, RC, WIDTH, Flow, drawable
from ..i18n import Texts
from ..lesson.concepts import OWNER as CONCEPT_WORDS
from ..lesson.concepts import GainRow, gain_table
from ..lesson.tasks import Task, task_texts
from .results import ResultRow
from .tally import TRANSITIONS, Transitions, judge_stored, transitions

OWNER = "class"
BODY_PT, MIN_PT, HEAD_PT = 9.5, 6.5, 8.0  # a table's rows (at most, at least) and its header
QUESTION_COLS = (2.99, 0.8, 0.8, 0.62, 0.62, 0.62, 0.62)  # inches: title, 2 votes, 4 moves
CHECK_COLS = (3.07, 1.0, 1.0, 1.0, 1.0)  # inches: title, students, before, after, g
SHRINK = 0.8  # a title too wide for its column is set this much smaller, then cut
CHECK_ROWS = 8  # the check's table: header, six questions, the overall row
assert abs(sum(QUESTION_COLS) - WIDTH) < 0.01 and abs(sum(CHECK_COLS) - WIDTH) < 0.01


@dataclass(frozen=True)
class QuestionLine:
    """One question as asked under one settings key, counted."""

    task: Task
    n_1: int  # students who answered vote 1
    right_1: float | None  # share of them right (None: n_1 = 0)
    n_2: int  # students who answered vote 2 (0: asked once)
    right_2: float | None
    moved: Transitions | None  # vote 1 → vote 2 of those who answered both (None: asked once)
    round: int = 1  # which asking of the question (2, 3, … once asked again)
    rounds: int = 1  # how many times it was asked


def question_lines(rows: Iterable[ResultRow],
                   asked: Mapping[tuple[str, str], Task]) -> list[QuestionLine]:
    """Each round of each asked question, judged as the teacher's page asked it, in the order
    the class first answered them (a question asked again: each round in its place;
    questions nobody answered last, in `asked`'s order). An answer to a question `asked` does
    not hold (opened before the store kept how it was asked) is left out, as the CSV leaves
    its `right` empty."""
    votes: dict[tuple[str, str, int], dict[str, dict[int, object]]] = {}
    first: dict[tuple[str, str, int], float] = {}
    rounds: dict[tuple[str, str], int] = {}
    for r in rows:
        if (r.task, r.settings_key) not in asked:
            continue
        where = (r.task, r.settings_key, r.round)
        votes.setdefault(where, {}).setdefault(r.student, {})[r.vote] = r.value
        first[where] = min(first.get(where, r.at), r.at)
        rounds[where[:2]] = max(rounds.get(where[:2], 0), r.round)
    order = sorted(first, key=lambda w: first[w])
    lines = [_line(asked[w[:2]], list(votes[w].values()), w[2], rounds[w[:2]]) for w in order]
    return lines + [_line(asked[w], [], 1, 1) for w in asked if w not in rounds]


def _line(task: Task, per_student: list[dict[int, object]], round_: int = 1,
          rounds: int = 1) -> QuestionLine:
    right = judge_stored(task)

    def share(vote: int) -> tuple[int, float | None]:
        given = [v[vote] for v in per_student if vote in v]
        return len(given), (sum(map(right, given)) / len(given) if given else None)

    (n_1, right_1), (n_2, right_2) = share(1), share(2)
    moved = transitions([(v.get(1), v.get(2)) for v in per_student], right) if n_2 else None
    return QuestionLine(task, n_1, right_1, n_2, right_2, moved, round_, rounds)


def percent(share: float | None, n: int | None = None) -> str:
    """"75 %", or "75 % (4)" with the number of answers; "—" when there is none."""
    if share is None:
        return "—"
    return f"{100 * share:.0f} %" + (f" ({n})" if n is not None else "")


def class_day(rows: Sequence[ResultRow], now: float) -> str:
    """The class's day (UTC, as the CSV's times): its first answer's, else `now`'s."""
    at = min((r.at for r in rows), default=now)
    return datetime.fromtimestamp(at, UTC).date().isoformat()


# --- the page ---------------------------------------------------------------------------------

def summary_pdf(code: str, rows: Sequence[ResultRow], asked: Mapping[tuple[str, str], Task],
                check: Mapping[tuple[str, str, str], object], lang: str,
                now: float) -> bytes:
    """The one-page PDF: `rows` are `Store.result_rows`, `check` is `Store.check_answers`,
    `asked` what the teacher's page asked ((question id, settings key) -> task), words in
    `lang`."""
    t = Texts(lang, OWNER)
    day = class_day(rows, now)
    lines = question_lines(rows, asked)
    out = io.BytesIO()
    with rc_context(RC):
        with PdfPages(out, metadata={"Title": t("summary_title", code=code),
                                     "Creator": "Encoder Lens", "CreationDate": None}) as pdf:
            flow = Flow(pdf, f"Encoder Lens · {code} · {day}")
            flow.new_page()
            flow.text(t("summary_title", code=code), 17, weight="bold", after=0.04)
            students = len({r.student for r in rows})
            flow.text(t("summary_day", day=day, n=students), 10.5, color=GREY, after=0.12)
            questions_part(flow, lines, lang, check_room(flow, lang))
            check_part(flow, check, lang)
            flow.close_page()
    assert flow.pages == 1, f"the summary is one page, not {flow.pages}"
    return out.getvalue()


def check_room(flow: Flow, lang: str) -> float:
    """Inches the concept check's part takes at most: a heading, its table and its note."""
    t = Texts(lang, OWNER)
    note = len(flow.wrap(t("check_students_both", n=0), 8.5, WIDTH))
    return 0.45 + 2 * HEAD_PT * LEADING / 72 + CHECK_ROWS * BODY_PT * LEADING / 72 + 0.1 + (
        note * 8.5 * LEADING / 72)


def questions_part(flow: Flow, lines: list[QuestionLine], lang: str, keep: float) -> None:
    """The questions' heading and table, in the room left above `keep` inches."""
    t = Texts(lang, OWNER)
    flow.heading(t("summary_questions"))
    if not lines:
        flow.text(t("summary_no_questions"), 10, color=GREY, after=0.1)
        return
    flow.text(t("summary_questions_help"), 8.5, color=GREY, after=0.06)
    head = [t("check_col_question"), t("summary_col_vote", vote=1), t("summary_col_vote",
                                                                      vote=2)]
    head += [t("move_" + m.replace("→", "_")) for m in TRANSITIONS]
    cells = [question_cells(line, lang) for line in lines]
    room = flow.room - keep - header_height(flow, head, QUESTION_COLS) - 0.25
    size = max(MIN_PT, min(BODY_PT, 72 * room / (LEADING * len(cells))))
    fit = int(room // (size * LEADING / 72))
    more = len(cells) - fit
    shown = cells if more <= 0 else cells[:fit - 1]
    table(flow, head, shown, QUESTION_COLS, size)
    if more > 0:
        flow.text(t("summary_more", k=len(cells) - len(shown)), 8.5, color=GREY)
    flow.gap(0.1)


def question_cells(line: QuestionLine, lang: str) -> list[str]:
    title = task_texts(lang, line.task)(line.task.text("short"))
    if line.rounds > 1:  # asked again: said, each round in its place
        t = Texts(lang, OWNER)
        asked = t("asked_twice") if line.rounds == 2 else t("asked_times", n=line.rounds)
        title = t("summary_round", title=title, asked=asked, k=line.round)
    moves = (["—"] * len(TRANSITIONS) if line.moved is None
             else [str(line.moved.counts[m]) for m in TRANSITIONS])
    return [title, percent(line.right_1, line.n_1),
            percent(line.right_2, line.n_2) if line.n_2 else "—", *moves]


def check_part(flow: Flow, check: Mapping[tuple[str, str, str], object], lang: str) -> None:
    """The concept check's heading, its table and how many answered both rounds."""
    t, words = Texts(lang, OWNER), Texts(lang, CONCEPT_WORDS)
    flow.heading(t("check_title"))
    gains = gain_table(check)
    if gains.students == 0:
        flow.text(t("summary_no_check"), 10, color=GREY)
        return
    head = [t(f"check_col_{c}") for c in ("question", "n", "pre", "post", "gain")]
    cells = [check_cells(words(f"{row.question}_short"), row) for row in gains.rows]
    overall = check_cells(t("check_overall"), gains.overall)
    overall[1] = str(gains.students)  # students, not (student, question) answers
    table(flow, head, [*cells, overall], CHECK_COLS, BODY_PT, bold_last=True)
    flow.gap(0.06)
    flow.text(t("check_students_both", n=gains.students), 8.5, color=GREY)


def check_cells(name: str, row: GainRow) -> list[str]:
    return [name, str(row.n), percent(row.pre), percent(row.post),
            "—" if row.gain is None else f"{row.gain:.2f}"]


# --- a table ------------------------------------------------------------------------------------

def header_height(flow: Flow, head: Sequence[str], widths: Sequence[float]) -> float:
    """A header's height: its cells wrapped in their columns, the tallest."""
    most = max(len(flow.wrap(drawable(h), HEAD_PT, w - 0.06, "bold"))
               for h, w in zip(head, widths, strict=True))
    return most * HEAD_PT * LEADING / 72 + 0.05


def table(flow: Flow, head: Sequence[str], rows: Sequence[Sequence[str]],
          widths: Sequence[float], size: float, *, bold_last: bool = False) -> None:
    """Rows under a bold header wrapped in its columns, a rule between: the first column
    left-aligned (cut with "…" to its width), the others right-aligned."""
    fig, top = flow.fig, flow.y
    lefts = [MARGIN + sum(widths[:k]) for k in range(len(widths))]
    line_h = HEAD_PT * LEADING / 72
    for k, (h, w) in enumerate(zip(head, widths, strict=True)):
        for n, part in enumerate(flow.wrap(drawable(h), HEAD_PT, w - 0.06, "bold")):
            x = lefts[k] if k == 0 else lefts[k] + w
            fig.text(x / PAGE_W, 1 - (top + n * line_h) / PAGE_H, part, fontsize=HEAD_PT,
                     weight="bold", va="top", ha="left" if k == 0 else "right",
                     parse_math=False)
    flow.y = top + header_height(flow, head, widths)
    rule = 1 - (flow.y - 0.02) / PAGE_H
    fig.add_artist(Line2D([MARGIN / PAGE_W, (MARGIN + WIDTH) / PAGE_W], [rule, rule],
                          lw=0.6, color=GREY))
    row_h = size * LEADING / 72
    for n, row in enumerate(rows):
        weight = "bold" if bold_last and n == len(rows) - 1 else "normal"
        for k, (cell, w) in enumerate(zip(row, widths, strict=True)):
            text, pt = fitted(flow, drawable(cell), size, w - 0.1, weight) if k == 0 else (
                cell, size)
            x = lefts[k] if k == 0 else lefts[k] + w
            fig.text(x / PAGE_W, 1 - flow.y / PAGE_H, text, fontsize=pt, weight=weight,
                     va="top", ha="left" if k == 0 else "right", parse_math=False)
        flow.y += row_h


def fitted(flow: Flow, text: str, size: float, width: float, weight: str) -> tuple[str, float]:
    """`text` and its size to fit `width` inches: as it is, else down to `SHRINK` of `size`,
    else its longest head that fits there, with "…"."""
    limit = width * 72
    pt = size
    while flow.width_pt(text, pt, weight) > limit and pt > SHRINK * size:
        pt -= 0.25
    if flow.width_pt(text, pt, weight) <= limit:
        return text, pt
    while text and flow.width_pt(text + "…", pt, weight) > limit:
        text = text[:-1]
    return text.rstrip() + "…", pt
