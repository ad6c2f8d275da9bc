"""The live class's store (lens/classroom/store.py) on both backends, each started for real:
SQLite in a temporary folder, and a PostgreSQL server on loopback (tests/support/postgres.py).
A class from its creation to a revealed task; the teacher key; the wrong-code rate limit;
answers refused for every reason, nothing stored; one answer per student; settings that close
the open tasks; expiry; two processes answering at once; a writer killed with SIGKILL again and
again that loses no answer it had acknowledged, of either vote; the peer-instruction cycle
(vote 1, discussion, vote 2, reveal, asked again), transitions and gain from stored votes;
the migration of a file from before the two votes."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sqlalchemy import Column, Float, MetaData, String, Table, Text, and_, inspect, select

from lens.classroom import room
from lens.classroom.database import answers, check_rounds, classes, earlier_answers, students
from lens.classroom.rules import (
    ADDRESS_FREE,
    BROWSER_FREE,
    CLASS_HOURS,
    MAX_ANSWER_CHARS,
    MAX_DELAY_S,
    MAX_NICKNAME,
    WRONG_WINDOW_S,
    RefusedError,
    Rule,
    normal_code,
)
from lens.classroom.store import Store, pseudonym
from lens.classroom.tally import transitions
from tests.support.postgres import postgres_server

ROOT = Path(__file__).resolve().parent.parent
PATCH = Rule("patch", n=196)
SETTINGS = {"lesson": "1", "d_model": "512"}


@pytest.fixture(scope="module")
def pg_url():
    with postgres_server() as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])  # a server
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'classes.sqlite'}"
    base = request.getfixturevalue("pg_url")
    store = Store(base)  # a clean database for each test
    with store.engine.begin() as conn:
        for table in ("answers", "checks", "check_rounds", "tasks", "students", "classes",
                      "wrong_codes"):
            conn.exec_driver_sql(f"DELETE FROM {table}")
    store.close()
    return base


@pytest.fixture
def store(url):
    s = Store(url)
    yield s
    s.close()


def new_class(store: Store, task: str = "positional.similar", rule: Rule = PATCH):
    code, key = store.create_class(SETTINGS, "scores")
    store.open_task(code, key, task, "s1", rule)
    return code, key


def test_a_class_from_its_start_to_a_revealed_task(store):
    code, key = new_class(store)
    assert len(code) == 8 and store.is_teacher(code, key)
    a = store.join(code.lower(), "10.0.0.1", "Ann")  # as typed: case does not matter
    b = store.join(f"{code[:4]}-{code[4:]}", "10.0.0.2")
    assert a != b and store.is_student(code, a) and not store.is_student(code, "nobody")
    store.answer(code, a, "positional.similar", "s1", 120)
    store.answer(code, b, "positional.similar", "s1", 37)
    assert sorted(store.answers_to(code, "positional.similar", "s1")) == [37, 120]
    assert store.state(code)["tasks"] == {("positional.similar", "s1"): "open"}
    assert store.state(code)["students"] == 2
    store.reveal(code, key, "positional.similar", "s1")
    assert store.state(code)["tasks"][("positional.similar", "s1")] == "revealed"
    store.move(code, key, "multihead")
    assert store.state(code)["step"] == "multihead"
    assert store.nicknames(code, key) == ["Ann", ""]


def test_a_task_keeps_the_teachers_layer_head_and_query_and_a_student_their_answers(store):
    code, key = store.create_class(SETTINGS, "scores")
    store.open_task(code, key, "positional.similar", "s1", PATCH, fixed=(2, 3, 105))
    store.open_task(code, key, "scores.shape", "s1", Rule("number", parts=2))
    assert store.state(code)["fixed"] == {("positional.similar", "s1"): (2, 3, 105),
                                          ("scores.shape", "s1"): (0, 0, 0)}
    a, b = store.join(code, "c1"), store.join(code, "c2")
    store.answer(code, a, "positional.similar", "s1", 7)
    store.answer(code, a, "scores.shape", "s1", [196, 64])
    store.answer(code, b, "positional.similar", "s1", 8)
    assert store.answers_of(code, a) == {("positional.similar", "s1", 1): 7,
                                         ("scores.shape", "s1", 1): [196.0, 64.0]}
    assert store.answers_of(code, "nobody") == {}


@pytest.mark.parametrize("act, reason", [
    (lambda s, c, k, t: s.answer(c, t, "positional.similar", "s1", -1), "bad_answer"),
    (lambda s, c, k, t: s.answer(c, "nobody", "positional.similar", "s1", 1), "not_student"),
    (lambda s, c, k, t: s.answer(c, t, "positional.similar", "s1", 1, vote=3), "bad_answer"),
    (lambda s, c, k, t: s.answer(c, t, "qkv.d_head", "s1", [64]), "no_task"),
    (lambda s, c, k, t: s.move(c, k + "x", "qkv"), "not_teacher"),
    (lambda s, c, k, t: s.join("NOSUCHCL", "c9"), "no_class"),
    (lambda s, c, k, t: (s.reveal(c, k, "positional.similar", "s1"),
                         s.answer(c, t, "positional.similar", "s1", 1)), "closed"),
])
def test_a_refusal_names_its_reason_for_the_page_to_say(store, act, reason):
    code, key = new_class(store)
    token = store.join(code, "c1")
    with pytest.raises(RefusedError) as err:
        act(store, code, key, token)
    assert err.value.reason == reason


def test_every_process_that_opens_the_url_sees_the_class(url):
    one, two = Store(url), Store(url)
    try:
        code, key = new_class(one)
        token = two.join(code, "c")
        two.answer(code, token, "positional.similar", "s1", 5)
        assert one.answers_to(code, "positional.similar", "s1") == [5]
    finally:
        one.close()
        two.close()


def test_teacher_actions_need_the_teacher_key(store):
    code, key = new_class(store)
    other_code, other_key = store.create_class(SETTINGS, "scores")
    for wrong in ("", "x" * 32, other_key, key[:-1]):
        assert not store.is_teacher(code, wrong)
        with pytest.raises(RefusedError):
            store.reveal(code, wrong, "positional.similar", "s1")
        with pytest.raises(RefusedError):
            store.move(code, wrong, "ffn")
        with pytest.raises(RefusedError):
            store.nicknames(code, wrong)
        with pytest.raises(RefusedError):
            store.open_task(code, wrong, "scores.shape", "s1", Rule("number", parts=2))
        for act, args in ((store.open_check, ("pre",)), (store.close_check, ("pre",))):
            with pytest.raises(RefusedError):
                act(code, wrong, *args)
        assert store.state(code)["checks"] == {"pre": "closed", "post": "closed"}
        for act in (store.close_vote, store.open_vote2, store.ask_again):
            with pytest.raises(RefusedError) as err:
                act(code, wrong, "positional.similar", "s1")
            assert err.value.reason == "not_teacher"
    assert store.state(code)["step"] == "scores"
    assert store.state(code)["tasks"] == {("positional.similar", "s1"): "open"}
    with pytest.raises(RefusedError):
        store.end_class(code, other_key)
    store.end_class(code, key)
    assert store.state(code) is None and store.state(other_code) is not None


def test_wrong_codes_slow_a_browser_then_the_right_code_joins_after_its_wait(store):
    code, _ = new_class(store)
    now = 1_000_000.0
    store.create_class(SETTINGS, "scores", now=now)  # (the expiry sweep runs on create)
    waits: list[float] = []
    for _ in range(BROWSER_FREE + 4):
        with pytest.raises(RefusedError) as err:
            store.join("ZZZZZZZZ", "10.0.0.9", now=now, browser="tab-1", wait=waits.append)
        assert err.value.reason == "no_class"
    assert waits == [1.0, 2.0, 4.0, MAX_DELAY_S]  # nothing within the allowance, then doubling
    assert store.join_wait("10.0.0.9", "tab-1", now=now) == MAX_DELAY_S
    token = store.join(code, "10.0.0.9", now=now, browser="tab-1", wait=waits.append)
    assert store.is_student(code, token) and waits[-1] == MAX_DELAY_S  # slowed, not refused
    assert store.join_wait("10.0.0.9", "tab-2", now=now) == 0  # a new tab at that address: free
    assert store.join_wait("10.0.0.9", "tab-1", now=now + WRONG_WINDOW_S + 1) == 0  # passed


def test_a_hall_behind_one_address_never_waits_through_typos_but_a_guesser_does(store):
    code, _ = new_class(store)
    waits: list[float] = []
    now = 2_000_000.0
    store.create_class(SETTINGS, "scores", now=now)
    for k in range(300):  # 300 students behind one NAT, each with a typo: no one waits
        with pytest.raises(RefusedError):
            store.join("ZZZZZZZZ", "10.0.0.1", now=now, browser=f"tab-{k}", wait=waits.append)
        assert store.join(code, "10.0.0.1", now=now, browser=f"tab-{k}", wait=waits.append)
    assert waits == []
    with store.engine.begin() as conn:  # a guesser from that address, every try a new tab
        conn.exec_driver_sql(f"UPDATE wrong_codes SET count = {ADDRESS_FREE} "
                             "WHERE client = '10.0.0.1'")
    assert store.join_wait("10.0.0.1", "fresh", now=now) == 1.0
    assert store.join(code, "10.0.0.1", now=now, browser="fresh", wait=waits.append)
    assert waits == [1.0]


def test_a_nickname_too_long_is_refused_and_nothing_counted(store):
    code, _ = new_class(store)
    with pytest.raises(RefusedError) as err:
        store.join(code, "10.0.0.3", "n" * (MAX_NICKNAME + 1))
    assert err.value.reason == "too_long"
    assert store.join(code, "10.0.0.3", "n" * MAX_NICKNAME)


@pytest.mark.parametrize(("rule", "value"), [
    (PATCH, 196), (PATCH, -1), (PATCH, "3"), (PATCH, True), (PATCH, 3.0), (PATCH, None),
    (Rule("choice", options=("sharper", "flatter", "same")), "<b>flatter</b>"),
    (Rule("choice", options=("sharper", "flatter", "same")), ["flatter"]),
    (Rule("number", parts=2), [196]), (Rule("number", parts=2), [196, float("nan")]),
    (Rule("number", parts=2), [196, "512"]), (Rule("number", parts=2), [1e300, 1]),
    (Rule("estimate", lo=0, hi=100), 101), (Rule("estimate", lo=0, hi=100), float("inf")),
])
def test_an_answer_of_the_wrong_kind_or_out_of_range_is_refused_and_not_stored(store, rule,
                                                                            value):
    code, key = new_class(store, "t", rule)
    token = store.join(code, "c")
    with pytest.raises(RefusedError):
        store.answer(code, token, "t", "s1", value)
    assert store.answers_to(code, "t", "s1") == []


def test_answers_for_what_is_not_open_or_from_no_student_are_refused(store):
    code, key = new_class(store)
    token = store.join(code, "c")
    cases = [(code, "not-a-token", "positional.similar", "s1"),  # no such student
             (code, token, "scores.nope", "s1"),  # no such task
             (code, token, "positional.similar", "s2"),  # not under these settings
             ("ZZZZZZZZ", token, "positional.similar", "s1")]  # another class
    for c, t, task, key_ in cases:
        with pytest.raises(RefusedError):
            store.answer(c, t, task, key_, 3)
    store.reveal(code, key, "positional.similar", "s1")
    with pytest.raises(RefusedError, match="vote 1 of this task is not open"):
        store.answer(code, token, "positional.similar", "s1", 3)
    assert store.answers_to(code, "positional.similar", "s1") == []


def test_one_answer_per_student_changeable_until_the_reveal(store):
    code, key = new_class(store)
    token = store.join(code, "c")
    store.answer(code, token, "positional.similar", "s1", 3)
    store.answer(code, token, "positional.similar", "s1", 4)
    assert store.answers_to(code, "positional.similar", "s1") == [4]
    store.reveal(code, key, "positional.similar", "s1")
    with pytest.raises(RefusedError):
        store.answer(code, token, "positional.similar", "s1", 5)
    assert store.answers_to(code, "positional.similar", "s1") == [4]


def test_new_settings_close_the_open_tasks_and_keep_their_answers_apart(store):
    code, key = new_class(store)
    token = store.join(code, "c")
    store.answer(code, token, "positional.similar", "s1", 3)
    store.change_settings(code, key, {"lesson": "1", "d_model": "256"})
    assert store.state(code)["tasks"][("positional.similar", "s1")] == "closed"
    assert store.state(code)["settings"]["d_model"] == "256"
    with pytest.raises(RefusedError):
        store.answer(code, token, "positional.similar", "s1", 4)
    store.open_task(code, key, "positional.similar", "s2", PATCH)  # asked again, the new settings
    store.answer(code, token, "positional.similar", "s2", 9)
    assert store.answers_to(code, "positional.similar", "s1") == [3]
    assert store.answers_to(code, "positional.similar", "s2") == [9]


# --- peer instruction: two votes ---------------------------------------------------------------

T = ("positional.similar", "s1")
DIVISOR = ("scores.divisor", "s1")


def refused(act, *args, **kw) -> str:  # noqa: ANN001
    with pytest.raises(RefusedError) as err:
        act(*args, **kw)
    return err.value.reason


def test_each_vote_is_taken_only_while_it_is_open_and_both_are_kept(store):
    code, key = new_class(store)
    a, b = store.join(code, "c1"), store.join(code, "c2")

    def state() -> str:
        return store.state(code)["tasks"][T]

    assert state() == "open"  # vote 1
    store.answer(code, a, *T, 3)
    store.answer(code, a, *T, 4)  # changed while open: one answer per vote
    assert refused(store.answer, code, a, *T, 5, vote=2) == "closed"  # vote 2 not yet open
    store.close_vote(code, key, *T)
    assert state() == "discuss"
    assert refused(store.answer, code, a, *T, 5) == "closed"  # vote 1 is over
    assert refused(store.answer, code, b, *T, 5) == "closed"  # also for one who did not vote
    assert refused(store.answer, code, a, *T, 5, vote=2) == "closed"  # discussing
    store.open_vote2(code, key, *T)
    assert state() == "vote2"
    assert refused(store.answer, code, a, *T, 5) == "closed"  # vote 1 stays as it was
    store.answer(code, a, *T, 6, vote=2)
    store.answer(code, a, *T, 7, vote=2)
    store.answer(code, b, *T, 8, vote=2)  # vote 2 without vote 1: taken
    store.reveal(code, key, *T)
    assert state() == "revealed"
    assert refused(store.answer, code, a, *T, 9, vote=2) == "closed"
    assert store.answers_to(code, *T) == [4]
    assert sorted(store.answers_to(code, *T, vote=2)) == [7, 8]
    assert store.answers_of(code, a) == {(*T, 1): 4, (*T, 2): 7}
    assert store.answers_of(code, b) == {(*T, 2): 8}


def test_the_teacher_may_skip_the_discussion_a_single_vote(store):
    code, key = new_class(store)
    a = store.join(code, "c1")
    store.answer(code, a, *T, 3)
    store.reveal(code, key, *T)  # straight from vote 1
    assert store.state(code)["tasks"][T] == "revealed"
    assert store.answers_to(code, *T) == [3] and store.answers_to(code, *T, vote=2) == []
    store.reveal(code, key, *T)  # twice (two of the teacher's tabs): no harm


def test_the_teacher_may_reveal_from_the_discussion(store):
    code, key = new_class(store)
    store.answer(code, store.join(code, "c1"), *T, 3)
    store.close_vote(code, key, *T)
    store.reveal(code, key, *T)
    assert store.state(code)["tasks"][T] == "revealed"


def test_a_revealed_task_asked_again_starts_afresh_at_vote_1_and_keeps_the_last_round(store):
    code, key = new_class(store)
    a = store.join(code, "c1")
    store.answer(code, a, *T, 3)
    store.close_vote(code, key, *T)
    store.open_vote2(code, key, *T)
    store.answer(code, a, *T, 4, vote=2)
    store.reveal(code, key, *T)
    store.ask_again(code, key, *T)
    assert store.state(code)["tasks"][T] == "open"
    assert store.answers_to(code, *T) == [] and store.answers_to(code, *T, vote=2) == []
    assert store.answers_of(code, a) == {}
    store.answer(code, a, *T, 5)
    assert store.answers_to(code, *T) == [5]
    assert refused(store.ask_again, code, key, *T) == "wrong_state"  # a second press: no loss
    assert store.answers_to(code, *T) == [5]
    rows = [(r.round, r.vote, r.value) for r in store.result_rows(code, key)]
    assert rows == [(1, 1, 3), (1, 2, 4), (2, 1, 5)], "the first round kept for the results"
    store.reveal(code, key, *T)
    store.ask_again(code, key, *T)  # a third round: the second kept as round 2
    assert [(r.round, r.value) for r in store.result_rows(code, key)] == [(1, 3), (1, 4), (2, 5)]


def test_a_teacher_action_the_tasks_state_does_not_allow_is_refused(store):
    code, key = new_class(store)
    assert refused(store.open_vote2, code, key, *T) == "wrong_state"  # no discussion yet
    assert refused(store.ask_again, code, key, *T) == "wrong_state"  # not revealed
    assert refused(store.close_vote, code, key, "scores.shape", "s1") == "no_task"
    store.close_vote(code, key, *T)
    assert refused(store.close_vote, code, key, *T) == "wrong_state"
    assert refused(store.open_task, code, key, *T, PATCH) == "wrong_state"  # would mix votes
    store.open_vote2(code, key, *T)
    assert refused(store.open_task, code, key, *T, PATCH) == "wrong_state"
    store.reveal(code, key, *T)
    assert refused(store.open_task, code, key, *T, PATCH) == "wrong_state"  # ask_again does it
    assert refused(store.close_vote, code, key, *T) == "wrong_state"
    assert store.state(code)["tasks"][T] == "revealed"


def test_transitions_and_gain_from_the_stored_votes_of_a_class_of_twelve(store):
    code, key = store.create_class(SETTINGS, "scores")
    store.open_task(code, key, *DIVISOR, Rule("choice", options=("sharper", "flatter", "same")))
    script = [  # (vote 1, vote 2) per student; "flatter" is right
        ("flatter", "flatter"), ("flatter", "flatter"), ("flatter", "flatter"),  # right→right
        ("sharper", "flatter"), ("same", "flatter"), ("sharper", "flatter"),
        ("sharper", "flatter"),  # wrong→right
        ("flatter", "sharper"),  # right→wrong
        ("sharper", "same"), ("same", "same"),  # wrong→wrong
        ("flatter", None),  # vote 1 only: carried into vote 2 at its close (right→right)
        (None, "flatter"),  # vote 2 only
    ]
    counted = [(v1, v1 if v2 is None else v2) for v1, v2 in script]
    tokens = [store.join(code, f"c{i}", f"n{i}") for i in range(len(script))]
    for vote in (1, 2):
        for token, pair in zip(tokens, script, strict=True):
            if pair[vote - 1] is not None:
                store.answer(code, token, *DIVISOR, pair[vote - 1], vote=vote)
        if vote == 1:
            store.close_vote(code, key, *DIVISOR)
            store.open_vote2(code, key, *DIVISOR)
    store.reveal(code, key, *DIVISOR)
    assert refused(store.vote_rows, code, "not-the-key", *DIVISOR) == "not_teacher"
    rows = store.vote_rows(code, key, *DIVISOR)
    assert sorted((v1 or "", v2 or "") for _, v1, v2 in rows) == sorted(
        (v1 or "", v2 or "") for v1, v2 in counted)
    # one row a student, named by a pseudonym: no nickname, no token (a credential)
    assert {who for who, _, _ in rows} == {pseudonym(t) for t in tokens}
    assert not {who for who, _, _ in rows} & set(tokens)
    t = transitions([(v1, v2) for _, v1, v2 in rows], lambda v: v == "flatter")
    # by hand: 11 voted twice (one by carrying); 4 right→right, 4 wrong→right, 1 right→wrong,
    # 2 wrong→wrong; right at vote 1: 5 of 11, at vote 2: 8 of 11;
    # g = (8/11 − 5/11) / (1 − 5/11) = 0.5
    assert t.counts == {"right→right": 4, "wrong→right": 4, "right→wrong": 1,
                        "wrong→wrong": 2}
    assert (t.n, t.right_1, t.right_2) == (11, 5 / 11, 8 / 11)
    assert t.gain == pytest.approx(0.5)


@pytest.mark.parametrize("stage", ["open", "discuss", "vote2"])
def test_new_settings_close_a_task_at_any_stage_of_its_asking(store, stage):
    code, key = new_class(store)
    if stage != "open":
        store.close_vote(code, key, *T)
    if stage == "vote2":
        store.open_vote2(code, key, *T)
    store.change_settings(code, key, {"lesson": "1", "d_model": "256"})
    assert store.state(code)["tasks"][T] == "closed"
    store.open_task(code, key, *T, PATCH)  # the old settings back: vote 1 again
    assert store.state(code)["tasks"][T] == "open"


# --- the concept check ---------------------------------------------------------------------


def test_the_concept_check_takes_answers_per_round_only_while_it_is_open(store):
    code, key = store.create_class(SETTINGS, "scores")
    a, b = store.join(code, "c1"), store.join(code, "c2")
    assert store.state(code)["checks"] == {"pre": "closed", "post": "closed"}
    assert refused(store.check_answer, code, a, "q1", "pre", "b") == "closed"  # not yet open
    store.open_check(code, key, "pre")
    assert store.state(code)["checks"] == {"pre": "open", "post": "closed"}
    store.check_answer(code, a, "q1", "pre", "b")
    store.check_answer(code, a, "q1", "pre", "c")  # changed while open: one answer
    store.check_answer(code, a, "q2", "pre", {"order": [2, 0, 1]})
    store.check_answer(code, b, "q1", "pre", "a")
    assert refused(store.check_answer, code, a, "q1", "post", "c") == "closed"
    store.close_check(code, key, "pre")
    assert refused(store.check_answer, code, a, "q1", "pre", "d") == "closed"
    store.open_check(code, key, "post")
    store.check_answer(code, a, "q1", "post", "d")
    pa, pb = pseudonym(a), pseudonym(b)
    assert store.check_answers(code, key) == {(pa, "q1", "pre"): "c",
                                              (pa, "q2", "pre"): {"order": [2, 0, 1]},
                                              (pb, "q1", "pre"): "a", (pa, "q1", "post"): "d"}
    assert refused(store.check_answers, code, "not-the-key") == "not_teacher"
    assert store.check_answers_of(code, b) == {("q1", "pre"): "a"}
    store.end_class(code, key)  # over: nothing more taken; a student's own answers stay
    assert refused(store.check_answer, code, a, "q1", "post", "c") == "not_student"
    assert store.check_answers_of(code, a)[("q1", "post")] == "d"


@pytest.mark.parametrize(("question", "round_", "value", "reason"), [
    ("q1", "during", "b", "bad_answer"),  # no such round
    ("", "pre", "b", "bad_answer"), ("q" * 65, "pre", "b", "bad_answer"),
    (7, "pre", "b", "bad_answer"),  # a question id is a string
    ("q1", "pre", float("nan"), "bad_answer"), ("q1", "pre", {1, 2}, "bad_answer"),  # no JSON
    ("q1", "pre", "x" * MAX_ANSWER_CHARS, "too_long"),
])
def test_a_check_answer_that_is_not_one_is_refused_and_not_stored(store, question, round_,
                                                                  value, reason):
    code, key = store.create_class(SETTINGS, "scores")
    token = store.join(code, "c1")
    store.open_check(code, key, "pre")
    assert refused(store.check_answer, code, token, question, round_, value) == reason
    assert refused(store.check_answer, code, "nobody", "q1", "pre", "b") == "not_student"
    assert refused(store.open_check, code, key, "during") == "bad_answer"
    assert store.check_answers(code, key) == {}


def test_a_nickname_is_kept_whole_without_its_spaces(store):
    code, key = new_class(store)
    store.join(code, "c", "  " + "n" * 24 + " ")
    assert store.nicknames(code, key) == ["n" * 24]


def test_classes_expire_and_are_deleted_with_their_answers(store):
    start = time.time()
    code, key = store.create_class(SETTINGS, "scores", now=start)
    store.open_task(code, key, "positional.similar", "s1", PATCH, now=start)
    token = store.join(code, "c", now=start + 1)
    store.answer(code, token, "positional.similar", "s1", 1, now=start + 2)
    store.reveal(code, key, "positional.similar", "s1")
    store.ask_again(code, key, "positional.similar", "s1", now=start + 2)  # round 1 kept
    store.answer(code, token, "positional.similar", "s1", 2, now=start + 2)
    store.open_check(code, key, "pre")
    store.check_answer(code, token, "q1", "pre", "b", now=start + 3)
    assert len(store.result_rows(code, key)) == 2
    assert store.expire(start + CLASS_HOURS * 3600 - 1) == 0
    assert store.expire(start + CLASS_HOURS * 3600 + 1) == 1
    assert store.state(code) is None and store.answers_to(code, "positional.similar", "s1") == []
    assert store.check_answers_of(code, token) == {}
    with store.engine.connect() as conn:
        assert conn.execute(select(check_rounds).where(check_rounds.c.code == code)).all() == []
        assert conn.execute(select(earlier_answers)
                            .where(earlier_answers.c.code == code)).all() == []
    assert not store.is_student(code, token)
    with pytest.raises(RefusedError):
        store.join(code, "c", now=start + CLASS_HOURS * 3600 + 2)


def test_a_database_from_before_the_two_votes_keeps_its_answers_as_vote_1(url):
    """An `answers` table without `vote` (as every file was before): a store that opens it
    adds the column, in the primary key, every answer vote 1."""
    store = Store(url)
    code, key = new_class(store)
    token = store.join(code, "c")
    store.close()
    old = MetaData()
    before = Table("answers", old, *(Column(n, String(64), primary_key=True)
                                     for n in ("code", "task", "settings_key", "token")),
                   Column("value", Text, nullable=False), Column("at", Float, nullable=False))
    store = Store(url)
    with store.engine.begin() as conn:
        conn.exec_driver_sql("ALTER TABLE tasks DROP COLUMN asked")  # as before it was kept
        conn.exec_driver_sql("ALTER TABLE classes DROP COLUMN ended")  # … and these two
        conn.exec_driver_sql("ALTER TABLE students DROP COLUMN lang")
        conn.exec_driver_sql("DROP TABLE answers")
        before.create(conn)
        conn.execute(before.insert().values(code=code, task="positional.similar",
                                            settings_key="s1", token=token, value="42", at=1.0))
    store.close()
    store = Store(url)  # migrates
    try:
        with store.engine.connect() as conn:
            pkey = inspect(conn).get_pk_constraint("answers")["constrained_columns"]
        assert sorted(pkey) == sorted(["code", "task", "settings_key", "token", "vote"])
        assert store.answers_to(code, "positional.similar", "s1") == [42]
        assert store.answers_of(code, token) == {("positional.similar", "s1", 1): 42}
        store.answer(code, token, "positional.similar", "s1", 43)  # the new table takes answers
        assert store.answers_to(code, "positional.similar", "s1", vote=1) == [43]
        with store.engine.connect() as conn:  # the other migrations: each task as asked, …
            assert "asked" in {c["name"] for c in inspect(conn).get_columns("tasks")}
            assert "ended" in {c["name"] for c in inspect(conn).get_columns("classes")}
            assert "lang" in {c["name"] for c in inspect(conn).get_columns("students")}
        assert store.state(code) is not None, "a class from before goes on"
        assert store.language_of(code, token) is None  # no language chosen yet
        store.set_language(code, token, "zh")
        assert store.language_of(code, token) == "zh"
        again = Store(url)  # a second opening finds nothing to migrate
        assert again.answers_to(code, "positional.similar", "s1") == [43]
        again.close()
    finally:
        store.close()


def test_the_store_keeps_each_question_as_asked_for_the_teacher_alone(store):
    """`open_task(asked=…)`: the task as the teacher's page asked it, kept with the task (a
    reload's results judge it), read back with the teacher's key only; asked again, kept."""
    code, key = store.create_class(SETTINGS, "positional")
    store.open_task(code, key, "positional.similar", "s1", PATCH, asked='{"id": "a"}')
    store.open_task(code, key, "scores.shape", "s1", Rule("number", parts=2))  # none kept
    assert store.asked_tasks(code, key) == {("positional.similar", "s1"): '{"id": "a"}'}
    with pytest.raises(RefusedError):
        store.asked_tasks(code, "not the key")
    token = store.join(code, "c")
    with pytest.raises(RefusedError):
        store.asked_tasks(code, token)  # a student's token is no teacher key
    store.reveal(code, key, "positional.similar", "s1")
    store.ask_again(code, key, "positional.similar", "s1")
    assert store.asked_tasks(code, key) == {("positional.similar", "s1"): '{"id": "a"}'}
    assert "asked" not in str(store.state(code)), "the class's state (students read it) has none"


def test_join_codes_read_as_typed():
    assert normal_code(" abcd-efgh ") == "ABCDEFGH"


# --- several processes ----------------------------------------------------------------------

WRITER = """
import sys
from lens.classroom.store import Store
url, code, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
votes = sys.argv[5] == "2"
store = Store(url)
for n in range(first, first + count):
    token = store.join(code, f"writer-{n}", nickname=str(n))
    store.answer(code, token, "t", "s1", n % 100)
    print(f"{n}.1", flush=True)  # acknowledged: committed before this line
    if votes:  # task u is at vote 2
        store.answer(code, token, "u", "s1", (n + 1) % 100, vote=2)
        print(f"{n}.2", flush=True)
