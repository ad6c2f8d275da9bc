"""The class's results as CSV (lens/classroom/results.py, `Store.result_rows`): a scripted class
of four students, two questions and two votes, on both backends, downloaded and parsed back
equals the rows written by hand (a vote 2 not sent carried from vote 1, and marked so); no
token anywhere in the bytes; cells a spreadsheet would run as formulas (a nickname
`=HYPERLINK(…)`, a negative number) begin with `'`; UTF-8 with a BOM; the teacher's key
needed. The take-away complete: a class with a choice question asked twice and the concept
check lists every round in the order asked, each answer in the teacher's words (en, 中文)
beside its id, and the check's rows."""

from __future__ import annotations

import csv
import io

import pytest

from lens.classroom.results import (
    CHECK_STEP,
    COLUMNS,
    ResultRow,
    class_results_csv,
    result_table,
    results_csv,
    safe_cell,
)
from lens.classroom.rules import RefusedError, Rule, pseudonym
from lens.classroom.store import Store
from lens.classroom.tally import judge_stored
from lens.lesson.tasks import Task
from tests import test_class_store

url, pg_url = test_class_store.url, test_class_store.pg_url  # both backends, as the store's tests

T0 = 1_800_000_000.0  # 2027-01-15T08:00:00 UTC
TOKENS = Task((196.0,), {}, (), id="overview.tokens", kind="number", page="overview")
SIGN = Task(-3.0, {}, (), id="scores.sign", kind="estimate", page="scores")
JUDGES = {(t.id, "s1"): judge_stored(t) for t in (TOKENS, SIGN)}
STEPS = {t.id: t.page for t in (TOKENS, SIGN)}  # each question's step (the app: lens.steps')


@pytest.fixture
def class_store(url):
    s = Store(url)
    yield s
    s.close()


LINK = '=HYPERLINK("http://x")'  # a formula that fits in MAX_NICKNAME (24)


def scripted_class(store: Store):
    """Four students (a nickname that is a formula, none, 中文, plain), two questions, two
    votes each (one student skips a vote 2)."""
    code, key = store.create_class({"d_model": "64"}, "overview", now=T0)
    names = [LINK, "", "李雷", "Bo"]
    tokens = [store.join(code, f"10.0.0.{i}", n, now=T0) for i, n in enumerate(names)]
    answers = {  # question -> per student (vote 1, vote 2), None: not given
               TOKENS.id: [([190], [196]), ([196], [196]), ([196], None), ([200], [196])],
               SIGN.id: [(-3, -3), (2, 4), (-3, 5), (0.5, -3)]}
    rules = {TOKENS.id: Rule("number", parts=1), SIGN.id: Rule("estimate", lo=-10, hi=10)}
    for q, minute in ((TOKENS.id, 0), (SIGN.id, 2)):
        store.open_task(code, key, q, "s1", rules[q], now=T0)
        for token, (v1, _) in zip(tokens, answers[q], strict=True):
            store.answer(code, token, q, "s1", v1, now=T0 + 60 * minute)
        store.close_vote(code, key, q, "s1")
        store.open_vote2(code, key, q, "s1")
        for token, (_, v2) in zip(tokens, answers[q], strict=True):
            if v2 is not None:
                store.answer(code, token, q, "s1", v2, now=T0 + 60 * (minute + 1), vote=2)
        store.reveal(code, key, q, "s1")
    return code, key, tokens


