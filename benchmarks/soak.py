"""A live class through replicas that keep dying (issue 38): 30 scripted students answering
through `scripts/serve --replicas 2` while a random replica is killed (SIGKILL) every 20 s.

    .venv/bin/python -m benchmarks.soak                          # 30 students, 2 min, 2 replicas
    .venv/bin/python -m benchmarks.soak --students 30 --minutes 2 --every 20 --out soak.txt

What runs: `scripts/serve --replicas N` (supervisord, HAProxy, the app) on a fresh data folder
(`ENCODER_LENS_DATA`: the SQLite store every replica opens), the production settings (each
replica warms its pages at every start, a restarted one too). The class is made through the
store (`Store.create_class`, `join`: what /class's buttons do); the teacher's tab (the teacher
link) presses "Open" on the overview's "how many tokens" task, then closes. Each student is a
tab of `benchmarks/classroom.py`'s protocol client (the page, the websocket, its fragment
timers, the number input and "Send" as the frontend sends them) that answers again and again
— a new value each time (100, 101, …), a random pause of --pause seconds between — and
counts an answer acknowledged once its page shows "Sent: VALUE" (the card says so only from
the store's row: after the commit). When its websocket closes (its replica was killed) it does
what Streamlit's frontend does: asks /_stcore/health through the balancer every 0.5 s with its
cookie until answered (HAProxy moves it: a new SERVERID), opens a new websocket and runs the
page again — a fresh session that finds the student by the token in its link.

A killer sends SIGKILL to a random replica every --every seconds (the first after --every s)
for --minutes; the students go on --tail s more, then each sends one last answer, which must
be acknowledged; then the store is read.

Printed: acknowledged answers lost (the store's row for a student is neither its last
acknowledged value nor one it sent after it: must be 0); answers sent, acknowledged, and sent
but never acknowledged (their tab died first); the errors the clients saw, by kind (a closed
websocket is what a kill does; anything else — an HTTP error, an exception on the page, a
refused websocket — is listed); the longest time any student was without a working page (from
its websocket closing, or its answer going unanswered, to its page's next finished run with
the card), p50 / p95 / max of those gaps; Send → acknowledged p50 / p95 / max; each kill
(which replica, how many students it held, the seconds until /_balancer/ready answered 200
again). Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from websockets.exceptions import ConnectionClosed, WebSocketException

from benchmarks import load, replicas
from benchmarks.classroom import TASK, TEXT_ID, Tab

INPUT_PREFIX = f"lesson_in_{TEXT_ID}_"
SEND_KEY = f"class_send_{TEXT_ID}"
HEALTH_EVERY_S = 0.5  # the frontend's first reconnect tries come about this often
# what a tab's wait or send raises when its websocket closed or could not open
LOST = (OSError, TimeoutError, WebSocketException)


class GoneError(Exception):
    """The tab's websocket closed while it waited."""


