"""lens.serve: the production launcher serves the app, and its page warm-up client runs a page
to the end over the server's websocket (and reports a page that does not exist)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks import load
from lens import serve
from tests.support.run_async import run_async

ROOT = Path(__file__).resolve().parent.parent
WARM_WAIT_S = 180  # bounded wait for the launcher's warm-up to finish


def warm_done(text: str) -> bool:
    """The launcher has warmed (or failed to warm) its last page."""
    return f"the page '{serve.WARM_PAGES[-1]}'" in text


@pytest.mark.slow
def test_the_launcher_serves_and_warms_the_first_page_and_a_page_runs_over_the_websocket():
    log = ROOT / "test-artifacts" / "lens-serve.log"
    log.parent.mkdir(exist_ok=True)
    with load.started_server([], log) as (url, _proc):  # python -m lens.serve, until idle
        assert run_async(serve.run_page(url, serve.WARM_PAGES[0])) is True
        assert run_async(serve.run_page(url, "no_such_page")) is False
        # the warm-up goes on in the background: a loaded machine (two test workers) is still
        # warming when the page runs above are done; stopping then fails the later warm-ups
        deadline = time.monotonic() + WARM_WAIT_S
        while time.monotonic() < deadline and not warm_done(log.read_text()):
            time.sleep(0.5)
    text = log.read_text()
    assert f"lens.serve: warmed the page '{serve.WARM_PAGES[0]}'" in text, text
    assert "lens.serve: warming" not in text, text  # no warm-up failed


def test_the_help_names_the_projects_options_and_starts_nothing(capsys, monkeypatch):
    monkeypatch.setattr("streamlit.web.cli.main", lambda: pytest.fail("Streamlit started"))
    assert serve.main(["--help"]) == 0
    text = capsys.readouterr().out
    assert text == serve.HELP and text.startswith("usage: encoder-lens")
    for option in ("--checkpoint FILE", "--n-heads H", "--dev", "streamlit run --help"):
        assert option in text


def test_the_entry_script_is_in_the_package_with_the_one_copy_of_the_settings():
    """lens.serve serves lens/entry.py, beside which Streamlit finds the settings as the
    script's own; the repository's .streamlit/config.toml is that file (a link), so a plain
    `streamlit run app.py` from the root runs with the same settings."""
    import subprocess
    import sys

    assert serve.APP == ROOT / "lens" / "entry.py"
    settings = ROOT / "lens" / ".streamlit" / "config.toml"
    assert (ROOT / ".streamlit" / "config.toml").resolve() == settings
    probe = ("import sys; from streamlit import config; config._main_script_path = sys.argv[1]; "
             "print(config.get_option('client.showErrorDetails'), "
             "config.get_option('server.fileWatcherType'), config.get_option('theme.base'))")
    for cwd, script in ((ROOT, "app.py"), (ROOT / "lens", str(serve.APP))):
        out = subprocess.run([sys.executable, "-c", probe, script], cwd=cwd, check=True,
                             capture_output=True, text=True, timeout=60).stdout.split()
        assert out == ["none", "none", "light"], (cwd, out)


def test_the_launcher_says_where_students_reach_it_and_the_join_links_form():
    """At its start the launcher names the network address(es), never only localhost, and the
    join link's form; bound to loopback it says no other device reaches it."""
    lines = serve.where_lines(8600, "", ["10.1.2.3", "172.16.0.9"], None)
    assert lines[0].endswith("http://localhost:8600")
    assert "http://10.1.2.3:8600, http://172.16.0.9:8600" in lines[1]
    assert "http://10.1.2.3:8600/class?class=CODE" in lines[2]
    public = serve.where_lines(8600, "", ["10.1.2.3"], "https://lens.school.example/")
    assert "https://lens.school.example/class?class=CODE" in public[-1]
    local = serve.where_lines(8600, "127.0.0.1", ["10.1.2.3"], None)
    assert "127.0.0.1 only" in local[1] and not any("/class?class=" in x for x in local)
    assert "no network address" in serve.where_lines(8600, "", [], None)[1]


def test_the_launcher_reads_the_port_and_address_from_the_flags(monkeypatch):
    monkeypatch.delenv("STREAMLIT_SERVER_PORT", raising=False)
    assert serve.flag(["--server.port", "8700"], "--server.port", "8501") == "8700"
    assert serve.flag(["--server.port=8701"], "--server.port", "8501") == "8701"
    assert serve.flag([], "--server.port", "8501") == "8501"
    monkeypatch.setenv("STREAMLIT_SERVER_PORT", "8702")
    assert serve.flag([], "--server.port", "8501") == "8702"


def test_this_machines_addresses_are_never_loopback():
    import ipaddress  # noqa: PLC0415

    for text in serve.machine_addresses():
        ip = ipaddress.ip_address(text)
        assert not (ip.is_loopback or ip.is_link_local or ip.is_unspecified), text
