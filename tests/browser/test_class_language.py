"""A live class's language and the room's screens in Chromium (issue 51, item 9), each test
short, on one app server with a store of its own.

- A student's phone (390 × 844: Streamlit folds the sidebar away) opens the join link: the
  language switch is in the page itself and works by the keyboard alone (focus, an arrow key),
  turning the join page — and `<html lang>` — to 中文; the student joins in 中文; the join link
  opened again in a new tab of the same browser is in 中文 (the browser's cookie), and a reload
  of the student's page stays in 中文.
- The projector view (framed by nothing: no layout behaviours in a sidebar) declares its
  language, `<html lang="zh-CN">` for a 中文 projector and "en" for an English one, and a
  document title of its own.
- The teacher's phone as a remote counts the students as they join (no reload); the teacher
  link opened in 中文 is the teacher's page in 中文.
Each of these pages passes axe (WCAG 2.1 AA, tests/browser/test_accessibility.py's rules): the
join page (en, zh) and the student's page (zh) on the phone, the projector (en, zh), the
remote, the teacher's page in 中文 (the English teacher's, the wall at a vote and revealed: in
tests/browser/test_projector.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from lens.classroom import room as room_reads
from lens.classroom.store import Store
from lens.i18n import translate
from lens.keys import CLASS_LANG_SWITCH
from tests.browser.test_accessibility import assert_axe_clean
from tests.browser.test_class import members
from tests.browser.test_projector import _new
from tests.support.browser_helpers import MAIN, TIMEOUT_MS, app_server, assert_no_errors, wait_idle

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
WALL = {"width": 1920, "height": 1080}
LAPTOP = {"width": 1400, "height": 900}
FOLLOW_S = 5.0  # the remote looks every second; room for a loaded 2-core machine


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store]]:
    """The app's base URL, and the store it opens (a fresh SQLite file)."""
    data = tmp_path_factory.mktemp("class-language-data")
    with app_server("streamlit-class-language.log", env={"ENCODER_LENS_DATA": str(data)}) as url:
        store = Store(f"sqlite:///{data / 'classes.sqlite'}")
        yield url, store
        store.close()


def _html_lang(page: Page) -> str:
    return page.evaluate("document.documentElement.lang")


def _join_button(page: Page, lang: str) -> None:
    expect(page.locator(".st-key-class_join_button button")).to_have_text(
        translate("join_button", lang, "class"))


def test_a_phone_turns_the_join_page_to_chinese_by_the_keyboard_and_keeps_it(
        browser: Browser, served: tuple[str, Store]) -> None:
    base, store = served
    code, _ = store.create_class({}, "overview")
    with members("class-language") as keep:
        phone = _new(browser, "phone", PHONE, keep)
        page = phone.page
        page.goto(f"{base}/class?class={code}")
        wait_idle(page)
        expect(page.locator('[data-testid="stSidebar"]')).to_have_attribute(
            "data-collapsed", "true")  # folded away: only the page's own switch is in sight
        switch = page.locator(f"{MAIN} .st-key-{CLASS_LANG_SWITCH}")
        expect(switch).to_be_in_viewport()
        assert_axe_clean(page, "join page, en, phone")
        radios = switch.locator("input[type=radio]")
        expect(radios).to_have_count(2)
        radios.nth(0).focus()  # the keyboard alone: focus, then an arrow key
        page.keyboard.press("ArrowRight")
        _join_button(page, "zh")
        wait_idle(page)
        assert _html_lang(page) == "zh-CN"
        assert_axe_clean(page, "join page, zh, phone")
        page.locator(".st-key-class_join_button button").focus()
        page.keyboard.press("Enter")  # joined in 中文: the class's step, the switch on top
        expect(page.locator(f"{MAIN} .st-key-{CLASS_LANG_SWITCH}")).to_be_visible()
        expect(page.locator(MAIN)).to_contain_text(
            translate("student_caption", "zh", "class", code=code).split("：")[0])
        wait_idle(page)
        assert_axe_clean(page, "student page, zh, phone")
        token = page.evaluate("new URLSearchParams(location.search).get('student')")
        assert token and store.language_of(code, token) == "zh"
        kept = {c["name"]: c["value"] for c in phone.context.cookies()}
        assert kept.get("encoder_lens_lang") == "zh", kept

        tab = phone.context.new_page()  # the join link again, in a new tab of this browser
        tab.goto(f"{base}/class?class={code}")
        _join_button(tab, "zh")
        wait_idle(tab)
        assert _html_lang(tab) == "zh-CN"
        tab.close()

        page.reload()  # a new session with the student's link
        wait_idle(page)
        expect(page.locator(MAIN)).to_contain_text(
            translate("student_caption", "zh", "class", code=code).split("：")[0])
        assert _html_lang(page) == "zh-CN"
        assert_no_errors(page)


def test_the_projector_declares_its_language_and_the_remote_counts_students_live(
        browser: Browser, served: tuple[str, Store]) -> None:
    base, store = served
    code, key = store.create_class({}, "overview")
    token = room_reads.projector_token(store, code, key)
    with members("class-projector-language") as keep:
        for lang, tag in (("zh", "zh-CN"), ("en", "en")):
            wall = _new(browser, f"projector-{lang}", WALL, keep).page
            wall.goto(f"{base}/class?class={code}&projector={token}&lang={lang}")
            expect(wall.locator("[data-testid='el-room-code']")).to_have_text(code)
            expect(wall).to_have_title(translate("projector_title", lang, "room", code=code))
            wall.wait_for_function(f"document.documentElement.lang === {tag!r}",
                                   timeout=TIMEOUT_MS)
            assert_axe_clean(wall, f"projector, {lang}, joining")
            assert_no_errors(wall)

        remote = _new(browser, "remote", PHONE, keep).page
        remote.goto(f"{base}/class?class={code}&teacher={key}&remote=1")
        caption = remote.locator(MAIN).get_by_text(
            translate("remote_caption", "en", "room", code=code, n=0))
        expect(caption).to_be_visible()
        store.join(code, "127.0.0.9", "Late")  # no reload: the caption follows
        expect(remote.locator(MAIN).get_by_text(
            translate("remote_caption", "en", "room", code=code, n=1))).to_be_visible(
                timeout=FOLLOW_S * 1000)
        assert_axe_clean(remote, "remote, en, phone")
        assert_no_errors(remote)

        teacher = _new(browser, "teacher-zh", LAPTOP, keep).page  # the teacher link, in 中文
        teacher.goto(f"{base}/class?class={code}&teacher={key}&lang=zh")
        expect(teacher.locator("[data-testid='el-class-code']")).to_have_text(code)
        wait_idle(teacher)
        assert _html_lang(teacher) == "zh-CN"
        assert_axe_clean(teacher, "teacher, zh, laptop")
        assert_no_errors(teacher)
