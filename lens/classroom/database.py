"""The live class's database: its tables, an engine that opens it and the migration of a file
from before, by SQLAlchemy Core, one code path for both backends.

- SQLite by default (a file in the data folder every replica on one machine opens): WAL, a busy
  timeout, `BEGIN IMMEDIATE` for every transaction that writes (a writer never upgrades a read
  lock halfway), a deferred `BEGIN` for reads (a snapshot: the class's polls take no write
  lock), `synchronous=FULL`, connections from a pool, one per thread at a time;
- PostgreSQL for several machines, named by a URL (`postgresql+psycopg://…`).

A class (`classes`: its join code, the hash of its teacher key, its settings and step) has
students (`students`), tasks opened under given settings (`tasks`, each in a state of the
peer-instruction cycle: `rules.TASK_STATES`) and one answer per student per task, settings and
vote (`answers`: vote 1, then vote 2 after the discussion; a question asked again keeps its
earlier rounds' answers in `earlier_answers`), and a concept check taken before
and after the lesson (`checks`, each round opened and closed by the teacher: `check_rounds`);
wrong join codes are counted per client (`wrong_codes`). A file from before the two votes is
migrated when a store opens it (`migrate`: its answers become vote 1).
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
    inspect,
    text,
)
from sqlalchemy.engine import Connection, Engine

from .rules import MAX_NICKNAME, MAX_QUESTION_ID

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
    Column("ended", Float, nullable=True),  # when the teacher ended it (None: going on): its
    #   students read their own results until it expires (`Store.results_of`)
)
students = Table(
    "students", metadata,
    Column("code", String(16), primary_key=True),
    Column("token", String(64), primary_key=True),
    Column("nickname", String(MAX_NICKNAME), nullable=False),
    Column("joined", Float, nullable=False),
    Column("lang", String(8), nullable=True),  # the language the student last chose: a new
    #   session of theirs (a reload, a replica restart) opens in it (`Store.language_of`)
)
tasks = Table(
    "tasks", metadata,
    Column("code", String(16), primary_key=True),
    Column("task", String(64), primary_key=True),
    Column("settings_key", String(64), primary_key=True),  # answers never mix two settings
    Column("rule", Text, nullable=False),  # what an answer may be (`Rule`), JSON
    Column("fixed", Text, nullable=False),  # the teacher's layer, head and query, JSON
    Column("state", String(8), nullable=False),  # open, discuss, vote2, revealed, closed
    Column("opened", Float, nullable=False),
    Column("asked", Text, nullable=True),  # the task as asked (`tasks.task_json`), for the
    #                                        teacher's results: its right answer, its words
)
answers = Table(
    "answers", metadata,
    Column("code", String(16), primary_key=True),
    Column("task", String(64), primary_key=True),
    Column("settings_key", String(64), primary_key=True),
    Column("token", String(64), primary_key=True),
    Column("vote", Integer, primary_key=True, autoincrement=False,
           server_default=text("1")),  # 1 or 2 (peer instruction: before, after discussing)
    Column("value", Text, nullable=False),  # JSON
    Column("at", Float, nullable=False),
    Column("carried", Integer, nullable=False, server_default=text("0")),  # 1: a vote 2 not
    #   sent, the student's vote 1 carried into it when vote 2 closed (`Store.reveal`)
)
earlier_answers = Table(  # the answers of a question's earlier rounds (asked again)
    "earlier_answers", metadata,
    Column("code", String(16), primary_key=True),
    Column("task", String(64), primary_key=True),
    Column("settings_key", String(64), primary_key=True),
    Column("round", Integer, primary_key=True, autoincrement=False),  # 1, 2, … as asked
    Column("token", String(64), primary_key=True),
    Column("vote", Integer, primary_key=True, autoincrement=False),
    Column("value", Text, nullable=False),  # JSON
    Column("at", Float, nullable=False),
    Column("carried", Integer, nullable=False, server_default=text("0")),
)
checks = Table(  # the concept check's answers: one per student, question and round
    "checks", metadata,
    Column("code", String(16), primary_key=True),
    Column("token", String(64), primary_key=True),
    Column("question", String(MAX_QUESTION_ID), primary_key=True),
    Column("round", String(4), primary_key=True),  # "pre" (before the lesson) or "post"
    Column("value", Text, nullable=False),  # JSON
    Column("at", Float, nullable=False),
)
check_rounds = Table(  # the teacher's switch per round of the check (no row: closed)
    "check_rounds", metadata,
    Column("code", String(16), primary_key=True),
    Column("round", String(4), primary_key=True),
    Column("state", String(8), nullable=False),  # open, closed
)
LIVE = classes.c.ended.is_(None)  # a class going on (not ended by its teacher)
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


WANTED = (("answers", "vote"), ("tasks", "asked"), ("answers", "carried"),
          ("earlier_answers", "carried"), ("classes", "ended"),
          ("students", "lang"))  # the columns added since the first file


def migrate(engine: Engine) -> None:
    """Bring a database from before up to date: `answers` gets its `vote` column (the two
    votes), in its primary key, every answer so far vote 1; `tasks` gets its `asked` column
    (the results after a teacher's reload), empty for the tasks so far; `answers` and
    `earlier_answers` get `carried` (0: every answer so far was sent); `classes` gets `ended`
    (every class so far going on) and `students` `lang` (none chosen yet). Checked without a lock
    first (the usual case: nothing to do); then again under the tables' lock, so that replicas
    opening the same file or server at once migrate it once."""
    with engine.connect().execution_options(**{READ_OPTION: True}) as conn:
        if all(_has_column(conn, table, column) for table, column in WANTED):
            return
    with engine.begin() as conn:  # SQLite: BEGIN IMMEDIATE, the database's write lock
        postgres = conn.dialect.name == "postgresql"
        if postgres:
            conn.exec_driver_sql("LOCK TABLE answers, earlier_answers, tasks, classes, "
                                 "students IN ACCESS EXCLUSIVE MODE")
        if not _has_column(conn, "tasks", "asked"):
            conn.exec_driver_sql("ALTER TABLE tasks ADD COLUMN asked TEXT")
        if not _has_column(conn, "answers", "vote"):
            _add_vote(conn, postgres)
        for table in ("answers", "earlier_answers"):
            if not _has_column(conn, table, "carried"):
                conn.exec_driver_sql(f"ALTER TABLE {table} ADD COLUMN carried INTEGER "
                                     "NOT NULL DEFAULT 0")
        if not _has_column(conn, "classes", "ended"):
            conn.exec_driver_sql("ALTER TABLE classes ADD COLUMN ended FLOAT")
        if not _has_column(conn, "students", "lang"):
            conn.exec_driver_sql("ALTER TABLE students ADD COLUMN lang VARCHAR(8)")


def _add_vote(conn: Connection, postgres: bool) -> None:
    if postgres:
        pkey = inspect(conn).get_pk_constraint("answers")["name"]
        conn.exec_driver_sql("ALTER TABLE answers ADD COLUMN vote INTEGER NOT NULL DEFAULT 1")
        conn.exec_driver_sql(f'ALTER TABLE answers DROP CONSTRAINT "{pkey}"')
        conn.exec_driver_sql("ALTER TABLE answers ADD PRIMARY KEY "
                             "(code, task, settings_key, token, vote)")
        return
    # SQLite cannot change a primary key: the table is built anew and the rows copied
    conn.exec_driver_sql("ALTER TABLE answers RENAME TO answers_before_votes")
    answers.create(conn)
    conn.exec_driver_sql("INSERT INTO answers (code, task, settings_key, token, vote, value, "
                         "at) SELECT code, task, settings_key, token, 1, value, at "
                         "FROM answers_before_votes")
    conn.exec_driver_sql("DROP TABLE answers_before_votes")


def _has_column(conn: Connection, table: str, column: str) -> bool:
    return column in {c["name"] for c in inspect(conn).get_columns(table)}
