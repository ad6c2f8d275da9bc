"""A replica dies in the middle of a live class, in Chromium, through
`scripts/serve --replicas 2` (the replicas and HAProxy under supervisord) on a fresh SQLite
store.

A teacher and three students (four browser contexts, on both replicas) are in a class; the
teacher asks the overview's first question and the students answer (196, 196, 200). Then the
replica serving the teacher is killed with SIGKILL while the question is open. Checked:
- every page works again: each tab whose replica died opens a new websocket (Streamlit's
  frontend reconnects; HAProxy sends it to a live replica), and there — a fresh Streamlit
  session — the teacher is still the teacher (its cookie) with the class's code, the open
  question and "3 of 3 answered", and its switches as it left them (Presenting off, the
  answers shown: the switches' cookie); each student is still the same student (the token in the
  link) with its sent answer on its card; the tabs on the other replica kept theirs;
- the pages act again after the move: a student whose replica died changes its answer (a
  callback and a store write on its new session: "Sent: 14"), and the teacher reveals —
  every student's card turns into the reveal with its verdict (the students' 2 s followers);
- the killed replica is started again (a new pid, `/_balancer/ready` 200) and its log still
  holds what the killed process wrote.
The seconds each tab took to work again (from the kill to its checks passing) are printed as
"RECOVER_S <member>: x.xx s" and kept in test-artifacts/failover-recovery.txt; the waits are
bounded (RECOVER_S), not timed. Logs: test-artifacts/serve-failover/ and
test-artifacts/serve-failover.log.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.browser.test_class import (
    ANSWERS,
    LIVE_S,
    REPLICAS,
    TOKENS,
    Member,
    _answer,
    _click,
    _join,
    _member,
    _open,
    _start_class,
    members,
    say,
    verdict,
)
from tests.support.balancer import Serving, serving
from tests.support.browser_helpers import (
    ARTIFACTS,
    assert_no_errors,
    screenshot,
    server_cookie,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

RUN_DIR = ARTIFACTS / "serve-failover"
RECOVER_S = 40  # bound on a page working again after the kill (~3 s here; a loaded machine)
RECOVERY_FILE = ARTIFACTS / "failover-recovery.txt"
NICKS = ("Ada", "Bo", "")
ISO_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d\d:\d\d ")
STREAMLIT_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} ")
CHANGED = 14  # the new answer a moved student sends after the kill


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Serving]:
    """Two supervised replicas behind HAProxy on a store of their own; only the overview
    warmed at each start (the class's page, and what a restarted replica repeats)."""
    data = tmp_path_factory.mktemp("failover-data")
    with serving(RUN_DIR, "serve-failover.log",
                 env={"ENCODER_LENS_DATA": str(data), "ENCODER_LENS_WARM_PAGES": "overview"},
                 ) as s:
        yield s


def this_run(log: Path) -> list[str]:
    """The lines a log got since scripts/serve last started (below its last header line)."""
    lines = log.read_text(errors="replace").splitlines()
    last = max(i for i, line in enumerate(lines) if line.startswith("==== scripts/serve"))
    return [line for line in lines[last + 1:] if line.strip()]


def _watch_websockets(m: Member) -> list[tuple[float, str]]:
    """(time, X-Replica) of every websocket handshake of the member's page from now on."""
    seen: list[tuple[float, str]] = []
    cdp = m.context.new_cdp_session(m.page)
    cdp.send("Network.enable")
    cdp.on("Network.webSocketHandshakeResponseReceived", lambda e: seen.append((
        time.monotonic(),
        {k.lower(): v for k, v in e["response"]["headers"].items()}.get("x-replica", ""))))
    return seen


def test_a_class_survives_a_killed_replica(browser: Browser, served: Serving) -> None:
    with members("failover") as keep:
        _failover(browser, served, keep)


def _failover(browser: Browser, served: Serving, keep: list[Member]) -> None:
    base = served.url
    # --- the class: a teacher, three students, a question open and answered
    teacher = _member(browser, "teacher", keep)
    _open(teacher, f"{base}/class")
    code = _start_class(teacher.page)
    students = [_member(browser, f"student{k + 1}", keep) for k in range(3)]
    tokens = [_join(s, base, code, nick, by_link=True)
              for s, nick in zip(students, NICKS, strict=True)]
    members = [teacher, *students]
    assert {m.replica for m in members} == REPLICAS, [m.replica for m in members]
    question = teacher.main.locator(f".st-key-class_question_{TOKENS}")
    _click(teacher.page, f"class_open_{TOKENS}")
    wait_idle(teacher.page)
    expect(teacher.page.locator(f".st-key-class_reveal_{TOKENS} button")).to_be_visible()
    for s, value in zip(students, ANSWERS, strict=True):
        _answer(s, value)
    answered = say("answered_of", n=3, of=3)
    expect(question).to_contain_text(answered, timeout=LIVE_S * 1000)
    # the teacher's switches on this screen: Presenting off, the answers shown
    presenting = teacher.page.locator(".st-key-class_presenting input")
    show = teacher.page.locator(f".st-key-class_show_{TOKENS}_1 input")
    teacher.page.locator(".st-key-class_presenting label").click()
    wait_idle(teacher.page)
    teacher.page.locator(f".st-key-class_show_{TOKENS}_1 label").click()
    wait_idle(teacher.page)
    expect(presenting).not_to_be_checked()
    expect(show).to_be_checked()

    # --- the teacher's replica is killed while the question is open
    victim = teacher.replica
    moved = [m for m in members if m.replica == victim]
    stayed = [m for m in members if m.replica != victim]
    print(f"killing {victim}: it served {[m.name for m in moved]}")
    handshakes = {m.name: _watch_websockets(m) for m in members}
    log = RUN_DIR / f"{victim}.log"
    old_log = log.read_text(errors="replace")
    old_pid = served.pids()[victim]
    killed = time.monotonic()
    os.kill(old_pid, signal.SIGKILL)

    # --- every page works again: the moved tabs on a new websocket, each as who it was
    recovered: dict[str, float] = {}

    def check(m: Member) -> None:
        if m in moved:
            def new_ones() -> list[str]:
                m.page.wait_for_timeout(100)  # Playwright delivers events while called
                return [r for t, r in handshakes[m.name] if t > killed]
            wait_for(new_ones, bool, f"{m.name}: a new websocket after the kill",
                     timeout=RECOVER_S)
        wait_idle(m.page, timeout=RECOVER_S * 1000)
        if m is teacher:
            expect(teacher.page.locator("[data-testid='el-class-code']")).to_have_text(
                code, timeout=RECOVER_S * 1000)
            expect(teacher.page.locator(".st-key-class_start_button")).to_have_count(0)
            expect(question).to_contain_text(answered, timeout=RECOVER_S * 1000)
            expect(teacher.page.locator(f".st-key-class_reveal_{TOKENS} button")
                   ).to_be_visible()
            # a new session, and the switches as the teacher left them (the browser's cookie)
            expect(presenting).not_to_be_checked()
            expect(show).to_be_checked()
        else:
            k = students.index(m)
            assert f"student={tokens[k]}" in m.page.url, (m.name, m.page.url)
            expect(m.main.locator(f".st-key-class_card_{TOKENS}")).to_contain_text(
                f"Sent: {ANSWERS[k]}", timeout=RECOVER_S * 1000)
        recovered[m.name] = time.monotonic() - killed

    for m in moved + stayed:
        check(m)
    lines = [f"RECOVER_S {m.name} ({'moved from ' + victim if m in moved else 'stayed'}, "
             f"now {server_cookie(m.context)}; websockets after the kill "
             f"{[r for t, r in handshakes[m.name] if t > killed]}): {recovered[m.name]:.2f} s"
             for m in members]
    RECOVERY_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    for m in moved:  # its new websocket went to a replica that answers
        assert {r for t, r in handshakes[m.name] if t > killed} <= REPLICAS, handshakes[m.name]

    # --- the pages act again: a moved student changes its answer, the teacher reveals
    mover = next((s for s in students if s in moved), students[-1])
    k = students.index(mover)
    card = mover.main.locator(f".st-key-class_card_{TOKENS}")
    box = card.locator(f'[class*="st-key-lesson_in_{TOKENS}_"] input')
    box.fill(str(CHANGED))
    box.press("Enter")
    wait_idle(mover.page)
    _click(mover.page, f"class_send_{TOKENS}")
    wait_idle(mover.page)
    expect(card.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(
        f"Sent: {CHANGED}")
    given = list(ANSWERS)
    given[k] = CHANGED
    _click(teacher.page, f"class_reveal_{TOKENS}")
    wait_idle(teacher.page)
    right = sum(v == 196 for v in given)
    expect(question).to_contain_text(say("share_right", right=right, n=3, p=100 * right / 3),
                                     timeout=LIVE_S * 1000)
    for s, value in zip(students, given, strict=True):
        summary = s.main.locator(f".st-key-class_card_{TOKENS} [data-testid='stExpander'] "
                                 "summary")
        expect(summary).to_contain_text(verdict(value == 196), timeout=LIVE_S * 1000)
    screenshot(mover.page, "failover_student_revealed")

    # --- the killed replica is back, and its log kept what the killed process wrote
    wait_for(lambda: served.ready() and served.pids().get(victim, old_pid) != old_pid,
             bool, f"{victim} started again and /_balancer/ready 200", timeout=RECOVER_S * 2)
    now = log.read_text(errors="replace")
    assert now.startswith(old_log), f"{log} lost the killed process's lines"
    started = re.compile(r"Uvicorn server started on 127\.0\.0\.1:\d+")
    assert len(started.findall(now)) == len(started.findall(old_log)) + 1, now[-3000:]
    # every line of this run's HAProxy log has its time (the kill is in it: the victim DOWN,
    # then UP), and so have the launcher's own lines in the replica's
    events = this_run(RUN_DIR / "haproxy.log")
    assert any(f"streamlit/{victim} is DOWN" in e for e in events), events
    assert all(ISO_TIME.match(e) for e in events), events
    mine = [e for e in this_run(log) if "lens.serve:" in e]
    assert mine and all(STREAMLIT_TIME.match(e) for e in mine), mine
    for m in members:
        assert_no_errors(m.page)
