"""Replicas behind the balancer against one process: the bursts of benchmarks/load.py through
`scripts/serve --replicas N`.

    .venv/bin/python -m benchmarks.replicas                      # N = 1 and 2; same30, own10
    .venv/bin/python -m benchmarks.replicas --replicas 1,2,3 --rounds 2 same30 own20

For each N and each burst a fresh `scripts/serve --replicas N` is started (HAProxy in front for
N = 1 too, so only the number of processes differs), waited on until every replica is healthy
behind the balancer and the whole has gone idle (start-up warming done), then the burst runs
through the balancer: each headless session keeps the SERVERID cookie the balancer sets, so its
websocket and its `/media/…` images go to its replica (a 404 there counts as a failure). CPU
seconds and peak RSS are summed over the whole (replicas and HAProxy); the share of CPU each
replica took shows how the balancer spread the sessions, and the machine's load average before
each burst says how busy the cores were with other work (a second replica can only help when a
core is free). The runs of one burst with each N follow one another (and `--rounds` repeats
them) so that the others' load changes them alike. Prints load.py's table for each run and a
table of the speed-up over the fewest replicas. Figures, not pass/fail: the machines here are
shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from benchmarks import load  # the bursts, the client, the figures

ROOT = Path(__file__).resolve().parent.parent
SERVE = ROOT / "scripts" / "serve"
READY_S = 120  # bounded wait for /_balancer/ready
STOP_S = 20


def ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_balancer/ready", timeout=2) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def supervised_pids(serve_pid: int) -> dict[str, int]:
    """{"r1": pid, …, "haproxy": pid}: the processes scripts/serve runs now (it becomes
    supervisord, whose children they are; a restarted one has a new pid). A replica is named
    by its port in the run folder's haproxy.cfg (`server rK 127.0.0.1:PORT`), the run folder
    being where supervisord's configuration is."""
    try:
        argv = Path(f"/proc/{serve_pid}/cmdline").read_bytes().decode().split("\0")
        conf = Path(argv[argv.index("-c") + 1])
        cfg = (conf.parent if conf.is_absolute() else ROOT / conf.parent) / "haproxy.cfg"
        names = {m.group(2): m.group(1) for m in re.finditer(
            r"^\s*server (r\d+) [^:\s]+:(\d+) ", cfg.read_text(), flags=re.M)}
    except (OSError, ValueError, IndexError):  # not (yet) supervisord
        return {}
    out = {}
    for pid in load.process_tree([serve_pid]):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "--server.port" in args:
            name = names.get(args[args.index("--server.port") + 1])
            if name:
                out[name] = pid
        elif args and Path(args[0]).name == "haproxy" and "-db" in args:
            out["haproxy"] = pid
    return dict(sorted(out.items()))


def replica_pids(serve_pid: int) -> dict[str, int]:
    """{"r1": pid, …}: the app processes scripts/serve runs now."""
    return {k: v for k, v in supervised_pids(serve_pid).items() if k != "haproxy"}


@contextmanager
def balanced(replicas: int, run_dir: Path) -> Iterator[tuple[str, int]]:
    """`scripts/serve --replicas N` on a free port; (URL, its pid) once ready and idle."""
    port = load.free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(SERVE), "--replicas", str(replicas), "--port", str(port),
           "--python", sys.executable, "--run-dir", str(run_dir)]
    with open(run_dir / "serve.log", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + READY_S
        while not ready(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"scripts/serve did not get ready: see {run_dir}")
            time.sleep(0.5)
        load.wait_idle([proc.pid])
        yield url, proc.pid
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=STOP_S)


