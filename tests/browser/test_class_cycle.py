"""A class's full cycle (issue 37) through `scripts/serve --replicas 2`, in Chromium: a teacher on
a projector (1920×1080, "Presenting" on: the default) and three students — a phone (390×844)
in 中文, a tablet (820×1180), a laptop (1400×900) — each in a browser context of its own, on a
fresh SQLite store.

1. The concept check's "before" round: the teacher opens it, the students answer (different
   answers) and send, the teacher closes it.
2. The overview's first question (how many tokens: 196 at the defaults) through the
   peer-instruction cycle: vote 1 (two wrong, one right) — the projector shows the count and
   no chart of the answers; "Close vote — discuss": every student's card turns into the
   discussion (their own first answer, no inputs), timed; "Open vote 2": all answer right;
   "Reveal": every student sees the reveal, timed; the teacher's card shows the transitions
   chart and the shares right at each vote (33 %, 100 %).
3. The "after" round, all right: the teacher's results table shows the overall gain row.

The seconds each student took to see the discussion and the reveal are printed
("CYCLE_S discuss|reveal student k: x.xx s") and kept in test-artifacts/class-cycle-follow.txt;
the projector is saved at each stage and the 中文 phone at the discussion and the reveal
(test-artifacts/screenshots/class_cycle_*.png). No page shows an exception.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from lens.i18n import translate
from lens.lesson.concepts import QUESTIONS, gain_table
from tests.browser.test_class import (
    LIVE_S,
    TOKENS,
    Member,
    _click,
    _href,
    _open,
    _start_class,
    members,
)
from tests.support.browser_helpers import (
    ARTIFACTS,
    TIMEOUT_MS,
    assert_no_errors,
    balancer,
    screenshot,
    wait_for,
    wait_idle,
)

pytestmark = pytest.mark.browser

RUN_DIR = ARTIFACTS / "serve-class-cycle"
FOLLOW_FILE = ARTIFACTS / "class-cycle-follow.txt"
FOLLOW_BOUND_S = 5.0  # the follower looks every 2 s; 5 s leaves room for a loaded CI machine
CARD = f".st-key-class_card_{TOKENS}"
# (name, viewport, language, vote 1): two wrong, one right; all right at vote 2
STUDENTS = (("phone", {"width": 390, "height": 844}, "zh", 200),
            ("tablet", {"width": 820, "height": 1180}, "en", 196),
            ("laptop", {"width": 1400, "height": 900}, "en", 180))
RIGHT = 196
# the concept check "before": the phone all right, the tablet the first option, the laptop
# the last; "after": all right
PRE_CHOICE = ({q.id: q.right for q in QUESTIONS},
              {q.id: q.options[0] for q in QUESTIONS},
              {q.id: q.options[-1] for q in QUESTIONS})


def say(key: str, lang: str = "en", **values: object) -> str:
    return translate(key, lang, "class", **values).replace("**", "")


@pytest.fixture(scope="module")
def cycle_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("class-cycle-data")
    with balancer(RUN_DIR, "serve-class-cycle.log", env={"ENCODER_LENS_DATA": str(data)}) as url:
        yield url


def _new(browser: Browser, name: str, view: dict, keep: list[Member]) -> Member:
    context = browser.new_context(viewport=view)
    context.set_default_timeout(TIMEOUT_MS)
    m = Member(name, context, context.new_page())
    keep.append(m)
    return m


def _join(m: Member, base: str, code: str, lang: str) -> None:
    _open(m, f"{base}/class?class={code}&lang={lang}")
    expect(m.page.locator(".st-key-class_code_input input")).to_have_value(code)
    _click(m.page, "class_join_button")
    wait_for(lambda: _href(m.page), lambda u: "/overview?" in u and "student=" in u,
             f"{m.name} switched to the class's step")
    wait_idle(m.page)
    expect(m.main.locator(CARD)).to_contain_text(say("waiting_title", lang, k=1, n=2))


def _check_round(students: list[Member], round_: str, choices: list[dict[str, str]]) -> None:
    """Each student answers the round's six questions (all clicks first, every student at once:
    their replicas work in parallel), then sends."""
    for s in students:
        expect(s.main.locator(f".st-key-class_check_card_{round_}")).to_be_visible(
            timeout=LIVE_S * 1000)
    for s, chosen in zip(students, choices, strict=True):
        for q in QUESTIONS:
            group = s.main.locator(f".st-key-class_check_{round_}_{q.id} [role='radiogroup']")
            group.locator("label").nth(q.options.index(chosen[q.id])).click()
    for s, chosen in zip(students, choices, strict=True):
        wait_idle(s.page)
        for q in QUESTIONS:
            radios = s.main.locator(f".st-key-class_check_{round_}_{q.id} input[type='radio']")
            expect(radios.nth(q.options.index(chosen[q.id]))).to_be_checked()
        _click(s.page, f"class_check_send_{round_}")
    for s, (_, _, lang, _) in zip(students, STUDENTS, strict=True):
        wait_idle(s.page)
        expect(s.main.locator(f".st-key-class_check_card_{round_}")).to_contain_text(
            say("check_sent", lang, k=len(QUESTIONS), n=len(QUESTIONS)).split("。")[0]
            .split(".")[0])


def _vote(teacher: Member, students: list[Member], button: str, next_button: str,
          values: list[int]) -> None:
    """The teacher presses `button` (a vote opens: `next_button` shows), each student answers
    their value; the projector counts all three and draws no answer chart."""
    _click(teacher.page, f"class_{button}_{TOKENS}")
    wait_idle(teacher.page)
    expect(teacher.page.locator(f".st-key-class_{next_button}_{TOKENS} button")).to_be_visible()
    for s, (_, _, lang, _), value in zip(students, STUDENTS, values, strict=True):
        _answer(s, value, lang)
    question = teacher.main.locator(f".st-key-class_question_{TOKENS}")
    expect(question).to_contain_text(say("answered_of", n=3, of=3), timeout=LIVE_S * 1000)
    expect(question.locator('[data-testid="stImage"]')).to_have_count(0)  # no answer chart


def _answer(m: Member, value: int, lang: str) -> None:
    card = m.main.locator(CARD)
    box = card.locator(f'[class*="st-key-lesson_in_{TOKENS}_"] input')
    expect(box).to_be_visible(timeout=LIVE_S * 1000)
    box.fill(str(value))
    box.press("Enter")
    wait_idle(m.page)
    _click(m.page, f"class_send_{TOKENS}")
    wait_idle(m.page)
    expect(card.locator('[data-testid="stAlertContentSuccess"]')).to_contain_text(str(value))


def _timed(students: list[Member], what: str, texts: list[str], selector: str) -> list[str]:
    """Seconds until each student's `selector` holds its text (polled in the page every 50 ms);
    the lines "CYCLE_S <what> student k: x.xx s"."""
    started = time.monotonic()
    seen: dict[int, float] = {}
    while len(seen) < len(students) and time.monotonic() < started + LIVE_S:
        for k, (s, text) in enumerate(zip(students, texts, strict=True)):
            if k not in seen and s.page.evaluate(
                    "([sel, text]) => Array.from(document.querySelectorAll(sel))"
                    ".some(e => e.innerText.includes(text))", [selector, text]):
                seen[k] = time.monotonic() - started
        time.sleep(0.05)
    lines = [f"CYCLE_S {what} student {k + 1} ({students[k].name}): {seen[k]:.2f} s"
             for k in sorted(seen)]
    print("\n".join(lines))
    assert sorted(seen) == list(range(len(students))), (what, lines)
    assert max(seen.values()) <= FOLLOW_BOUND_S, (what, lines)
    return lines


def test_a_class_through_the_check_and_two_votes(browser: Browser, cycle_url: str) -> None:
    with members("class_cycle") as keep:
        _cycle(browser, cycle_url, keep)


def _cycle(browser: Browser, base: str, keep: list[Member]) -> None:
    teacher = _new(browser, "teacher", {"width": 1920, "height": 1080}, keep)
    _open(teacher, f"{base}/class")
    code = _start_class(teacher.page)
    expect(teacher.page.locator(".st-key-class_presenting input")).to_be_checked()

    students = [_new(browser, name, view, keep) for name, view, _, _ in STUDENTS]
    for s, (_, _, lang, _) in zip(students, STUDENTS, strict=True):
        _join(s, base, code, lang)
    expect(teacher.main).to_contain_text(say("students_count", n=3), timeout=LIVE_S * 1000)
    tp = teacher.page

    # --- 1. the concept check "before"
    _click(tp, "class_check_open_pre")
    wait_idle(tp)
    expect(tp.locator(".st-key-class_check_close_pre button")).to_be_visible()
    _check_round(students, "pre", list(PRE_CHOICE))
    expect(teacher.main).to_contain_text(
        say("check_answered", n=3, of=3, round=say("check_round_pre")), timeout=LIVE_S * 1000)
    screenshot(tp, "class_cycle_1_check_before")
    _click(tp, "class_check_close_pre")
    wait_idle(tp)
    expect(teacher.main).to_contain_text(say("check_table_later"))

    # --- 2. vote 1: two wrong, one right; the projector shows the count only
    question = teacher.main.locator(f".st-key-class_question_{TOKENS}")
    _vote(teacher, students, "open", "close", [value for *_, value in STUDENTS])
    expect(question.locator(f'[class*="st-key-class_show_{TOKENS}"]')).to_have_count(0)
    text = question.inner_text()
    assert "200" not in text and "180" not in text, text
    screenshot(tp, "class_cycle_2_vote1_count")

    # --- close the vote: every student discusses, with their own first answer, no inputs
    _click(tp, f"class_close_{TOKENS}")
    lines = _timed(students, "discuss",
                   [say("discuss_title", lang, k=1, n=2) for _, _, lang, _ in STUDENTS], CARD)
    wait_idle(tp)
    expect(question).to_contain_text(say("discuss_teacher").split(":")[0])
    screenshot(tp, "class_cycle_3_discuss")
    for s, (_, _, lang, value) in zip(students, STUDENTS, strict=True):
        wait_idle(s.page)
        card = s.main.locator(CARD)
        expect(card).to_contain_text(say("first_answer", lang, answer=value))
        expect(card.locator("input")).to_have_count(0)
        expect(card.locator(f".st-key-class_send_{TOKENS}")).to_have_count(0)
    screenshot(students[0].page, "class_cycle_phone_zh_discuss")

    # --- vote 2: all right
    _vote(teacher, students, "vote2", "reveal", [RIGHT] * len(STUDENTS))
    screenshot(tp, "class_cycle_4_vote2_count")

    # --- reveal: every student sees it; the projector the transitions and the shares
    _click(tp, f"class_reveal_{TOKENS}")
    verdicts = [say("revealed_label", lang, verdict=say("verdict_right", lang),
                    task=translate(f"{TOKENS}_short", lang, "overview"))
                for _, _, lang, _ in STUDENTS]
    lines += _timed(students, "reveal", verdicts, f"{CARD} [data-testid='stExpander'] summary")
    FOLLOW_FILE.write_text("\n".join(lines) + "\n", encoding="utf-8")
    wait_idle(tp)
    expect(question).to_contain_text(say("shares_right", n=3, p1=100 / 3, p2=100))
    images = question.locator('[data-testid="stImage"] img')
    expect(images).to_have_count(2)  # the final vote's answers and the transitions
    for k in range(2):
        wait_for(lambda k=k: images.nth(k).evaluate("i => i.complete && i.naturalWidth"),
                 bool, f"chart {k} loaded")
    screenshot(tp, "class_cycle_5_revealed")
    wait_idle(students[0].page)
    expect(students[0].main.locator(CARD)).to_contain_text(
        say("first_answer", "zh", answer=STUDENTS[0][3]))
    screenshot(students[0].page, "class_cycle_phone_zh_reveal")

    # --- 3. the concept check "after": all right; the gain row
    _click(tp, "class_check_open_post")
    wait_idle(tp)
    _check_round(students, "post", [PRE_CHOICE[0]] * 3)
    expect(teacher.main).to_contain_text(
        say("check_answered", n=3, of=3, round=say("check_round_post")), timeout=LIVE_S * 1000)
    _click(tp, "class_check_close_post")
    wait_idle(tp)
    answers = {(str(k), q, r): (PRE_CHOICE[k] if r == "pre" else PRE_CHOICE[0])[q]
               for k in range(3) for q in PRE_CHOICE[0] for r in ("pre", "post")}
    table = gain_table(answers)
    overall = table.overall
    # the overall row counts its students, not their answers
    want = [say("check_overall"), str(table.students), f"{100 * overall.pre:.0f} %", "100 %",
            f"{overall.gain:.2f}"]
    rows = wait_for(lambda: teacher.main.locator("table tr").evaluate_all(
        "rs => rs.map(r => Array.from(r.children).map(c => c.innerText.trim()))"),
        lambda rs: want in rs, f"the gain row {want}")
    assert rows[0][-1] == say("check_col_gain"), rows
    screenshot(tp, "class_cycle_6_gain")
    for m in keep:
        assert_no_errors(m.page)
