"""Both replicas down at once in a live class (issue 51, item 7), in Chromium, through
`scripts/serve --replicas 2` on a fresh SQLite store.

A teacher (1400 × 900) starts a class; a projector in 中文 (1920 × 1080) opens its link; a
student in English and one in 中文 (390 × 844) join. Then every replica is SIGKILLed at once
(supervisord starts them again). Checked, on each page:
- while the server is away, the app's own notice in the page's language
  (`connection_lost`, lens/connection_js.py) and never Streamlit's English "Connection error"
  dialog (sampled every 0.1 s);
- the page comes back by itself: the teacher's panel with the class's code, the projector's
  code, each student's card; no exception.
Measured, per kill: kill → the first replica answering its `/_stcore/health` on its own port
(the server back), and that moment → each page back. Printed as "BOTH_DOWN_S …" and kept in
test-artifacts/both-down.txt. The waits are bounded (BACK_S), not timed: a loaded CI machine is
slow. `ENCODER_LENS_BOTH_DOWN_RUNS=3` repeats the kill (benchmarks/README.md: the figures).
"""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from lens.i18n import translate
from tests.browser.test_class import (
    TOKENS,
    Member,
    _href,
    _join,
    _member,
    _open,
    _start_class,
    members,
)
from tests.browser.test_projector import _projector_link
from tests.support.balancer import Serving, serving
from tests.support.browser_helpers import (
    ARTIFACTS,
    TIMEOUT_MS,
    assert_no_errors,
    wait_for,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RUN_DIR = ARTIFACTS / "serve-both-down"
FIGURES = ARTIFACTS / "both-down.txt"
SHOTS = ARTIFACTS / "both-down-shots"  # each page with the notice, the first kill
RUNS = int(os.environ.get("ENCODER_LENS_BOTH_DOWN_RUNS", "1"))
DOWN_S = 60  # bound on the replicas answering again after the kill
BACK_S = 60  # bound on a page being back after that
PHONE = {"width": 390, "height": 844}
WALL = {"width": 1920, "height": 1080}
SERVER = re.compile(r"^\s*server (r\d+) 127\.0\.0\.1:(\d+)", re.M)

# what the page shows now: the app's notice (its text, its lang), Streamlit's dialog, the
# connection's state Streamlit writes on its root
LOOK_JS = """() => {
  const n = document.getElementById('el-connection-notice');
  const d = Array.from(document.querySelectorAll('[data-testid="stDialog"]'))
    .some(e => e.getBoundingClientRect().height > 0);
  const root = document.querySelector('[data-testid="stApp"]');
  return {notice: n ? n.textContent : '', lang: n ? n.lang : '', dialog: d,
          state: root ? root.getAttribute('data-test-connection-state') : '',
          reloaded: window.__beforeKill !== true};
}"""


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serving]:
    """Two supervised replicas behind HAProxy on a store of their own; only the overview
    warmed at each start (what a restarted replica repeats)."""
    data = tmp_path_factory.mktemp("both-down-data")
    with serving(RUN_DIR, "serve-both-down.log",
                 env={"ENCODER_LENS_DATA": str(data), "ENCODER_LENS_WARM_PAGES": "overview"},
                 ) as s:
        yield s


def replica_ports(served: Serving) -> dict[str, int]:
    """{replica name: its loopback port}, from the HAProxy config scripts/serve wrote."""
    text = (served.run_dir / "haproxy.cfg").read_text()
    return {name: int(port) for name, port in SERVER.findall(text)}


def healthy(port: int) -> bool:
    """The replica on `port` answers its health URL with 200 (asked directly, not through
    HAProxy), within 0.3 s."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                    timeout=0.3) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _look(page: Page) -> dict:
    try:
        return page.evaluate(LOOK_JS)
    except Exception:  # noqa: BLE001 (the page is being loaded again: nothing to see yet)
        return {"notice": "", "lang": "", "dialog": False, "state": "LOADING"}


def _join_in(m: Member, base: str, code: str, lang: str) -> None:
    """A student joins by the link in `lang` (no nickname), on to the class's step."""
    _open(m, f"{base}/class?class={code}&lang={lang}")
    m.page.locator(".st-key-class_join_button button").click()
    wait_for(lambda: _href(m.page), lambda u: "/overview?" in u and "student=" in u,
             f"{m.name} switched to the class's step")
    wait_idle(m.page)


def test_both_replicas_down_then_back(browser: Browser, served: Serving) -> None:
    with members("both-down") as keep:
        _both_down(browser, served, keep)


