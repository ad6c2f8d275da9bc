"""The room's screens of a live class: the projector view's token and what the projector and the
teacher's phone (a remote) read of the class beyond `store.Store.state`. No Streamlit: tested
on a real store.

- **The projector token** is a token of its own, not the teacher's key: an HMAC of what the
  store keeps with the class (the SHA-256 of the teacher's key), so it lives and dies with the
  class, needs no column of its own and is the same on every replica; whoever holds it sees
  what the wall shows (counts before a reveal) and can do nothing. Knowing it gives nothing of
  the teacher's key (the HMAC is one-way, its key is itself a hash).
- **What the projector may read**: when each task was last opened (which question is the
  current one), how many answered a vote, and — only once a task is revealed — the pairs
  (vote 1, vote 2) of its answers, with no student named (`revealed_pairs`: refused before).
- **A countdown** that closes vote 1 (into the discussion): its end time, kept in a table of its own
  (`countdowns`, created by the first store that uses it); set by the teacher's key, read by
  everyone, and the vote closed by whichever teacher's page sees it past (`due`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

from sqlalchemy import Column, Float, MetaData, String, Table, and_, delete, func, select

from .database import answers, classes, students, tasks
from .rules import RefusedError
from .store import Store

PURPOSE = b"encoder-lens projector view"  # the HMAC's message: a token for this use only
TOKEN_CHARS = 22  # 132 bits, base64url
LOW, HIGH = 0.30, 0.70  # the share right at vote 1 between which peer discussion pays

_meta = MetaData()
countdowns = Table(  # a vote's countdown: when it closes (no row: no countdown)
    "countdowns", _meta,
    Column("code", String(16), primary_key=True),
    Column("task", String(64), primary_key=True),
    Column("settings_key", String(64), primary_key=True),
    Column("vote", String(8), nullable=False),  # the task state it closes: open or vote2
    Column("ends", Float, nullable=False),
)
_created: set[str] = set()  # the store URLs whose countdowns table exists


def token_of(key_hash: str) -> str:
    """The projector token of a class whose teacher's key hashes to `key_hash`."""
    mac = hmac.new(key_hash.encode(), PURPOSE, hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).decode()[:TOKEN_CHARS]


def projector_token(store: Store, code: str, key: str) -> str:
    """The class's projector token, for its teacher (RefusedError for another key)."""
    if not store.is_teacher(code, key):
        raise RefusedError("this is not the teacher's key of that class", "not_teacher")
    return token_of(hashlib.sha256(str(key).encode()).hexdigest())


def is_projector(store: Store, code: str, token: str) -> bool:
    """Whether `token` is the projector token of the class `code` (a class that ended: no)."""
    with store._reading() as conn:
        row = conn.execute(select(classes.c.key_hash).where(and_(
            classes.c.code == code, classes.c.ended.is_(None)))).first()
    return row is not None and hmac.compare_digest(token_of(row.key_hash), str(token))


def opened_at(store: Store, code: str) -> dict[tuple[str, str], float]:
    """(task, settings key) -> when it was last opened (asked, or asked again)."""
    with store._reading() as conn:
        rows = conn.execute(select(tasks.c.task, tasks.c.settings_key, tasks.c.opened)
                            .where(tasks.c.code == code)).all()
    return {(r.task, r.settings_key): r.opened for r in rows}


def student_count(store: Store, code: str) -> int:
    """How many students joined the class (a count: no nickname leaves the database)."""
    with store._reading() as conn:
        return conn.execute(select(func.count()).select_from(students)
                            .where(students.c.code == code)).scalar_one()


def answer_count(store: Store, code: str, task: str, settings_key: str, vote: int) -> int:
    """How many answered one vote of a task (a count: no answer leaves the database)."""
    with store._reading() as conn:
        return conn.execute(select(func.count()).select_from(answers).where(and_(
            answers.c.code == code, answers.c.task == task,
            answers.c.settings_key == settings_key, answers.c.vote == vote))).scalar_one()


def revealed_pairs(store: Store, code: str, task: str,
                   settings_key: str) -> list[tuple[object | None, object | None]]:
    """(vote 1, vote 2) of each student who answered a revealed task (None: that vote not
    given), in no particular order and with no student named; RefusedError (`wrong_state`)
    before the reveal: the projector never holds an answer earlier."""
    where = and_(tasks.c.code == code, tasks.c.task == task, tasks.c.settings_key == settings_key)
    with store._reading() as conn:
        state = conn.execute(select(tasks.c.state).where(where)).scalar_one_or_none()
        if state != "revealed":
            raise RefusedError(f"the task is {state}: its answers are not shown", "wrong_state")
        rows = conn.execute(select(answers.c.token, answers.c.vote, answers.c.value).where(and_(
            answers.c.code == code, answers.c.task == task,
            answers.c.settings_key == settings_key))).all()
    votes: dict[str, dict[int, object]] = {}
    for r in rows:
        votes.setdefault(r.token, {})[r.vote] = json.loads(r.value)
    return [(v.get(1), v.get(2)) for v in votes.values()]


def hint(share: float) -> str:
    """What Crouch and Mazur (2001) advise after vote 1, by the share right: "low" (under
    30 %: explain again), "mid" (30–70 %: peer discussion, then vote 2), "high" (over 70 %:
    a short explanation, and on)."""
    return "low" if share < LOW else "high" if share > HIGH else "mid"


# --- the countdown --------------------------------------------------------------------------
def _countdowns(store: Store) -> Table:
    if store.url not in _created:
        _meta.create_all(store.engine, checkfirst=True)
        _created.add(store.url)
    return countdowns


def start_countdown(store: Store, code: str, key: str, task: str, settings_key: str,
                    seconds: float, now: float | None = None) -> float:
    """The teacher closes vote 1, now open, in `seconds`; its end time (RefusedError: not
    the teacher, or vote 1 not open)."""
    now = time.time() if now is None else now
    table = _countdowns(store)
    with store.engine.begin() as conn:
        store._teacher(conn, code, key)
        state = conn.execute(select(tasks.c.state).where(and_(
            tasks.c.code == code, tasks.c.task == task,
            tasks.c.settings_key == settings_key))).scalar_one_or_none()
        if state != "open":
            raise RefusedError(f"the task is {state}: no vote to close", "wrong_state")
        where = and_(table.c.code == code, table.c.task == task,
                     table.c.settings_key == settings_key)
        conn.execute(delete(table).where(where))
        conn.execute(table.insert().values(code=code, task=task, settings_key=settings_key,
                                           vote=state, ends=now + float(seconds)))
    return now + float(seconds)


def countdown_end(store: Store, code: str, task: str, settings_key: str,
                  state: str) -> float | None:
    """When the vote `state` ("open": vote 1) of a task closes by its countdown (None: none)."""
    table = _countdowns(store)
    with store._reading() as conn:
        row = conn.execute(select(table.c.ends).where(and_(
            table.c.code == code, table.c.task == task, table.c.settings_key == settings_key,
            table.c.vote == state))).first()
    return None if row is None else float(row.ends)


def stop_countdown(store: Store, code: str, task: str, settings_key: str) -> None:
    """The countdown of a task is over (its vote closed, by it or by hand)."""
    table = _countdowns(store)
    with store.engine.begin() as conn:
        conn.execute(delete(table).where(and_(table.c.code == code, table.c.task == task,
                                              table.c.settings_key == settings_key)))


def due(ends: float | None, now: float | None = None) -> bool:
    """Whether a countdown ending at `ends` has run out."""
    return ends is not None and (time.time() if now is None else now) >= ends
