"""The results' part of the class store (`store.Store` is a `ClassResults`): every answer of a
class — every question, settings and vote — with its student's pseudonym and nickname, and each
question as it was asked (its right answer), for the teacher only (`results.results_csv` writes
them). The token, a student's credential, never leaves the store.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import and_, delete, func, insert, select
from sqlalchemy.engine import Connection

from .database import answers, earlier_answers, students, tasks
from .rules import pseudonym


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
    carried: bool = False  # a vote 2 not sent: the student's vote 1, carried at its close


class ClassResults:
    """The results' method; reads and the teacher's check are `Store`'s."""

    if TYPE_CHECKING:
        def _reading(self) -> Connection: ...
        def _teacher(self, conn: Connection, code: str, key: str) -> None: ...

    def result_rows(self, code: str, key: str) -> list[ResultRow]:
        """Every answer of the class, for the teacher only (RefusedError `not_teacher`
        otherwise): its student by pseudonym and nickname, in the order student, question,
        settings, round, vote. A question asked again has its earlier rounds' answers too
        (`earlier_answers`, round 1, 2, …); the answers now are the round after them."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            on_student = and_(students.c.code == answers.c.code,
                              students.c.token == answers.c.token)
            now = conn.execute(
                select(answers.c.token, students.c.nickname, answers.c.task,
                       answers.c.settings_key, answers.c.vote, answers.c.value, answers.c.at,
                       answers.c.carried)
                .join(students, on_student).where(answers.c.code == code)).all()
            e = earlier_answers.c
            before = conn.execute(
                select(e.token, students.c.nickname, e.task, e.settings_key, e.round, e.vote,
                       e.value, e.at, e.carried)
                .join(students, and_(students.c.code == e.code, students.c.token == e.token))
                .where(e.code == code)).all()
        rounds: dict[tuple[str, str], int] = {}
        for r in before:
            rounds[(r.task, r.settings_key)] = max(rounds.get((r.task, r.settings_key), 0),
                                                   r.round)
        out = [ResultRow(pseudonym(r.token), r.nickname, r.task, r.settings_key, r.vote,
                         json.loads(r.value), r.at, r.round, bool(r.carried)) for r in before]
        out += [ResultRow(pseudonym(r.token), r.nickname, r.task, r.settings_key, r.vote,
                          json.loads(r.value), r.at, rounds.get((r.task, r.settings_key), 0) + 1,
                          bool(r.carried))
                for r in now]
        return sorted(out, key=lambda r: (r.student, r.task, r.settings_key, r.round, r.vote))

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

    @staticmethod
    def _keep_round(conn: Connection, code: str, task: str, settings_key: str) -> None:
        """The answers of the round that ends move to `earlier_answers`, numbered after the
        rounds kept before (1, 2, …): the new round starts from nothing, the old stay in the
        results."""
        where = and_(answers.c.code == code, answers.c.task == task,
                     answers.c.settings_key == settings_key)
        kept = conn.execute(select(func.max(earlier_answers.c.round)).where(and_(
            earlier_answers.c.code == code, earlier_answers.c.task == task,
            earlier_answers.c.settings_key == settings_key))).scalar()
        rows = conn.execute(select(answers.c.token, answers.c.vote, answers.c.value,
                                   answers.c.at, answers.c.carried).where(where)).all()
        if rows:
            conn.execute(insert(earlier_answers), [
                {"code": code, "task": task, "settings_key": settings_key,
                 "round": (kept or 0) + 1, "token": r.token, "vote": r.vote, "value": r.value,
                 "at": r.at, "carried": r.carried} for r in rows])
        conn.execute(delete(answers).where(where))