class LiveTab(Tab):
    """A classroom tab that knows when its websocket closed (every wait then ends at once)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.closed_at: float | None = None

    async def _read(self) -> None:
        try:
            await super()._read()
        finally:
            if self.closed_at is None:
                self.closed_at = time.time()
            async with self._changed:
                self._changed.notify_all()

    async def _timer(self, fragment_id: str, interval: float) -> None:
        try:
            await super()._timer(fragment_id, interval)
        except WebSocketException:  # the websocket closed: the reader says so
            pass

    async def until(self, predicate, timeout: float | None = None) -> None:  # noqa: ANN001
        await super().until(lambda: self.closed_at is not None or predicate(), timeout)
        if self.closed_at is not None:
            raise GoneError

    def card_ready(self) -> bool:
        return (any(k.startswith(INPUT_PREFIX) for k in self.widget_ids)
                and SEND_KEY in self.widget_ids and self.full_done == self.full_started)


@dataclass
class Student:
    i: int
    token: str
    url: str
    query: str
    timeout: float
    cookies: dict[str, str] = field(default_factory=dict)
    tab: LiveTab | None = None
    sent: list[tuple[int, float]] = field(default_factory=list)  # (value, time)
    acked: list[tuple[int, float, float]] = field(default_factory=list)  # value, sent, acked
    gaps: list[float] = field(default_factory=list)  # seconds without a working page
    gap_parts: list[tuple[float, float]] = field(default_factory=list)  # (gap, health wait)
    errors: list[str] = field(default_factory=list)
    disconnects: int = 0
    sessions: list[str] = field(default_factory=list)  # the replica of each session

    def new_tab(self) -> LiveTab:
        return LiveTab(f"s{self.i}", self.url, "overview", self.query, self.timeout,
                       cookies=self.cookies)

    async def connect(self, since: float | None) -> None:
        """Open the page (again): after a loss, first /_stcore/health until it answers, as
        the frontend does; then the page until its card is there. `since`: when the page
        stopped working (the gap is recorded)."""
        health_s = 0.0
        while True:
            if since is not None:
                t_health = time.time()
                while True:
                    try:
                        status, _ = await load.http_get(self.url, "/_stcore/health",
                                                        self.cookies, 5)
                    except (OSError, TimeoutError) as err:
                        status = 0
                        self.errors.append(f"health: {type(err).__name__}")
                    if status == 200:
                        health_s += time.time() - t_health
                        break
                    if status:
                        self.errors.append(f"health: HTTP {status}")
                    await asyncio.sleep(HEALTH_EVERY_S)
            tab = self.tab = self.new_tab()
            try:
                await tab.open()
                await tab.until(tab.card_ready, 60)
            except (GoneError, *LOST) as err:
                self.errors.append(f"reopen: {type(err).__name__}: {err}"[:200])
                self.errors += tab.errors
                await tab.close()
                since = since if since is not None else time.time()
                continue
            self.sessions.append(tab.replica)
            if since is not None:
                self.gaps.append(time.time() - since)
                self.gap_parts.append((time.time() - since, health_s))
            return

    async def answer(self, value: int) -> bool:
        """Type `value`, press Send; True once the page says "Sent: value"."""
        tab = self.tab
        key_in = next(k for k in tab.widget_ids if k.startswith(INPUT_PREFIX))
        await tab.set_int(key_in, value)
        t_send = time.time()
        self.sent.append((value, t_send))
        before = await tab.click(SEND_KEY)
        await tab.wait_full(before)
        sent = re.compile(rf"Sent: \**{value}\b")  # "Sent: **196** …" (class.toml's `sent`)
        t_seen = next((t for t, body in tab.texts if t >= t_send and sent.search(body)), None)
        if t_seen is None:
            self.errors.append(f"no 'Sent: {value}' after its run")
            return False
        self.acked.append((value, t_send, t_seen))
        return True

    async def run(self, stop_at: float, rng: random.Random, pause: tuple[float, float],
                  values: list[int]) -> None:
        await self.connect(None)
        while time.time() < stop_at:
            try:  # the pause; a websocket closing meanwhile is noticed at once (the frontend)
                await self.tab.until(lambda: False, rng.uniform(*pause))
            except TimeoutError:
                pass
            except GoneError as err:
                await self.lost(err)
                continue
            value = values[0]
            values[0] += 1
            try:
                await self.answer(value)
            except (GoneError, *LOST) as err:
                await self.lost(err)

    async def lost(self, err: BaseException) -> None:
        """The page stopped working: its websocket closed under it (its replica died), or
        something else went wrong (an error). Open it again."""
        tab = self.tab
        since = tab.closed_at or time.time()
        if isinstance(err, GoneError | ConnectionClosed) or tab.closed_at is not None:
            self.disconnects += 1
        else:
            self.errors.append(f"{type(err).__name__}: {err}"[:200])
        self.errors += [e for e in tab.errors if not _closed_by_kill(e)]
        await tab.close()
        await self.connect(since)

    async def last_answer(self, value: int) -> bool:
        for _ in range(3):
            try:
                return await self.answer(value)
            except (GoneError, *LOST) as err:
                await self.lost(err)
        return False


def _healthy(pid: int) -> bool:
    """The replica of `pid` answers its own /_stcore/health (its port from its command)."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        port = args[args.index("--server.port") + 1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.status == 200
    except (OSError, ValueError, IndexError):
        return False


def _closed_by_kill(error: str) -> bool:
    """The reader's error when the replica under the websocket died."""
    return error.startswith(("ConnectionClosed", "IncompleteReadError"))


