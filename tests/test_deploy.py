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
import yaml  # PyYAML: huggingface_hub's dependency, so always installed

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
    # its events timed (haproxy.log): ISO 8601, the level that names a replica down or up
    assert "log stdout format iso local0 notice" in lines and "log global" in lines


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
    # a live replica slow to answer in a burst is not a dead one (a dead one refuses at once)
    assert "timeout check 5s" in lines


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
    """Read as text: the services are the two-space indented keys; each app is the `*app`
    anchor, built from deploy/Dockerfile."""
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

    from lens.classroom.store import URL_ENV
    from lens.classroom.ui.member import PROXY_ENV

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


HEALTH = "/_stcore/health"


def test_compose_restarts_every_service_and_checks_its_health():
    """Parsed as YAML: every service is started again when it
    exits and has a health check — each app asks its own /_stcore/health, the balancer a page
    through itself (not /_balancer/ready: 503 while one app is down and it still serves)."""
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert {"app1", "app2", "db", "balancer"} <= set(services)
    for name, service in services.items():
        assert service.get("restart") in ("always", "unless-stopped"), name
        check = service.get("healthcheck", {})
        assert check.get("test") and check.get("interval"), name
    for app in ("app1", "app2"):
        test = " ".join(services[app]["healthcheck"]["test"])
        assert f"http://127.0.0.1:8501{HEALTH}" in test, test
    balancer = " ".join(services["balancer"]["healthcheck"]["test"])
    assert "/dev/tcp/127.0.0.1/8501" in balancer and HEALTH in balancer, balancer
    assert "_balancer/ready" not in balancer


def test_the_balancer_health_check_command_runs(tmp_path):
    """The compose balancer's check, run here by bash against a small HTTP server: true for a
    200, false for a 503 and when nothing listens."""
    import http.server
    import threading

    test = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]["balancer"][
        "healthcheck"]["test"]
    assert test[:3] == ["CMD", "bash", "-c"], test
    status = {"code": 200}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the base class's name
            self.send_response(status["code"] if self.path == HEALTH else 404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    command = test[3].replace("/127.0.0.1/8501", f"/127.0.0.1/{port}")

    def run() -> int:
        return subprocess.run(["bash", "-c", command], timeout=10).returncode

    try:
        assert run() == 0
        status["code"] = 503
        assert run() != 0
    finally:
        server.shutdown()
        server.server_close()
    assert run() != 0  # nothing listens


def _readme_yaml() -> list[dict]:
    """The documents of the Kubernetes note's YAML block in deploy/README.md."""
    text = (DEPLOY / "README.md").read_text()
    note = text[text.index("## Kubernetes"):]
    block = re.search(r"```yaml\n(.*?)```", note, flags=re.S).group(1)
    return [d for d in yaml.safe_load_all(block) if d]


def test_the_kubernetes_note_probes_every_pod_on_the_health_url():
    """The Deployment's container has startup, readiness and liveness probes on
    /_stcore/health at its port; readiness acts within seconds, liveness only after a hung
    while; the Service and the sticky Ingress point at it."""
    docs = {d["kind"]: d for d in _readme_yaml()}
    assert set(docs) == {"Deployment", "Service", "Ingress"}
    pod = docs["Deployment"]["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    probes = {k: container[k] for k in ("startupProbe", "readinessProbe", "livenessProbe")}
    for kind, probe in probes.items():
        get = probe["httpGet"]
        assert get["path"] == HEALTH, kind
        assert ports.get(get["port"], get["port"]) == 8501, kind
    ready, live = probes["readinessProbe"], probes["livenessProbe"]
    assert ready["periodSeconds"] * ready["failureThreshold"] <= 5
    assert live["periodSeconds"] * live["failureThreshold"] >= 20
    labels = pod["metadata"]["labels"]
    assert docs["Deployment"]["spec"]["selector"]["matchLabels"] == labels
    assert docs["Service"]["spec"]["selector"] == labels
    assert {"name": "ENCODER_LENS_BEHIND_PROXY", "value": "1"} in container["env"]
    notes = docs["Ingress"]["metadata"]["annotations"]
    assert notes["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    backend = docs["Ingress"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == docs["Service"]["metadata"]["name"]
