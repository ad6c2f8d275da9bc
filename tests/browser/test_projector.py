"""The projector view and the teacher's phone as a remote (issue 51), in Chromium, on one app
server with a store of its own.

A teacher (1400 × 900) starts a class and reads the projector link from "Projector view"; two
projectors open it in browsers of their own (1920 × 1080, one in English, one in 中文), with
every websocket frame they receive kept; a student joins with a nickname (in the store: the
join form is test_class.py's) and answers in a browser of its own. Checked: the
projector has no sidebar (nor its button) and no control of the app in its page (Streamlit's
own menu aside), shows the code, and follows — by itself, no reload — the join, Open, the
answer count, Close, Vote 2, Reveal and End; the seconds each change took to show are printed
("PROJECTOR_S <what>: x.xx s") and kept in test-artifacts/projector-follow.txt. Its frames
hold no nickname ever, and before the reveal neither the answer given (777) nor a share right.

Then the teacher link (`?class=CODE&teacher=KEY&remote=1`, the key from the teacher's cookie)
on a phone (390 × 844, one in English, one in 中文) drives a second class: "Next question"
opens the step's first question and "Close" ends vote 1 — the first teacher page follows each
by itself — and the phone shows the private share right at vote 1 with the Crouch–Mazur hint.
Screenshots of every stage: test-artifacts/projector-shots/projector_*.png, remote_*.png.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from lens import figures
from lens.classroom.store import Store
from lens.i18n import translate
from tests.browser.test_accessibility import assert_axe_clean
from tests.browser.test_class import TOKENS, Member, _click, _start_class, members
from tests.support.browser_helpers import (
    ARTIFACTS,
    MAIN,
    TIMEOUT_MS,
    app_server,
    assert_no_errors,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

WALL = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1400, "height": 900}
NICK = "Zebedee李"
WRONG = 777  # vote 1's answer; vote 2's is right (196)
WALL_TEXT_PX = 32  # the "text ≥ 32 px" on a 1920 × 1080 wall
FOLLOW_BOUND_S = 5.0  # the view looks every 0.5 s; room for a loaded 2-core machine
FOLLOW_FILE = ARTIFACTS / "projector-follow.txt"
SHOTS = ARTIFACTS / "projector-shots"  # a folder of its own: test-artifacts/screenshots is shared


def shot(page: Page, name: str) -> None:
    """The page as it stands (the viewport: the wall's or the phone's screen), in SHOTS."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"))


def say(key: str, lang: str = "en", owner: str = "room", **values: object) -> str:
    return translate(key, lang, owner, **values).replace("**", "")


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store]]:
    """The app's base URL, and the store it opens (a fresh SQLite file)."""
    data = tmp_path_factory.mktemp("projector-data")
    with app_server("streamlit-projector.log", env={"ENCODER_LENS_DATA": str(data)}) as url:
        store = Store(f"sqlite:///{data / 'classes.sqlite'}")
        yield url, store
        store.close()


def _new(browser: Browser, name: str, view: dict, keep: list[Member]) -> Member:
    context = browser.new_context(viewport=view)
    context.set_default_timeout(TIMEOUT_MS)
    m = Member(name, context, context.new_page())
    keep.append(m)
    return m


def _frames(page: Page) -> list[bytes]:
    """Every websocket frame the page receives from now on (Streamlit's ForwardMsgs)."""
    got: list[bytes] = []

    def on_socket(ws) -> None:  # noqa: ANN001 (Playwright's WebSocket)
        ws.on("framereceived", lambda payload: got.append(
            payload if isinstance(payload, bytes) else payload.encode()))

    page.on("websocket", on_socket)
    return got


def _text_of(frames: list[bytes]) -> str:
    """The frames decoded (what a page is sent: deltas' text, HTML, markdown)."""
    out = []
    for f in frames:
        try:
            out.append(str(ForwardMsg.FromString(f)))
        except Exception:  # noqa: BLE001 (a frame that is no ForwardMsg: kept raw)
            out.append(f.decode("utf-8", "replace"))
    return "\n".join(out)