async def open_task(url: str, code: str, key: str, timeout: float) -> None:
    """The teacher link, "Open" on the overview's tokens task, then the tab closes."""
    teacher = Tab("teacher", url, "class", urllib.parse.urlencode(
        {"class": code, "teacher": key}), timeout)
    await teacher.open()
    open_key = f"class_open_{TEXT_ID}"
    await teacher.until(lambda: open_key in teacher.widget_ids, 60)
    before = await teacher.click(open_key)
    await teacher.wait_full(before)
    await teacher.close()


async def killer(serve_pid: int, url: str, start: float, every: float, until: float,
                 rng: random.Random, students: list[Student], log: list[str]) -> None:
    """SIGKILL to a random replica every `every` s from `start` until `until`; a table row
    for each kill: which, how many students' sessions it held, the seconds until it was
    started again and the balancer ready."""
    k = 0
    while True:
        k += 1
        at = start + k * every
        if at > until:
            return
        await asyncio.sleep(max(0.0, at - time.time()))
        reps = replicas.replica_pids(serve_pid)
        if not reps:
            log.append(f"kill {k}: no replica found")
            continue
        name = rng.choice(sorted(reps))
        held = sum(1 for s in students if s.tab is not None and s.tab.replica == name
                   and s.tab.closed_at is None)
        os.kill(reps[name], signal.SIGKILL)
        t_kill = time.time()
        while time.time() - t_kill < every * 3:  # bounded
            await asyncio.sleep(0.2)
            new = replicas.replica_pids(serve_pid).get(name)
            if new in (None, reps[name]) or not await asyncio.to_thread(_healthy, new):
                continue
            if await asyncio.to_thread(replicas.ready, url):
                break
        log.append(f"| {k} | {t_kill - start:.1f} s | {name} (pid {reps[name]}) | {held} | "
                   f"{time.time() - t_kill:.1f} s |")


