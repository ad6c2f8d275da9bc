"""A live class of 30 through two replicas (issue 25): students following, answering, idling,
and the usual `same30` burst beside them.

    .venv/bin/python -m benchmarks.classroom                      # 30 students, 2 replicas
    .venv/bin/python -m benchmarks.classroom --students 30 --idle 60 --spread 8

What is real and what is emulated:
- real: `scripts/serve --replicas N` (HAProxy, N app processes) on a fresh data folder
  (`ENCODER_LENS_DATA`, a temporary folder: the SQLite store every replica opens); the app's own
  pages, fragments, callbacks and store writes;
- created through the store (`lens.classroom.store.Store`, as the /class page's "Start" and
  "Join" buttons would): the class (the defaults' settings, `asking.class_settings`, step
  "overview") and each student's token (`store.join`);
- emulated: each browser tab, by the protocol client below (built on `benchmarks/load.py`'s):
  GET the page (keeping HAProxy's SERVERID cookie), the websocket, `BackMsg.rerun_script`; the
  browser's fragment timers (`st.fragment(run_every=…)`: the server sends `ForwardMsg.auto_rerun`
  with the fragment id and interval, the browser then sends a `rerun_script` with that
  `fragment_id` and `is_auto_rerun` every interval — as Streamlit's frontend does, a full run
  clears the timers and the run's `auto_rerun` starts them again, `stop_auto_rerun` cancels
  one); a widget as the frontend sends it (a `WidgetState` by the element id the delta carried:
  the number input's `int_value`, then the Send button's `trigger_value`). The client sends only
  the widgets it set, not every mounted widget's value as a browser does (the server keeps the
  others' values; the message is smaller than a browser's). No JavaScript runs (the
  explorer, the teacher's cookie component), and `/media/…` pictures are fetched as load.py does.

The sequence, on one `scripts/serve`: the replicas' CPU with no tab open (--quiet s); `same30`
--rounds times with no class (the baseline); the class and its 30 students open the overview
(all at once, so their 2 s timers tick in step; --stagger S: one after another over S seconds);
60 s idle, the students' fragments polling, the replicas' CPU from /proc; `same30` --rounds
times while the class polls, each right after one with the same tabs open and their timers
paused (an A/B, so that the machine's drift moves both alike); the teacher's tab opens /class
with the teacher link and presses "Open" on the overview's "how many tokens" task (the app
computes the task's binding); each student, once the card's number input has arrived, answers
after a random pause in [0, --spread] s (the value, then Send); a poller reads the store's
answers table (a plain read-only sqlite3 connection, every 20 ms); then all tabs close and
`same30` runs --rounds times more. Printed: open → each student's input p50 / p95 (the follow);
Send → stored p50 / p95 (by the poller, and by the row's own `at` stamp); Send → "Sent" shown;
open → 30 in the store; the teacher's tab showing "30 of 30 answered" (its own 2 s fragment);
CPU per second idle; the bursts. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from benchmarks import load, replicas

TASK = "overview.tokens"
TEXT_ID = "overview_tokens"
FINISHED = ForwardMsg.ScriptFinishedStatus
POLL_S = 0.02  # the store poller's period


# --- a tab that stays open: the browser's timers and widgets -----------------------------------
@dataclass
class Tab:
    """One browser tab kept open on a page: its runs, its fragment timers, its widgets."""

    name: str
    base_url: str
    page: str
    query: str
    timeout: float = 240.0
    cookies: dict[str, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    page_hash: str = ""
    session_id: str = ""  # the server's id of this tab's session (its first run says it)
    on_page: str = ""  # the url path of the page running, as the last `navigation` said
    widget_ids: dict[str, str] = field(default_factory=dict)  # user key -> element id
    values: dict[str, object] = field(default_factory=dict)  # element id -> WidgetState
    timers: dict[str, asyncio.Task] = field(default_factory=dict)
    texts: list[tuple[float, str]] = field(default_factory=list)  # (time, markdown/alert)
    first_seen: dict[str, float] = field(default_factory=dict)  # user key -> time seen
    full_started: int = 0  # full runs begun (new_session without fragment ids)
    full_done: int = 0  # the full_started number of the last full run that finished
    first_done_s: float = float("nan")  # open -> the first run's script_finished
    fragment_sent: list[float] = field(default_factory=list)
    fragment_rtt: list[float] = field(default_factory=list)  # auto rerun sent -> finished
    pushed: int = 0  # fragment runs the server began unasked (lens/classroom/ui/push.py)
    widget_fragment: dict[str, str] = field(default_factory=dict)  # user key -> its fragment
    runs_started: int = 0  # runs begun, full or of a fragment
    runs_done: int = 0  # the runs_started number of the last run that finished
    messages: int = 0
    images: int = 0
    paused: bool = False  # the timers tick but send nothing (the A/B of the bursts)

    def __post_init__(self) -> None:
        self._changed = asyncio.Condition()
        self._fragment_pending: list[float] = []
        self._in_fragment_run = False
        self._ws = None
        self._reader: asyncio.Task | None = None
        self._fetches: list[asyncio.Task] = []

    # the BackMsg a browser sends
    def _rerun(self, fragment_id: str = "", auto: bool = False, trigger: str = "") -> bytes:
        back = BackMsg()
        state = back.rerun_script
        state.query_string = self.query
        state.page_name = "" if self.page_hash else self.page
        state.page_script_hash = self.page_hash
        state.fragment_id = fragment_id
        state.is_auto_rerun = auto
        for widget in self.values.values():
            state.widget_states.widgets.append(widget)
        if trigger:
            w = state.widget_states.widgets.add()
            w.id = trigger
            w.trigger_value = True
        state.context_info.url = f"{self.base_url}/{self.page}?{self.query}"
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        return back.SerializeToString()

    async def open(self) -> None:
        t0 = time.time()
        status, _ = await load.http_get(self.base_url, f"/{self.page}?{self.query}",
                                        self.cookies, self.timeout)
        if status != 200:
            self.errors.append(f"page: HTTP {status}")
        ws_url = self.base_url.replace("http", "ws", 1) + "/_stcore/stream"
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        self._ws = await connect(ws_url, subprotocols=["streamlit"], additional_headers=headers,
                                 max_size=None, open_timeout=self.timeout, ping_interval=None)
        self._reader = asyncio.create_task(self._read())
        await self._ws.send(self._rerun())
        await self.wait_full(0)
        self.first_done_s = time.time() - t0

    @property
    def replica(self) -> str:
        return self.cookies.get("SERVERID", "?")

    async def close(self) -> None:
        for timer in self.timers.values():
            timer.cancel()
        self.timers.clear()
        for task in self._fetches:
            task.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()

    async def _read(self) -> None:
        try:
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await self._ws.recv())
                self.messages += 1
                await self._handle(msg)
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - the tab closed (a figure, not a crash)
            if not str(err).startswith("received 1000") and "sent 1000" not in str(err):
                self.errors.append(f"{type(err).__name__}: {err}"[:300])

    async def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        now = time.time()
        self.errors += load.message_errors(msg)
        if kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
            self.session_id = msg.new_session.initialize.session_id or self.session_id
            self._in_fragment_run = bool(msg.metadata.run.fragment_ids)
            self.runs_started += 1
            if self._in_fragment_run and not self._fragment_pending:
                self.pushed += 1  # no timer of this tab asked for it: the server pushed it
            if not self._in_fragment_run:  # the frontend: a full run clears every timer
                for timer in self.timers.values():
                    timer.cancel()
                self.timers.clear()
                self.full_started += 1
        elif kind == "navigation":
            self.page_hash = msg.navigation.page_script_hash or self.page_hash
            self.on_page = load.page_run(msg) or self.on_page
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            fid = msg.auto_rerun.fragment_id
            if fid not in self.timers:
                self.timers[fid] = asyncio.create_task(
                    self._timer(fid, msg.auto_rerun.interval))
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                timer = self.timers.pop(fid, None)
                if timer is not None:
                    timer.cancel()
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            what = element.WhichOneof("type")
            inner = getattr(element, what) if what else None
            element_id = getattr(inner, "id", "") if inner is not None else ""
            if isinstance(element_id, str) and element_id.startswith("$$ID-"):
                key = element_id.split("-", 2)[-1]
                self.widget_ids[key] = element_id
                self.widget_fragment[key] = msg.delta.fragment_id  # "": outside any fragment
                self.first_seen.setdefault(key, now)
            if what == "markdown":
                self.texts.append((now, element.markdown.body))
            elif what == "alert":
                self.texts.append((now, element.alert.body))
            for url in load.media_urls(msg):
                self._fetches.append(asyncio.create_task(self._fetch(url)))
        elif kind == "script_finished":
            status = msg.script_finished
            if status in (FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY,
                          FINISHED.FINISHED_SUCCESSFULLY):
                self.runs_done = self.runs_started
            if status == FINISHED.FINISHED_FRAGMENT_RUN_SUCCESSFULLY:
                if self._fragment_pending:
                    self.fragment_rtt.append(now - self._fragment_pending.pop(0))
            elif status == FINISHED.FINISHED_SUCCESSFULLY:
                self.full_done = self.full_started
                self._fragment_pending.clear()  # a full run answers the fragments queued
            elif status != FINISHED.FINISHED_EARLY_FOR_RERUN:
                self.errors.append(f"script_finished {FINISHED.Name(status)}")
            self._in_fragment_run = False
        async with self._changed:
            self._changed.notify_all()

    async def _fetch(self, url: str) -> None:
        status, _ = await load.http_get(self.base_url, url, self.cookies, self.timeout)
        if status != 200:
            self.errors.append(f"media {url}: HTTP {status}")
        else:
            self.images += 1

    async def _timer(self, fragment_id: str, interval: float) -> None:
        """setInterval(…, interval): a fragment rerun request every interval seconds."""
        start = time.monotonic()
        k = 1
        while True:
            await asyncio.sleep(max(0.0, start + k * interval - time.monotonic()))
            k += 1
            if self.paused:
                continue
            self.fragment_sent.append(time.time())
            self._fragment_pending.append(time.time())
            await self._ws.send(self._rerun(fragment_id, auto=True))

    async def until(self, predicate, timeout: float | None = None) -> None:  # noqa: ANN001
        async with asyncio.timeout(timeout or self.timeout):
            async with self._changed:
                await self._changed.wait_for(predicate)

    async def wait_full(self, after: int) -> None:
        """Until a full run begun after `after` full runs has finished."""
        await self.until(lambda: self.full_done > after)

    async def set_int(self, key: str, value: int) -> None:
        """Type a whole number into the number input of `key` and leave it (the frontend
        commits the value: a rerun, of its fragment when it is in one); returns once that run
        has finished."""
        widget = self.values.setdefault(self.widget_ids[key], _state(self.widget_ids[key]))
        widget.int_value = value
        fragment = self.widget_fragment.get(key, "")
        before, runs = self.full_started, self.runs_started
        await self._ws.send(self._rerun(fragment))
        if fragment:
            await self.until(lambda: self.runs_done > runs)
        else:
            await self.wait_full(before)

    async def click(self, key: str) -> int:
        """Press the button of `key`; the number of full runs begun before it. A button in a
        fragment runs only its fragment, as the frontend asks: `click` then returns once that
        run has finished, and what it returns makes a `wait_full` return at once."""
        fragment = self.widget_fragment.get(key, "")
        before, runs = self.full_started, self.runs_started
        await self._ws.send(self._rerun(fragment, trigger=self.widget_ids[key]))
        if not fragment:
            return before
        await self.until(lambda: self.runs_done > runs)
        return self.full_done - 1

    def saw(self, text: str, since: float = 0.0) -> float | None:
        return next((t for t, body in self.texts if t >= since and text in body), None)


def _state(element_id: str):  # noqa: ANN202 - a protobuf message
    from streamlit.proto.WidgetStates_pb2 import WidgetState  # noqa: PLC0415

    w = WidgetState()
    w.id = element_id
    return w


# --- the store, read as the teacher's view would ----------------------------------------------
class Poller:
    """Reads the answers table every POLL_S through a plain sqlite3 connection (no write lock:
    the store's own engine begins every transaction IMMEDIATE); the first time each student's
    row was seen."""

    def __init__(self, path: Path, code: str) -> None:
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        self.code = code
        self.seen: dict[str, float] = {}  # token -> first seen (time.time())
        self.at: dict[str, float] = {}  # token -> the row's own `at` stamp
        self.opened: float | None = None
        self.settings_key = ""
        self.gaps: list[float] = []  # seconds between polls (this client's own lag included)

    async def run(self, stop: asyncio.Event) -> None:
        last = time.time()
        while not stop.is_set():
            self.poll()
            await asyncio.sleep(POLL_S)
            now = time.time()
            self.gaps.append(now - last)
            last = now

    def poll(self) -> None:
        now = time.time()
        if self.opened is None:
            row = self.db.execute("SELECT settings_key, opened FROM tasks WHERE code = ? AND "
                                  "task = ? AND state = 'open'", (self.code, TASK)).fetchone()
            if row is not None:
                self.settings_key, self.opened = row[0], now
            return
        for token, at in self.db.execute("SELECT token, at FROM answers WHERE code = ? AND "
                                         "task = ? AND settings_key = ?",
                                         (self.code, TASK, self.settings_key)):
            if token not in self.seen:
                self.seen[token] = now
                self.at[token] = at


# --- figures ----------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float:
    return load.percentile(values, q)


def spread_line(label: str, values: list[float]) -> str:
    if not values:
        return f"| {label} | 0 | | | | |"
    return (f"| {label} | {len(values)} | {pct(values, 50):.2f} s | {pct(values, 95):.2f} s "
            f"| {max(values):.2f} s | {statistics.mean(values):.2f} s |")


def cpu_by_replica(reps: dict[str, int]) -> dict[str, float]:
    return {r: load.cpu_seconds([p]) for r, p in reps.items()}


async def burst(name: str, url: str, reps: dict[str, int], timeout: float) -> load.Figures:
    """One of load.py's bursts through the balancer, in this event loop (the class's tabs keep
    polling beside it); CPU summed over the replicas."""
    chosen = load.bursts()[name]
    probe = load.speed_probe()
    pids = list(reps.values())
    cpu0 = sum(cpu_by_replica(reps).values())
    start_mb = sum(load.status_kb(p, "VmRSS") for p in load.process_tree(pids)) / 1024
    t0 = time.perf_counter()
    with load.rss_sampler(pids) as rss:
        results = await load.run_burst(chosen, url, timeout)
    wall = time.perf_counter() - t0
    cpu = sum(cpu_by_replica(reps).values()) - cpu0
    return load.Figures(chosen, results, wall, cpu, rss["peak_mb"], rss["hwm_mb"], start_mb,
                        probe, load.healthy(url))


async def bursts(label: str, url: str, reps: dict[str, int], timeout: float, rounds: int,
                 ) -> list[load.Figures]:
    """`same30` `rounds` times back to back, each labelled with the load average before it."""
    out = []
    for k in range(rounds):
        load_avg = os.getloadavg()[0]
        fig = await burst("same30", url, reps, timeout)
        fig.burst = _renamed(fig.burst, f"same30, {label} (" + (
            f"{k + 1}/{rounds}; " if rounds > 1 else "") + f"load average {load_avg:.1f})")
        out.append(fig)
        await asyncio.sleep(1)
    return out


def fragment_figures(tabs: list[Tab], since: float, until: float) -> tuple[int, list[float]]:
    """Fragment reruns sent in [since, until) and the round trips of all so far."""
    sent = sum(1 for t in tabs for s in t.fragment_sent if since <= s < until)
    return sent, [r for t in tabs for r in t.fragment_rtt]


async def scenario(args: argparse.Namespace, url: str, reps: dict[str, int], haproxy: list[int],
                   data: Path) -> list[str]:
    from lens.classroom.asking import class_settings  # noqa: PLC0415
    from lens.classroom.store import Store  # noqa: PLC0415
    from lens.settings import Settings  # noqa: PLC0415

    out: list[str] = []
    rows: list[load.Figures] = []
    rng = random.Random(args.seed)

    def say(line: str = "") -> None:
        out.append(line)
        print(line, file=sys.stderr, flush=True)

    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=load.ROOT,
                          capture_output=True, text=True).stdout.strip()
    say(f"# A live class of {args.students} through {args.replicas} replicas at {head} "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average "
        f"{os.getloadavg()[0]:.1f}, speed probe {load.speed_probe():.2f} s)")
    t0, cpu0 = time.time(), cpu_by_replica(reps)
    await asyncio.sleep(args.quiet)
    cpu1 = cpu_by_replica(reps)
    quiet = sum(cpu1.values()) - sum(cpu0.values())
    quiet_rate = quiet / (time.time() - t0)
    say(f"\nno tab open, {args.quiet:.0f} s: replicas' CPU {quiet_rate:.3f} s/s")
    if not args.skip_bursts:
        rows += await bursts("no class (before)", url, reps, args.timeout, args.rounds)
        say(load.table(rows[-args.rounds:], "before the class"))

    # the class and its students, through the store (as /class's buttons would)
    store = Store(f"sqlite:///{data / 'classes.sqlite'}")
    code, key = store.create_class(class_settings(Settings()), "overview")
    tokens = [store.join(code, f"bench-{i}", f"s{i}") for i in range(args.students)]
    students = [Tab(f"s{i}", url, "overview", urllib.parse.urlencode(
        {"class": code, "student": tok}), args.timeout) for i, tok in enumerate(tokens)]
    t_open = time.time()

    async def arrive(s: Tab, i: int) -> None:  # --stagger: the i-th of n arrives at i/n of it
        await asyncio.sleep(args.stagger * i / len(students))
        await s.open()

    await asyncio.gather(*(arrive(s, i) for i, s in enumerate(students)))
    opened = [s.first_done_s for s in students]
    split = {r: sum(1 for s in students if s.replica == r) for r in reps}
    when = "at once" if not args.stagger else f"one every {args.stagger / len(students):.2f} s"
    say(f"\n{args.students} students opened the overview {when} in "
        f"{time.time() - t_open:.1f} s: p50 {pct(opened, 50):.2f} s, p95 {pct(opened, 95):.2f}"
        f" s, max {max(opened):.2f} s; replicas {split}; fragment timers per tab "
        f"{statistics.mean(len(s.timers) for s in students):.1f}")

    # idle: the students wait, their fragments poll
    await asyncio.sleep(3)  # the open burst's tail
    t0, cpu0, own0 = time.time(), cpu_by_replica(reps), os.times()
    ha0 = load.cpu_seconds(haproxy)
    await asyncio.sleep(args.idle)
    t1, cpu1, own1 = time.time(), cpu_by_replica(reps), os.times()
    idle_s = t1 - t0
    per = {r: (cpu1[r] - cpu0[r]) / idle_s for r in reps}
    sent, _ = fragment_figures(students, t0, t1)
    rtt_idle = [r for s in students for r in s.fragment_rtt]
    say(f"\nidle {idle_s:.0f} s, {args.students} students polling: replicas' CPU "
        f"{sum(per.values()):.3f} s/s ({', '.join(f'{r} {v:.3f}' for r, v in per.items())}); "
        f"HAProxy {(load.cpu_seconds(haproxy) - ha0) / idle_s:.3f} s/s; this client "
        f"{(own1.user + own1.system - own0.user - own0.system) / idle_s:.3f} s/s; "
        f"{sent} fragment reruns sent ({sent / idle_s:.1f}/s; "
        f"{len(rtt_idle)} fragment runs finished since the tabs opened; "
        f"{sum(per.values()) / max(sent, 1) * idle_s * 1000:.1f} ms of CPU each, "
        f"{(sum(per.values()) - quiet_rate) / max(sent, 1) * idle_s * 1000:.1f} ms above the "
        f"no-tab {quiet_rate:.3f} s/s); "
        f"round trip p50 {pct(rtt_idle, 50) * 1000:.0f} ms, p95 {pct(rtt_idle, 95) * 1000:.0f} ms")
    idle_line = (sum(per.values()), per, sent / idle_s, pct(rtt_idle, 50), pct(rtt_idle, 95))

    if not args.skip_bursts:
        n_rtt = len(rtt_idle)
        sent_b, rtt_b = 0, []
        for _ in range(args.rounds):  # A/B: the same open tabs, their timers paused or not
            for s in students:
                s.paused = True
            await asyncio.sleep(2.5)  # the last polls answered
            rows += await bursts(f"the class's {args.students} tabs open, timers paused",
                                 url, reps, args.timeout, 1)
            for s in students:
                s.paused = False
            await asyncio.sleep(2.5)
            t_b = time.time()
            rows += await bursts(f"the class of {args.students} polling", url, reps,
                                 args.timeout, 1)
            sent, rtts = fragment_figures(students, t_b, time.time())
            sent_b, rtt_b = sent_b + sent, rtts[n_rtt:]
        say(load.table(rows[-2 * args.rounds:], "with the class: paused / polling, in turn"))
        say(f"during it: {sent_b} fragment reruns sent, round trip p50 "
            f"{pct(rtt_b, 50):.2f} s, p95 {pct(rtt_b, 95):.2f} s")

    # the teacher: the teacher link, "Open" on the overview's tokens task
    poller = Poller(data / "classes.sqlite", code)
    stop = asyncio.Event()
    polling = asyncio.create_task(poller.run(stop))
    teacher = Tab("teacher", url, "class",
                  urllib.parse.urlencode({"class": code, "teacher": key}), args.timeout)
    await teacher.open()
    say(f"\nteacher's /class opened in {teacher.first_done_s:.2f} s (replica "
        f"{teacher.replica}); its keys: {sorted(k for k in teacher.widget_ids if 'open' in k)}")
    open_key = f"class_open_{TEXT_ID}"
    try:  # its first run may not be the last (the key leaves the link)
        await teacher.until(lambda: open_key in teacher.widget_ids, 30)
    except TimeoutError:  # what the teacher's page said instead
        raise RuntimeError(f"no {open_key} on the teacher's page: errors {teacher.errors}, "
                           f"keys {sorted(teacher.widget_ids)}, texts "
                           f"{[b[:80] for _, b in teacher.texts]}") from None
    input_key = send_key = ""
    answers: dict[str, dict[str, float]] = {}

    async def student(s: Tab, i: int) -> None:
        nonlocal input_key, send_key
        await s.until(lambda: any(k.startswith(f"lesson_in_{TEXT_ID}_") for k in s.widget_ids)
                      and f"class_send_{TEXT_ID}" in s.widget_ids
                      and s.full_done == s.full_started)
        seen = time.time()
        key_in = next(k for k in s.widget_ids if k.startswith(f"lesson_in_{TEXT_ID}_"))
        input_key, send_key = key_in, f"class_send_{TEXT_ID}"
        await asyncio.sleep(rng.uniform(0, args.spread))  # reading, thinking
        value = 196 if i % 3 else (14 if i % 2 else 256)  # a histogram, not one bar
        await s.set_int(key_in, value)
        t_send = time.time()
        before = await s.click(send_key)
        await s.wait_full(before)
        t_done = time.time()
        answers[tokens[i]] = {"seen": seen, "send": t_send, "done": t_done,
                              "sent_text": s.saw("Sent:", t_send) or float("nan")}

    answering = [asyncio.create_task(student(s, i)) for i, s in enumerate(students)]
    t_click = time.time()
    before = await teacher.click(open_key)
    await teacher.wait_full(before)
    t_teacher_done = time.time()
    results = await asyncio.gather(*answering, return_exceptions=True)
    failed = [f"{students[i].name}: {type(r).__name__}: {r}" for i, r in enumerate(results)
              if isinstance(r, BaseException)]
    t_answered = time.time()
    deadline = time.time() + 30
    while len(poller.seen) < args.students and time.time() < deadline:
        await asyncio.sleep(POLL_S)
    t_all_stored = max(poller.seen.values()) if poller.seen else float("nan")
    want = f"{args.students} of {args.students} answered"
    deadline = time.time() + 30
    while teacher.saw(want, t_click) is None and time.time() < deadline:
        await asyncio.sleep(0.05)
    t_teacher_30 = teacher.saw(want, t_click) or float("nan")
    stop.set()
    await polling
    poller.db.close()

    follow = [a["seen"] - t_click for a in answers.values()]
    stored_poll = [poller.seen[t] - a["send"] for t, a in answers.items() if t in poller.seen]
    stored_at = [poller.at[t] - a["send"] for t, a in answers.items() if t in poller.at]
    shown = [a["sent_text"] - a["send"] for a in answers.values()]
    finished = [a["done"] - a["send"] for a in answers.values()]
    last_send = max(a["send"] for a in answers.values()) if answers else float("nan")
    say(f"\nthe teacher pressed Open at 0.00 s; the task was in the store at "
        f"{(poller.opened or float('nan')) - t_click:.2f} s (binding {poller.settings_key}), "
        f"the teacher's page rerun finished at {t_teacher_done - t_click:.2f} s; input key "
        f"{input_key}; {len(answers)} answers, {len(failed)} failed")
    say("\n| from → to | n | p50 | p95 | max | mean |\n|---|---|---|---|---|---|")
    say(spread_line("Open pressed → the student's card has the input (follow)", follow))
    say(spread_line("Send → the row in the store (poller, every 20 ms)", stored_poll))
    say(spread_line("Send → the row's own `at` stamp (the store's `answer` call)", stored_at))
    say(spread_line("the poller: time between two reads (its resolution)", poller.gaps))
    say(spread_line("Send → \"Sent\" shown (its delta)", shown))
    say(spread_line("Send → the student's rerun finished", finished))
    say(f"\nlast Send at {last_send - t_click:.2f} s; {len(poller.seen)}/{args.students} in "
        f"the store at {t_all_stored - t_click:.2f} s (last Send + "
        f"{t_all_stored - last_send:.2f} s); the teacher's tab showed \"{want}\" at "
        f"{t_teacher_30 - t_click:.2f} s (last row stored + {t_teacher_30 - t_all_stored:.2f} s:"
        f" its 2 s fragment); all students done at {t_answered - t_click:.2f} s")
    for line in failed[:5]:
        say(f"- {line}")
    stored = store.answers_to(code, TASK, poller.settings_key)
    say(f"the store's answers_to: {len(stored)} answers, values "
        f"{json.dumps(sorted({json.dumps(v) for v in stored}))}")

    errors = sorted({e for t in [*students, teacher] for e in t.errors})
    for tab in [*students, teacher]:
        await tab.close()
    store.close()
    if not args.skip_bursts:
        await asyncio.sleep(2)
        rows += await bursts("no class (after it closed)", url, reps, args.timeout,
                             args.rounds)
        say(load.table(rows[-args.rounds:], "after the class"))
        say("\n" + load.table(rows, "the bursts, through the balancer"))
    for e in errors[:8]:
        say(f"- tab error: {e}")
    say(f"\nsummary: answer → stored p95 {pct(stored_poll, 95):.2f} s (poller), "
        f"{pct(stored_at, 95):.2f} s (`at`); {args.students}/{args.students} in the store "
        f"{t_all_stored - t_click:.2f} s "
        f"after Open, on the teacher's page {t_teacher_30 - t_click:.2f} s; idle CPU "
        f"{idle_line[0]:.3f} s/s for {args.students} students "
        f"({idle_line[2]:.1f} fragment reruns/s)")
    return out


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:  # gone since the listing
        return ""


def _renamed(b: load.Burst, what: str) -> load.Burst:
    return load.Burst(b.name, what, b.visits, b.in_a_row)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--idle", type=float, default=60.0, help="seconds of idle polling")
    ap.add_argument("--spread", type=float, default=8.0,
                    help="each student answers after a random pause in [0, SPREAD] s")
    ap.add_argument("--seed", type=int, default=25)
    ap.add_argument("--stagger", type=float, default=0.0,
                    help="the students arrive one after another over this many seconds (0: all "
                    "at once, so their 2 s timers tick in step; 2: their ticks spread evenly)")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--skip-bursts", action="store_true", help="no same30 bursts")
    ap.add_argument("--rounds", type=int, default=3,
                    help="same30 bursts before the class, beside it, and after it")
    ap.add_argument("--quiet", type=float, default=10.0,
                    help="seconds of the replicas' CPU with no tab open, first")
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    with replicas.fresh_class_folders("classroom-") as (data, run_dir):
        with replicas.balanced(args.replicas, run_dir) as (url, pid):
            reps = replicas.replica_pids(pid)
            haproxy = [p for p in load.process_tree([pid])
                       if p not in reps.values() and "haproxy" in _cmdline(p)]
            lines = asyncio.run(scenario(args, url, reps, haproxy, data))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
