"""A lecture hall of 200 (issue 51, item 8): N students join a class through
`scripts/serve --replicas 2` over R seconds, idle, follow the teacher's Open, and answer while
one replica is SIGKILLed.

    .venv/bin/python -m benchmarks.class200                       # 200 students over 30 s
    .venv/bin/python -m benchmarks.class200 --students 20 --ramp 10 --seed 51

What is real and what is not (as in `classroom.py`, `class30.py` and `soak.py`, whose protocol
client this is: `classroom.Tab`, `soak.LiveTab` and `soak.Student`):
- real: `scripts/serve --replicas N` on a fresh data folder (the SQLite store every replica
  opens), started on a free port and stopped at the end; every student joins through the app —
  its tab opens the join link (`/class?class=CODE`, the form with the code filled in) and
  presses Join (the app's callback, `Store.join`); the page then carries the student's token
  in its link; the class's changes are pushed to its cards (a fragment run the server begins,
  `lens/classroom/ui/push.py`), with a 10 s fallback timer; the teacher's tab (the
  teacher link) presses Open; each answer is the number typed and Send pressed in the
  student's tab, acknowledged once the page shows "Sent: VALUE" (the store's row, after the
  commit);
- created through the store: the class itself (what /class's Start does);
- emulated: each browser tab, by the protocol client (no JavaScript; the fragment timers as
  the frontend runs them). After a replica dies a tab does what the frontend does (soak.py):
  /_stcore/health through the balancer until answered, then a new websocket and the page again.

The sequence: the machine (CPU, cores, load average, the speed probe); the join ramp (student
i opens the join link at i × R / N s); --idle s with nothing happening (each replica's CPU from
/proc/PID/stat, per second and per student it serves; the teacher's tab is not open yet); the
teacher's tab opens and presses Open on the overview's "how many tokens" task: the click →
each student's tab showing the Send button (the follow), and the replicas' CPU during it; then
every student answers after a random pause in [0, --spread] s and one replica (seeded choice)
is SIGKILLed --kill-at s after the first answers began: answers acknowledged, each
acknowledged answer looked up in the store (0 lost), and the time from the kill until every
student whose page it closed has a working page again (a new session showing the card).
Figures, not pass/fail; the targets of issue 51 are printed beside them.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks import load, replicas, soak
from benchmarks.classroom import TASK, TEXT_ID, Tab
from benchmarks.soak import LOST, GoneError, LiveTab, Student, lost_answers

JOIN_KEY = "class_join_button"
SEND_KEY = f"class_send_{TEXT_ID}"
OPEN_KEY = f"class_open_{TEXT_ID}"
TARGET_CARD_S = 1.0  # issue 51: Open → every student's card, p95
TARGET_BACK_S = 10.0  # issue 51: all students working again after a kill


# --- the pure parts -----------------------------------------------------------------------------
def ramp_schedule(n: int, seconds: float) -> list[float]:
    """When each of n students opens the join link: evenly spaced over `seconds` (the first at
    0, the last at seconds × (n − 1) / n: one every seconds / n)."""
    return [i * seconds / n for i in range(n)] if n > 0 else []


def stats(values: list[float]) -> tuple[float, float, float]:
    """(p50, p95, max) by nearest rank (`load.percentile`); NaN when there are none."""
    if not values:
        return float("nan"), float("nan"), float("nan")
    return load.percentile(values, 50), load.percentile(values, 95), max(values)


def stats_line(values: list[float], n: int | None = None) -> str:
    count = f"{len(values)}/{n}, " if n is not None else ""
    if not values:
        return f"{count}none"
    p50, p95, top = stats(values)
    return f"{count}p50 {p50:.2f} s, p95 {p95:.2f} s, max {top:.2f} s"


def per_student(cpu_s: dict[str, float], seconds: float, students: dict[str, int]
                ) -> dict[str, float]:
    """Each replica's CPU-seconds per second divided by the students it serves (NaN where it
    serves none)."""
    return {r: (cpu_s[r] / seconds / students[r]) if students.get(r) else float("nan")
            for r in cpu_s}


def card_cost(cpu_s: float, idle_rate: float, seconds: float, n: int) -> float:
    """CPU-seconds per card update: what the replicas used during the follow beyond the idle
    polling's rate over the same seconds, divided by the students."""
    return max(0.0, cpu_s - idle_rate * seconds) / n if n else float("nan")