def expected(tokens: list[str]) -> list[list[str]]:
    """The rows by hand, in the order asked (TOKENS' vote 1, its vote 2, then SIGN's), within a
    vote by student: student, nickname, step, question, settings, round, times asked, vote,
    answer (no words: `results_csv` without them), its id, carried, right, at. Student c sent
    no vote 2 to TOKENS: their vote 1 is carried, at its time."""
    a, b, c, d = (pseudonym(t) for t in tokens)
    link = "'" + LINK  # a formula made text
    at = {0: "2027-01-15T08:00:00+00:00", 1: "2027-01-15T08:01:00+00:00",
          2: "2027-01-15T08:02:00+00:00", 3: "2027-01-15T08:03:00+00:00"}
    tok, sign = ("overview", "overview.tokens", "s1", "1", "1"), ("scores", "scores.sign", "s1",
                                                                   "1", "1")
    rows = [
        [a, link, *tok, "1", "", "[190.0]", "", "no", at[0]],
        [a, link, *tok, "2", "", "[196.0]", "", "yes", at[1]],
        [a, link, *sign, "1", "", "'-3.0", "", "yes", at[2]],
        [a, link, *sign, "2", "", "'-3.0", "", "yes", at[3]],
        [b, "", *tok, "1", "", "[196.0]", "", "yes", at[0]],
        [b, "", *tok, "2", "", "[196.0]", "", "yes", at[1]],
        [b, "", *sign, "1", "", "2.0", "", "no", at[2]],
        [b, "", *sign, "2", "", "4.0", "", "no", at[3]],
        [c, "李雷", *tok, "1", "", "[196.0]", "", "yes", at[0]],
        [c, "李雷", *tok, "2", "", "[196.0]", "yes", "yes", at[0]],
        [c, "李雷", *sign, "1", "", "'-3.0", "", "yes", at[2]],
        [c, "李雷", *sign, "2", "", "5.0", "", "no", at[3]],
        [d, "Bo", *tok, "1", "", "[200.0]", "", "no", at[0]],
        [d, "Bo", *tok, "2", "", "[196.0]", "", "yes", at[1]],
        [d, "Bo", *sign, "1", "", "0.5", "", "no", at[2]],
        [d, "Bo", *sign, "2", "", "'-3.0", "", "yes", at[3]],
    ]
    return sorted(rows, key=lambda r: (r[3], r[7], r[0]))  # question (asked in that order),
    #                                                         vote, student


def test_the_csv_parsed_back_is_the_rows_written_by_hand(class_store):
    code, key, tokens = scripted_class(class_store)
    data = results_csv(class_store.result_rows(code, key), JUDGES, STEPS)
    assert data.startswith(b"\xef\xbb\xbf"), "UTF-8 with a BOM: Excel reads 中文 right"
    parsed = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    assert parsed[0] == list(COLUMNS)
    assert parsed[1:] == expected(tokens)


def test_no_token_and_no_key_is_anywhere_in_the_bytes(class_store):
    code, key, tokens = scripted_class(class_store)
    data = results_csv(class_store.result_rows(code, key), JUDGES, STEPS)
    for secret in (*tokens, key):
        assert secret.encode() not in data
    assert b"10.0.0." not in data, "no client address"


def test_the_results_are_refused_without_the_teachers_key(class_store):
    code, key, tokens = scripted_class(class_store)
    for wrong in ("", "nope", tokens[0]):
        with pytest.raises(RefusedError) as err:
            class_store.result_rows(code, wrong)
        assert err.value.reason == "not_teacher"


def test_every_cell_that_begins_like_a_formula_begins_with_a_quote():
    for text in ("=1+1", "+1", "-3", "@SUM(A1)", "\tx", "\rx"):
        assert safe_cell(text) == "'" + text
    for text in ("1", "a=b", "[-3.0]", "", "李雷", "'=x"):
        assert safe_cell(text) == text


def test_a_question_without_a_judge_leaves_right_empty():
    row = ResultRow("s-1", "", "scores.sign", "old", 1, -3.0, T0)
    assert result_table([row], JUDGES, STEPS)[1][COLUMNS.index("right")] == ""


def test_the_step_is_the_registrys_and_empty_for_a_question_it_no_longer_has():
    rows = [ResultRow("s-1", "", q, "s1", 1, 1.0, T0 + k)
            for k, q in enumerate(("scores.sign", "gone.task"))]
    step = COLUMNS.index("step")
    assert [line[step] for line in result_table(rows, JUDGES, STEPS)[1:]] == ["scores", ""]


