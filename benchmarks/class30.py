"""A scripted class of 30 through two votes (issue 37): a teacher and 30 students on
`scripts/serve --replicas 2`, the students' answers drawn from a seeded script, the task driven
open → close → vote 2 → reveal; afterwards every answer and the transitions checked against
the script, and how fast the students' pages followed each teacher action.

    .venv/bin/python -m benchmarks.class30                  # 30 students, 2 replicas
    .venv/bin/python -m benchmarks.class30 --right1 0.4 --right2 0.8 --seed 37

What is real and what is not:
- real: `scripts/serve --replicas N` on a fresh data folder (the SQLite store every replica
  opens); the teacher's tab and the 30 students' tabs are protocol-client sessions through the
  balancer (`benchmarks.classroom.Tab`: the page, the websocket, the fragments' 2 s timers);
  every teacher action is a click in the teacher's tab (Open, Close vote — discuss, Open vote
  2, Reveal: the app's own callbacks, the teacher key checked by the store), and every answer
  is typed and sent in the student's tab (the number, then Send: the app's own validation and
  store write), once that tab shows the vote open, after a random pause;
- created through the store (as the /class page's Start and Join would): the class and the
  students' tokens.
The follow: the teacher's action → each student's tab showing the new state (the Send button,
"Discuss ·", "Vote 2 ·", "Your answer:"), as its page's 2 s follower fragment notices it; so
a follow is bounded below by that polling. Figures, and a check (exit status 1 on a mismatch).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sqlite3
import sys
import time
import urllib.parse
from pathlib import Path

from benchmarks import load, replicas
from benchmarks.classroom import TASK, TEXT_ID, Tab

RIGHT = [196.0]  # overview.tokens as the store keeps it: 14 × 14 patches
WRONG = ([14.0], [256.0], [197.0], [49.0])


def draw_script(n: int, right1: float, right2: float, flip: float,
                seed: int) -> list[tuple[bool, bool]]:
    """(right at vote 1, right at vote 2) per student: vote 1 right with probability `right1`;
    a right one turns wrong with probability `flip`, a wrong one turns right with the
    probability that makes `right2` the expected share right at vote 2."""
    assert 0 <= right1 < 1 and 0 <= right2 <= 1 and 0 <= flip <= 1
    to_right = min(1.0, max(0.0, (right2 - right1 * (1 - flip)) / (1 - right1)))
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        first = rng.random() < right1
        second = (rng.random() >= flip) if first else (rng.random() < to_right)
        out.append((first, second))
    return out


def script_values(script: list[tuple[bool, bool]], seed: int) -> list[tuple[list, list]]:
    """The stored values (vote 1, vote 2) per student: RIGHT, or one of WRONG drawn."""
    rng = random.Random(seed + 1)
    return [(RIGHT if a else rng.choice(WRONG), RIGHT if b else rng.choice(WRONG))
            for a, b in script]


def expected(script: list[tuple[bool, bool]]) -> tuple[dict[str, int], float, float]:
    """The script's transition counts (`tally.TRANSITIONS` labels) and shares right."""
    counts = {"right→right": 0, "wrong→right": 0, "right→wrong": 0, "wrong→wrong": 0}
    for a, b in script:
        counts[f"{'right' if a else 'wrong'}→{'right' if b else 'wrong'}"] += 1
    n = len(script)
    return counts, sum(a for a, _ in script) / n, sum(b for _, b in script) / n


def line(label: str, values: list[float], n: int) -> str:
    if not values:
        return f"| {label} | 0/{n} | | | |"
    return (f"| {label} | {len(values)}/{n} | {load.percentile(values, 50):.2f} s | "
            f"{load.percentile(values, 95):.2f} s | {max(values):.2f} s |")


