"""The class on one page (lens/classroom/summary.py): a scripted class in a SQLite store — three
questions (two asked twice, one once) and a concept check before and after — summed up as a PDF
in English and 中文, read back with poppler: one A4 page, each question's title with its shares
right and its moves counted by hand, the check's shares and gains, every font embedded as
TrueType, and no nickname, pseudonym, token or teacher key anywhere in it."""

from __future__ import annotations

import subprocess

import pytest

from lens.classroom.rules import Rule, pseudonym
from lens.classroom.store import Store
from lens.classroom.summary import question_lines, summary_pdf
from lens.i18n import Texts
from lens.lesson.concepts import QUESTIONS
from lens.lesson.tasks import Task, task_texts

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00 UTC
TOKENS = Task((196.0,), {}, (), id="overview.tokens", kind="number", page="overview")
SHIFT = Task(-3.0, {}, (), id="scores.shift", kind="estimate", page="scores")
SLIP = Task(10.0, {}, (), id="qkv.slip", kind="estimate", page="qkv")
ASKED = {(t.id, "s1"): t for t in (TOKENS, SHIFT, SLIP)}
NAMES = ["李雷", "", "Zedka", "Quorra"]  # nicknames: none may be printed


@pytest.fixture
def store(tmp_path):
    s = Store(f"sqlite:///{tmp_path / 'classes.sqlite'}")
    yield s
    s.close()


def scripted_class(store: Store) -> tuple[str, str, list[str]]:
    """Four students. TOKENS and SHIFT asked twice (one student skips TOKENS' vote 2), SLIP
    once; the check: three students answer both rounds, the fourth only the first."""
    code, key = store.create_class({"d_model": "64"}, "overview", now=T0)
    tokens = [store.join(code, f"10.0.0.{i}", n, now=T0) for i, n in enumerate(NAMES)]
    asked = [(TOKENS, Rule("number", parts=1),
              [([190], [196]), ([196], [196]), ([196], None), ([200], [196])]),
             (SHIFT, Rule("estimate", lo=-10, hi=10), [(-3, -3), (2, 4), (-3, 5), (0.5, -3)]),
             (SLIP, Rule("estimate", lo=0, hi=100), [(10, None), (3, None), (10, None),
                                                     (10, None)])]
    for minute, (task, rule, votes) in enumerate(asked):
        store.open_task(code, key, task.id, "s1", rule, now=T0)
        for token, (v1, _) in zip(tokens, votes, strict=True):
            store.answer(code, token, task.id, "s1", v1, now=T0 + 120 * minute)
        if task is not SLIP:
            store.close_vote(code, key, task.id, "s1")
            store.open_vote2(code, key, task.id, "s1")
            for token, (_, v2) in zip(tokens, votes, strict=True):
                if v2 is not None:
                    store.answer(code, token, task.id, "s1", v2, now=T0 + 120 * minute + 60,
                                 vote=2)
        store.reveal(code, key, task.id, "s1")
    # the check: before, a all right, b all wrong, c right on the first three; after, a and c
    # all right, b right on the first three; d answers before only (not counted)
    pre = {0: range(6), 1: range(0), 2: range(3), 3: range(6)}
    post = {0: range(6), 1: range(3), 2: range(6)}
    for round_, right in (("pre", pre), ("post", post)):
        store.open_check(code, key, round_)
        for who, ks in right.items():
            for k, q in enumerate(QUESTIONS):
                wrong = next(o for o in q.options if o != q.right)
                store.check_answer(code, tokens[who], q.id, round_,
                                   q.right if k in ks else wrong)
        store.close_check(code, key, round_)
    return code, key, tokens


def read_back(pdf: bytes, tmp_path) -> tuple[int, list[str], list[str]]:
    """The PDF's page count (pdfinfo), its lines with runs of spaces made one (pdftotext
    -layout) and pdffonts' rows."""
    path = tmp_path / "summary.pdf"
    path.write_bytes(pdf)
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True,
                          check=True).stdout
    pages = int(next(line.split()[-1] for line in info.splitlines()
                     if line.startswith("Pages:")))
    text = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                          text=True, check=True).stdout
    fonts = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True,
                           check=True).stdout.splitlines()[2:]
    return pages, [" ".join(line.split()) for line in text.splitlines()], fonts


