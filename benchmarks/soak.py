"""A live class through replicas that keep dying: 30 scripted students answering
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
import shutil
import signal
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.exceptions import ConnectionClosed, WebSocketException

from benchmarks import load, replicas
from benchmarks.classroom import TASK, TEXT_ID, Tab

INPUT_PREFIX = f"lesson_in_{TEXT_ID}_"
SEND_KEY = f"class_send_{TEXT_ID}"
STORE_DOWN = "store cannot be reached"  # class.toml's store_down, as the page shows it
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
        self.last_message = time.time()
        self.trace: deque[str] = deque(maxlen=40)  # the last runs asked for and seen

    async def _handle(self, msg) -> None:  # noqa: ANN001 - a ForwardMsg
        self.last_message = time.time()
        kind = msg.WhichOneof("type")
        if kind == "navigation":
            self.trace.append(f"{time.time() - STARTED[0]:.1f} on /{load.page_run(msg)}")
        if kind == "new_session":
            ids = list(msg.metadata.run.fragment_ids)
            self.trace.append(f"{time.time() - STARTED[0]:.1f} new_session"
                              + (f" fragment {len(ids)}" if ids else " full"))
        elif kind == "script_finished":
            self.trace.append(f"{time.time() - STARTED[0]:.1f} finished "
                              f"{ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)}")
        await super()._handle(msg)

    def _rerun(self, fragment_id: str = "", auto: bool = False, trigger: str = "") -> bytes:
        self.trace.append(f"{time.time() - STARTED[0]:.1f} sent "
                          + ("fragment" if fragment_id else "trigger" if trigger else "full"))
        return super()._rerun(fragment_id, auto, trigger)

    def state(self) -> str:
        """What the tab knows, for a report on a stuck answer."""
        return (f"on {self.replica}, full runs begun {self.full_started} / finished "
                f"{self.full_done}, {self.messages} messages, the last "
                f"{time.time() - self.last_message:.1f} s ago, fragment timers "
                f"{len(self.timers)}; {' | '.join(self.trace)}")

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
    # (gap, health wait, cause): "moved" (its websocket closed under a kill) or "stuck"
    gap_parts: list[tuple[float, float, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    disconnects: int = 0
    sessions: list[str] = field(default_factory=list)  # the replica of each session
    busy_since: float | None = None  # when the answer under way began
    stuck: list[str] = field(default_factory=list)  # answers that got no run in `timeout`
    alerts: list[str] = field(default_factory=list)  # "the store cannot be reached" shown

    def new_tab(self) -> LiveTab:
        return LiveTab(f"s{self.i}", self.url, "overview", self.query, self.timeout,
                       cookies=self.cookies)

    async def connect(self, since: float | None, cause: str = "moved") -> None:
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
                self.gap_parts.append((time.time() - since, health_s, cause))
            return

    async def answer(self, value: int) -> bool:
        """Type `value`, press Send; True once the page says "Sent: value"."""
        tab = self.tab
        key_in = next(k for k in tab.widget_ids if k.startswith(INPUT_PREFIX))
        self.busy_since = time.time()
        await tab.set_int(key_in, value)
        t_send = time.time()
        self.sent.append((value, t_send))
        before = await tab.click(SEND_KEY)
        await tab.wait_full(before)
        self.busy_since = None
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
        since = tab.closed_at or self.busy_since or time.time()
        self.busy_since = None
        cause = "stuck"
        if isinstance(err, GoneError | ConnectionClosed) or tab.closed_at is not None:
            self.disconnects += 1
            cause = "moved"
        else:
            self.errors.append(f"{type(err).__name__}: {err}"[:200])
            if isinstance(err, TimeoutError):  # connected, but no run came back
                self.stuck.append(f"s{self.i} at {since - STARTED[0]:.1f} s: {tab.state()}")
                if DUMP[0] and not DUMP[1]:  # --dump-stuck: every thread's stack, once
                    DUMP[1] = tab.replica
                    os.kill(replicas.replica_pids(DUMP[0])[tab.replica], signal.SIGABRT)
        self.errors += [e for e in tab.errors if not _closed_by_kill(e)]
        self.alerts += [body for _, body in tab.texts if STORE_DOWN in body]
        await tab.close()
        await self.connect(since, cause)

    async def last_answer(self, value: int) -> bool:
        for _ in range(3):
            try:
                return await self.answer(value)
            except (GoneError, *LOST) as err:
                await self.lost(err)
        return False


STARTED = [0.0]  # when the kills began (the report's times count from it)
DUMP: list = [0, ""]  # --dump-stuck: scripts/serve's pid; the replica already dumped


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


def lost_answers(store, code: str, students: list[Student]) -> tuple[list[str], int]:  # noqa: ANN001
    """What the store kept: (a line for each student whose acknowledged answer is lost, the
    rows stored). Lost: the store's vote-1 row for the task is neither the student's last
    acknowledged value nor one it sent after it."""
    lost, stored_rows = [], 0
    for s in students:
        mine = store.answers_of(code, s.token)
        row = next((v for (task, _, vote), v in mine.items() if task == TASK and vote == 1),
                   None)
        stored_rows += row is not None
        got = int(row[0]) if isinstance(row, list) and row else None
        last_ack = s.acked[-1][0] if s.acked else None
        later = {v for v, t in s.sent if not s.acked or t > s.acked[-1][1]}
        if last_ack is not None and got != last_ack and got not in later:
            lost.append(f"s{s.i}: acknowledged {last_ack}, the store has {got}")
    return lost, stored_rows


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
    start = STARTED[0] = time.time()
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
    finals = await asyncio.gather(*(  # one last answer each, which must be acknowledged
        s.last_answer(values[0] + k) for k, s in enumerate(students)))
    wall = time.time() - start

    lost, stored_rows = lost_answers(store, code, students)
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
    for s in students:  # the pages still open
        if s.tab is not None:
            s.alerts += [body for _, body in s.tab.texts if STORE_DOWN in body]
    alerts = sorted({a[:160] for s in students for a in s.alerts})
    say(f"pages that said the class's store could not be reached: "
        f"{sum(bool(s.alerts) for s in students)}")
    for line in alerts[:5]:
        say(f"- {line}")
    stuck = [line for s in students for line in s.stuck]
    say(f"answers that got no finished run within {args.timeout:.0f} s on an open websocket "
        f"(counted as a page not working from the answer on): {len(stuck)}")
    for line in stuck[:8]:
        say(f"- {line}")
    say(f"\nlongest time a student was without a working page: {longest:.2f} s "
        f"({len(gaps)} gaps: p50 {load.percentile(gaps, 50):.2f} s, p95 "
        f"{load.percentile(gaps, 95):.2f} s, mean "
        f"{statistics.mean(gaps) if gaps else 0:.2f} s)")
    for cause, what in (("moved", "moved by a kill (from its websocket closing to its new "
                                  "session's run finished with the card)"),
                        ("stuck", "stuck on an open websocket (from the answer to the card "
                                  "again, on a new session)")):
        parts = [p for st in students for p in st.gap_parts if p[2] == cause]
        if not parts:
            say(f"- {what}: none")
            continue
        worst = max(parts)
        say(f"- {what}: {len(parts)}, longest {worst[0]:.2f} s ({worst[1]:.2f} s of it until "
            f"/_stcore/health answered through the balancer), p95 "
            f"{load.percentile([p[0] for p in parts], 95):.2f} s")
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
    ap.add_argument("--timeout", type=float, default=30.0,
                    help="a page's run (an answer, an open) that takes longer counts as stuck")
    ap.add_argument("--out", type=Path, help="also write the report here")
    ap.add_argument("--dump-stuck", action="store_true",
                    help="on the first stuck answer, SIGABRT its replica: Python's faulthandler "
                    "(PYTHONFAULTHANDLER=1) writes every thread's stack to its log")
    ap.add_argument("--logs", type=Path, default=load.ROOT / "test-artifacts" / "soak",
                    help="where the run folder's logs are copied at the end")
    args = ap.parse_args(argv)
    with replicas.fresh_class_folders("soak-") as (data, run_dir):
        if args.dump_stuck:
            os.environ["PYTHONFAULTHANDLER"] = "1"
        with replicas.balanced(args.replicas, run_dir) as (url, pid):
            DUMP[0] = pid if args.dump_stuck else 0
            lines = asyncio.run(scenario(args, url, pid, data))
            logs = {p.name: p.read_text(errors="replace").count("Uvicorn server started")
                    for p in sorted(run_dir.glob("r*.log"))}
        args.logs.mkdir(parents=True, exist_ok=True)
        for log in run_dir.glob("*.log"):
            shutil.copy(log, args.logs / log.name)
        lines.append(f"\nthe replicas' logs kept every start: {logs} (Uvicorn start lines)")
        print(lines[-1], file=sys.stderr)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