@contextmanager
def fresh_class_folders(prefix: str) -> Iterator[tuple[Path, Path]]:
    """A temporary (data folder, run folder) for a class's benchmark: the data folder is where
    scripts/serve's replicas (which inherit the environment) keep the class's SQLite store,
    never a configured ENCODER_LENS_CLASS_DB."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        data, run_dir = Path(tmp) / "data", Path(tmp) / "run"
        data.mkdir()
        run_dir.mkdir()
        os.environ["ENCODER_LENS_DATA"] = str(data)
        os.environ.pop("ENCODER_LENS_CLASS_DB", None)
        yield data, run_dir


@dataclass
class Run:
    """One burst against one scripts/serve."""

    round: int
    replicas: int
    fig: load.Figures
    load_avg: float  # the machine's 1-minute load average before the burst
    split: str  # each replica's share of the CPU the replicas used


def p(fig: load.Figures, q: float) -> float:
    return load.percentile([r.finish_s for r in fig.results], q)


def speedup(runs: list[Run]) -> str:
    """Every run against the run with the fewest replicas of the same burst and round (times
    faster: above 1 is better)."""
    base = {}
    for r in sorted(runs, key=lambda r: r.replicas, reverse=True):
        base[(r.round, r.fig.burst.name)] = r.fig
    out = ["| round | burst | replicas | p50 | p95 | wall | CPU s / session | peak RSS "
           "| CPU split | load avg | speed-up p50 / p95 / wall |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in runs:
        f, b = r.fig, base[(r.round, r.fig.burst.name)]
        out.append(f"| {r.round} | {f.burst.name} | {r.replicas} | {p(f, 50):.2f} s "
                   f"| {p(f, 95):.2f} s | {f.wall_s:.1f} s | {f.cpu_s / len(f.results):.2f} "
                   f"| {f.peak_mb:.0f} MB | {r.split} | {r.load_avg:.1f} "
                   f"| {p(b, 50) / p(f, 50):.2f}× / {p(b, 95) / p(f, 95):.2f}× "
                   f"/ {b.wall_s / f.wall_s:.2f}× |")
    return "\n".join(out)


def run_one(burst: load.Burst, n: int, timeout: float, rnd: int) -> Run:
    with tempfile.TemporaryDirectory(prefix=f"serve{n}-") as tmp, \
            balanced(n, Path(tmp)) as (url, pid):
        reps = replica_pids(pid)
        load_avg = os.getloadavg()[0]  # other users of the machine included
        cpu0 = {r: load.cpu_seconds([q]) for r, q in reps.items()}
        fig = load.measure(burst, url, [pid], timeout)
        shares = {r: load.cpu_seconds([q]) - cpu0[r] for r, q in reps.items()}
    total = sum(shares.values()) or 1.0
    split = " ".join(f"{r} {s / total:.0%}" for r, s in shares.items())
    return Run(rnd, n, fig, load_avg, split)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bursts", nargs="*", default=["same30", "own10"],
                    help="bursts of benchmarks/load.py (default: same30 own10)")
    ap.add_argument("--replicas", default="1,2", help="numbers of replicas, comma-separated")
    ap.add_argument("--rounds", type=int, default=1,
                    help="repeat every (burst, replicas) pair; the pairs run back to back so "
                    "that a change of the machine's load affects both alike")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds, per session")
    args = ap.parse_args(argv)
    available = load.bursts()
    chosen = [available[b] for b in args.bursts]
    counts = [int(n) for n in args.replicas.split(",")]
    runs: list[Run] = []
    for rnd in range(1, args.rounds + 1):
        for burst in chosen:
            for n in counts:
                run = run_one(burst, n, args.timeout, rnd)
                runs.append(run)
                print(load.table([run.fig], f"round {rnd}, {burst.name}, {n} replica(s); "
                                 f"CPU split {run.split}; load average before the burst "
                                 f"{run.load_avg:.1f} on {os.cpu_count()} cores"),
                      file=sys.stderr, flush=True)
                for e in sorted({e for r in run.fig.results for e in r.errors})[:5]:
                    print(f"- {burst.name}, {n} replica(s): {e}", file=sys.stderr)
    print(speedup(runs))
    return 0 if all(r.ok for run in runs for r in run.fig.results) else 1


if __name__ == "__main__":
    sys.exit(main())