def _both_down(browser: Browser, served: Serving, keep: list[Member]) -> None:
    base = served.url
    teacher = _member(browser, "teacher", keep)
    _open(teacher, f"{base}/class")
    code = _start_class(teacher.page)
    link = _projector_link(teacher)
    wall = _member(browser, "projector-zh", keep)
    wall.context.close()
    wall.context = browser.new_context(viewport=WALL)
    wall.context.set_default_timeout(TIMEOUT_MS)
    wall.page = wall.context.new_page()
    wall.page.goto(link.replace("lang=en", "lang=zh"))
    expect(wall.page.locator("[data-testid='el-room-code']")).to_have_text(code)
    en = _member(browser, "student-en", keep)
    _join(en, base, code, "", by_link=True)
    zh = _member(browser, "student-zh", keep)
    zh.page.set_viewport_size(PHONE)
    _join_in(zh, base, code, "zh")
    langs = {"teacher": "en", "projector-zh": "zh", "student-en": "en", "student-zh": "zh"}
    pages = [teacher, wall, en, zh]
    back_checks = {
        "teacher": lambda p: p.locator("[data-testid='el-class-code']").inner_text() == code,
        "projector-zh": lambda p: p.locator(
            "[data-testid='el-room-code']").inner_text() == code,
        "student-en": lambda p: p.locator(f".st-key-class_card_{TOKENS}").count() == 1,
        "student-zh": lambda p: p.locator(f".st-key-class_card_{TOKENS}").count() == 1,
    }
    ports = replica_ports(served)
    lines = []
    for run in range(1, RUNS + 1):
        pids = served.pids()
        for m in pages:  # gone if the page is loaded again
            m.page.evaluate("window.__beforeKill = true")
        killed = time.monotonic()
        for name in ports:
            os.kill(pids[name], signal.SIGKILL)
        health_at = None
        notices: dict[str, str] = {}
        notice_langs: dict[str, str] = {}
        dialogs: dict[str, bool] = {m.name: False for m in pages}
        back: dict[str, float] = {}
        connected: dict[str, float] = {}  # Streamlit's connection back (a reload or its own)
        reloaded: dict[str, bool] = {}
        deadline = killed + DOWN_S + BACK_S
        while len(back) < len(pages) and time.monotonic() < deadline:
            now = time.monotonic()
            if health_at is None and any(
                    healthy(p) for p in ports.values()):
                health_at = now
            for m in pages:
                if m.name in back:
                    continue
                seen = _look(m.page)
                dialogs[m.name] |= bool(seen["dialog"])
                if seen["notice"]:
                    if m.name not in notices and run == 1:  # looked at: the notice, as shown
                        SHOTS.mkdir(parents=True, exist_ok=True)
                        m.page.screenshot(path=str(SHOTS / f"{m.name}_notice.png"))
                    notices.setdefault(m.name, seen["notice"])
                    notice_langs.setdefault(m.name, seen["lang"])
                if health_at is not None and seen["state"] == "CONNECTED":
                    connected.setdefault(m.name, now)
                    reloaded.setdefault(m.name, bool(seen["reloaded"]))
                if health_at is not None and seen["state"] == "CONNECTED" \
                        and not seen["notice"] and m.name in notices:
                    try:
                        ok = back_checks[m.name](m.page)
                    except Exception:  # noqa: BLE001 (still loading)
                        ok = False
                    if ok:
                        back[m.name] = time.monotonic()
            time.sleep(0.1)
        assert health_at is not None, f"no replica answered within {DOWN_S} s of the kill"
        line = (f"BOTH_DOWN_S run {run}: kill → first replica healthy "
                f"{health_at - killed:.2f} s; healthy → page back: " + ", ".join(
                    f"{m.name} {back[m.name] - health_at:.2f} s (connected "
                    f"{connected[m.name] - health_at:.2f} s, "
                    f"{'reloaded' if reloaded[m.name] else 'reconnected'})"
                    if m.name in back else f"{m.name} not back" for m in pages))
        print(line)
        lines.append(line)
        assert set(back) == {m.name for m in pages}, (
            f"run {run}: not back within {BACK_S} s: "
            f"{sorted({m.name for m in pages} - set(back))}; notices {notices}")
        for m in pages:
            lang = langs[m.name]
            assert notices[m.name] in (translate("connection_lost", lang),
                                       translate("connection_back", lang)), (m.name, notices)
            assert notice_langs[m.name] == ("zh-CN" if lang == "zh" else "en")
            assert not dialogs[m.name], f"{m.name}: Streamlit's connection dialog was shown"
            if m is not wall:  # the projector has no title to wait for: its code was seen
                wait_idle(m.page)
            assert_no_errors(m.page)
        wait_for(served.ready, bool, "/_balancer/ready 200 again", timeout=DOWN_S)
    FIGURES.write_text("\n".join(lines) + "\n", encoding="utf-8")
