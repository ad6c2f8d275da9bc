"""Start and stop the app for whatever drives it (screenshots, benchmarks, the browser tests):
one Streamlit server on a free loopback port, its health checked, always stopped.

    from tests.support.serverctl import serving
    with serving(repo) as url:   # "http://127.0.0.1:PORT"
        ...

`streamlit run app.py` runs with the checkout as its working directory: `python -m` puts that
folder first on the server's path, and Streamlit puts the script's folder there too, so the
checkout's own `lens`, `pages` and `encoder_core` are the ones imported (also those of another
checkout, ahead of this one's editable install).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STARTUP_S = 60  # bounded wait for /_stcore/health
STOP_S = 10  # terminate, then kill after this


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(repo: Path, port: int, log=subprocess.DEVNULL) -> subprocess.Popen:
    """`streamlit run app.py` of `repo` on 127.0.0.1:port (not waited for); its output to
    `log` (a binary file, or DEVNULL)."""
    return subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port),
         "--browser.gatherUsageStats", "false"],
        cwd=repo, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        stdout=log, stderr=subprocess.STDOUT)


def health(url: str) -> str:
    """What /_stcore/health answers ("ok" when the app is up), or "" when nothing answers."""
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def wait_healthy(proc: subprocess.Popen, url: str, timeout: float = STARTUP_S) -> str:
    """Wait (bounded) until the server answers "ok": "" then, else why it did not."""
    deadline = time.monotonic() + timeout
    while health(url) != "ok":
        if proc.poll() is not None:
            return f"the Streamlit server exited with code {proc.returncode} before answering"
        if time.monotonic() > deadline:
            return f"the Streamlit server did not answer {url}/_stcore/health within {timeout} s"
        time.sleep(0.25)
    return ""


def stop(proc: subprocess.Popen) -> None:
    """Terminate the server (kill it if it does not stop within STOP_S)."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_S)


@contextmanager
def serving(repo: Path) -> Iterator[str]:
    """The app of `repo` running for the duration of the block; yields its base URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = launch(repo, port)
    try:
        why = wait_healthy(proc, url)
        if why:
            raise SystemExit(why)
        yield url
    finally:
        stop(proc)