def _shows(page: Page, text: str) -> bool:
    return page.evaluate("t => document.querySelector('[data-testid=\"stMain\"]')"
                         "?.innerText.includes(t) ?? false", text)


def _follows(walls: list[tuple[Member, str]], what: str, texts: list[str],
             log: list[str]) -> None:
    """Seconds until each projector shows its text, polled every 50 ms (no reload)."""
    started = time.monotonic()
    seen: dict[int, float] = {}
    while len(seen) < len(walls) and time.monotonic() < started + 30:
        for k, ((m, _), text) in enumerate(zip(walls, texts, strict=True)):
            if k not in seen and _shows(m.page, text):
                seen[k] = time.monotonic() - started
        time.sleep(0.05)
    lines = [f"PROJECTOR_S {what} ({walls[k][1]}): {seen[k]:.2f} s" for k in sorted(seen)]
    print("\n".join(lines))
    log.extend(lines)
    assert sorted(seen) == list(range(len(walls))), (what, lines, texts)
    assert max(seen.values()) <= FOLLOW_BOUND_S, (what, lines)


def _no_frame_nor_control(page: Page) -> None:
    expect(page.locator('[data-testid="stSidebar"]')).to_be_hidden()
    for sel in ('[data-testid="stSidebarCollapsedControl"]',
                '[data-testid="stExpandSidebarButton"]'):
        expect(page.locator(sel)).to_be_hidden()
    controls = page.locator(f"{MAIN} :is(button, input, select, textarea, [role='slider'])")
    visible = [controls.nth(i).evaluate("e => e.outerHTML.slice(0, 300)")
               for i in range(controls.count()) if controls.nth(i).is_visible()]
    assert not visible, visible


def _projector_link(teacher: Member) -> str:
    teacher.main.get_by_text(say("projector_link_title"), exact=True).click()
    link = teacher.main.locator("[data-testid='el-projector-link']")
    expect(link).to_be_visible()
    return link.get_attribute("href")


def _student(browser: Browser, room: tuple[str, Store], code: str,
             keep: list[Member]) -> Member:
    """A student with a nickname, joined in the store (the join form is tests/browser/
    test_class.py's), on the class's step in a browser of its own."""
    base, store = room
    token = store.join(code, "127.0.0.9", NICK)
    s = _new(browser, "student", LAPTOP, keep)
    s.page.goto(f"{base}/overview?class={code}&student={token}")
    wait_idle(s.page)
    return s


