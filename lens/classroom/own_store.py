"""A student's own part of the class store (`store.Store` is an `OwnResults`): the language
they last chose, which a new session of theirs opens in (a reload, a replica restart: the
link's token finds them), and, once the teacher ended the class, their own results — each
question as asked with their vote 1 and vote 2 — until the class's data are deleted at its
expiry. Never another student's answer or nickname; for a class going on, no results at all
(the questions as asked hold their right answers).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import and_, select, update
from sqlalchemy.engine import Connection, Engine

from .database import answers, classes, students, tasks
from .rules import RefusedError


@dataclass(frozen=True)
class OwnResult:
    """One question of an ended class as one student answered it (`Store.results_of`)."""

    task: str  # the question's id
    settings_key: str  # the binding its answers are stored under
    asked: str  # the question as asked (`lesson.tasks.task_json`): its right answer, its words
    state: str  # where the teacher left it: revealed, open, discuss, vote2, closed
    first: object | None  # the student's vote 1 (decoded JSON; None: not sent)
    second: object | None  # their vote 2 (None: no vote 2, or not sent)


class OwnResults:
    """A student's own methods; the engine, reads and the student's check are `Store`'s."""

    if TYPE_CHECKING:
        engine: Engine

        def _reading(self) -> Connection: ...
        def _student(self, conn: Connection, code: str, token: str) -> None: ...

    def language_of(self, code: str, token: str) -> str | None:
        """The language the student last chose (None: none yet, or no such student)."""
        with self._reading() as conn:
            return conn.execute(select(students.c.lang).where(and_(
                students.c.code == code, students.c.token == token))).scalar_one_or_none()

    def set_language(self, code: str, token: str, lang: str) -> None:
        """The student chose `lang` (a settings language, "en", "zh"): their next session
        opens in it. Refused for a student of no class going on."""
        if not (isinstance(lang, str) and 0 < len(lang) <= 8 and lang.isalpha()):
            raise RefusedError("not a language", "bad_answer")
        with self.engine.begin() as conn:
            self._student(conn, code, token)
            conn.execute(update(students).where(and_(
                students.c.code == code, students.c.token == token)).values(lang=lang))

    def results_of(self, code: str, token: str) -> list[OwnResult] | None:
        """One student's own results in a class its teacher ended: each question the class
        was asked (as asked, in the order first asked) with this student's vote 1 and vote 2
        of its last round. None while the class goes on (the questions as asked hold their
        right answers), for a token of no student of it, and once it is gone (expired).
        Nothing of another student."""
        with self._reading() as conn:
            known = conn.execute(select(students.c.token).where(and_(
                students.c.code == code, students.c.token == token,
                classes.c.code == students.c.code, classes.c.ended.is_not(None)))).first()
            if known is None:
                return None
            asked = conn.execute(select(tasks.c.task, tasks.c.settings_key, tasks.c.asked,
                                        tasks.c.state, tasks.c.opened)
                                 .where(and_(tasks.c.code == code, tasks.c.asked.is_not(None)))
                                 .order_by(tasks.c.opened, tasks.c.task)).all()
            mine = conn.execute(select(answers.c.task, answers.c.settings_key, answers.c.vote,
                                       answers.c.value).where(and_(
                                           answers.c.code == code,
                                           answers.c.token == token))).all()
        votes = {(r.task, r.settings_key, r.vote): json.loads(r.value) for r in mine}
        return [OwnResult(r.task, r.settings_key, r.asked, r.state,
                          votes.get((r.task, r.settings_key, 1)),
                          votes.get((r.task, r.settings_key, 2))) for r in asked]
