"""The balancer's configuration: what `scripts/serve` writes, and deploy/ kept in step with it.

`scripts/serve --print-config` writes and checks (`haproxy -c`) the config it would run with;
deploy/haproxy.cfg (for deploy/compose.yaml) must be that config with the containers as servers.
The running balancer itself is tested in tests/browser/test_replicas.py.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
SERVER = re.compile(r"^server (r\d+) (\S+):(\d+) cookie (r\d+)\b")
# lines only the compose variant has: Docker's DNS
COMPOSE_ONLY = {"resolvers docker", "nameserver dns 127.0.0.11:53"}


def _haproxy() -> str:
    found = shutil.which("haproxy") or ("/usr/sbin/haproxy"
                                        if Path("/usr/sbin/haproxy").exists() else None)
    if not found:
        pytest.fail("haproxy is missing: apt-get install -y haproxy (scripts/test does it)",
                    pytrace=False)
    return found


def _directives(text: str) -> list[str]:
    """The config's lines without comments, blank lines and indentation."""
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def _serve_config(replicas: int, tmp_path: Path) -> str:
    _haproxy()
    out = subprocess.run(
        [str(REPO / "scripts" / "serve"), "--replicas", str(replicas), "--port", "8501",
         "--print-config", "--python", sys.executable, "--run-dir", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _servers(lines: list[str]) -> list[tuple[str, str, str, str]]:
    return [m.groups() for m in map(SERVER.match, lines) if m]


def test_serve_writes_one_sticky_server_per_replica(tmp_path):
    lines = _directives(_serve_config(3, tmp_path))
    servers = _servers(lines)
    assert [(name, cookie) for name, _, _, cookie in servers] == [
        ("r1", "r1"), ("r2", "r2"), ("r3", "r3")]
    assert all(host == "127.0.0.1" for _, host, _, _ in servers)
    assert len({port for _, _, port, _ in servers}) == 3  # three different free ports
    assert "cookie SERVERID insert indirect nocache httponly attr \"SameSite=Lax\"" in lines
    assert "monitor fail if { nbsrv(streamlit) lt 3 }" in lines
    assert "timeout tunnel 1h" in lines
    assert "option httpchk GET /_stcore/health" in lines
    assert "bind :8501" in lines


def test_serve_moves_a_dead_replicas_browsers_at_once(tmp_path):
    """A request still bound to a dead replica (a reload, a tab's reconnecting websocket) is
    retried on another at once, refused or reset before an answer; live traffic's refused
    connections mark the replica down at once, else two failed checks 0.5 s apart."""
    lines = _directives(_serve_config(2, tmp_path))
    assert "option redispatch 1" in lines  # every retry goes to another replica
    retries = next(int(x.split()[1]) for x in lines if x.startswith("retries "))
    assert retries >= 1
    assert "retry-on conn-failure empty-response" in lines
    check = next(x.split() for x in lines if x.startswith("default-server "))
    assert check[1] == "check", check
    opts = dict(zip(check[2::2], check[3::2], strict=True))  # the check's "name value" pairs
    assert opts["inter"] == "1s" and opts["fastinter"] == "500ms" and opts["fall"] == "2", opts
    assert (opts["observe"], opts["error-limit"], opts["on-error"]) == (
        "layer4", "1", "mark-down"), opts


def test_compose_config_is_what_serve_writes_with_the_containers(tmp_path):
    serve = _directives(_serve_config(2, tmp_path))
    deploy = _directives((DEPLOY / "haproxy.cfg").read_text())
    assert [x for x in serve if not SERVER.match(x)] == [
        x for x in deploy if not SERVER.match(x) and x not in COMPOSE_ONLY]
    assert COMPOSE_ONLY <= set(deploy)
    assert [(n, h, p, c) for n, h, p, c in _servers(deploy)] == [
        ("r1", "app1", "8501", "r1"), ("r2", "app2", "8501", "r2")]


def test_compose_config_is_valid_haproxy():
    out = subprocess.run([_haproxy(), "-c", "-f", str(DEPLOY / "haproxy.cfg")],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stdout + out.stderr


def test_compose_runs_one_app_container_per_server_behind_the_config():
    """Read as text (no YAML parser among the dependencies): the services are the two-space
    indented keys; each app is the `*app` anchor, built from deploy/Dockerfile."""
    text = (DEPLOY / "compose.yaml").read_text()
    hosts = [h for _, h, _, _ in _servers(_directives((DEPLOY / "haproxy.cfg").read_text()))]
    apps = re.findall(r"^  (\w+): \*app$", text, flags=re.M)
    assert apps == hosts
    assert re.search(r"^x-app: &app\n(?:  .*\n)*    dockerfile: deploy/Dockerfile$", text,
                     flags=re.M)
    assert 'expose: ["8501"]' in text and text.count("ports:") == 1  # only the balancer
    assert 'ports: ["8501:8501"]' in text
    assert "- ./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in text
    assert f"depends_on: [{', '.join(apps)}]" in text


def test_compose_gives_the_apps_a_shared_class_store():
    """The containers share no folder, so a live class's store is the `db` service's
    PostgreSQL, named to every app (the `*app` anchor) by the store's URL variable, in the
    scheme the store's driver takes; the apps wait for the database to be healthy."""
    from sqlalchemy.engine import make_url

    from lens.classroom.member import PROXY_ENV
    from lens.classroom.store import URL_ENV

    text = (DEPLOY / "compose.yaml").read_text()
    anchor = re.search(r"^x-app: &app\n((?:  .*\n)*)", text, flags=re.M).group(1)
    url = re.search(rf"^    {URL_ENV}: (\S+)$", anchor, flags=re.M).group(1)
    parsed = make_url(url)
    assert (parsed.drivername, parsed.host, parsed.database) == (
        "postgresql+psycopg", "db", "encoder_lens")
    assert f'{PROXY_ENV}: "1"' in anchor and "db: {condition: service_healthy}" in anchor
    db = re.search(r"^  db:\n((?:    .*\n)*)", text, flags=re.M).group(1)
    assert "image: postgres:" in db and f"POSTGRES_DB: {parsed.database}" in db
    assert f"POSTGRES_USER: {parsed.username}" in db and "pg_isready" in db
