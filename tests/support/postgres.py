"""A real PostgreSQL for the tests, on loopback, in a folder of its own (Debian's `postgresql`).

`initdb` refuses to run as root and is not on PATH (Debian keeps it in
/usr/lib/postgresql/<NN>/bin): as root the server runs as the `postgres` user, in a `mktemp`
folder that user owns, its socket in that folder, on a free port, trust authentication on
loopback only. A cluster Debian may have started on 5432 is never touched. Stopped (and its
folder removed) when the context ends.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.serverctl import free_port


def pg_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder, or None."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda p: int(Path(p).parent.parent.name))
    return Path(found[-1]).parent if found else None


def _as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a PostgreSQL; yield its SQLAlchemy URL (psycopg driver)."""
    bin_dir = pg_bin()
    if bin_dir is None:
        raise RuntimeError("PostgreSQL is not installed: apt-get install postgresql "
                           "(scripts/test installs it)")
    folder = Path(tempfile.mkdtemp(prefix="encoder-lens-pg-"))
    data = folder / "data"
    port = free_port()
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    log = folder / "server.log"
    try:
        subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust",
                                        "-U", "postgres", "--no-sync"]),
                       check=True, capture_output=True)
        subprocess.run(_as_server_user([
            str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-t", "60",
            "-o", f"-k {folder} -p {port} -c listen_addresses=127.0.0.1 -c fsync=on",
            "start"]), check=True, capture_output=True)
        url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
        _wait_ready(bin_dir, port)
        yield url
    finally:
        subprocess.run(_as_server_user([str(bin_dir / "pg_ctl"), "-D", str(data), "-m",
                                        "immediate", "-w", "stop"]), capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def _wait_ready(bin_dir: Path, port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = subprocess.run([str(bin_dir / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)],
                              capture_output=True)
        if done.returncode == 0:
            return
        time.sleep(0.2)
    raise RuntimeError(f"PostgreSQL on port {port} did not get ready in {timeout:.0f} s")
