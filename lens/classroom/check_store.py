"""The concept check's part of the class store (`store.Store` is a `ConceptCheck`): a short
check of the note's concepts taken before and after the lesson, one answer per student,
question and round ("pre", "post"), taken only while the teacher has that round open; the
teacher reads the answers by pseudonym, a student their own. The questions are not the store's
(any id, any JSON value no longer than `MAX_ANSWER_CHARS`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Table, and_, select
from sqlalchemy.engine import Connection, Engine

from .database import check_rounds, checks, students
from .rules import CHECK_ROUNDS, MAX_ANSWER_CHARS, MAX_QUESTION_ID, RefusedError, pseudonym


@dataclass(frozen=True)
class CheckRow:
    """One answer to the concept check (`Store.check_rows`)."""

    student: str  # pseudonym
    nickname: str
    question: str  # the check question's id (`lens.lesson.concepts.QUESTIONS`)
    round: str  # "pre" or "post"
    value: object  # the option's id
    at: float


class ConceptCheck:
    """The check's methods; the engine, the teacher's and a student's checks, reads and upserts
    are `Store`'s."""

    if TYPE_CHECKING:
        engine: Engine

        def _reading(self) -> Connection: ...
        def _teacher(self, conn: Connection, code: str, key: str) -> None: ...
        def _student(self, conn: Connection, code: str, token: str) -> None: ...
        def _upsert(self, table: Table, values: Mapping[str, object], keys: Sequence[str],
                    conn: Connection) -> None: ...

    def open_check(self, code: str, key: str, round_: str) -> None:
        """The students may answer the check's `round_` ("pre" or "post")."""
        self._check_switch(code, key, round_, "open")

    def close_check(self, code: str, key: str, round_: str) -> None:
        self._check_switch(code, key, round_, "closed")

    def _check_switch(self, code: str, key: str, round_: str, state: str) -> None:
        if round_ not in CHECK_ROUNDS:
            raise RefusedError(f"the check has no round {round_!r}", "bad_answer")
        with self.engine.begin() as conn:
            self._teacher(conn, code, key)
            self._upsert(check_rounds, {"code": code, "round": round_, "state": state},
                         ("code", "round"), conn)

    def check_answer(self, code: str, token: str, question: str, round_: str, value: object,
                     now: float | None = None) -> None:
        """Store a student's answer to a question of the check's open round (replacing an
        earlier one) once committed. The questions are not the store's: any id, and any JSON
        value no longer than `MAX_ANSWER_CHARS`; RefusedError otherwise, nothing stored."""
        now = time.time() if now is None else now
        if round_ not in CHECK_ROUNDS:
            raise RefusedError(f"the check has no round {round_!r}", "bad_answer")
        if not isinstance(question, str) or not 0 < len(question) <= MAX_QUESTION_ID:
            raise RefusedError("not a question of the check", "bad_answer")
        try:
            text = json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise RefusedError(f"not an answer: {err}", "bad_answer") from None
        if len(text) > MAX_ANSWER_CHARS:
            raise RefusedError("the answer is too long", "too_long")
        with self.engine.begin() as conn:
            self._student(conn, code, token)
            row = conn.execute(select(check_rounds.c.state).where(and_(
                check_rounds.c.code == code, check_rounds.c.round == round_))
                .with_for_update(read=True)).first()
            if row is None or row.state != "open":
                raise RefusedError(f"the check's {round_} round is not open", "closed")
            self._upsert(checks, {"code": code, "token": token, "question": question,
                                  "round": round_, "value": text, "at": now},
                         ("code", "token", "question", "round"), conn)

    def check_answers(self, code: str, key: str) -> dict[tuple[str, str, str], object]:
        """The check's answers, for the teacher only: (student's pseudonym, question, round)
        -> value (a student's token is a credential: never handed out)."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            rows = conn.execute(select(checks.c.token, checks.c.question, checks.c.round,
                                       checks.c.value).where(checks.c.code == code)).all()
        return {(pseudonym(r.token), r.question, r.round): json.loads(r.value) for r in rows}

    def check_rows(self, code: str, key: str) -> list[CheckRow]:
        """The check's answers with their student's pseudonym and nickname and when, for the
        teacher's results (`results.result_table`); for the teacher only."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            rows = conn.execute(
                select(checks.c.token, students.c.nickname, checks.c.question, checks.c.round,
                       checks.c.value, checks.c.at)
                .join(students, and_(students.c.code == checks.c.code,
                                     students.c.token == checks.c.token))
                .where(checks.c.code == code)).all()
        return [CheckRow(pseudonym(r.token), r.nickname, r.question, r.round,
                         json.loads(r.value), r.at) for r in rows]

    def check_answers_of(self, code: str, token: str) -> dict[tuple[str, str], object]:
        """One student's own check answers: (question, round) -> value."""
        with self._reading() as conn:
            rows = conn.execute(select(checks.c.question, checks.c.round, checks.c.value)
                                .where(and_(checks.c.code == code,
                                            checks.c.token == token))).all()
        return {(r.question, r.round): json.loads(r.value) for r in rows}
