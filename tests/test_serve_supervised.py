"""`scripts/serve --replicas 2` keeps serving when one of its processes dies.

The replicas and HAProxy run under supervisord (scripts/serve becomes it). Checked on one real
`scripts/serve`, driven from outside as a crash would be:
- a replica killed with SIGKILL: a request still bound to it by its cookie, sent at once
  (before any health check could mark it down), is answered by the other replica (HAProxy's
  retry and redispatch); HAProxy and the other replica keep their pids; the killed one is
  started again (a new pid) and the balancer is ready again; its log kept what the killed
  process wrote, and a log of an earlier run is kept too (never deleted at a start);
- HAProxy killed with SIGKILL: both replicas keep their pids, HAProxy is started again and
  the balancer answers again;
- TERM to the script stops everything: no process it ever ran is left (`serving` checks), and
  so does Ctrl-C (INT).
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from tests.support.balancer import ARTIFACTS, Serving, http_get, serving

pytestmark = pytest.mark.slow

RESTART_S = 90  # bounded wait for a killed process to be started again and healthy
OLD_LINE = "a line an earlier run of scripts/serve wrote\n"


def _until(what: str, ok, timeout: float = RESTART_S):  # noqa: ANN001, ANN202
    deadline = time.monotonic() + timeout
    while True:
        value = ok()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.2)


def _restarted(s: Serving, name: str, old: int) -> dict[str, int]:
    """Wait until `name` runs again with a new pid and the balancer is ready; the pids then."""
    def back() -> dict[str, int] | None:
        pids = s.pids()
        return pids if pids.get(name, old) != old and s.ready() else None
    return _until(f"{name} started again and /_balancer/ready 200", back)


def test_a_killed_replica_or_haproxy_is_restarted_and_the_others_keep_serving(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "r1.log").write_text(OLD_LINE)  # as an earlier run left it
    with serving(run, "serve-supervised.log",
                 env={"ENCODER_LENS_DATA": str(tmp_path), "ENCODER_LENS_WARM_PAGES": ""}) as s:
        before = s.pids()
        assert set(before) == {"r1", "r2", "haproxy"}, before
        assert http_get(f"{s.url}/_stcore/health", "SERVERID=r1") == (200, "r1")
        log = run / "r1.log"
        written = log.read_text()
        assert written.startswith(OLD_LINE) and "scripts/serve started" in written, written

        # --- a replica dies: its browsers' next request reaches the other one at once
        os.kill(before["r1"], signal.SIGKILL)
        assert http_get(f"{s.url}/_stcore/health", "SERVERID=r1") == (200, "r2")
        assert http_get(f"{s.url}/", "SERVERID=r1") == (200, "r2")
        after = _restarted(s, "r1", before["r1"])
        assert (after["r2"], after["haproxy"]) == (before["r2"], before["haproxy"]), (
            before, after)
        assert http_get(f"{s.url}/_stcore/health", "SERVERID=r1") == (200, "r1")
        now = log.read_text()
        assert now.startswith(written), "the killed replica's log was not kept"
        assert now.count("Uvicorn server started on") == written.count(
            "Uvicorn server started on") + 1, now[-2000:]

        # --- HAProxy dies: the replicas keep running, it is started again
        os.kill(after["haproxy"], signal.SIGKILL)
        again = _restarted(s, "haproxy", after["haproxy"])
        assert (again["r1"], again["r2"]) == (after["r1"], after["r2"]), (after, again)
        assert http_get(f"{s.url}/_stcore/health", "SERVERID=r2") == (200, "r2")
    # (`serving` has sent TERM and checked that no process is left: the two killed, the
    # replicas and HAProxy of now, supervisord itself)
    assert s.proc.returncode is not None


def test_ctrl_c_stops_everything(tmp_path):
    with serving(tmp_path, "serve-supervised-int.log", replicas=1,
                 env={"ENCODER_LENS_DATA": str(tmp_path), "ENCODER_LENS_WARM_PAGES": ""},
                 stop_signal=signal.SIGINT) as s:
        assert set(s.pids()) == {"r1", "haproxy"}
    assert s.proc.returncode is not None
    assert (ARTIFACTS / "serve-supervised-int.log").exists()
