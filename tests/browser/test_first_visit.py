"""The first visit of a fresh server, however it was started and whatever the link's path.

A folder named `pages/` keeps Streamlit 1.67 in its pages-folder mode until `st.navigation` has
run once in the process: a fresh server's first visit looks the link's path up among the files
of pages/ by stem and runs the file it finds without app.py, with Streamlit's folder navigation
("app", "addnorm", …); a path it does not find gets a "Page not found" dialog over the page
(as /multihead did while the files were named multihead_page.py). Every page's file is named
by its URL path (lens.steps), and `lens.runner.run_page` hands a run without app.py over to
it, whose landing opens the intended page.

Each case here starts its own server — `scripts/app` with no page warmed (warming runs the entry
script first and would hide the trap), or a plain `streamlit run app.py` — health-checks it,
opens one link in 中文 as that server's very first visit, and checks the page shown: no
traceback, no dialog, the app's translated and numbered navigation, the intended page's title
and URL. Every server is stopped, pass or fail. Logs: test-artifacts/first-visit/.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from playwright.sync_api import Page, expect

from lens.steps import ALL_PAGES, PAGES, STEPS
from tests.support import serverctl  # the one way the app is started
from tests.support.browser_helpers import (
    ARTIFACTS,
    MAIN,
    assert_no_errors,
    nav_links,
    title,
    wait_idle,
    wait_url,
)

pytestmark = pytest.mark.browser

REPO = ARTIFACTS.parent

LOGS = ARTIFACTS / "first-visit"
STREAMLIT_FLAGS = ["--server.headless", "true", "--server.address", "127.0.0.1",
                   "--browser.gatherUsageStats", "false"]

# (the link's path and query, the page it must show, that page's title in 中文)
CASES = {
    "multihead": ("multihead?lang=zh", "multihead", "多头注意力"),
    "compare": ("compare?lang=zh", "compare", "对比与消融"),
    "root": ("?lang=zh", "overview", "总览"),  # the landing forwards to the first step
    "ffn": ("ffn?lang=zh", "ffn", "前馈网络"),
}
# A few of the navigation's labels, spelled out (the whole list is checked against lens.steps).
SOME_LABELS = ("1. 总览", "7. 多头注意力", "★ 对比与消融")
HOWS = ("scripts_app", "streamlit_run")


def _zh_labels() -> list[str]:
    """The navigation's labels in 中文: "7. 多头注意力" for a step, "★ 对比与消融" after."""
    return [f"{i + 1}. {p.title_in('zh')}" if i < len(STEPS) else f"★ {p.title_in('zh')}"
            for i, p in enumerate(ALL_PAGES)]


def _launch(how: str, port: int, log) -> subprocess.Popen:
    """A fresh server on 127.0.0.1:port: `scripts/app` with no page warmed, or the plain
    `streamlit run app.py` of serverctl. Its own process group, so that nothing it started
    outlives it."""
    if how == "streamlit_run":
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", *STREAMLIT_FLAGS,
               "--server.port", str(port)]  # from REPO: `-m` puts it first on the path
        env = dict(os.environ)
    else:
        cmd = [str(REPO / "scripts" / "app"), *STREAMLIT_FLAGS, "--server.port", str(port)]
        env = {**os.environ, "ENCODER_LENS_WARM_PAGES": ""}
    return subprocess.Popen(cmd, cwd=REPO, env={**env, "PYTHONUNBUFFERED": "1"},
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    serverctl.stop(proc)
    try:  # anything left in its group (it was started in a session of its own)
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@contextmanager
def fresh_server(how: str, name: str) -> Iterator[str]:
    """A server started for this one visit, health-checked; yields its base URL; stopped."""
    LOGS.mkdir(parents=True, exist_ok=True)
    log_path = LOGS / f"{name}.log"
    port = serverctl.free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log:
        proc = _launch(how, port, log)
        try:
            why = serverctl.wait_healthy(proc, url, serverctl.STARTUP_S)
            if why:
                pytest.fail(f"{why}; its log:\n{log_path.read_text(errors='replace')}")
            assert serverctl.health(url) == "ok"
            yield url
        finally:
            _stop(proc)
    if how == "scripts_app":  # nothing warmed: the visit above was the server's first script run
        assert "warmed the page" not in log_path.read_text(errors="replace"), log_path


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize(("link", "page_id", "zh_title"), list(CASES.values()),
                         ids=list(CASES))
def test_first_visit_of_a_fresh_server(page: Page, how: str, link: str, page_id: str,
                                       zh_title: str) -> None:
    assert PAGES[page_id].title_in("zh") == zh_title  # the case names the page's own title
    name = f"{how}-{link.split('?')[0] or 'root'}"
    with fresh_server(how, name) as url:
        page.goto(f"{url}/{link}")
        heading = page.locator(f"{MAIN} h1").first
        expect(heading.or_(page.locator('[data-testid="stException"]')).first).to_be_visible()
        wait_idle(page)
        assert_no_errors(page)
        page.wait_for_timeout(500)  # a dialog comes with the first messages; let it show
        dialogs = page.get_by_role("dialog").all_inner_texts()
        assert not dialogs, f"{link!r} as the first visit opens a dialog: {dialogs}"
        shown = wait_url(page, "lang=zh", "d_model=")  # the settings mirrored: a rerun's end
        assert title(page) == zh_title, f"{link!r} shows {title(page)!r}, not {zh_title!r}"
        # the app's navigation, not Streamlit's folder one ("app", "addnorm page", …), which a
        # page file run without app.py shows — with its own title, so the title alone is no proof
        labels = [t.strip() for t in nav_links(page).all_inner_texts()]
        for label in SOME_LABELS:
            assert label in labels, f"no {label!r} in the sidebar's navigation: {labels}"
        assert labels == _zh_labels(), labels
        assert shown.startswith(f"{url}/{page_id}?"), (
            f"{link!r} as the first visit ended at {shown!r}, not /{page_id}")
        assert_no_errors(page)