def expected_lines(lang: str) -> list[str]:
    """Each row by hand. TOKENS: vote 1 right 2 of 4, vote 2 4 of 4 (the student who sent no
    vote 2 counted with their vote 1, carried at its close); two right→right, two
    wrong→right. SHIFT: 2 of 4 then 2 of 4, one of each move. SLIP,
    once: 3 of 4. The check (a, b, c): questions 1–3 right before 2 of 3, after 3 of 3, g 1;
    4–6 right before 1 of 3, after 2 of 3, g 0.5; overall 3 students (18 pairs, 9 then 15
    right): 50 %, 83 %, g = (15/18 − 1/2) / (1/2) = 0.67."""
    t, words = Texts(lang, "class"), Texts(lang, "concepts")

    def title(task: Task) -> str:
        return task_texts(lang, task)(task.text("short"))

    lines = [f"{title(TOKENS)} 50 % (4) 100 % (4) 2 2 0 0",
             f"{title(SHIFT)} 50 % (4) 50 % (4) 1 1 1 1",
             f"{title(SLIP)} 75 % (4) — — — — —"]
    for k, q in enumerate(QUESTIONS):
        lines.append(f"{words(q.text('short'))} 3 "
                     + ("67 % 100 % 1.00" if k < 3 else "33 % 67 % 0.50"))
    return [*lines, f"{t('check_overall')} 3 50 % 83 % 0.67"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_summary_is_one_page_with_the_hand_counted_numbers(store, tmp_path, lang):
    code, key, _ = scripted_class(store)
    pdf = summary_pdf(code, store.result_rows(code, key), ASKED, store.check_answers(code, key),
                      lang, T0 + 86_400 * 30)
    pages, lines, fonts = read_back(pdf, tmp_path)
    assert pages == 1
    t = Texts(lang, "class")
    assert t("summary_title", code=code) in lines
    assert any("2027-01-15" in line for line in lines), "the class's day, its first answer's"
    for line in expected_lines(lang):
        assert line in lines, (line, lines)
    both = " ".join(t("check_students_both", n=3).split())
    assert both[:20] in " ".join(lines)
    assert fonts and all("CID TrueType" in r and " yes yes yes " in r for r in fonts), fonts
    if lang == "zh":
        assert any("EncoderLensCJK" in r for r in fonts)


def test_no_nickname_pseudonym_token_or_key_is_in_the_summary(store, tmp_path):
    code, key, tokens = scripted_class(store)
    for lang in ("en", "zh"):
        pdf = summary_pdf(code, store.result_rows(code, key), ASKED,
                          store.check_answers(code, key), lang, T0)
        _, lines, _ = read_back(pdf, tmp_path)
        text = "\n".join(lines)
        for secret in (*tokens, key, *map(pseudonym, tokens), *filter(None, NAMES)):
            assert secret not in text and secret.encode() not in pdf, secret
        assert "10.0.0." not in text


def test_a_class_without_answers_is_one_page_that_says_so(tmp_path):
    pdf = summary_pdf("ABCDEF", [], {}, {}, "en", T0)
    pages, lines, _ = read_back(pdf, tmp_path)
    t = Texts("en", "class")
    assert pages == 1
    assert t("summary_no_questions") in lines and t("summary_no_check") in lines


def test_more_questions_than_fit_stay_on_one_page_and_are_counted(store, tmp_path):
    code, key, _ = scripted_class(store)
    many = dict(ASKED) | {(TOKENS.id, f"k{n}"): TOKENS for n in range(80)}
    pdf = summary_pdf(code, store.result_rows(code, key), many, store.check_answers(code, key),
                      "en", T0)
    pages, lines, _ = read_back(pdf, tmp_path)
    assert pages == 1
    more = [line for line in lines if line.startswith("… and ")]
    assert len(more) == 1 and "more questions" in more[0]
    assert expected_lines("en")[0] in lines, "the questions answered come first"


def test_the_questions_come_in_the_order_the_class_first_answered_them(store):
    code, key, _ = scripted_class(store)
    asked = {w: ASKED[w] for w in reversed(ASKED)} | {("patches.shape", "s1"): TOKENS}
    order = [line.task.id for line in question_lines(store.result_rows(code, key), asked)]
    assert order == [TOKENS.id, SHIFT.id, SLIP.id, TOKENS.id]  # the unanswered one last


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_question_asked_again_lists_both_rounds_in_the_order_asked(store, tmp_path, lang):
    """SLIP asked again after its reveal, after TOKENS and SHIFT: one student answers the new
    round. The summary lists SLIP's first round (3 of 4) in its place, then its second (1 of
    1), each said to be a round of a question asked twice; nothing of round 1 is lost."""
    code, key, tokens = scripted_class(store)
    store.ask_again(code, key, SLIP.id, "s1", now=T0 + 1000)
    store.answer(code, tokens[0], SLIP.id, "s1", float(SLIP.answer), now=T0 + 1060)
    lines = question_lines(store.result_rows(code, key), ASKED)
    assert [(x.task.id, x.round, x.rounds, x.n_1, x.right_1) for x in lines] == [
        (TOKENS.id, 1, 1, 4, 0.5), (SHIFT.id, 1, 1, 4, 0.5), (SLIP.id, 1, 2, 4, 0.75),
        (SLIP.id, 2, 2, 1, 1.0)]
    pdf = summary_pdf(code, store.result_rows(code, key), ASKED, store.check_answers(code, key),
                      lang, T0)
    _, text, _ = read_back(pdf, tmp_path)
    t = Texts(lang, "class")
    said = [" ".join(t("summary_round", title="", asked=t("asked_twice"), k=k).split())
            for k in (1, 2)]  # said first: a long title is cut at its end
    first = [n for n, line in enumerate(text) if line.startswith(said[0])]
    second = [n for n, line in enumerate(text) if line.startswith(said[1])]
    assert first and second and first[0] < second[0], (said, text)
    assert text[first[0]].endswith("75 % (4) — — — — —")
    assert text[second[0]].endswith("100 % (1) — — — — —")


def test_the_panels_gain_table_counts_students_not_answers(store):
    """The teacher's panel table (`concept_check.gain_markdown`): its overall row's "students"
    is the three who answered both rounds, not their 18 answers."""
    from lens.classroom.ui.concept_check import gain_markdown  # noqa: PLC0415

    code, key, _ = scripted_class(store)
    overall = gain_markdown("en", store.check_answers(code, key)).splitlines()[-1]
    assert overall.startswith(f"| **{Texts('en', 'class')('check_overall')}** | 3 | 50 % |")