"""


def writer(url: str, code: str, first: int, count: int, votes: int = 1) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, url, code, str(first),
                             str(count), str(votes)], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)


@pytest.mark.slow  # processes of their own
def test_two_processes_answering_at_once_lose_nothing(store, url):
    code, key = new_class(store, "t", Rule("estimate", lo=0, hi=100))
    a, b = writer(url, code, 0, 150), writer(url, code, 1000, 150)
    out_a, _ = a.communicate(timeout=240)
    out_b, _ = b.communicate(timeout=240)
    assert a.returncode == 0 and b.returncode == 0
    acked = out_a.split() + out_b.split()
    assert len(acked) == 300 and all(a.endswith(".1") for a in acked)
    assert len(store.answers_to(code, "t", "s1")) == 300
    assert store.state(code)["students"] == 300


@pytest.mark.slow
def test_a_writer_killed_again_and_again_loses_no_answer_it_acknowledged(store, url):
    """Each student of the writer answers vote 1 of task t and vote 2 of task u (at vote 2)."""
    code, key = new_class(store, "t", Rule("estimate", lo=0, hi=100))
    store.open_task(code, key, "u", "s1", Rule("estimate", lo=0, hi=100))
    store.close_vote(code, key, "u", "s1")
    store.open_vote2(code, key, "u", "s1")
    rng = random.Random(7)
    acked: list[tuple[int, int]] = []  # (student id, vote)
    first = 0
    for _ in range(6):
        proc = writer(url, code, first, 100_000, votes=2)
        ready = proc.stdout.readline()  # its first answer acknowledged: started (on a loaded
        time.sleep(rng.uniform(0.8, 2.5))  # machine its imports alone may take seconds), then
        proc.send_signal(signal.SIGKILL)  # killed at a random moment: mid-transaction or not
        # the rest through the same buffered reader: communicate() would read the pipe's file
        # descriptor directly and miss the lines readline() had already buffered
        out = proc.stdout.read()
        proc.wait(timeout=30)
        lines = [tuple(map(int, line.split("."))) for line in (ready + out).split()]
        acked += lines
        first = (lines[-1][0] + 1) if lines else first + 1_000_000  # no id used twice
    assert sum(v == 2 for _, v in acked) > 20, "the writer acknowledged too little to test"
    # every acknowledged (id, vote) is a student with that vote's answer in the store (the one
    # in flight when the writer was killed may be there too, or not)
    with store.engine.connect() as conn:
        answered = {(int(r.nickname), r.vote) for r in conn.execute(
            select(students.c.nickname, answers.c.task, answers.c.vote).join(answers, and_(
                answers.c.code == students.c.code, answers.c.token == students.c.token))
            .where(students.c.code == code)) if r.task == {1: "t", 2: "u"}[r.vote]}
    missing = sorted(set(acked) - answered)
    assert not missing, f"{len(missing)} acknowledged answers lost, e.g. {missing[:5]}"
    assert len(answered) - len(set(acked)) <= 6  # at most one in flight per kill


def test_a_read_takes_no_write_lock_on_sqlite(tmp_path):
    """The class polls the store many times a second: a read's transaction (begun, not yet
    ended) must not hold the lock a student's Send needs. With BEGIN IMMEDIATE for reads the
    write below would wait for the read to end (30 s of busy timeout)."""
    import threading

    url = f"sqlite:///{tmp_path / 'classes.sqlite'}"
    reader, writer = Store(url), Store(url)
    code, key = new_class(writer)
    token = writer.join(code, "c1")
    done = threading.Event()
    with reader._reading() as conn:
        conn.execute(select(answers.c.value)).all()  # a transaction open, reading
        thread = threading.Thread(target=lambda: (writer.answer(code, token, "positional.similar",
                                                                "s1", 3), done.set()))
        thread.start()
        assert done.wait(5), "the write waited for the read"
    thread.join()
    assert writer.answers_to(code, "positional.similar", "s1") == [3]
    reader.close()
    writer.close()


def test_the_docs_name_every_stage_and_teacher_action_of_a_question():
    """docs/classroom.md's table of a question's stages follows `rules` (a stage or an action
    renamed or added there breaks this)."""
    from lens.classroom.rules import MOVES, TASK_STATES

    doc = (ROOT / "docs" / "classroom.md").read_text(encoding="utf-8")
    for name in (*TASK_STATES, *MOVES, "open_task", "open_check", "close_check", "vote_rows"):
        assert f"`{name}`" in doc, name


def test_the_data_folder_of_a_checkout_an_installed_copy_and_the_variable(monkeypatch, tmp_path):
    """A checkout keeps its store in data/ beside pyproject.toml; an installed copy (no
    pyproject.toml above the package: site-packages) in the user's data folder, never inside
    site-packages; ENCODER_LENS_DATA wins over both."""
    from lens.classroom import store as store_module  # noqa: PLC0415

    monkeypatch.delenv(store_module.DATA_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    root = Path(store_module.__file__).resolve().parents[2]
    assert store_module.data_folder() == root / "data"  # this checkout
    site = tmp_path / "site-packages" / "lens" / "classroom" / "store.py"
    monkeypatch.setattr(store_module, "__file__", str(site))
    assert store_module.data_folder() == tmp_path / "share" / "encoder-lens"
    monkeypatch.setenv(store_module.DATA_ENV, str(tmp_path / "mine"))
    assert store_module.data_folder() == tmp_path / "mine"


def test_a_student_who_does_not_touch_vote_2_is_counted_with_their_vote_1(store):
    """Vote 2 closing carries each vote 1 not followed by a vote 2 into vote 2, marked carried:
    the final tally, the moves and the results count every student who voted 1; a vote 2 sent
    stays as sent; a reveal straight after vote 1 carries nothing."""
    code, key = new_class(store)
    keep, change, late = (store.join(code, f"10.0.2.{i}") for i in range(3))
    where = ("positional.similar", "s1")
    for token, v in ((keep, 5), (change, 7)):
        store.answer(code, token, *where, v)
    store.close_vote(code, key, *where)
    store.open_vote2(code, key, *where)
    store.answer(code, change, *where, 5, vote=2)
    assert sorted(store.answers_to(code, *where, vote=2)) == [5]  # before the close: sent only
    store.reveal(code, key, *where)
    assert sorted(store.answers_to(code, *where, vote=2)) == [5, 5]
    rows = {who: (v1, v2) for who, v1, v2 in store.vote_rows(code, key, *where)}
    assert rows == {pseudonym(keep): (5, 5), pseudonym(change): (7, 5)}
    moved = transitions(rows.values(), lambda v: v == 5)
    assert moved.n == 2 and moved.counts["right→right"] == 1 and moved.counts["wrong→right"] == 1
    carried = {(r.student, r.vote): r.carried for r in store.result_rows(code, key)}
    assert carried == {(pseudonym(keep), 1): False, (pseudonym(keep), 2): True,
                       (pseudonym(change), 1): False, (pseudonym(change), 2): False}
    assert pseudonym(late) not in {s for s, _ in carried}  # no vote 1: nothing carried
    store.ask_again(code, key, *where)  # the round kept with its marks
    assert {(r.student, r.vote): r.carried for r in store.result_rows(code, key)} == carried
    store.answer(code, keep, *where, 3)
    store.reveal(code, key, *where)  # a single vote: nothing carried
    assert store.answers_to(code, *where, vote=2) == []


def test_a_students_language_is_kept_with_them_for_their_next_session(store):
    """The language a student joined in, then the one they last chose; their own only."""
    code, key = new_class(store)
    ann = store.join(code, "c", "Ann", lang="zh")
    bob = store.join(code, "c", "Bob")
    assert (store.language_of(code, ann), store.language_of(code, bob)) == ("zh", None)
    store.set_language(code, bob, "zh")
    store.set_language(code, ann, "en")
    assert (store.language_of(code, ann), store.language_of(code, bob)) == ("en", "zh")
    for lang in ("", "x" * 9, "zh; DROP", 7):
        assert refused(store.set_language, code, ann, lang) == "bad_answer"
    assert refused(store.set_language, code, "nobody", "zh") == "not_student"
    assert store.language_of(code, "nobody") is None
    assert store.language_of(code, ann) == "en"


def test_an_ended_class_takes_nothing_more_and_keeps_each_students_own_results(store):
    """Ending: the class is over for everyone at once (state None, no join, no answer, no
    teacher action, no projector) but its data stay until it expires, and each student reads
    their own results — every question as asked with their two votes — and nothing of
    another's; before the end none (the questions as asked hold their answers)."""
    start = time.time()
    code, key = store.create_class(SETTINGS, "scores", now=start)
    ann = store.join(code, "c", "Ann", now=start)
    bob = store.join(code, "c", "Bob", now=start)
    store.open_task(code, key, "positional.similar", "s1", PATCH, now=start + 1,
                    asked='{"id": "positional.similar"}')
    for token, v in ((ann, 3), (bob, 5)):
        store.answer(code, token, "positional.similar", "s1", v, vote=1)
    store.close_vote(code, key, "positional.similar", "s1")
    store.open_vote2(code, key, "positional.similar", "s1")
    store.answer(code, ann, "positional.similar", "s1", 4, vote=2)
    store.reveal(code, key, "positional.similar", "s1")  # Bob's vote 1 carried into vote 2
    store.open_task(code, key, "scores.shift", "s1", Rule("choice", options=("a", "b")),
                    now=start + 2, asked='{"id": "scores.shift"}')
    store.answer(code, bob, "scores.shift", "s1", "b")  # vote 1 open when the class ends
    token_before = room.token_of(_key_hash(store, code))
    assert room.is_projector(store, code, token_before)
    assert store.results_of(code, ann) is None, "a class going on gives no results away"

    with pytest.raises(RefusedError):
        store.end_class(code, "not the key")
    store.end_class(code, key, now=start + 3)
    assert store.state(code) is None
    assert not store.is_teacher(code, key) and not store.is_student(code, ann)
    assert not room.is_projector(store, code, token_before)
    assert refused(store.answer, code, bob, "scores.shift", "s1", "a") == "not_student"
    assert refused(store.reveal, code, key, "scores.shift", "s1") == "not_teacher"
    assert refused(store.end_class, code, key) == "not_teacher"
    assert refused(store.result_rows, code, key) == "not_teacher"
    assert refused(store.join, code, "c", "Late") == "no_class"

    mine = store.results_of(code, ann)
    assert [(r.task, r.state, r.first, r.second) for r in mine] == [
        ("positional.similar", "revealed", 3, 4), ("scores.shift", "open", None, None)]
    assert mine[0].asked == '{"id": "positional.similar"}'
    theirs = store.results_of(code, bob)
    assert [(r.first, r.second) for r in theirs] == [(5, 5), ("b", None)]  # 5 carried
    assert "Bob" not in repr(mine) and bob not in repr(mine) and "Ann" not in repr(mine)
    assert store.results_of(code, "nobody") is None
    assert store.results_of("ZZZZZZZZ", ann) is None
    assert store.expire(start + CLASS_HOURS * 3600 - 1) == 0  # kept until it expires …
    assert store.results_of(code, ann) == mine
    assert store.expire(start + CLASS_HOURS * 3600 + 1) == 1  # … then gone with the rest
    assert store.results_of(code, ann) is None
    with store.engine.connect() as conn:
        assert conn.execute(select(answers).where(answers.c.code == code)).all() == []


def _key_hash(store: Store, code: str) -> str:
    with store.engine.connect() as conn:
        return conn.execute(select(classes.c.key_hash)
                            .where(classes.c.code == code)).scalar_one()
