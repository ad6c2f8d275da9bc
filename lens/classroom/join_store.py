"""The joins' part of the class store (`store.Store` is a `Joining`): a student joins a class by
its code and gets a token; a wrong code is counted against the address and the browser session
it came from (`wrong_codes`, per `WRONG_WINDOW_S`), and past their allowance (`BROWSER_FREE`,
`ADDRESS_FREE`) each try waits `rules.join_delay` — at most `MAX_DELAY_S` — before its code is
looked at: slowed, never refused, so the right code joins after that wait (docs/classroom.md:
why 40 bits stay unguessable). A nickname over `MAX_NICKNAME` characters is refused, not cut.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from sqlalchemy import Table, and_, select, update
from sqlalchemy.engine import Connection, Engine

from .database import classes, students, wrong_codes
from .rules import (
    ADDRESS_FREE,
    BROWSER_FREE,
    MAX_NICKNAME,
    WRONG_WINDOW_S,
    RefusedError,
    join_delay,
    normal_code,
)


def wrong_keys(client: str, browser: str = "") -> dict[str, int]:
    """Whom a wrong join code counts against, with each one's allowance: the address `client`
    (`ADDRESS_FREE`) and, when known, the browser session (`BROWSER_FREE`)."""
    keys = {client: ADDRESS_FREE}
    if browser:
        keys[f"browser:{browser}"[:128]] = BROWSER_FREE
    return keys


class Joining:
    """The joins' methods; the engine, reads and upserts are `Store`'s."""

    if TYPE_CHECKING:
        engine: Engine

        def _reading(self) -> Connection: ...
        def _upsert(self, table: Table, values: Mapping[str, object], keys: Sequence[str],
                    conn: Connection) -> None: ...

    def join(self, code: str, client: str, nickname: str = "", now: float | None = None,
             browser: str = "", wait: Callable[[float], None] = time.sleep,
             lang: str | None = None) -> str:
        """A student token for the class of `code`. A try from an address `client` or a browser
        session `browser` past its allowance of wrong codes first waits `join_wait` seconds
        (`wait`: a sleep of the caller's own thread — a Streamlit session's script run, which
        blocks no other session), then its code is looked at; a wrong one counts against both
        and is refused (`no_class`; a class ended by its teacher too). `lang`: the language
        the student joined in (`Store.language_of`). A nickname over `MAX_NICKNAME`
        characters is refused (`too_long`) before anything is counted: never cut without a
        word."""
        now = time.time() if now is None else now
        code = normal_code(code)
        nickname = str(nickname).strip()
        if len(nickname) > MAX_NICKNAME:
            raise RefusedError(f"a nickname has at most {MAX_NICKNAME} characters", "too_long")
        delay = self.join_wait(client, browser, now)
        if delay > 0:
            wait(delay)
            now += delay
        with self.engine.begin() as conn:
            found = conn.execute(select(classes.c.code).where(and_(
                classes.c.code == code, classes.c.expires > now,
                classes.c.ended.is_(None)))).first()
            if found is None:
                for who in wrong_keys(client, browser):
                    self._count_wrong(conn, who, now)
        if found is None:  # the count is committed; now say no
            raise RefusedError("no class has that code", "no_class")
        token = secrets.token_urlsafe(18)
        with self.engine.begin() as conn:
            conn.execute(students.insert().values(code=code, token=token, nickname=nickname,
                                                  joined=now, lang=lang))
        return token

    def join_wait(self, client: str, browser: str = "", now: float | None = None) -> float:
        """Seconds the next join try from `client` and `browser` waits: `rules.join_delay` of
        each one's wrong codes in its window, the longer of the two (0 within both
        allowances)."""
        now = time.time() if now is None else now
        keys = wrong_keys(client, browser)
        with self._reading() as conn:
            rows = conn.execute(select(wrong_codes).where(
                wrong_codes.c.client.in_(list(keys)))).all()
        return max((join_delay(r.count, keys[r.client]) for r in rows
                    if now - r.since < WRONG_WINDOW_S), default=0.0)

    def _count_wrong(self, conn: Connection, who: str, now: float) -> None:
        """One more wrong code for `who`; a window that has passed starts again at one."""
        row = conn.execute(select(wrong_codes).where(wrong_codes.c.client == who)).first()
        if row is None or now - row.since >= WRONG_WINDOW_S:
            self._upsert(wrong_codes, {"client": who, "since": now, "count": 1}, ("client",),
                         conn)
        else:
            conn.execute(update(wrong_codes).where(wrong_codes.c.client == who)
                         .values(count=wrong_codes.c.count + 1))
