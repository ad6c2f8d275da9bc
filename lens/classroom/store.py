"""A class's shared state — classes, students, open tasks, answers — in a real database that
every server process of the class opens (the replicas behind HAProxy each serve some of the
students: nothing of a class lives in one process's memory). `Store` is what a page may do with
it: the teacher's actions, the students' joins and answers, what the class sees, and expiry.

Where the store lives: `ENCODER_LENS_CLASS_DB` when set (PostgreSQL for several machines), else
SQLite in the data folder every replica on one machine opens (`default_url`); the tables and the
engine with its transactions (a write locks at once, a read is a snapshot) are `database`'s.

Rules the store keeps itself, whatever a page asks (their limits and the `Rule` of an answer
are `rules`'):
- teacher actions need the teacher key (only its SHA-256 is stored; compared in constant time);
- join codes carry 40 bits; wrong codes are counted in the store per address and per browser
  session (`WRONG_WINDOW_S`); past its allowance (`BROWSER_FREE`, `ADDRESS_FREE`) a try waits
  `rules.join_delay` (at most `MAX_DELAY_S`) in the caller's own thread before its code is
  looked at — slowed, never refused: the right code joins after that wait;
- a task goes through the peer-instruction cycle (`rules.TASK_STATES`): vote 1, discussion,
  vote 2, revealed; each teacher action only from the states it may come from (`rules.MOVES`);
- one answer per student per task, settings and vote, changeable while that vote is open; an
  answer of the wrong kind, out of range, over-long, for an unknown task or a vote not open,
  or from an unknown student is refused with `RefusedError` and nothing is stored;
- an answer is committed before `answer` returns (what the student is then told was sent is
  in the store);
- a concept check before and after the lesson: one answer per student, question and round,
  taken only while the teacher has its round open;
- the teacher's results (`ClassResults.result_rows`) name a student by pseudonym, never by
  the token;
- a class the teacher ends is over at once — no join, no answer, no teacher action, no
  projector; its state is None as for a class gone — but its data stay until it expires, so
  that each of its students can read their own results (`OwnResults.results_of`, with their
  token; for an ended class only: a class going on gives no right answer away);
- a class expires (`CLASS_HOURS` after its start, ended or not) and is deleted with its
  students, tasks, answers and check answers.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from sqlalchemy import Table, and_, delete, func, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection
from sqlalchemy.sql.elements import ColumnElement

from .check_store import ConceptCheck
from .database import (
    LIVE,
    READ_OPTION,
    answers,
    check_rounds,
    checks,
    classes,
    earlier_answers,
    make_engine,
    metadata,
    migrate,
    students,
    tasks,
    wrong_codes,
)
from .join_store import Joining
from .own_store import OwnResults
from .results_store import ClassResults
from .rules import (
    CHECK_ROUNDS,
    CLASS_HOURS,
    MAX_ANSWER_CHARS,
    MOVES,
    OPENABLE,
    VOTE_STATES,
    WRONG_WINDOW_S,
    RefusedError,
    Rule,
    new_code,
    pseudonym,
)

URL_ENV = "ENCODER_LENS_CLASS_DB"  # a database URL; unset: SQLite in the data folder
DATA_ENV = "ENCODER_LENS_DATA"  # the data folder (default: `data_folder()`)


def data_folder() -> Path:
    """The SQLite store's folder: `ENCODER_LENS_DATA`; else data/ of a checkout (pyproject.toml
    above the package); else, installed in site-packages, `$XDG_DATA_HOME/encoder-lens`."""
    if os.environ.get(DATA_ENV):
        return Path(os.environ[DATA_ENV])
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        return root / "data"
    share = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(share) / "encoder-lens"


def default_url() -> str:
    """The store's URL: `ENCODER_LENS_CLASS_DB`, else SQLite in the data folder."""
    url = os.environ.get(URL_ENV)
    if url:
        return url
    folder = data_folder()
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{folder / 'classes.sqlite'}"


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Store(ConceptCheck, ClassResults, Joining, OwnResults):
    """The classes of every process that opens the same URL."""

    def __init__(self, url: str | None = None) -> None:
        self.url = url or default_url()
        self.engine = make_engine(self.url)
        metadata.create_all(self.engine)
        migrate(self.engine)  # a file from before the two votes

    def close(self) -> None:
        self.engine.dispose()

    def _reading(self) -> Connection:
        """A connection for reads only: on SQLite its transaction begins deferred (a snapshot,
        no write lock), so the class's polls never queue a student's Send behind them."""
        return self.engine.connect().execution_options(**{READ_OPTION: True})

    def _upsert(self, table: Table, values: Mapping[str, object], keys: Sequence[str],
                conn: Connection) -> None:
        dialect = postgresql if self.engine.dialect.name == "postgresql" else sqlite
        stmt = dialect.insert(table).values(**values)
        conn.execute(stmt.on_conflict_do_update(
            index_elements=list(keys),
            set_={k: v for k, v in values.items() if k not in keys}))

    # --- the teacher ------------------------------------------------------------------------
    def create_class(self, settings: Mapping[str, str], step: str,
                     now: float | None = None) -> tuple[str, str]:
        """A new class: (join code, teacher key). The key is shown once; only its hash stays."""
        now = time.time() if now is None else now
        self.expire(now)
        key = secrets.token_urlsafe(24)
        with self.engine.begin() as conn:
            while True:
                code = new_code()
                if conn.execute(select(classes.c.code).where(classes.c.code == code)).first():
                    continue
                conn.execute(classes.insert().values(
                    code=code, key_hash=_hash(key), settings=json.dumps(dict(settings)),
                    step=step, created=now, expires=now + CLASS_HOURS * 3600))
                return code, key

    def _teacher(self, conn: Connection, code: str, key: str) -> None:
        row = conn.execute(select(classes.c.key_hash)
                           .where(and_(classes.c.code == code, LIVE))).first()
        if row is None or not hmac.compare_digest(row.key_hash, _hash(str(key))):
            raise RefusedError("this is not the teacher's key of that class", "not_teacher")

    def is_teacher(self, code: str, key: str) -> bool:
        with self._reading() as conn:
            try:
                self._teacher(conn, code, key)
            except RefusedError:
                return False
        return True

    def move(self, code: str, key: str, step: str) -> None:
        """Bring everyone to `step`."""
        with self.engine.begin() as conn:
            self._teacher(conn, code, key)
            conn.execute(update(classes).where(classes.c.code == code).values(step=step))

    def change_settings(self, code: str, key: str, settings: Mapping[str, str]) -> None:
        """New settings for the class; its tasks being asked (a vote open, or in discussion)
        close (their answers were given for the old settings and stay under them)."""
        with self.engine.begin() as conn:
            self._teacher(conn, code, key)
            conn.execute(update(classes).where(classes.c.code == code)
                         .values(settings=json.dumps(dict(settings))))
            conn.execute(update(tasks).where(and_(
                tasks.c.code == code, tasks.c.state.in_(("open", "discuss", "vote2"))))
                .values(state="closed"))

    def open_task(self, code: str, key: str, task: str, settings_key: str, rule: Rule,
                  fixed: Sequence[int] = (0, 0, 0), now: float | None = None,
                  asked: str | None = None) -> None:
        """Open a task for the class's answers — vote 1 — asked with the teacher's `fixed`
        (layer, head, query): every student is asked exactly the teacher's question; `asked`
        is the task as asked (`tasks.task_json`), for the teacher's results only. A task in
        discussion, at vote 2 or revealed is refused (`wrong_state`: `ask_again` asks a
        revealed one afresh)."""
        now = time.time() if now is None else now
        with self.engine.begin() as conn:
            self._teacher(conn, code, key)
            row = conn.execute(select(tasks.c.state).where(self._task(code, task, settings_key))
                               .with_for_update()).first()
            if row is not None and row.state not in OPENABLE:
                raise RefusedError(f"the task is {row.state}: it cannot be opened",
                                   "wrong_state")
            self._upsert(tasks, {"code": code, "task": task, "settings_key": settings_key,
                                 "rule": rule.to_json(),
                                 "fixed": json.dumps([int(x) for x in fixed]),
                                 "state": "open", "opened": now, "asked": asked},
                         ("code", "task", "settings_key"), conn)

    def close_vote(self, code: str, key: str, task: str, settings_key: str) -> None:
        """Vote 1 ends: the class discusses, no answer is taken."""
        self._move(code, key, task, settings_key, "close_vote")

    def open_vote2(self, code: str, key: str, task: str, settings_key: str) -> None:
        """After the discussion, vote 2 (each student's vote 1 stays as it was)."""
        self._move(code, key, task, settings_key, "open_vote2")

    def reveal(self, code: str, key: str, task: str, settings_key: str) -> None:
        """The answer shown: from vote 1 (no discussion, a single vote), the discussion or
        vote 2; no answer is taken any more. Vote 2 closing carries every student's vote 1
        into vote 2 where they sent none (`carried`: kept their answer without pressing
        Send), so the final tally, the moves and the results count everyone who voted 1."""
        self._move(code, key, task, settings_key, "reveal")

    def ask_again(self, code: str, key: str, task: str, settings_key: str,
                  now: float | None = None) -> None:
        """A revealed task asked afresh: vote 1 again, counted from nothing — the answers so far
        (both votes, under these settings) kept as an earlier round for the results only."""
        self._move(code, key, task, settings_key, "ask_again",
                   time.time() if now is None else now)

    def _move(self, code: str, key: str, task: str, settings_key: str, action: str,
              now: float | None = None) -> None:
        """A teacher's action on a task (`MOVES`): from the states it may come from, or
        RefusedError (`no_task`, `wrong_state`)."""
        starts, to = MOVES[action]
        where = self._task(code, task, settings_key)
        with self.engine.begin() as conn:
            self._teacher(conn, code, key)
            row = conn.execute(select(tasks.c.state).where(where).with_for_update()).first()
            if row is None:
                raise RefusedError("no such task in this class", "no_task")
            if row.state not in starts:
                raise RefusedError(f"the task is {row.state}: {action} is not possible",
                                   "wrong_state")
            conn.execute(update(tasks).where(where).values(
                state=to, **({} if now is None else {"opened": now})))
            if row.state == "vote2" and to == "revealed":
                self._carry(conn, code, task, settings_key)
            if action == "ask_again":
                self._keep_round(conn, code, task, settings_key)

    @staticmethod
    def _carry(conn: Connection, code: str, task: str, settings_key: str) -> None:
        """Vote 2 closes: each student who voted 1 and sent no vote 2 has their vote 1 as
        vote 2, marked `carried`, answered when vote 1 was."""
        mine = and_(answers.c.code == code, answers.c.task == task,
                    answers.c.settings_key == settings_key)
        rows = conn.execute(select(answers.c.token, answers.c.vote, answers.c.value,
                                   answers.c.at).where(mine)).all()
        second = {r.token for r in rows if r.vote == 2}
        kept = [{"code": code, "task": task, "settings_key": settings_key, "token": r.token,
                 "vote": 2, "value": r.value, "at": r.at, "carried": 1}
                for r in rows if r.vote == 1 and r.token not in second]
        if kept:
            conn.execute(answers.insert(), kept)

    @staticmethod
    def _task(code: str, task: str, settings_key: str) -> ColumnElement[bool]:
        return and_(tasks.c.code == code, tasks.c.task == task,
                    tasks.c.settings_key == settings_key)

    def end_class(self, code: str, key: str, now: float | None = None) -> None:
        """The class is over: nothing more is taken or done (its state is None from now on),
        and its data stay until it expires, for its students' own results (`results_of`)."""
        now = time.time() if now is None else now
        with self.engine.begin() as conn:
            self._teacher(conn, code, key)
            conn.execute(update(classes).where(classes.c.code == code).values(ended=now))

    # --- the students -----------------------------------------------------------------------
    @staticmethod
    def _member(code: str, token: str) -> ColumnElement[bool]:
        """The student `token` of the class `code`, while that class goes on."""
        return and_(students.c.code == code, students.c.token == token,
                    classes.c.code == students.c.code, LIVE)

    def _student(self, conn: Connection, code: str, token: str) -> None:
        if conn.execute(select(students.c.token)
                        .where(self._member(code, token))).first() is None:
            raise RefusedError("not a student of this class", "not_student")

    def is_student(self, code: str, token: str) -> bool:
        with self._reading() as conn:
            return conn.execute(select(students.c.token)
                                .where(self._member(code, token))).first() is not None

    def answer(self, code: str, token: str, task: str, settings_key: str, value: object,
               now: float | None = None, vote: int = 1) -> None:
        """Store a student's answer to `vote` (replacing an earlier one to the same vote) once
        it is committed; RefusedError when it may not be stored: that vote is not open, …"""
        now = time.time() if now is None else now
        if vote not in VOTE_STATES:
            raise RefusedError(f"there is no vote {vote!r}", "bad_answer")
        with self.engine.begin() as conn:
            self._student(conn, code, token)
            row = conn.execute(select(tasks.c.rule, tasks.c.state)
                               .where(self._task(code, task, settings_key))
                               .with_for_update(read=True)).first()  # no state change meanwhile
            if row is None:
                raise RefusedError("no such task in this class", "no_task")
            if row.state != VOTE_STATES[vote]:
                raise RefusedError(f"vote {vote} of this task is not open (the task is "
                                   f"{row.state})", "closed")
            text = json.dumps(Rule.from_json(row.rule).check(value))
            if len(text) > MAX_ANSWER_CHARS:
                raise RefusedError("the answer is too long", "too_long")
            self._upsert(answers, {"code": code, "task": task, "settings_key": settings_key,
                                   "token": token, "vote": vote, "value": text, "at": now},
                         ("code", "task", "settings_key", "token", "vote"), conn)

    # --- what the class sees ----------------------------------------------------------------
    def state(self, code: str) -> dict | None:
        """The class's step and settings, its tasks (state per task and settings), the concept
        check's rounds (open or closed; "switched": those ever opened); None: ended or gone."""
        with self._reading() as conn:
            row = conn.execute(select(classes).where(and_(classes.c.code == code, LIVE))).first()
            if row is None:
                return None
            rows = conn.execute(select(tasks.c.task, tasks.c.settings_key, tasks.c.state,
                                       tasks.c.fixed).where(tasks.c.code == code)).all()
            n = conn.execute(select(func.count()).select_from(students)
                             .where(students.c.code == code)).scalar_one()
            switched = dict(conn.execute(select(check_rounds.c.round, check_rounds.c.state)
                                         .where(check_rounds.c.code == code)).all())
        return {"step": row.step, "settings": json.loads(row.settings), "students": n,
                "tasks": {(r.task, r.settings_key): r.state for r in rows},
                "fixed": {(r.task, r.settings_key): tuple(json.loads(r.fixed)) for r in rows},
                "checks": {r: switched.get(r, "closed") for r in CHECK_ROUNDS},
                "switched": tuple(sorted(switched))}

    def answers_to(self, code: str, task: str, settings_key: str,
                   vote: int = 1) -> list[object]:
        """Every answer to one vote of a task under these settings (no student named)."""
        with self._reading() as conn:
            rows = conn.execute(select(answers.c.value).where(and_(
                answers.c.code == code, answers.c.task == task,
                answers.c.settings_key == settings_key, answers.c.vote == vote))).all()
        return [json.loads(r.value) for r in rows]

    def answers_of(self, code: str, token: str) -> dict[tuple[str, str, int], object]:
        """One student's own answers, both votes: (task, settings key, vote) -> value (a
        student who reloads sees what they sent)."""
        with self._reading() as conn:
            rows = conn.execute(select(answers.c.task, answers.c.settings_key, answers.c.vote,
                                       answers.c.value)
                                .where(and_(answers.c.code == code,
                                            answers.c.token == token))).all()
        return {(r.task, r.settings_key, r.vote): json.loads(r.value) for r in rows}

    def vote_rows(self, code: str, key: str, task: str,
                  settings_key: str) -> list[tuple[str, object | None, object | None]]:
        """(pseudonym, vote 1, vote 2) per student who answered a task under these settings,
        None for a vote not given: what `tally.transitions` counts; for the teacher only. No
        nickname, no token (a student's credential): `pseudonym` pairs a student's rows."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            rows = conn.execute(select(answers.c.token, answers.c.vote, answers.c.value)
                                .where(and_(answers.c.code == code, answers.c.task == task,
                                            answers.c.settings_key == settings_key))).all()
        votes: dict[str, dict[int, object]] = {}
        for r in rows:
            votes.setdefault(pseudonym(r.token), {})[r.vote] = json.loads(r.value)
        return [(token, v.get(1), v.get(2)) for token, v in sorted(votes.items())]

    def nicknames(self, code: str, key: str) -> list[str]:
        """The students' nicknames, for the teacher only."""
        with self._reading() as conn:
            self._teacher(conn, code, key)
            rows = conn.execute(select(students.c.nickname).where(students.c.code == code)
                                .order_by(students.c.joined)).all()
        return [r.nickname for r in rows]

    # --- expiry -----------------------------------------------------------------------------
    def expire(self, now: float | None = None) -> int:
        """Delete the classes past their time, with everything of theirs; how many."""
        now = time.time() if now is None else now
        with self.engine.begin() as conn:
            old = [r.code for r in conn.execute(select(classes.c.code)
                                                .where(classes.c.expires <= now))]
            self._delete(conn, old)
            conn.execute(delete(wrong_codes).where(wrong_codes.c.since < now - WRONG_WINDOW_S))
        return len(old)

    @staticmethod
    def _delete(conn: Connection, codes: list[str]) -> None:
        if not codes:
            return
        for table in (answers, earlier_answers, checks, check_rounds, tasks, students, classes):
            conn.execute(delete(table).where(table.c.code.in_(codes)))