async def scenario(args: argparse.Namespace, url: str, data: Path) -> tuple[list[str], bool]:
    from lens.classroom.asking import class_settings  # noqa: PLC0415
    from lens.classroom.store import Store  # noqa: PLC0415
    from lens.classroom.tally import transitions  # noqa: PLC0415
    from lens.settings import Settings  # noqa: PLC0415

    out: list[str] = []

    def say(text: str = "") -> None:
        out.append(text)
        print(text, file=sys.stderr, flush=True)

    script = draw_script(args.students, args.right1, args.right2, args.flip, args.seed)
    values = script_values(script, args.seed)
    counts, share1, share2 = expected(script)
    say(f"# A scripted class of {args.students} through {args.replicas} replicas "
        f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; seed {args.seed}; load "
        f"average {os.getloadavg()[0]:.1f})\n\nscript: {counts}, right {share1:.2f} → "
        f"{share2:.2f}")
    db = data / "classes.sqlite"
    store = Store(f"sqlite:///{db}")
    code, key = store.create_class(class_settings(Settings()), "overview")
    tokens = [store.join(code, f"bench-{i}", f"s{i}") for i in range(args.students)]
    students = [Tab(f"s{i}", url, "overview", urllib.parse.urlencode(
        {"class": code, "student": tok}), args.timeout) for i, tok in enumerate(tokens)]
    await asyncio.gather(*(s.open() for s in students))
    teacher = Tab("teacher", url, "class",
                  urllib.parse.urlencode({"class": code, "teacher": key}), args.timeout)
    await teacher.open()
    open_key = f"class_open_{TEXT_ID}"
    await teacher.until(lambda: open_key in teacher.widget_ids, 30)
    await asyncio.sleep(2)
    send_key = f"class_send_{TEXT_ID}"
    rng = random.Random(args.seed + 2)
    follows: dict[str, list[float]] = {}
    skey = ""

    def inputs(s: Tab) -> list[str]:
        return [k for k in s.widget_ids if k.startswith(f"lesson_in_{TEXT_ID}_")]

    async def answer(i: int, vote: int) -> None:
        """The student's tab: the vote's number typed in, then Send (as a browser would)."""
        s = students[i]
        await s.until(lambda: inputs(s) and send_key in s.widget_ids
                      and s.full_done == s.full_started, 60)
        await asyncio.sleep(rng.uniform(0, args.spread))  # reading, thinking
        await s.set_int(inputs(s)[0], int(values[i][vote - 1][0]))
        await s.wait_full(await s.click(send_key))

    async def press(key_: str) -> float:
        """A teacher's button, once the teacher's page shows it; the time of the press."""
        await teacher.until(lambda: key_ in teacher.widget_ids
                            and teacher.full_done == teacher.full_started, 60)
        t0 = time.time()
        await teacher.wait_full(await teacher.click(key_))
        return t0

    async def follow(name: str, t0: float, seen) -> list[float]:  # noqa: ANN001
        """Until every student's tab shows the new state (or --wait s); seconds after t0."""
        deadline = time.time() + args.wait
        while time.time() < deadline and not all(seen(s, t0) for s in students):
            await asyncio.sleep(0.05)
        got = [seen(s, t0) - t0 for s in students if seen(s, t0)]
        follows[name] = got
        return got

    # open: a click in the teacher's tab
    t_open = time.time()
    await teacher.click(open_key)
    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    while not skey and time.time() < t_open + 30:
        row = ro.execute("SELECT settings_key FROM tasks WHERE code = ? AND task = ? AND "
                         "state = 'open'", (code, TASK)).fetchone()
        skey = row[0] if row else ""
        await asyncio.sleep(0.02)
    ro.close()
    await follow("Open (click in the teacher's tab) → Send button shown", t_open,
                 lambda s, t0: s.first_seen.get(send_key) if s.first_seen.get(
                     send_key, 0) >= t0 else None)
    await asyncio.gather(*(answer(i, 1) for i in range(args.students)))
    stored1 = len(store.answers_to(code, TASK, skey, 1))
    for name, button, text in (("Close vote (click) → \"Discuss ·\"", "close", "Discuss · "),
                               ("Open vote 2 (click) → \"Vote 2 ·\"", "vote2", "Vote 2 · ")):
        t0 = await press(f"class_{button}_{TEXT_ID}")
        await follow(name, t0, lambda s, t0, text=text: s.saw(text, t0))
    await asyncio.gather(*(answer(i, 2) for i in range(args.students)))
    t0 = await press(f"class_reveal_{TEXT_ID}")
    await follow("Reveal (click) → \"Your answer:\"", t0, lambda s, t0: s.saw("Your answer:", t0))

    rows = store.vote_rows(code, key, TASK, skey)
    got = transitions([(a, b) for _, a, b in rows], lambda v: v == RIGHT)
    want_pairs = sorted(map(str, values))
    have_pairs = sorted(str((a, b)) for _, a, b in rows)
    ok = (len(rows) == args.students and have_pairs == want_pairs and got.counts == counts
          and got.right_1 == share1 and got.right_2 == share2)
    say(f"\nstored: vote 1 {stored1}, vote_rows {len(rows)} "
        f"({sum(a is not None and b is not None for _, a, b in rows)} with both votes); "
        f"transitions {got.counts}, right {got.right_1:.2f} → {got.right_2:.2f}; "
        f"the script's: {'equal' if ok else 'MISMATCH'}")
    say("\n| teacher action → the student's tab shows it | n | p50 | p95 | max |\n"
        "|---|---|---|---|---|")
    for name, got_s in follows.items():
        say(line(name, got_s, args.students))
        ok = ok and len(got_s) == args.students
    errors = sorted({e for t in [*students, teacher] for e in t.errors})
    for e in errors[:8]:
        say(f"- tab error: {e}")
    say(f"replicas: {sorted({s.replica for s in students})}; tab errors {len(errors)}")
    for tab in [*students, teacher]:
        await tab.close()
    store.close()
    return out, ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--replicas", type=int, default=2)
    ap.add_argument("--right1", type=float, default=0.4, help="P(right) at vote 1")
    ap.add_argument("--right2", type=float, default=0.8, help="expected share right at vote 2")
    ap.add_argument("--flip", type=float, default=0.1, help="P(right → wrong)")
    ap.add_argument("--seed", type=int, default=37)
    ap.add_argument("--spread", type=float, default=4.0,
                    help="each student answers after a random pause in [0, SPREAD] s")
    ap.add_argument("--wait", type=float, default=30.0, help="at most this long per follow")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args(argv)
    with replicas.fresh_class_folders("class30-") as (data, run_dir):
        with replicas.balanced(args.replicas, run_dir) as (url, _pid):
            lines, ok = asyncio.run(scenario(args, url, data))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
