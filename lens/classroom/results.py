"""A class's results as a spreadsheet: one CSV row per student, question, round and vote, for
the teacher to download (`teacher.ending`). Pure functions of the store's rows
(`store.Store.result_rows`, the teacher's key needed) and of how each question is judged.

What a row says, and what it never says: the student by `rules.pseudonym` (never the token, a
student's credential), the nickname only if the student gave one, the question's step, id and
settings key, the round (1; 2, 3, … once the teacher asked it again), the vote, the answer as
stored (a text as it is, anything else as JSON), right or wrong, and when it was answered (ISO
8601, UTC). No IP address, no teacher key, no token.

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
from dataclasses import dataclass
from datetime import UTC, datetime

COLUMNS = ("student", "nickname", "step", "question", "settings", "round", "vote", "answer",
           "right", "answered_at")  # the header: data names, the same in every language
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")  # what a spreadsheet may run as a formula

Judge = Callable[[object], bool]  # right or wrong, for an answer as the store holds it


@dataclass(frozen=True)
class ResultRow:
    """One stored answer, its student named by pseudonym (`Store.result_rows`)."""

    student: str  # `rules.pseudonym` of the token: pairs a student's rows, leads nowhere
    nickname: str  # "" when the student gave none
    task: str  # the question's id, "scores.shift": its step's id, then its name
    settings_key: str  # the binding the answer is stored under
    vote: int  # 1 or 2
    value: object  # the answer as stored (decoded JSON)
    at: float  # when it was stored, seconds since the epoch
    round: int = 1  # the question's asking: 2, 3, … once the teacher asked it again


def safe_cell(text: str) -> str:
    """A cell no spreadsheet runs as a formula: a leading `'` when it begins like one."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def answer_text(value: object) -> str:
    """The answer as stored: a text as it is, anything else (number, list) as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def iso_utc(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def result_table(rows: Iterable[ResultRow], judges: Mapping[tuple[str, str], Judge],
                 steps: Mapping[str, str]) -> list[list[str]]:
    """The header and one line per row, every cell safe (`safe_cell`). `right` is "yes" or
    "no" by the question's judge (`tally.judge_stored`), keyed (question id, settings key);
    "" for a question without one (asked under settings the teacher's page no longer has).
    `steps`: each question's step, by question id (the registry's, `lens.steps.TASKS`); ""
    for a question the app no longer has."""
    table = [list(COLUMNS)]
    for r in rows:
        judge = judges.get((r.task, r.settings_key))
        right = "" if judge is None else "yes" if judge(r.value) else "no"
        cells = [r.student, r.nickname, steps.get(r.task, ""), r.task, r.settings_key,
                 str(r.round), str(r.vote), answer_text(r.value), right, iso_utc(r.at)]
        table.append([safe_cell(c) for c in cells])
    return table


def results_csv(rows: Iterable[ResultRow], judges: Mapping[tuple[str, str], Judge],
                steps: Mapping[str, str]) -> bytes:
    """The results as CSV bytes (Python's `csv`, RFC 4180 quoting, CRLF line ends), UTF-8 with
    a byte-order mark: Excel opens a file without one in the system's code page and garbles a
    中文 nickname; with it, Excel, LibreOffice and Python (`utf-8-sig`) read it alike."""
    out = io.StringIO(newline="")
    csv.writer(out).writerows(result_table(rows, judges, steps))
    return out.getvalue().encode("utf-8-sig")
