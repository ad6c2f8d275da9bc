"""The live class's database: its five tables and an engine that opens it, by SQLAlchemy Core,
one code path for both backends.

- SQLite by default (a file in the data folder every replica on one machine opens): WAL, a busy
  timeout, `BEGIN IMMEDIATE` for every transaction that writes (a writer never upgrades a read
  lock halfway), a deferred `BEGIN` for reads (a snapshot: the class's polls take no write
  lock), `synchronous=FULL`, connections from a pool, one per thread at a time;
- PostgreSQL for several machines, named by a URL (`postgresql+psycopg://…`).

A class (`classes`: its join code, the hash of its teacher key, its settings and step) has
students (`students`), tasks opened under given settings (`tasks`) and one answer per student
per task and settings (`answers`); wrong join codes are counted per client (`wrong_codes`).
"""

from __future__ import annotations

from sqlalchemy import Column, Float, Integer, MetaData, String, Table, Text, create_engine, event
from sqlalchemy.engine import Engine

from .rules import MAX_NICKNAME

READ_OPTION = "encoder_lens_read"  # execution option of a read-only connection (`Store._reading`)

metadata = MetaData()
classes = Table(
    "classes", metadata,
    Column("code", String(16), primary_key=True),
    Column("key_hash", String(64), nullable=False),
    Column("settings", Text, nullable=False),  # the class's link settings, JSON
    Column("step", String(32), nullable=False),
    Column("created", Float, nullable=False),
    Column("expires", Float, nullable=False),
)
students = Table(
    "students", metadata,
    Column("code", String(16), primary_key=True),
    Column("token", String(64), primary_key=True),
    Column("nickname", String(MAX_NICKNAME), nullable=False),
    Column("joined", Float, nullable=False),
)
tasks = Table(
    "tasks", metadata,
    Column("code", String(16), primary_key=True),
    Column("task", String(64), primary_key=True),
    Column("settings_key", String(64), primary_key=True),  # answers never mix two settings
    Column("rule", Text, nullable=False),  # what an answer may be (`Rule`), JSON
    Column("fixed", Text, nullable=False),  # the teacher's layer, head and query, JSON
    Column("state", String(8), nullable=False),  # open, revealed, closed
    Column("opened", Float, nullable=False),
)
answers = Table(
    "answers", metadata,
    Column("code", String(16), primary_key=True),
    Column("task", String(64), primary_key=True),
    Column("settings_key", String(64), primary_key=True),
    Column("token", String(64), primary_key=True),
    Column("value", Text, nullable=False),  # JSON
    Column("at", Float, nullable=False),
)
wrong_codes = Table(
    "wrong_codes", metadata,
    Column("client", String(128), primary_key=True),
    Column("since", Float, nullable=False),
    Column("count", Integer, nullable=False),
)


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite set up for several processes writing at once."""
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True)
    engine = create_engine(url, connect_args={"check_same_thread": False, "timeout": 30})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_conn, _record) -> None:  # noqa: ANN001 (the driver's own objects)
        dbapi_conn.isolation_level = None  # the driver begins nothing: `_begin` does
        cur = dbapi_conn.cursor()
        for pragma in ("journal_mode=WAL", "busy_timeout=30000", "synchronous=FULL",
                       "foreign_keys=ON"):
            cur.execute(f"PRAGMA {pragma}")
        cur.close()

    @event.listens_for(engine, "begin")
    def _begin(conn) -> None:  # noqa: ANN001
        if conn.get_execution_options().get(READ_OPTION):
            conn.exec_driver_sql("BEGIN")  # a read: deferred, a snapshot of the WAL
        else:
            conn.exec_driver_sql("BEGIN IMMEDIATE")  # a write: the lock at once, no deadlock

    return engine
