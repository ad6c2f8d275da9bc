"""A class's results as a spreadsheet: one CSV row per student, question, round and vote, and
per student, question and round of the concept check, for the teacher to download
(`teacher.ending`). Pure functions of the store's rows (`store.Store.result_rows`,
`Store.check_rows`, the teacher's key needed) and of how each question is judged and said.

The rows come in the order the class was asked: each question's round (and each round of the
concept check) where its first answer came, a question asked again once per round, with how
many times it was asked (`times_asked`); within a round, vote 1 before vote 2, then by student.

What a row says, and what it never says: the student by `rules.pseudonym` (never the token, a
student's credential), the nickname only if the student gave one, the question's step
(`concept_check` for the check), id and settings key, the round (1; 2, 3, … once the teacher
asked it again; "pre" or "post" for the check), the vote, the answer in words in the teacher's
language (`answer`: the option's words, the number, "patch 37") beside the answer as stored
(`answer_id`: an option's id, a number, JSON for a list), whether it was carried (a vote 2 the
student did not send: their vote 1 counted, `Store.reveal`), right or wrong, and when it was
answered (ISO 8601, UTC). No IP address, no teacher key, no token.

**CSV injection** (OWASP): a spreadsheet runs a cell that begins with `=`, `+`, `-`, `@`, a tab
or a carriage return as a formula. Every such cell is written with a leading `'`. The rule is
textual, whatever the cell holds: a nickname `=HYPERLINK(…)` becomes `'=HYPERLINK(…)`, and a
negative number answered (-3) becomes `'-3` too (a spreadsheet shows it as text; a reader who
wants the number drops the `'`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime

from ..i18n import Texts
from ..lesson.concepts import OWNER as CONCEPT_WORDS
from ..lesson.concepts import is_right
from ..lesson.tasks import Task, task_texts
from .check_store import CheckRow
from .results_store import ResultRow
from .tally import judge_stored

LESSON_WORDS = "lesson"  # lens/texts/<lang>/lesson.toml: "patch 37", "68 %"

COLUMNS = ("student", "nickname", "step", "question", "settings", "round", "times_asked", "vote",
           "answer", "answer_id", "carried", "right", "answered_at")  # the header: data
#            names, the same in every language
CHECK_STEP = "concept_check"  # the step column of the concept check's rows
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula

Judge = Callable[[object], bool]  # right or wrong, for an answer as the store holds it
Words = Callable[[object], str]  # an answer as the store holds it, in the teacher's words


def safe_cell(text: str) -> str:
    """A cell no spreadsheet runs as a formula: a leading `'` when it begins like one."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def answer_text(value: object) -> str:
    """The answer as stored: a text as it is, anything else (number, list) as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def iso_utc(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def result_table(rows: Iterable[ResultRow], judges: Mapping[tuple[str, str], Judge],
                 steps: Mapping[str, str],
                 words: Mapping[tuple[str, str], Words] | None = None,
                 checks: Iterable[CheckRow] = (),
                 check_judge: Callable[[str, object], bool] | None = None,
                 check_words: Callable[[str, object], str] | None = None) -> list[list[str]]:
    """The header and one line per row in the order asked (`in_order_asked`), every cell
    safe (`safe_cell`). `right` is "yes" or "no" by the question's judge
    (`tally.judge_stored`), keyed (question id, settings key); "" for a question without one
    (asked under settings the teacher's page no longer has). `words` says an answer in the
    teacher's language, by the same key ("" without one: the id column still has it).
    `steps`: each question's step, by question id (the registry's, `lens.steps.TASKS`); ""
    for a question the app no longer has. `checks`: the concept check's answers, judged by
    `check_judge(question, value)` and said by `check_words(question, value)`."""
    rows = list(rows)
    times = times_asked(rows)
    lines: list[tuple[tuple, tuple, float, list[str]]] = []  # (round, within it, at, cells)
    for r in rows:
        where = (r.task, r.settings_key)
        judge, say = judges.get(where), (words or {}).get(where)
        right = "" if judge is None else "yes" if judge(r.value) else "no"
        lines.append(((r.task, r.settings_key, r.round), (r.vote, r.student), r.at, [
            r.student, r.nickname, steps.get(r.task, ""), r.task, r.settings_key, str(r.round),
            str(times[where]), str(r.vote), "" if say is None else say(r.value),
            answer_text(r.value), "yes" if r.carried else "", right, iso_utc(r.at)]))
    for c in checks:
        right = ("" if check_judge is None
                 else "yes" if check_judge(c.question, c.value) else "no")
        lines.append(((CHECK_STEP, c.round), (c.question, c.student), c.at, [
            c.student, c.nickname, CHECK_STEP, c.question, "", c.round, "", "",
            "" if check_words is None else check_words(c.question, c.value),
            answer_text(c.value), "", right, iso_utc(c.at)]))
    first: dict[tuple, float] = {}  # each round's first answer: the order it was asked in
    for group, _, at, _ in lines:
        first[group] = min(first.get(group, at), at)
    ordered = sorted(lines, key=lambda x: (first[x[0]], x[0], x[1]))
    return [list(COLUMNS)] + [[safe_cell(c) for c in cells] for _, _, _, cells in ordered]


def times_asked(rows: Iterable[ResultRow]) -> dict[tuple[str, str], int]:
    """How many rounds each question (question id, settings key) had: 2 once asked again."""
    most: dict[tuple[str, str], int] = {}
    for r in rows:
        most[(r.task, r.settings_key)] = max(most.get((r.task, r.settings_key), 0), r.round)
    return most


def results_csv(rows: Iterable[ResultRow], judges: Mapping[tuple[str, str], Judge],
                steps: Mapping[str, str], **more: object) -> bytes:
    """The results as CSV bytes (Python's `csv`, RFC 4180 quoting, CRLF line ends), UTF-8 with
    a byte-order mark: Excel opens a file without one in the system's code page and garbles a
    中文 nickname; with it, Excel, LibreOffice and Python (`utf-8-sig`) read it alike."""
    out = io.StringIO(newline="")
    csv.writer(out).writerows(result_table(rows, judges, steps, **more))  # type: ignore[arg-type]
    return out.getvalue().encode("utf-8-sig")


def answer_words(lang: str, task: Task) -> Words:
    """An answer to `task` as the store holds it, in `lang`'s words, as a student's card says
    it (`lesson.ui.cards.shown_answer`): the option's words, the number(s), "patch 37",
    "68 %"."""
    t, words = Texts(lang, LESSON_WORDS), task_texts(lang, task)

    def say(value: object) -> str:
        try:
            return said(value)
        except (KeyError, TypeError, ValueError):  # a text gone, a value of another kind
            return ""

    def said(value: object) -> str:
        if task.kind == "number":
            parts = [f"{float(v):g}" if float(v).is_integer() else f"{float(v):.3f}"
                     for v in value]  # type: ignore[union-attr]
            return words(f"{task.text_id}_answer", a=parts[0], b=parts[-1])
        if task.kind == "patch":
            return t("patch_answer", j=value)
        if task.kind == "choice":
            return words(f"{task.text_id}_{value}")
        return t("percent", v=float(value))  # type: ignore[arg-type]

    return say


def check_words(lang: str) -> Callable[[str, object], str]:
    """A concept check answer (an option's id) in `lang`'s words ("" for an unknown one)."""
    words = Texts(lang, CONCEPT_WORDS)

    def say(question: str, value: object) -> str:
        try:
            return words(f"{question}_{value}")
        except KeyError:
            return ""

    return say


def class_results_csv(rows: Iterable[ResultRow], asked: Mapping[tuple[str, str], Task],
                      steps: Mapping[str, str], checks: Iterable[CheckRow],
                      lang: str) -> bytes:
    """The class's whole take-away as CSV: every question's answers judged and said by the
    task as asked (`asked`, by question id and settings key), and the concept check's."""
    return results_csv(rows, {w: judge_stored(task) for w, task in asked.items()}, steps,
                       words={w: answer_words(lang, task) for w, task in asked.items()},
                       checks=checks, check_judge=is_right, check_words=check_words(lang))