async def scenario(args: argparse.Namespace, url: str, serve_pid: int, data: Path
                   ) -> list[str]:
    from lens.classroom.asking import class_settings  # noqa: PLC0415
    from lens.classroom.store import Store  # noqa: PLC0415
    from lens.settings import Settings  # noqa: PLC0415

    out: list[str] = []

    def say(line: str = "") -> None:
        out.append(line)
        print(line, file=sys.stderr, flush=True)

    rng = random.Random(args.seed)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=load.ROOT,
                          capture_output=True, text=True).stdout.strip()
    say(f"# Soak: {args.students} students answering through {args.replicas} replicas, a "
        f"random replica SIGKILLed every {args.every:.0f} s for {args.minutes:g} min, at "
        f"{head or '?'} ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average "
        f"{os.getloadavg()[0]:.1f}; {os.cpu_count()} cores)")
    store = Store(f"sqlite:///{data / 'classes.sqlite'}")
    code, key = store.create_class(class_settings(Settings()), "overview")
    await open_task(url, code, key, args.timeout)
    students = [Student(i, tok, url, urllib.parse.urlencode({"class": code, "student": tok}),
                        args.timeout)
                for i, tok in enumerate(store.join(code, f"soak-{i}", f"s{i}")
                                        for i in range(args.students))]
    values = [100]  # one counter: every answer sent is a value never sent before
    await asyncio.gather(*(s.connect(None) for s in students))
    split = {r: sum(1 for s in students if s.sessions[-1] == r) for r in ("r1", "r2")}
    say(f"\nthe class {code}: {args.students} students on the overview's open question "
        f"(sessions {split})")
    start = time.time()
    kills: list[str] = []
    stop_at = start + args.minutes * 60 + args.tail
    running = [asyncio.create_task(s.run(stop_at, random.Random(rng.random()),
                                         (args.pause_min, args.pause_max), values))
               for s in students]
    await killer(serve_pid, url, start, args.every, start + args.minutes * 60, rng, students,
                 kills)
    done = await asyncio.gather(*running, return_exceptions=True)
    crashed = [f"s{i}: {type(r).__name__}: {r}" for i, r in enumerate(done)
               if isinstance(r, BaseException)]
    finals = []
    for s in students:  # one last answer each, which must be acknowledged
        value = values[0]
        values[0] += 1
        finals.append(await s.last_answer(value))
    wall = time.time() - start

    # --- what the store kept
    lost, stored_rows = [], 0
    for s in students:
        mine = store.answers_of(code, s.token)
        row = next((v for (task, _), v in mine.items() if task == TASK), None)
        stored_rows += row is not None
        got = int(row[0]) if isinstance(row, list) and row else None
        last_ack = s.acked[-1][0] if s.acked else None
        later = {v for v, t in s.sent if not s.acked or t > s.acked[-1][1]}
        if last_ack is not None and got != last_ack and got not in later:
            lost.append(f"s{s.i}: acknowledged {last_ack}, the store has {got}")
    store.close()

    sent = sum(len(s.sent) for s in students)
    acked = sum(len(s.acked) for s in students)
    gaps = [g for s in students for g in s.gaps]
    acks = [t_seen - t_send for s in students for _, t_send, t_seen in s.acked]
    disconnects = sum(s.disconnects for s in students)
    kinds: dict[str, int] = {}
    for s in students:
        for e in s.errors:
            kind = e.split(":")[0] if not e.startswith("no 'Sent") else "no 'Sent: v' shown"
            kinds[kind] = kinds.get(kind, 0) + 1
    longest = max(gaps, default=0.0)
    say(f"\n{wall:.0f} s: {len(kills)} kills, {sent} answers sent, {acked} acknowledged, "
        f"{sent - acked} sent but not acknowledged (their tab's replica died first); last "
        f"answers acknowledged {sum(finals)}/{len(students)}; {stored_rows} rows in the "
        f"store")
    say(f"\n**acknowledged answers lost: {len(lost)}**")
    for line in lost[:10]:
        say(f"- {line}")
    say(f"\nclient errors: {disconnects} pages whose websocket a kill closed; "
        f"other errors {sum(kinds.values())}" + (f": {json.dumps(kinds)}" if kinds else ""))
    for line in sorted({e for s in students for e in s.errors})[:8]:
        say(f"- {line}")
    for line in crashed[:5]:
        say(f"- a student's script failed: {line}")
    say(f"\nlongest time a student was without a working page: {longest:.2f} s "
        f"({len(gaps)} gaps: p50 {load.percentile(gaps, 50):.2f} s, p95 "
        f"{load.percentile(gaps, 95):.2f} s, mean "
        f"{statistics.mean(gaps) if gaps else 0:.2f} s)")
    worst = max((p for st in students for p in st.gap_parts), default=(0.0, 0.0))
    say(f"the longest: {worst[1]:.2f} s until /_stcore/health answered through the balancer, "
        f"{worst[0] - worst[1]:.2f} s more until the page's run on its new session finished "
        f"with the card (from the websocket closing)")
    say(f"Send → acknowledged: p50 {load.percentile(acks, 50):.2f} s, p95 "
        f"{load.percentile(acks, 95):.2f} s, max {max(acks, default=0):.2f} s")
    say("\n| kill | at | replica | students on it | until /_balancer/ready 200 |\n"
        "|---|---|---|---|---|")
    for line in kills:
        say(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--minutes", type=float, default=2.0, help="how long the kills go on")
    ap.add_argument("--every", type=float, default=20.0, help="seconds between two kills")
    ap.add_argument("--tail", type=float, default=15.0,
                    help="seconds the students go on after the last kill")
    ap.add_argument("--pause-min", type=float, default=2.0)
    ap.add_argument("--pause-max", type=float, default=8.0,
                    help="a student's pause between two answers: uniform in [min, max] s")
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="soak-") as tmp:
        data = Path(tmp) / "data"
        data.mkdir()
        run_dir = Path(tmp) / "run"
        run_dir.mkdir()
        os.environ["ENCODER_LENS_DATA"] = str(data)  # scripts/serve's replicas inherit it
        os.environ.pop("ENCODER_LENS_CLASS_DB", None)
        with replicas.balanced(args.replicas, run_dir) as (url, pid):
            lines = asyncio.run(scenario(args, url, pid, data))
            logs = {p.name: p.read_text(errors="replace").count("Uvicorn server started")
                    for p in sorted(run_dir.glob("r*.log"))}
        lines.append(f"\nthe replicas' logs kept every start: {logs} (Uvicorn start lines)")
        print(lines[-1], file=sys.stderr)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