def cores_bound(n: int, per_card_s: float, cores: int) -> float:
    """The fastest all n cards can follow if each costs `per_card_s` CPU on `cores` cores."""
    return n * per_card_s / cores


def machine_line() -> str:
    """CPU model, cores, the load average and the speed probe (load.py's) now."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        cpu = "?"
    one, five, fifteen = os.getloadavg()
    return (f"{cpu}, {os.cpu_count()} cores, load average {one:.1f} / {five:.1f} / "
            f"{fifteen:.1f}, speed probe {load.speed_probe():.2f} s")


# --- the class ----------------------------------------------------------------------------------
@dataclass
class Joined:
    """One student's join: its tab, the seconds from opening the link to the joined page."""

    i: int
    tab: LiveTab | None
    seconds: float
    refused: str = ""


@dataclass
class Hall(Student):
    """A soak.py student that also keeps when its page worked again after each loss, and
    why it was lost ("moved": its websocket closed; "stuck": a run did not come back)."""

    back_at: list[tuple[float, str]] = field(default_factory=list)

    async def connect(self, since: float | None, cause: str = "moved") -> None:
        await super().connect(since, cause)
        if since is not None:
            self.back_at.append((time.time(), cause))


async def join(i: int, url: str, code: str, delay: float, timeout: float) -> Joined:
    """Open the join link at `delay` s, press Join; joined once the page's link carries the
    student's token."""
    await asyncio.sleep(delay)
    tab = LiveTab(f"s{i}", url, "class", urllib.parse.urlencode({"class": code}), timeout)
    t0 = time.time()
    try:
        await tab.open()
        await tab.until(lambda: JOIN_KEY in tab.widget_ids, 60)
        await tab.wait_full(await tab.click(JOIN_KEY))
        await tab.until(lambda: "student=" in tab.query and tab.full_done == tab.full_started,
                        60)
    except (GoneError, *LOST) as err:
        said = [body for _, body in tab.texts if "join" in body.lower()][-1:]
        await tab.close()
        return Joined(i, None, time.time() - t0, f"{type(err).__name__} {err} {said}"[:200])
    return Joined(i, tab, time.time() - t0)


def cpu_of(pids: dict[str, int]) -> dict[str, float]:
    return {r: load.cpu_seconds([p]) for r, p in pids.items()}


