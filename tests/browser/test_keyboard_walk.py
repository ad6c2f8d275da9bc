"""The keyboard alone (issue 52 item 3; WCAG 2.1.1, 2.4.3, 2.4.7), in Chromium, with keys only:
`page.keyboard` (Tab, Shift+Tab, Enter, Space, the arrow keys, digits typed), never a click.

- The whole lesson in 中文: the concept check before (Tab into each question's radios, Space
  or the arrow keys, Enter on "send"), every step's questions — a number or a shape (digits,
  Enter), a choice (arrow keys), an estimate, the patch picker (its arrow keys move the query
  and commit it) — each followed by Enter on "Check" and judged right, Next reached by
  Shift+Tab and opened by Enter, and the check after, ending on the summary with the result
  (3 of 6 before, 6 of 6 after). Once the check before is sent, every control wanted comes
  after the one before in Tab's order: a walk that passes the sidebar or the skip link again
  (Tab started over at the page's top) fails. The picker keeps the focus over the rerun its
  commit makes, and its accessible name says the choice.
- No pointer event reaches the page: a listener in the capture phase counts every trusted
  pointerdown / mousedown / touchstart (and up) and every click with a pointer's detail (a
  key's click on a button has detail 0), and the count stays 0 (the English test shows that it
  counts a real mouse).
- Focus visible: the first element of each kind that Tab reaches (tag, type, test id, sidebar
  or main) is screenshotted with a 6 px margin focused and not (the caret hidden); at least
  MIN_RING pixels must change by more than 40 levels.
- A class by keys: the teacher starts it (Enter), turns "presenting" off (Space), opens the
  nicknames (Enter) and the first question; a student types the code and a nickname, presses
  Join, types the answer and presses Send.
- English, briefly: the check skipped, the overview's first question answered, Next and
  Previous.

The walk's answers are computed as the app computes them (`test_lesson.default_tasks`).
`ENCODER_LENS_KEYBOARD_URL=http://…` runs it against a server started by hand.
"""

from __future__ import annotations

import io
import os
import re
import time
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Browser, Page, expect

from lens.i18n import translate
from lens.lesson.concepts import OWNER as CONCEPTS
from lens.lesson.concepts import POST, PRE, QUESTIONS
from lens.lesson.ui.check import RESULT_KEY
from lens.steps import STEPS
from tests.browser.test_lesson import default_tasks
from tests.support.browser_helpers import (
    MAIN,
    TIMEOUT_MS,
    app_server,
    assert_no_errors,
    open_app,
    screenshot,
    wait_for,
    wait_idle,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP = {"width": 1400, "height": 900}
MIN_RING = 100  # pixels that change when an element takes the focus: a 1 px ring round a
#                24 px button changes ~100
MAX_TABS = 90  # from anywhere to any control of a page: its sidebar has ~20 stops, its main ~20

# Counts what a pointer did to the page (kept in sessionStorage: it survives a reload): a key
# never makes a pointerdown or mousedown, and the click it makes on a button has detail 0.
NO_POINTER_JS = """(() => {
  const count = () => {
    sessionStorage.__pointer = String(Number(sessionStorage.__pointer || 0) + 1);
  };
  for (const type of ["pointerdown", "mousedown", "touchstart", "pointerup", "mouseup"]) {
    window.addEventListener(type, (e) => { if (e.isTrusted) count(); }, true);
  }
  window.addEventListener("click", (e) => { if (e.isTrusted && e.detail > 0) count(); }, true);
})();"""

# What has the keyboard's focus — inside a component's shadow root, its own element: its
# kind, its name, the keys of the Streamlit containers around it (innermost first), whether
# it is in the sidebar and matches :focus-visible.
FOCUSED_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  if (!e || e === document.body) return null;
  const host = e.getRootNode().host || e;
  const keys = [];
  for (let p = host; p; p = p.parentElement) {
    const m = (p.className && p.className.toString().match(/\\bst-key-[^ ]+/));
    if (m) keys.push(m[0].slice(7));
  }
  return {tag: e.tagName.toLowerCase(), type: e.type || "", testid: e.dataset.testid || "",
          role: e.getAttribute("role") || "", checked: !!e.checked,
          label: (e.getAttribute("aria-label") || e.textContent || e.value || "").trim()
            .slice(0, 60),
          keys: keys, side: !!host.closest('[data-testid="stSidebar"]'),
          visible: e.matches(":focus-visible")};
}"""


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Iterator[str]:
    """The app with a class store of its own (a fresh SQLite file); or, with
    ENCODER_LENS_KEYBOARD_URL=http://…, a server started by hand."""
    if os.environ.get("ENCODER_LENS_KEYBOARD_URL"):
        yield os.environ["ENCODER_LENS_KEYBOARD_URL"]
        return
    data = tmp_path_factory.mktemp("keyboard-data")
    with app_server("streamlit-keyboard.log", env={"ENCODER_LENS_DATA": str(data)}) as url:
        yield url