def _answer(s: Member, value: int) -> None:
    card = s.main.locator(f".st-key-class_card_{TOKENS}")
    box = card.locator(f'[class*="st-key-lesson_in_{TOKENS}_"] input')
    expect(box).to_be_visible(timeout=30_000)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(s.page)
    _click(s.page, f"class_send_{TOKENS}")
    wait_idle(s.page)
    expect(card.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(str(value))


def _wall_text_px(page: Page) -> dict[str, float]:
    """Each chart of the wall's main area: its smallest text as displayed, in CSS px (the PNG's
    own smallest text, `figures.min_text_px`, × shown width ÷ natural width), by the chart's
    container (`st-key-room_chart_…`)."""
    found = {}
    for box in page.locator(f"{MAIN} [class*='st-key-room_chart_']").all():
        key = next(c for c in (box.get_attribute("class") or "").split()
                   if c.startswith("st-key-room_chart_"))
        for img in box.locator("img").all():
            shown, natural = img.evaluate("i => [i.clientWidth, i.naturalWidth]")
            body = page.context.request.get(img.get_attribute("src")).body()
            smallest = figures.min_text_px(body)
            if smallest is not None and natural:
                found[key.removeprefix("st-key-")] = round(smallest * shown / natural, 1)
    return found


def _settled(page: Page) -> None:
    """The remote's run has finished (it has no title for `wait_idle` to wait on)."""
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
    page.wait_for_timeout(300)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')


def _shoot(walls: list[tuple[Member, str]], stage: str) -> None:
    for m, lang in walls:
        m.page.wait_for_timeout(600)  # the fragment's last look drawn
        shot(m.page, f"projector_{stage}_{lang}")


def test_the_projector_follows_the_class_and_is_sent_nothing_early(
        browser: Browser, room: tuple[str, Store]) -> None:
    room_url = room[0]
    log: list[str] = []
    with members("projector") as keep:
        teacher = _new(browser, "teacher", LAPTOP, keep)
        teacher.page.goto(f"{room_url}/class")
        wait_idle(teacher.page)
        code = _start_class(teacher.page)
        link = _projector_link(teacher)
        assert f"class={code}" in link and "teacher=" not in link
        walls = []
        for lang in ("en", "zh"):
            wall = _new(browser, f"projector-{lang}", WALL, keep)
            frames = _frames(wall.page)
            wall.page.goto(link.replace("lang=en", f"lang={lang}"))
            expect(wall.page.locator("[data-testid='el-room-code']")).to_have_text(code)
            walls.append((wall, lang, frames))
        pairs = [(m, lang) for m, lang, _ in walls]
        for m, _, _ in walls:
            _no_frame_nor_control(m.page)
        _shoot(pairs, "1_join")

        student = _student(browser, room, code, keep)
        _follows(pairs, "join", [say("projector_students", lang, n=1) for _, lang in pairs], log)

        _click(teacher.page, f"class_open_{TOKENS}")
        _follows(pairs, "open", [say("stage_open", lang) for _, lang in pairs], log)
        _answer(student, WRONG)
        _follows(pairs, "answer", ["1 / 1"] * 2, log)
        wait_idle(teacher.page)
        _click(teacher.page, f"class_countdown_{TOKENS}_90")  # the wall counts down
        _follows(pairs, "countdown", [say("projector_left", lang, s=90).split("90")[0].strip()
                                      or "s left" for _, lang in pairs], log)
        _shoot(pairs, "2_vote1")
        for m, lang in pairs:  # WCAG 2.1 AA (issue 52): the wall during a vote
            assert_axe_clean(m.page, f"projector, {lang}, vote 1")
        assert_axe_clean(teacher.page, "teacher, en, vote 1")
        assert_axe_clean(student.page, "student, en, vote 1 answered")
        wait_idle(teacher.page)
        _click(teacher.page, f"class_close_{TOKENS}")
        _follows(pairs, "close", [say("projector_discuss", lang) for _, lang in pairs], log)
        _shoot(pairs, "3_discuss")
        wait_idle(teacher.page)
        _click(teacher.page, f"class_vote2_{TOKENS}")
        _follows(pairs, "vote 2", [say("stage_vote2", lang) for _, lang in pairs], log)
        _answer(student, 196)
        _follows(pairs, "answer 2", ["1 / 1"] * 2, log)
        _shoot(pairs, "4_vote2")
        for m, _, _ in walls:
            _no_frame_nor_control(m.page)
        before = {lang: _text_of(list(frames)) for _, lang, frames in walls}
        for lang, text in before.items():
            assert code in text, lang  # the frames were read: the code is in them
            assert not re.search(rf"(?<![\w.]){WRONG}(?![\w.])", text), (
                lang, "an answer before the reveal")  # (not inside a hash or a number)
            assert say("projector_right", lang, right=0, n=1) not in text, lang

        wait_idle(teacher.page)
        _click(teacher.page, f"class_reveal_{TOKENS}")
        _follows(pairs, "reveal", [say("projector_moves", lang) for _, lang in pairs], log)
        _shoot(pairs, "5_revealed")
        for m, lang in pairs:  # its charts, the moves
            assert_axe_clean(m.page, f"projector, {lang}, revealed")
            sizes = _wall_text_px(m.page)  # read from the back of the hall: ≥ 32 px
            log.append(f"PROJECTOR_TEXT_PX revealed ({lang}): {sizes}")
            print(log[-1])
            assert sizes and min(sizes.values()) >= WALL_TEXT_PX, (lang, sizes)
        wait_idle(teacher.page)
        assert_axe_clean(teacher.page, "teacher, en, revealed")
        for m, _, _ in walls:
            _no_frame_nor_control(m.page)

        wait_idle(teacher.page)
        teacher.main.locator("summary").filter(has_text=say("end_title", owner="class")).click()
        teacher.page.locator(".st-key-class_end_sure label").click()
        wait_idle(teacher.page)
        _click(teacher.page, "class_end")
        _follows(pairs, "end", [say("projector_ended", lang) for _, lang in pairs], log)
        for m, lang, frames in walls:
            text = _text_of(list(frames))
            assert NICK not in text and NICK.encode() not in b"".join(frames), lang
            assert_no_errors(m.page)
    FOLLOW_FILE.parent.mkdir(parents=True, exist_ok=True)
    FOLLOW_FILE.write_text("\n".join(log) + "\n")


def test_the_teachers_phone_drives_the_class_and_the_laptop_follows(
        browser: Browser, room: tuple[str, Store]) -> None:
    room_url = room[0]
    with members("remote") as keep:
        laptop = _new(browser, "teacher", LAPTOP, keep)
        laptop.page.goto(f"{room_url}/class")
        wait_idle(laptop.page)
        code = _start_class(laptop.page)
        cookie = next(c["value"] for c in laptop.context.cookies()
                      if c["name"] == "encoder_lens_teacher")
        key = cookie.split(".", 1)[1]
        student = _student(browser, room, code, keep)
        phones = []
        for lang in ("en", "zh"):
            phone = _new(browser, f"phone-{lang}", PHONE, keep)
            phone.page.goto(f"{room_url}/class?class={code}&teacher={key}&remote=1&lang={lang}")
            expect(phone.page.locator(".st-key-class_remote_next button")).to_be_visible()
            wait_for(lambda p=phone: p.page.url, lambda u: "teacher=" not in u,
                     "the key out of the phone's address bar")
            phones.append((phone, lang))
        for phone, lang in phones:
            shot(phone.page, f"remote_1_ready_{lang}")

        question = laptop.main.locator(f".st-key-class_question_{TOKENS}")
        expect(question).to_contain_text(say("state_new", owner="class"))
        phone, _ = phones[0]
        _click(phone.page, "class_remote_next")  # the step's first question: vote 1
        expect(question).to_contain_text(say("state_open", owner="class"),
                                         timeout=FOLLOW_BOUND_S * 1000)  # the laptop follows
        _answer(student, WRONG)
        for p, lang in phones:
            expect(p.page.locator("[data-testid='el-remote-count']")).to_have_text(
                "1 / 1", timeout=FOLLOW_BOUND_S * 1000)
            shot(p.page, f"remote_2_vote1_{lang}")
        _settled(phone.page)
        _click(phone.page, f"class_remote_close_vote_{TOKENS}")
        expect(question).to_contain_text(say("state_discuss", owner="class"),
                                         timeout=FOLLOW_BOUND_S * 1000)
        for p, lang in phones:
            hint = p.page.locator(f".st-key-class_hint_{TOKENS}")
            expect(hint).to_contain_text(say("hint_low", lang, p=0, right=0, n=1)[:12],
                                         timeout=FOLLOW_BOUND_S * 1000)
            shot(p.page, f"remote_3_discuss_{lang}")
            assert_axe_clean(p.page, f"remote, {lang}, phone, discuss")
        # "Presenting" is on on the laptop: no hint, no QR code of the key there
        expect(laptop.main.locator(f".st-key-class_hint_{TOKENS}")).to_have_count(0)
        for m in keep:
            assert_no_errors(m.page)