async def scenario(args: argparse.Namespace, url: str, serve_pid: int, data: Path
                   ) -> list[str]:
    from lens.classroom.asking import class_settings  # noqa: PLC0415
    from lens.classroom.store import Store  # noqa: PLC0415
    from lens.settings import Settings  # noqa: PLC0415

    out: list[str] = []

    def say(text: str = "") -> None:
        out.append(text)
        print(text, file=sys.stderr, flush=True)

    n = args.students
    rng = random.Random(args.seed)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=load.ROOT,
                          capture_output=True, text=True).stdout.strip()
    say(f"# A lecture hall of {n}: {args.replicas} replicas, a join ramp over {args.ramp:g} s, "
        f"at {head or '?'} ({time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; seed "
        f"{args.seed})\n\nmachine at the start: {machine_line()}")
    store = Store(f"sqlite:///{data / 'classes.sqlite'}")
    code, key = store.create_class(class_settings(Settings()), "overview")
    reps = replicas.replica_pids(serve_pid)

    # --- 1. the join ramp
    t_ramp = time.time()
    joins = await asyncio.gather(*(join(i, url, code, d, args.timeout)
                                   for i, d in enumerate(ramp_schedule(n, args.ramp))))
    ramp_s = time.time() - t_ramp
    ok = [j for j in joins if j.tab is not None]
    refused = [j for j in joins if j.tab is None]
    in_store = len(store.nicknames(code, key))
    say(f"\n## join ramp\n\n{len(ok)}/{n} joined ({in_store} students in the store) in "
        f"{ramp_s:.1f} s; open link → joined: {stats_line([j.seconds for j in ok], n)}; "
        f"refused or failed: {len(refused)}")
    for j in refused[:5]:
        say(f"- s{j.i}: {j.refused}")
    students: list[Hall] = []
    for j in ok:
        tab = j.tab
        token = urllib.parse.parse_qs(tab.query).get("student", [""])[0]
        s = Hall(j.i, token, url, urllib.parse.urlencode({"class": code, "student": token}),
                 args.timeout, cookies=tab.cookies)
        s.tab = tab
        s.sessions.append(tab.replica)
        students.append(s)
    for s in students:  # --pushed-only: the fallback timers send nothing (a card shown
        s.tab.paused = args.pushed_only  # is a push's)
    on = {r: sum(1 for s in students if s.tab.replica == r) for r in reps}
    say(f"sessions per replica: {on}")

    # --- 2. idle
    await asyncio.sleep(3)  # the last joins' runs settle
    sent0 = sum(len(s.tab.fragment_sent) for s in students)
    pushed_idle = sum(s.tab.pushed for s in students)
    c0, t0 = cpu_of(reps), time.time()
    await asyncio.sleep(args.idle)
    c1, t1 = cpu_of(reps), time.time()
    idle_s = t1 - t0
    idle_cpu = {r: c1[r] - c0[r] for r in reps}
    idle_rate = sum(idle_cpu.values()) / idle_s
    reruns = (sum(len(s.tab.fragment_sent) for s in students) - sent0) / idle_s
    pushed_idle = sum(s.tab.pushed for s in students) - pushed_idle
    each = per_student(idle_cpu, idle_s, on)
    say(f"\n## idle ({idle_s:.1f} s, nothing happening, the teacher's tab not open)\n")
    for r in reps:
        say(f"- {r}: {idle_cpu[r] / idle_s:.3f} CPU-s/s for {on[r]} students = "
            f"{1000 * each[r]:.2f} ms/s per student")
    say(f"- both: {idle_rate:.3f} CPU-s/s for {len(students)} students = "
        f"{1000 * idle_rate / max(1, len(students)):.2f} ms/s per student; "
        f"{reruns:.1f} fallback fragment reruns asked per second; runs pushed: {pushed_idle}")

    # --- 3. Open → every student's card
    teacher = Tab("teacher", url, "class", urllib.parse.urlencode(
        {"class": code, "teacher": key}), args.timeout)
    await teacher.open()
    await teacher.until(lambda: OPEN_KEY in teacher.widget_ids
                        and teacher.full_done == teacher.full_started, 60)
    await asyncio.sleep(2)
    pushed0 = {s.i: s.tab.pushed for s in students}
    c0, mine0 = cpu_of(reps), time.process_time()
    ro = sqlite3.connect(f"file:{data / 'classes.sqlite'}?mode=ro", uri=True,
                         isolation_level=None)
    t_open = time.time()
    before = await teacher.click(OPEN_KEY)
    t_teacher: list[float] = []
    t_stored, c_stored = 0.0, c0

    async def teacher_done() -> None:
        await teacher.wait_full(before)
        t_teacher.append(time.time())

    teacher_run = asyncio.create_task(teacher_done())

    def shown(s: Hall) -> float | None:
        seen = s.tab.first_seen.get(SEND_KEY)
        return seen if seen is not None and seen >= t_open else None

    deadline = t_open + args.wait
    while time.time() < deadline and not all(shown(s) for s in students):
        if not t_stored and ro.execute("SELECT 1 FROM tasks WHERE code = ? AND task = ? AND "
                                       "state = 'open'", (code, TASK)).fetchone():
            t_stored, c_stored = time.time(), cpu_of(reps)
        await asyncio.sleep(0.05)
    ro.close()
    t_all = max((shown(s) for s in students if shown(s)), default=time.time())
    c1, mine1 = cpu_of(reps), time.process_time()
    await teacher_run
    follow = [shown(s) - t_open for s in students if shown(s)]
    after_store = [shown(s) - t_stored for s in students if shown(s)] if t_stored else []
    follow_cpu = sum(c1[r] - c0[r] for r in reps)
    window = t_all - t_open
    # the cards' cost: from the task open in the store to the last card shown
    per_card = card_cost(sum(c1[r] - c_stored[r] for r in reps), idle_rate,
                         t_all - (t_stored or t_open), len(students))
    bound = cores_bound(n, per_card, os.cpu_count() or 2)
    p95 = stats(follow)[1]
    met = len(follow) == len(students) and p95 <= TARGET_CARD_S
    say(f"\n## Open → the card (the Send button shown)\n\n{stats_line(follow, len(students))}; "
        f"all shown {window:.2f} s after the click; the click → the task open in the store "
        f"{t_stored - t_open:.2f} s (the teacher's run finished at "
        f"{t_teacher[0] - t_open:.2f} s); the store → the card: {stats_line(after_store)}")
    say(f"the replicas used {follow_cpu:.2f} CPU-s in those {window:.2f} s "
        f"({follow_cpu / window:.2f} of the {os.cpu_count()} cores); from the store's open to "
        f"the last card, {per_card * 1000:.1f} ms per card update beyond the idle polling; "
        f"{n} × that ÷ {os.cpu_count()} cores = {bound:.2f} s; the {n} emulated browsers "
        f"(this process, on the same cores) used {mine1 - mine0:.2f} CPU-s meanwhile")
    for s in [s for s in students if not shown(s)][:3]:  # what such a tab knows
        say(f"- s{s.i}, no card, session {s.tab.session_id} on /{s.tab.on_page} "
            f"({s.tab.query}), runs pushed {s.tab.pushed - pushed0[s.i]}: "
            f"{s.tab.state()[-2500:]}; widgets "
            f"{sorted(k for k in s.tab.widget_ids if k.startswith(('class', 'lesson')))}")
    by_push = sum(1 for s in students if shown(s) and s.tab.pushed > pushed0[s.i])
    say(f"cards shown after a run the server pushed (no timer of the tab asked): "
        f"{by_push}/{len(students)}")
    say(f"target p95 ≤ {TARGET_CARD_S:g} s: {'met' if met else 'NOT met'}")
    await teacher.close()

    for s in students:
        s.tab.paused = False

    # --- 4. answers, one replica SIGKILLed mid-vote
    values = [100]
    t_start = soak.STARTED[0] = time.time()  # soak's traces count from it
    t_kill_box: list[float] = []
    end_at = t_start + args.kill_at + args.after

    async def vote(s: Hall) -> None:
        pause = rng.uniform(0, args.spread)
        try:
            await s.tab.until(lambda: False, pause)
        except TimeoutError:
            pass
        except GoneError as err:
            await s.lost(err)
        for _ in range(3):
            value = values[0]
            values[0] += 1
            try:
                if await s.answer(value):
                    break
            except (GoneError, *LOST) as err:
                await s.lost(err)
        while time.time() < end_at:  # the page stays open: a kill closes it, it comes back
            try:
                await s.tab.until(lambda: False, max(0.1, end_at - time.time()))
            except TimeoutError:
                pass
            except GoneError as err:
                await s.lost(err)

    async def kill() -> tuple[str, int]:
        await asyncio.sleep(args.kill_at)
        now = replicas.replica_pids(serve_pid)
        name = rng.choice(sorted(now))
        held = sum(1 for s in students if s.tab is not None and s.tab.replica == name
                   and s.tab.closed_at is None)
        os.kill(now[name], signal.SIGKILL)
        t_kill_box.append(time.time())
        return name, held

    acked_before = [0]

    async def count_at_kill() -> None:
        while not t_kill_box:
            await asyncio.sleep(0.01)
        acked_before[0] = sum(len(s.acked) for s in students)

    killed, counted, *_ = await asyncio.gather(kill(), count_at_kill(),
                                               *(vote(s) for s in students))
    del counted
    t_kill = t_kill_box[0]
    lost, rows = lost_answers(store, code, students)
    sent = sum(len(s.sent) for s in students)
    acked = sum(len(s.acked) for s in students)
    back = {cause: [max(t for t, c in s.back_at if t > t_kill and c == cause) - t_kill
                    for s in students if any(t > t_kill and c == cause for t, c in s.back_at)]
            for cause in ("moved", "stuck")}
    working = sum(1 for s in students if s.tab is not None and s.tab.closed_at is None
                  and s.tab.card_ready())
    say(f"\n## answering, {killed[0]} SIGKILLed {t_kill - t_start:.1f} s after the answers "
        f"began (it held {killed[1]} students' pages)\n")
    say(f"answers sent {sent}, acknowledged {acked} ({acked_before[0]} before the kill), never "
        f"acknowledged {sent - acked}; students with an acknowledged answer "
        f"{sum(1 for s in students if s.acked)}/{len(students)}; rows in the store {rows}")
    say(f"**acknowledged answers lost: {len(lost)}**")
    for line in lost[:10]:
        say(f"- {line}")
    closed = sum(s.disconnects for s in students)
    moved, stuck_back = back["moved"], back["stuck"]
    say(f"pages whose websocket closed under them (the kill): {closed}; of these students, "
        f"{len(moved)} working again (a new session showing the card), the kill → working "
        f"again: {stats_line(moved)}; target all back ≤ {TARGET_BACK_S:g} s: "
        f"{'met' if moved and max(moved) <= TARGET_BACK_S else 'NOT met' if moved else '-'}")
    say(f"students whose answer got no finished run within {args.timeout:g} s on an open "
        f"websocket (stuck; then a new session): {len(stuck_back)}; the kill → working again: "
        f"{stats_line(stuck_back)}")
    every = moved + stuck_back
    say(f"the kill → all {len(students)} students working again: "
        f"{max(every) if every else 0.0:.2f} s")
    say(f"pages working at the end (open, the card shown): {working}/{len(students)}")
    kinds: dict[str, int] = {}
    for s in students:
        for e in s.errors:
            kinds[e.split(":")[0]] = kinds.get(e.split(":")[0], 0) + 1
    say(f"client errors by kind: {kinds or 'none'}")
    for line in sorted({e[:160] for s in students for e in s.errors})[:6]:
        say(f"- {line}")
    stuck = [line for s in students for line in s.stuck]
    for line in stuck[:3]:
        say(f"- stuck: {line[:300]}")
    for s in students:
        await s.tab.close()
    store.close()
    say(f"\nmachine at the end: {machine_line()}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--ramp", type=float, default=30.0, help="the joins spread over R s")
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--idle", type=float, default=20.0, help="seconds of idle measured")
    ap.add_argument("--spread", type=float, default=10.0,
                    help="each student answers after a random pause in [0, SPREAD] s")
    ap.add_argument("--kill-at", type=float, default=5.0,
                    help="the kill, this many seconds after the answers began")
    ap.add_argument("--after", type=float, default=20.0,
                    help="the pages stay open this long after the kill")
    ap.add_argument("--wait", type=float, default=120.0, help="at most this long for the follow")
    ap.add_argument("--seed", type=int, default=51)
    ap.add_argument("--pushed-only", action="store_true",
                    help="the students' fallback timers send nothing until the answers")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="a page's run that takes longer counts as stuck")
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    with replicas.fresh_class_folders("class200-") as (data, run_dir):
        with replicas.balanced(args.replicas, run_dir) as (url, pid):
            lines = asyncio.run(scenario(args, url, pid, data))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
