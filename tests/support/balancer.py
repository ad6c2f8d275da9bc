"""`scripts/serve --replicas N` for a test: started on a free port, its processes found, always
stopped — and the stop checked to leave no process behind.

scripts/serve becomes supervisord (it `exec`s it), which puts each replica and HAProxy in a
process group of its own: a leftover is looked for among every process the script's tree held
(the replicas of now and of before a restart), not only in its process group.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from benchmarks.load import process_tree
from benchmarks.replicas import supervised_pids
from tests.support import serverctl

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
SERVE = REPO / "scripts" / "serve"
BALANCER_STARTUP_S = 90  # bounded wait for /_balancer/ready (replicas start on a shared machine)
BALANCER_STOP_S = 20
GONE_S = 5  # how long a stopped program may take to leave the process table


def http_get(url: str, cookie: str = "") -> tuple[int, str]:
    """(status, X-Replica) of a GET, with an optional Cookie header; (0, "") if unreachable."""
    req = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.headers.get("X-Replica", "")
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("X-Replica", "")
    except (urllib.error.URLError, OSError):
        return 0, ""


def logs_tail(run_dir: Path, log: Path) -> str:
    logs = sorted(run_dir.glob("*.log")) + [log]
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-2000:]}"
                     for p in logs if p.exists())


def alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped, is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class Serving:
    """A running scripts/serve: its URL, run folder, process, and every pid its tree held."""

    def __init__(self, url: str, run_dir: Path, proc: subprocess.Popen) -> None:
        self.url, self.run_dir, self.proc = url, run_dir, proc
        self.seen: set[int] = set()

    def pids(self) -> dict[str, int]:
        """{"r1": pid, …, "haproxy": pid} now (each remembered, to be checked at the stop)."""
        found = supervised_pids(self.proc.pid)
        self.seen |= set(found.values())
        return found

    def remember_tree(self) -> None:
        self.seen |= set(process_tree([self.proc.pid]))

    def ready(self) -> bool:
        return http_get(f"{self.url}/_balancer/ready")[0] == 200


@contextmanager
def serving(run_dir: Path, log_name: str, replicas: int = 2, env: dict[str, str] | None = None,
            stop_signal: int = signal.SIGTERM) -> Iterator[Serving]:
    """`scripts/serve --replicas N` on a free port (its own session, `env` added to its
    environment, its logs in `run_dir` and test-artifacts/<log_name>); yields it once every
    replica is healthy behind it. Afterwards `stop_signal` goes to the script only: it must stop
    the replicas and HAProxy, and every process its tree ever held is checked gone (leftovers
    are then killed anyway, and the test fails)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = ARTIFACTS / log_name
    port = serverctl.free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [str(SERVE), "--replicas", str(replicas), "--port", str(port), "--python",
           sys.executable, "--run-dir", str(run_dir)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})}, start_new_session=True)
    s = Serving(url, run_dir, proc)
    try:
        deadline = time.monotonic() + BALANCER_STARTUP_S
        while not s.ready():
            if proc.poll() is not None:
                pytest.fail(f"scripts/serve exited with {proc.returncode}:\n"
                            f"{logs_tail(run_dir, log_path)}")
            if time.monotonic() > deadline:
                pytest.fail(f"{replicas} replicas not ready behind {url} in "
                            f"{BALANCER_STARTUP_S} s:\n{logs_tail(run_dir, log_path)}")
            time.sleep(0.5)
        s.pids()
        yield s
    finally:
        s.remember_tree()
        proc.send_signal(stop_signal)
        try:
            proc.wait(timeout=BALANCER_STOP_S)  # supervisord stops every program, then exits
        except subprocess.TimeoutExpired:
            pass
        # a process may take a moment to be reaped after its parent exits (seconds on a loaded
        # machine): what is still there after GONE_S is left behind
        deadline = time.monotonic() + GONE_S
        while True:
            time.sleep(0.25)
            left = sorted(p for p in s.seen if alive(p))
            group = _group_alive(proc.pid)  # anything of the script's group still running
            if not (left or group) or time.monotonic() > deadline:
                break
        if left or group or proc.poll() is None:
            for p in left:
                try:
                    os.killpg(p, signal.SIGKILL)  # each program is a group leader
                except OSError:
                    pass
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                pass
            proc.wait(timeout=BALANCER_STOP_S)
    assert not left and not group, (
        f"processes left after {signal.Signals(stop_signal).name} to scripts/serve: {left}, "
        f"its group: {group}:\n"
        f"{logs_tail(run_dir, log_path)}")


@contextmanager
def balancer(run_dir: Path, log_name: str, replicas: int = 2,
             env: dict[str, str] | None = None) -> Iterator[str]:
    """`serving`, yielding only the URL (what most browser tests need)."""
    with serving(run_dir, log_name, replicas, env) as s:
        yield s.url
