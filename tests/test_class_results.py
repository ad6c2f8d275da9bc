"""The class's results as CSV (lens/classroom/results.py, `Store.result_rows`): a scripted class
of four students, two questions and two votes, on both backends, downloaded and parsed back
equals the rows written by hand; no token anywhere in the bytes; cells a spreadsheet would run
as formulas (a nickname `=HYPERLINK(…)`, a negative number) begin with `'`; UTF-8 with a BOM;
the teacher's key needed."""

from __future__ import annotations

import csv
import io

import pytest

from lens.classroom.results import COLUMNS, ResultRow, result_table, results_csv, safe_cell
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
    """The rows by hand: student, nickname, step, question, settings, round, vote, answer, right,
    at."""
    a, b, c, d = (pseudonym(t) for t in tokens)
    link = "'" + LINK  # a formula made text
    at = {0: "2027-01-15T08:00:00+00:00", 1: "2027-01-15T08:01:00+00:00",
          2: "2027-01-15T08:02:00+00:00", 3: "2027-01-15T08:03:00+00:00"}
    rows = [
        [a, link, "overview", "overview.tokens", "s1", "1", "1", "[190.0]", "no", at[0]],
        [a, link, "overview", "overview.tokens", "s1", "1", "2", "[196.0]", "yes", at[1]],
        [a, link, "scores", "scores.sign", "s1", "1", "1", "'-3.0", "yes", at[2]],
        [a, link, "scores", "scores.sign", "s1", "1", "2", "'-3.0", "yes", at[3]],
        [b, "", "overview", "overview.tokens", "s1", "1", "1", "[196.0]", "yes", at[0]],
        [b, "", "overview", "overview.tokens", "s1", "1", "2", "[196.0]", "yes", at[1]],
        [b, "", "scores", "scores.sign", "s1", "1", "1", "2.0", "no", at[2]],
        [b, "", "scores", "scores.sign", "s1", "1", "2", "4.0", "no", at[3]],
        [c, "李雷", "overview", "overview.tokens", "s1", "1", "1", "[196.0]", "yes", at[0]],
        [c, "李雷", "scores", "scores.sign", "s1", "1", "1", "'-3.0", "yes", at[2]],
        [c, "李雷", "scores", "scores.sign", "s1", "1", "2", "5.0", "no", at[3]],
        [d, "Bo", "overview", "overview.tokens", "s1", "1", "1", "[200.0]", "no", at[0]],
        [d, "Bo", "overview", "overview.tokens", "s1", "1", "2", "[196.0]", "yes", at[1]],
        [d, "Bo", "scores", "scores.sign", "s1", "1", "1", "0.5", "no", at[2]],
        [d, "Bo", "scores", "scores.sign", "s1", "1", "2", "'-3.0", "yes", at[3]],
    ]
    return sorted(rows, key=lambda r: (r[0], r[3], r[4], r[5], r[6]))


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
    rows = [ResultRow("s-1", "", q, "s1", 1, 1.0, T0) for q in ("scores.sign", "gone.task")]
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
    mine = [(r[col["round"]], r[col["vote"]], r[col["answer"]], r[col["right"]])
            for r in parsed[1:] if r[col["student"]] == b and r[col["question"]] == where[0]]
    assert mine == [("1", "1", "[196.0]", "yes"), ("1", "2", "[196.0]", "yes"),
                    ("2", "1", "[190.0]", "no")]
    assert len(parsed) == len(expected(tokens)) + 2  # every earlier row kept, one new
