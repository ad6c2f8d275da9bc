"""The results' part of the class store (`store.Store` is a `ClassResults`): every answer of a
class — every question, settings and vote — with its student's pseudonym and nickname, and each
question as it was asked (its right answer), for the teacher only (`results.results_csv` writes
them). The token, a student's credential, never leaves the store.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from sqlalchemy import and_, select
from sqlalchemy.engine import Connection

from .database import answers, students, tasks
from .results import ResultRow
from .rules import pseudonym


class ClassResults:
    """The results' method; reads and the teacher's check are `Store`'s."""

    if TYPE_CHECKING:
        def _reading(self) -> Connection: ...
        def _teacher(self, conn: Connection, code: str, key: str) -> None: ...

    def result_rows(self, code: str, key: str) -> list[ResultRow]:
        """Every answer of the class, for the teacher only (RefusedError `not_teacher`
        otherwise): its student by pseudonym and nickname, in the order student, question,
        settings, vote."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            rows = conn.execute(
                select(answers.c.token, students.c.nickname, answers.c.task,
                       answers.c.settings_key, answers.c.vote, answers.c.value, answers.c.at)
                .join(students, and_(students.c.code == answers.c.code,
                                     students.c.token == answers.c.token))
                .where(answers.c.code == code)).all()
        out = [ResultRow(pseudonym(r.token), r.nickname, r.task, r.settings_key, r.vote,
                         json.loads(r.value), r.at) for r in rows]
        return sorted(out, key=lambda r: (r.student, r.task, r.settings_key, r.vote))

    def asked_tasks(self, code: str, key: str) -> dict[tuple[str, str], str]:
        """Each question the class was asked, as the teacher's page asked it (its
        `tasks.task_json`), by (question id, settings key): the results judge and name the
        answers with it after that page is gone. For the teacher only; a question opened
        before the store kept them is left out."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            rows = conn.execute(select(tasks.c.task, tasks.c.settings_key, tasks.c.asked)
                                .where(and_(tasks.c.code == code,
                                            tasks.c.asked.is_not(None)))).all()
        return {(r.task, r.settings_key): r.asked for r in rows}