def test_a_question_asked_again_keeps_its_earlier_round_in_the_csv(class_store):
    """Asked again after the reveal: the first round's answers stay in the results as round 1,
    the new ones are round 2; the class's live counts see only the new round."""
    code, key, tokens = scripted_class(class_store)
    where = ("overview.tokens", "s1")
    class_store.ask_again(code, key, *where, now=T0 + 600)
    class_store.answer(code, tokens[1], *where, [190], now=T0 + 660)
    assert class_store.answers_to(code, *where) == [[190]]
    parsed = list(csv.reader(io.StringIO(
        results_csv(class_store.result_rows(code, key), JUDGES, STEPS).decode("utf-8-sig"),
        newline="")))
    col = {name: n for n, name in enumerate(COLUMNS)}
    b = pseudonym(tokens[1])
    mine = [(r[col["round"]], r[col["vote"]], r[col["answer_id"]], r[col["right"]])
            for r in parsed[1:] if r[col["student"]] == b and r[col["question"]] == where[0]]
    assert mine == [("1", "1", "[196.0]", "yes"), ("1", "2", "[196.0]", "yes"),
                    ("2", "1", "[190.0]", "no")]
    assert len(parsed) == len(expected(tokens)) + 2  # every earlier row kept, one new


SCALE = Task("same", {}, (), id="addnorm.scale", kind="choice", page="addnorm",
             options=("times", "root", "same"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_take_away_lists_every_round_in_order_in_words_with_the_check(class_store, lang):
    """A choice question asked, revealed, asked again; TOKENS between its rounds; the concept
    check before the first question and after the last. The CSV's rows come round by round in
    that order, the re-asked question's rounds both there and said to be of a question asked
    twice; each answer in the teacher's words beside its id; the check's rows (step
    concept_check, round pre/post) judged."""
    from lens.i18n import Texts  # noqa: PLC0415
    from lens.lesson.concepts import QUESTIONS  # noqa: PLC0415

    store = class_store
    code, key = store.create_class({}, "overview", now=T0)
    a, b = (store.join(code, f"10.0.1.{i}", now=T0) for i in range(2))
    q = QUESTIONS[0]
    wrong = next(o for o in q.options if o != q.right)
    store.open_check(code, key, "pre")
    store.check_answer(code, a, q.id, "pre", wrong, now=T0 + 10)
    store.close_check(code, key, "pre")
    choice = Rule("choice", options=SCALE.options)
    store.open_task(code, key, SCALE.id, "s1", choice, now=T0 + 60)
    store.answer(code, a, SCALE.id, "s1", "times", now=T0 + 70)
    store.answer(code, b, SCALE.id, "s1", "same", now=T0 + 71)
    store.reveal(code, key, SCALE.id, "s1")
    store.open_task(code, key, TOKENS.id, "s1", Rule("number", parts=1), now=T0 + 120)
    store.answer(code, a, TOKENS.id, "s1", [196], now=T0 + 130)
    store.reveal(code, key, TOKENS.id, "s1")
    store.ask_again(code, key, SCALE.id, "s1", now=T0 + 180)
    store.answer(code, a, SCALE.id, "s1", "same", now=T0 + 190)
    store.reveal(code, key, SCALE.id, "s1")
    store.open_check(code, key, "post")
    store.check_answer(code, a, q.id, "post", q.right, now=T0 + 240)
    data = class_results_csv(store.result_rows(code, key),
                             {(SCALE.id, "s1"): SCALE, (TOKENS.id, "s1"): TOKENS},
                             STEPS | {SCALE.id: "addnorm"}, store.check_rows(code, key), lang)
    parsed = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    col = {name: n for n, name in enumerate(COLUMNS)}
    got = [(r[col["question"]], r[col["round"]], r[col["times_asked"]], r[col["student"]],
            r[col["answer"]], r[col["answer_id"]], r[col["right"]]) for r in parsed[1:]]
    words, concepts = Texts(lang, "addnorm"), Texts(lang, "concepts")
    pa, pb = pseudonym(a), pseudonym(b)
    first, second = sorted([pa, pb])
    by = {pa: "times", pb: "same"}
    assert got == [
        (q.id, "pre", "", pa, concepts(f"{q.id}_{wrong}"), wrong, "no"),
        *[(SCALE.id, "1", "2", who, words(f"addnorm_scale_{by[who]}"), by[who],
           "yes" if by[who] == "same" else "no") for who in (first, second)],
        (TOKENS.id, "1", "1", pa, "196", "[196.0]", "yes"),
        (SCALE.id, "2", "2", pa, words("addnorm_scale_same"), "same", "yes"),
        (q.id, "post", "", pa, concepts(f"{q.id}_{q.right}"), q.right, "yes")]
    steps = {r[col["question"]]: r[col["step"]] for r in parsed[1:]}
    assert steps[q.id] == CHECK_STEP and steps[SCALE.id] == "addnorm"