def keyboard_page(browser: Browser) -> Page:
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(TIMEOUT_MS)
    context.add_init_script(NO_POINTER_JS)
    return context.new_page()


def pointer_events(page: Page) -> int:
    return int(page.evaluate("Number(sessionStorage.__pointer || 0)"))


def focused(page: Page) -> dict | None:
    return page.evaluate(FOCUSED_JS)


class Walk:
    """A keyboard's walk through a page: Tab (or Shift+Tab) until the wanted element has the
    focus; the first element of each kind reached kept with how plainly its focus shows."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.kinds: dict[str, dict] = {}  # kind -> the first element of that kind reached
        self.tabs = 0
        self.in_order = False  # on: the wanted element must come before the sidebar's (Tab
        #                        goes on in the page's order, it never starts over at the top)

    def tab_to(self, want: Callable[[dict], bool], what: str, back: bool = False) -> dict:
        seen = []
        for _ in range(MAX_TABS):
            self.page.keyboard.press("Shift+Tab" if back else "Tab")
            self.tabs += 1
            now = focused(self.page)
            if now is None:
                continue
            seen.append(f"{now['tag']}:{now['testid']}:{'/'.join(now['keys'][:1])}")
            self.remember(now)
            if want(now):
                return now
            if self.in_order and (now["side"] or now["testid"] == "stSkipToContent"):
                raise AssertionError(f"Tab went round the page to reach {what}: {seen}")
        raise AssertionError(f"Tab never reached {what} in {MAX_TABS} presses; reached: {seen}")

    def remember(self, now: dict) -> None:
        kind = kind_of(now)
        if kind not in self.kinds:
            self.kinds[kind] = {**now, "ring": focus_shows(self.page)}


def kind_of(now: dict) -> str:
    """An element's kind for the focus check: its tag, type, test id (Streamlit's, or the
    explorer's) and whether it is in the sidebar."""
    return f"{now['tag']}|{now['type']}|{now['testid']}|{'sidebar' if now['side'] else 'main'}"


