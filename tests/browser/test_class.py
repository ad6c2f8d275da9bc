"""A live class (issue 25) through `scripts/serve --replicas 2`, in Chromium: a teacher and three
students, each in a browser context of its own (its own cookies: its own SERVERID, so its own
replica), on a fresh SQLite store (ENCODER_LENS_DATA in a temporary folder) that both replicas
open.

The teacher starts a class on /class; two students join by the link (/class?class=CODE), the
third by typing the code on /class; nicknames include "<b>x</b>", which the teacher's page must
show as text. Checked, in this order: the four sessions land on both replicas (X-Replica of the
first page = SERVERID); the teacher's page counts three students, shows no nickname while
presenting (the default) and, the switch off, the nicknames escaped; the teacher asks the
overview's first question (how many tokens: 196 at the defaults);
the students answer (196, 196, 200) and each sees "sent"; a student who reloads is the same
student (the token in the link) and sees the answer it sent; the teacher's live count reaches
"3 of 3 answered" with no histogram (the projector gives nothing away) until the teacher turns
on "show the answers"; the teacher reveals (a single vote) and every student's card turns into
the reveal with its verdict; the teacher brings everyone to step 7 (Multi-head attention) and
every student's page follows (location.pathname /multihead; the seconds each took are printed
as "FOLLOW_S student k: x.xx s" and kept in test-artifacts/class-follow.txt); a student who
reloads there stays in the class on that step; a teacher who reloads /class?class=CODE — on its
replica, and on the other one — is still the teacher (the panel, not the start form), and a
second browser opening the teacher link (?teacher=KEY) becomes the teacher with the key taken
out of its address bar. No teacher URL holds "teacher=" after its first load; no page shows an
exception. Logs: test-artifacts/serve-class/ and test-artifacts/serve-class.log.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from lens.i18n import translate
from tests.support.browser_helpers import (
    ARTIFACTS,
    MAIN,
    TIMEOUT_MS,
    address,
    assert_no_errors,
    balancer,
    screenshot,
    server_cookie,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

RUN_DIR = ARTIFACTS / "serve-class"
VIEW = {"width": 1400, "height": 900}
REPLICAS = {"r1", "r2"}
LIVE_S = 30  # generous bound for what a 2 s fragment must bring (a loaded 2-core machine)
TOKENS = "overview_tokens"  # the overview's first question: how many tokens (196 by default)
NICKS = ("Ada", "<b>x</b>", "")  # the third joins without one
ANSWERS = (196, 196, 200)  # two right, one wrong
FOLLOW_FILE = ARTIFACTS / "class-follow.txt"


def say(key: str, **values: object) -> str:
    return translate(key, "en", "class", **values)


def verdict(right: bool) -> str:
    return say("revealed_label", verdict=say("verdict_right" if right else "verdict_wrong"),
               task=translate(f"{TOKENS}_short", "en", "overview"))  # the task's step


@dataclass
class Member:
    """One browser of the class: its context, its page, what the balancer said of it."""
    name: str
    context: BrowserContext
    page: Page
    replica: str = ""  # X-Replica of its first document
    urls: list[str] = field(default_factory=list)  # every URL its main frame had

    @property
    def main(self) -> Locator:
        return self.page.locator(MAIN)


@pytest.fixture(scope="module")
def class_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Two replicas behind HAProxy, on a store of their own (a fresh SQLite file)."""
    data = tmp_path_factory.mktemp("class-data")
    with balancer(RUN_DIR, "serve-class.log", env={"ENCODER_LENS_DATA": str(data)}) as url:
        yield url


def _member(browser: Browser, name: str, keep: list[Member]) -> Member:
    context = browser.new_context(viewport=VIEW)
    context.set_default_timeout(TIMEOUT_MS)
    m = Member(name, context, context.new_page())
    m.page.on("framenavigated", lambda f: m.urls.append(f.url) if f == m.page.main_frame
              else None)
    keep.append(m)  # stays open (its websocket too) while the next one starts
    return m