# The focused element's box with a margin (where a ring, a shadow or a border change shows): a
# hidden radio's box is its label's.
BOX_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  const shown = e.type === "radio" || e.type === "checkbox" ? (e.closest("label") || e) : e;
  shown.scrollIntoView({block: "nearest"});
  const r = shown.getBoundingClientRect(), m = 6;
  return {x: Math.max(0, r.left - m), y: Math.max(0, r.top - m),
          width: Math.min(r.width + 2 * m, innerWidth - Math.max(0, r.left - m)),
          height: Math.min(r.height + 2 * m, innerHeight - Math.max(0, r.top - m))};
}"""
BLUR_JS = """() => {
  let e = document.activeElement;
  while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement;
  window.__blurred = e; e.blur();
}"""
# a text box's blinking caret is no focus ring: hidden while the check looks
NO_CARET_JS = """() => {
  if (document.getElementById("no-caret")) return;
  const s = document.createElement("style");
  s.id = "no-caret";
  s.textContent = "* { caret-color: transparent !important; }";
  document.head.append(s);
}"""


def focus_shows(page: Page) -> int:
    """How many pixels around the focused element change when it loses the focus (its ring,
    shadow, border or background); the focus is given back (by script: the keyboard's
    `:focus-visible` stays)."""
    page.evaluate(NO_CARET_JS)
    box = page.evaluate(BOX_JS)
    if box["width"] < 2 or box["height"] < 2:
        return 0
    page.wait_for_timeout(300)  # Streamlit's rings fade in
    on = page.screenshot(clip=box)
    page.evaluate(BLUR_JS)
    page.wait_for_timeout(300)
    off = page.screenshot(clip=box)
    page.evaluate("() => window.__blurred.focus()")
    a, b = (np.asarray(Image.open(io.BytesIO(x)).convert("RGB"), dtype=np.int16) for x in (on, off))
    if a.shape != b.shape:
        return a.size
    return int((np.abs(a - b).max(axis=-1) > 40).sum())


def say(key: str, lang: str, **values: object) -> str:
    return translate(key, lang, "lesson", **values)


def choose_radio(walk: Walk, key: str, index: int, what: str) -> None:
    """Tab into the radio group inside the container keyed `key` (none chosen: Tab lands on its
    first option) and choose option `index` by keys: Space on the first, else the arrow key
    `index` times."""
    walk.tab_to(lambda n: n["type"] == "radio" and key in n["keys"], what)
    page = walk.page
    if index == 0:
        page.keyboard.press("Space")
    for _ in range(index):
        page.keyboard.press("ArrowDown")
    wait_idle(page)
    group = page.locator(f"{MAIN} .st-key-{key} input[type='radio']")
    expect(group.nth(index)).to_be_checked()


def press_button(walk: Walk, key: str, what: str) -> None:
    walk.tab_to(lambda n: n["tag"] == "button" and key in n["keys"], what)
    walk.page.keyboard.press("Enter")
    wait_idle(walk.page)


def take_check(walk: Walk, round_: str, chosen: dict[str, str]) -> None:
    card = walk.page.locator(f"{MAIN} .st-key-concept_check_card_{round_}")
    expect(card).to_be_visible()
    for q in QUESTIONS:
        choose_radio(walk, f"concept_check_{round_}_{q.id}", q.options.index(chosen[q.id]),
                     f"the check's question {q.id}")
    press_button(walk, f"concept_check_send_{round_}", "the check's send button")
    expect(card).to_have_count(0)


def type_number(walk: Walk, value: str, want: Callable[[dict], bool], what: str) -> None:
    walk.tab_to(lambda n: n["tag"] == "input" and n["type"] in ("number", "text") and want(n),
                what)
    walk.page.keyboard.type(value)
    walk.page.keyboard.press("Enter")
    wait_idle(walk.page)


def pick_patch(walk: Walk, card_key: str, task, lang: str) -> None:  # noqa: ANN001
    """Tab to the card's picker; arrow keys from the patch it starts on to the answer. The
    live region names each patch the keys reach; the commit names the choice beside it."""
    page = walk.page
    walk.tab_to(lambda n: n["testid"] == "el-picker" and card_key in n["keys"], "the picker")
    root = page.locator(f"{MAIN} .st-key-{card_key} [data-testid='el-explorer']")
    start = int(root.evaluate("e => e.dataset.hover"))
    G = task.grid
    (r0, c0), (r1, c1) = divmod(start, G), divmod(int(task.answer), G)
    for key, n in (("ArrowDown", r1 - r0), ("ArrowUp", r0 - r1), ("ArrowRight", c1 - c0),
                   ("ArrowLeft", c0 - c1)):
        for _ in range(max(0, n)):
            page.keyboard.press(key)
    said = root.locator("[data-testid='el-description']")
    expect(said).to_have_attribute("aria-live", "polite")
    card = page.locator(f"{MAIN} .st-key-{card_key}")
    expect(card).to_contain_text(say("pick_chosen", lang, j=task.answer, r=r1, c=c1))
    wait_idle(page)
    # the rerun redrew the picker (or mounted it anew): it keeps the focus, and its name
    # says the choice
    now = focused(page)
    assert now is not None and now["testid"] == "el-picker", f"the picker lost the focus: {now}"
    assert now["label"] == say("pick_aria_chosen", lang, j=task.answer, r=r1, c=c1)[:60], now
    expect(said).to_contain_text(str(task.answer))


def answer(walk: Walk, task, lang: str) -> None:  # noqa: ANN001
    """The right answer to `task` by keys, then Enter on its "Check"."""
    key = f"lesson_card_{task.text_id}"
    if task.kind in ("number", "estimate"):
        values = task.answer if task.kind == "number" else (round(float(task.answer)),)
        for k, v in enumerate(values):
            type_number(walk, f"{v:g}" if isinstance(v, float) else str(v),
                        lambda n, k=k: key in n["keys"] and any(
                            x.startswith(f"lesson_in_{task.text_id}_")
                            and (task.kind == "estimate" or x.endswith(f"_{k}"))
                            for x in n["keys"]),
                        f"box {k} of {task.id}")
    elif task.kind == "choice":
        choose_radio(walk, key, list(task.options).index(task.answer), f"{task.id}'s radios")
    else:
        pick_patch(walk, key, task, lang)
    press_button(walk, f"lesson_check_{task.text_id}", f"{task.id}'s Check")
    expect(walk.page.locator(f"{MAIN} .st-key-{key}")).to_contain_text(say("right", lang))
    # the button is gone: the focus went to the verdict's fold, whose name says it
    now = wait_for(lambda: focused(walk.page), lambda n: n is not None and key in n["keys"]
                   and n["tag"] == "summary", f"the focus on {task.id}'s verdict", timeout=30)
    assert say("right", lang) in now["label"], now


def test_the_whole_lesson_is_walked_by_keyboard_alone(browser: Browser, base: str) -> None:
    lang = "zh"
    t0 = time.monotonic()
    page = keyboard_page(browser)
    try:
        open_app(page, base, "", f"lesson=1&lang={lang}")
        walk = Walk(page)
        main = page.locator(MAIN)
        before = {q.id: q.right if n < 3 else next(o for o in q.options if o != q.right)
                  for n, q in enumerate(QUESTIONS)}  # 3 of 6 right
        take_check(walk, PRE, before)
        walk.in_order = True  # from here on, each control comes after the one before
        print(f"  the check before: {time.monotonic() - t0:.0f} s, {walk.tabs} Tab presses")
        tasks = default_tasks()
        for k, info in enumerate(STEPS):
            if k:  # Next, by Tab and Enter (the top one or the one at the page's end)
                walk.tab_to(lambda n: n["tag"] == "button" and "nav_next" in n["keys"],
                            "Next (back up to the top one)", back=True)
                page.keyboard.press("Enter")
                page.wait_for_url(re.compile(rf"/{info.id}\b"))
                wait_idle(page)
            for task in (t for t in tasks if t.page == info.id):
                answer(walk, task, lang)
            expect(main.get_by_text(info.takeaway_in(lang), exact=True).first).to_be_visible()
            assert_no_errors(page)
            print(f"  {info.id}: {time.monotonic() - t0:.0f} s, {walk.tabs} Tab presses")
        summary = main.locator(".st-key-lesson_summary")
        expect(summary).to_contain_text(say("got_right", lang, n=len(tasks)))
        take_check(walk, POST, {q.id: q.right for q in QUESTIONS})  # 6 of 6
        wait_for(lambda: focused(page), lambda n: n is not None and RESULT_KEY in n["keys"],
                 "the focus on the check's result", timeout=30)
        expect(summary).to_contain_text(
            translate("result", lang, CONCEPTS, pre=3, post=6, n=6).replace("**", ""))
        screenshot(page, "keyboard_walk_summary_zh")
        assert pointer_events(page) == 0, "a pointer event reached the page"
        hidden = {k: v for k, v in walk.kinds.items() if v["ring"] < MIN_RING}
        print(f"KEYBOARD_WALK {time.monotonic() - t0:.0f} s, {walk.tabs} Tab presses, "
              f"{len(walk.kinds)} kinds of element")
        for kind, v in walk.kinds.items():
            print(f"  {v['ring']:6d} px  {kind}  {v['label']!r}")
        assert hidden == {}, hidden
    except Exception:
        screenshot(page, "FAILED-keyboard_walk")
        raise
    finally:
        page.context.close()



def test_a_first_task_in_english_by_keys(browser: Browser, base: str) -> None:
    """English, briefly: the check before skipped (Tab, Enter), the overview's first question
    answered (digits, Enter) and checked (Tab, Enter)."""
    page = keyboard_page(browser)
    try:
        open_app(page, base, "", "lesson=1&lang=en")
        walk = Walk(page)
        press_button(walk, "concept_check_skip", "Skip the check")
        expect(page.locator(f"{MAIN} .st-key-concept_check_card_pre")).to_have_count(0)
        answer(walk, next(t for t in default_tasks() if t.page == STEPS[0].id), "en")
        for key, step in (("nav_next", STEPS[1].id), ("nav_prev", STEPS[0].id)):  # and back
            walk.tab_to(lambda n, key=key: n["tag"] == "button" and key in n["keys"], key,
                        back=True)
            page.keyboard.press("Enter")
            page.wait_for_url(re.compile(rf"/{step}\b"))
            wait_idle(page)
        assert_no_errors(page)
        assert pointer_events(page) == 0, "a pointer event reached the page"
        page.mouse.move(700, 880)  # the count itself sees a mouse (below the last card)
        page.mouse.down()
        page.mouse.up()
        assert pointer_events(page) >= 2
    finally:
        page.context.close()


TOKENS = "overview_tokens"  # the overview's first question: how many tokens (196)


def class_say(key: str, **values: object) -> str:
    return translate(key, "en", "class", **values)


def test_a_student_joins_a_class_and_answers_by_keys(browser: Browser, base: str) -> None:
    """The teacher starts a class and opens the first question, the student joins with the
    code and a nickname typed and answers: each by Tab, typing and Enter, no pointer."""
    teacher, student = keyboard_page(browser), keyboard_page(browser)
    try:
        teacher.goto(f"{base}/class?lang=en")
        wait_idle(teacher)
        lead = Walk(teacher)
        press_button(lead, "class_start_button", "Start a class")
        code_el = teacher.locator("[data-testid='el-class-code']")
        expect(code_el).to_be_visible()
        code = code_el.inner_text().strip()

        student.goto(f"{base}/class?lang=en")
        wait_idle(student)
        walk = Walk(student)
        for key, text in (("class_code_input", code), ("class_nickname_input", "Ada")):
            walk.tab_to(lambda n, key=key: n["tag"] == "input" and key in n["keys"], key)
            student.keyboard.type(text)
        press_button(walk, "class_join_button", "Join")  # Tab leaves the nickname: kept
        expect(student).to_have_url(re.compile(r"/overview\?.*student="))
        wait_idle(student)
        card = student.locator(f"{MAIN} .st-key-class_card_{TOKENS}")
        expect(card).to_contain_text(class_say("waiting_title", k=1, n=2))

        # the teacher: presenting turned off (a toggle, Space), the nicknames opened (Enter)
        lead.tab_to(lambda n: n["type"] == "checkbox" and "class_presenting" in n["keys"],
                    "the presenting switch")
        teacher.keyboard.press("Space")
        wait_idle(teacher)
        lead.tab_to(lambda n: n["tag"] == "summary" and n["label"].endswith(
            class_say("nicknames", n=1)), "the nicknames")
        teacher.keyboard.press("Enter")
        expect(teacher.locator(f"{MAIN} [data-testid='stExpander']").filter(
            has_text=class_say("nicknames", n=1)).get_by_text("Ada")).to_be_visible()
        press_button(lead, f"class_open_{TOKENS}", "Open the question")
        expect(teacher.locator(f".st-key-class_reveal_{TOKENS} button")).to_be_visible()
        expect(card.locator(f'[class*="st-key-lesson_in_{TOKENS}_"] input')).to_be_visible()
        type_number(walk, "196", lambda n: any(k.startswith(f"lesson_in_{TOKENS}_")
                                               for k in n["keys"]), "the answer's box")
        press_button(walk, f"class_send_{TOKENS}", "Send")
        expect(card.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(
            "Sent: 196")
        expect(teacher.locator(f"{MAIN} .st-key-class_question_{TOKENS}")).to_contain_text(
            class_say("answered_of", n=1, of=1), timeout=30_000)
        for page in (teacher, student):
            assert_no_errors(page)
            assert pointer_events(page) == 0, "a pointer event reached the page"
        kinds = {**lead.kinds, **walk.kinds}
        for kind, v in kinds.items():
            print(f"  {v['ring']:6d} px  {kind}  {v['label']!r}")
        assert {k: v for k, v in kinds.items() if v["ring"] < MIN_RING} == {}
    except Exception:
        screenshot(teacher, "FAILED-keyboard_class_teacher")
        screenshot(student, "FAILED-keyboard_class_student")
        raise
    finally:
        teacher.context.close()
        student.context.close()