def _open(m: Member, url: str) -> None:
    """The member's first page: which replica served it, and its cookie says the same."""
    first = m.page.goto(url)
    m.replica = first.headers.get("x-replica", "") if first else ""
    wait_idle(m.page)
    assert m.replica in REPLICAS and server_cookie(m.context) == m.replica, (
        m.name, m.replica, m.context.cookies())


def _click(page: Page, key: str) -> None:
    page.locator(f".st-key-{key} button").click()


def _start_class(page: Page) -> str:
    """Start a class on the teacher's /class page; its join code, once the panel shows it."""
    _click(page, "class_start_button")
    code_el = page.locator("[data-testid='el-class-code']")
    expect(code_el).to_be_visible()
    code = code_el.inner_text().strip()
    assert re.fullmatch(r"[A-Z0-9]{6,}", code), code
    wait_idle(page)
    return code


def _pathname(page: Page) -> str:
    return page.evaluate("location.pathname")


def _href(page: Page) -> str:
    return page.evaluate("location.href")


def _join(m: Member, base: str, code: str, nick: str, by_link: bool) -> str:
    """Join (by the link, or by typing the code on /class); the student's token."""
    _open(m, f"{base}/class?class={code}" if by_link else f"{base}/class")
    code_box = m.page.locator(".st-key-class_code_input input")
    if by_link:
        expect(code_box).to_have_value(code)  # the link fills it in
    else:
        code_box.fill(code)
        code_box.press("Enter")
        wait_idle(m.page)
    if nick:
        box = m.page.locator(".st-key-class_nickname_input input")
        box.fill(nick)
        box.press("Enter")
        wait_idle(m.page)
    _click(m.page, "class_join_button")
    # on to the class's step (the overview), the class and the token in the link
    wait_for(lambda: _href(m.page), lambda u: "/overview?" in u and "student=" in u,
             f"{m.name} switched to the class's step")
    wait_idle(m.page)
    expect(m.main.locator(f".st-key-class_card_{TOKENS}")).to_contain_text(
        say("waiting_title", k=1, n=2))
    token = re.search(r"[?&]student=([^&]+)", m.page.url).group(1)
    assert f"class={code}" in m.page.url, m.page.url
    return token


def _answer(m: Member, value: int) -> None:
    card = m.main.locator(f".st-key-class_card_{TOKENS}")
    box = card.locator(f'[class*="st-key-lesson_in_{TOKENS}_"] input')
    expect(box).to_be_visible(timeout=LIVE_S * 1000)  # the teacher opened it: the follower ran
    box.fill(str(value))
    box.press("Enter")
    wait_idle(m.page)
    _click(m.page, f"class_send_{TOKENS}")
    wait_idle(m.page)
    expect(card.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(
        f"Sent: {value}")


def _choose_step(page: Page, label: str) -> None:
    """Pick a step in the teacher's selectbox (a combobox: its button opens the list)."""
    page.locator(".st-key-class_step_choice button[aria-haspopup='listbox']").click()
    page.get_by_role("option", name=label, exact=True).click()
    expect(page.locator(".st-key-class_step_choice input")).to_have_value(label)
    wait_idle(page)
    expect(page.locator(".st-key-class_bring button")).to_be_enabled()


@contextmanager
def members(test: str) -> Iterator[list[Member]]:
    """The list the test's browsers join (`_member`): on a failure each open page is saved as
    FAILED-<test>_<name>.png; every context is closed at the end."""
    keep: list[Member] = []
    try:
        yield keep
    except Exception:
        for m in keep:
            if not m.page.is_closed():
                screenshot(m.page, f"FAILED-{test}_{m.name}")
        raise
    finally:
        for m in keep:
            m.context.close()


def test_a_class_of_three_on_two_replicas(browser: Browser, class_url: str) -> None:
    with members("class") as keep:
        _class(browser, class_url, keep)


def _class(browser: Browser, base: str, keep: list[Member]) -> None:
    # --- the teacher starts a class
    teacher = _member(browser, "teacher", keep)
    _open(teacher, f"{base}/class")
    code = _start_class(teacher.page)
    expect(teacher.main.get_by_text(f"{base}/class?class={code}", exact=True)).to_be_visible()
    expect(teacher.main.locator('[data-testid="stImage"] img').first).to_be_visible()  # QR
    key = wait_for(lambda: next((c["value"] for c in teacher.context.cookies()
                                 if c["name"] == "encoder_lens_teacher"), ""),
                   lambda v: v.startswith(f"{code}."), "the teacher's cookie")
    expect(teacher.main).to_contain_text(say("students_count", n=0))

    # --- three students join: two by the link, one by typing the code
    students = [_member(browser, f"student{k + 1}", keep) for k in range(3)]
    tokens = [_join(s, base, code, nick, by_link=k != 1)
              for k, (s, nick) in enumerate(zip(students, NICKS, strict=True))]
    assert len(set(tokens)) == 3, tokens
    replicas = [m.replica for m in (teacher, *students)]
    print(f"replicas: teacher {teacher.replica}, students {replicas[1:]}")
    assert set(replicas) == REPLICAS, replicas  # both replicas serve the class

    # the teacher's live roster: three; presenting (the default), no nickname; the switch
    # off, the nicknames as plain text
    expect(teacher.main).to_contain_text(say("students_count", n=3), timeout=LIVE_S * 1000)
    expect(teacher.main).not_to_contain_text("Ada")
    teacher.page.locator(".st-key-class_presenting label").click()
    wait_idle(teacher.page)
    nick_box = teacher.main.locator('[data-testid="stExpander"]').filter(
        has_text=say("nicknames", n=2))
    nick_box.locator("summary").click()
    expect(nick_box.get_by_text("<b>x</b>")).to_be_visible()
    expect(nick_box).to_contain_text("Ada")
    assert teacher.page.locator(f"{MAIN} b").count() == 0, "a nickname became markup"

    # --- the teacher asks the first question; the students answer
    question = teacher.main.locator(f".st-key-class_question_{TOKENS}")
    _click(teacher.page, f"class_open_{TOKENS}")
    wait_idle(teacher.page)
    expect(teacher.page.locator(f".st-key-class_reveal_{TOKENS} button")).to_be_visible()
    expect(question).to_contain_text(say("answered_of", n=0, of=3))
    for s, value in zip(students, ANSWERS, strict=True):
        _answer(s, value)

    # a student who reloads is the same student: its token kept, its answer shown as sent
    first = students[0]
    first.page.reload()
    wait_idle(first.page)
    assert f"student={tokens[0]}" in first.page.url, first.page.url
    expect(first.main.locator(f".st-key-class_card_{TOKENS}")).to_contain_text(
        f"Sent: {ANSWERS[0]}")

    # the teacher's live count, and the histogram only on the teacher's demand
    expect(question).to_contain_text(say("answered_of", n=3, of=3), timeout=LIVE_S * 1000)
    chart = question.locator('[data-testid="stImage"] img')
    expect(chart).to_have_count(0)
    teacher.page.locator(f".st-key-class_show_{TOKENS}_1 label").click()
    wait_idle(teacher.page)
    expect(chart.first).to_be_visible(timeout=LIVE_S * 1000)
    wait_for(lambda: chart.first.evaluate("i => i.complete && i.naturalWidth"),
             bool, "the histogram loaded")
    screenshot(teacher.page, "class_teacher_histogram")

    # --- the reveal reaches every student
    _click(teacher.page, f"class_reveal_{TOKENS}")
    wait_idle(teacher.page)
    expect(question).to_contain_text(say("share_right", right=2, n=3, p=100 * 2 / 3))
    for s, value in zip(students, ANSWERS, strict=True):
        summary = s.main.locator(f".st-key-class_card_{TOKENS} [data-testid='stExpander'] "
                                 "summary")
        expect(summary).to_contain_text(verdict(value == 196), timeout=LIVE_S * 1000)
    card = students[2].main.locator(f".st-key-class_card_{TOKENS}")
    expect(card).to_contain_text("Your answer: 200")  # its own, beside the model's
    expect(card).to_contain_text(say("share_right", right=2, n=3, p=100 * 2 / 3))
    screenshot(students[2].page, "class_student_revealed")

    # --- bring everyone to step 7: every student follows, timed
    _choose_step(teacher.page, "7. Multi-head attention")
    started = time.monotonic()
    _click(teacher.page, "class_bring")
    followed: dict[int, float] = {}
    deadline = started + LIVE_S
    while len(followed) < len(students) and time.monotonic() < deadline:
        for k, s in enumerate(students):
            if k not in followed and _pathname(s.page) == "/multihead":
                followed[k] = time.monotonic() - started
        time.sleep(0.05)
    lines = [f"FOLLOW_S student {k + 1}: {followed[k]:.2f} s" for k in sorted(followed)]
    FOLLOW_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    assert sorted(followed) == [0, 1, 2], (
        f"not every student followed to /multihead in {LIVE_S} s: {lines}, at "
        f"{[_pathname(s.page) for s in students]}")
    wait_idle(teacher.page)
    expect(teacher.main).to_contain_text(say("class_on", step="7. Multi-head attention")
                                         .replace("**", ""))
    for k, s in enumerate(students):
        wait_idle(s.page)
        expect(s.main.locator("h1").first).to_contain_text("Multi-head attention")
        assert f"student={tokens[k]}" in s.page.url, s.page.url

    # a student who reloads on the new step stays there, the same student
    second = students[1]
    second.page.reload()
    wait_idle(second.page)
    assert _pathname(second.page) == "/multihead" and f"student={tokens[1]}" in second.page.url
    expect(second.main).to_contain_text(say("student_caption", code=code))

    # --- a teacher who reloads is still the teacher: on its replica, then on the other one
    teacher.page.goto(f"{base}/class?class={code}")
    wait_idle(teacher.page)
    _is_panel_on_step(teacher, code)
    other = (REPLICAS - {teacher.replica}).pop()
    teacher.context.add_cookies([{"name": "SERVERID", "value": other, "url": base}])
    again = teacher.page.goto(f"{base}/class?class={code}")
    assert again and again.headers.get("x-replica") == other
    wait_idle(teacher.page)
    _is_panel_on_step(teacher, code)

    # the teacher link in a new browser: read once, out of the address bar, the panel
    second_teacher = _member(browser, "teacher2", keep)
    second_teacher.page.goto(f"{base}/class?class={code}&teacher={key.split('.', 1)[1]}")
    wait_idle(second_teacher.page)
    _is_panel_on_step(second_teacher, code)
    wait_for(lambda: address(second_teacher.page), lambda u: "teacher=" not in u,
             "the key out of the address bar")

    for t in (teacher, second_teacher):
        # the address bar's changes within the page (the app writes ?class=CODE) are recorded
        assert any(f"class={code}&" in u or u.endswith(f"class={code}") for u in t.urls[1:]), (
            t.name, t.urls)
        later = t.urls[1:] if t is second_teacher else t.urls  # its first load held the key
        assert not [u for u in later if "teacher=" in u], (t.name, t.urls)
    for m in keep:
        assert_no_errors(m.page)


def _is_panel_on_step(m: Member, code: str) -> None:
    expect(m.page.locator("[data-testid='el-class-code']")).to_have_text(code)
    expect(m.page.locator(".st-key-class_start_button")).to_have_count(0)
    expect(m.main).to_contain_text(say("class_on", step="7. Multi-head attention")
                                   .replace("**", ""))
