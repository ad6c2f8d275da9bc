"""The concept check's questions (`lens.lesson.concepts`): stable unique ids, one right
option each, every text in English and 中文; and the gain table from scripted answers, counted
by hand; a learner's rounds in the link and back."""

from __future__ import annotations

import pytest

from lens.i18n import read_language
from lens.lesson.concepts import (
    OWNER,
    POST,
    PRE,
    QUESTIONS,
    answered_by,
    as_answers,
    decode_rounds,
    encode_rounds,
    gain_table,
    is_right,
    own_score,
)
from lens.settings import LANGS

IDS = [q.id for q in QUESTIONS]


def test_there_are_six_questions_with_unique_ids_and_options():
    assert len(QUESTIONS) == 6 and len(set(IDS)) == 6
    for q in QUESTIONS:
        assert 3 <= len(q.options) <= 4 and len(set(q.options)) == len(q.options), q.id
        assert q.options.count(q.right) == 1, q.id


def test_the_right_option_is_not_always_in_the_same_place():
    assert len({q.options.index(q.right) for q in QUESTIONS}) >= 3


@pytest.mark.parametrize("lang", LANGS)
def test_every_question_has_its_texts_in_every_language(lang):
    table = read_language(lang)[OWNER]
    for q in QUESTIONS:
        needed = [q.text(p) for p in ("q", "short", "why", *q.options)]
        assert [k for k in needed if not table.get(k, "").strip()] == [], (lang, q.id)


def answers(right_pre: dict[str, int], right_post: dict[str, int]) -> dict:
    """Scripted answers: student -> how many of the questions (the first k) right per round;
    the others answered wrong."""
    out = {}
    for round_, script in ((PRE, right_pre), (POST, right_post)):
        for who, k in script.items():
            for i, q in enumerate(QUESTIONS):
                wrong = next(o for o in q.options if o != q.right)
                out[(who, q.id, round_)] = q.right if i < k else wrong
    return out


def test_the_gain_table_matches_a_hand_count():
    """A: all right before; B: the first three right before; both all right after. The first
    three questions: 2/2 before and after, g undefined (—); the last three: 1/2 before, 2/2
    after, g = (1 − 0.5)/(1 − 0.5) = 1. Overall: 9/12 before, 12/12 after, g = 1."""
    table = gain_table(answers({"A": 6, "B": 3}, {"A": 6, "B": 6}))
    assert table.students == 2
    assert [(r.question, r.n, r.pre, r.post, r.gain) for r in table.rows] == [
        *((q, 2, 1.0, 1.0, None) for q in IDS[:3]),
        *((q, 2, 0.5, 1.0, 1.0) for q in IDS[3:])]
    o = table.overall
    assert (o.question, o.n, o.pre, o.post, o.gain) == (None, 12, 0.75, 1.0, 1.0)


def test_only_answers_in_both_rounds_count_and_a_loss_is_negative():
    """C answered before only: left out. D: all right before, two right after: per question
    g = (0 − 1)/(1 − 1) undefined; E: none right before, all after. Overall over D and E:
    before 6/12, after 8/12, g = (8/12 − 6/12)/(1 − 6/12) = 1/3."""
    table = gain_table(answers({"C": 6, "D": 6, "E": 0}, {"D": 2, "E": 6}))
    assert table.students == 2
    o = table.overall
    assert (o.n, o.pre, o.post) == (12, 0.5, 8 / 12)
    assert o.gain == pytest.approx(1 / 3)
    last = table.rows[-1]  # D wrong after, E right after; D right before, E wrong before
    assert (last.n, last.pre, last.post, last.gain) == (2, 0.5, 0.5, 0.0)


def test_no_answers_in_both_rounds_give_an_empty_table():
    table = gain_table(answers({"A": 6}, {}))
    assert table.students == 0 and table.overall.n == 0 and table.overall.gain is None
    assert all(r.pre is None and r.gain is None for r in table.rows)


def test_a_students_own_score_and_the_counts_of_a_round():
    given = answers({"A": 3, "B": 6}, {"A": 5})
    mine = {(q, r): v for (who, q, r), v in given.items() if who == "A"}
    assert own_score(mine) == {PRE: 3, POST: 5}
    assert (answered_by(given, PRE), answered_by(given, POST)) == (2, 1)
    assert not is_right("no_such_question", "x") and not is_right(IDS[0], None)


# --- a learner alone: the rounds in the link ---------------------------------------------------

def test_a_learners_rounds_go_into_the_link_and_come_back_the_same():
    before = {QUESTIONS[0].id: QUESTIONS[0].options[3], QUESTIONS[3].id: "row"}
    after = {q.id: q.right for q in QUESTIONS}
    for taken in ({}, {PRE: {}}, {PRE: before}, {PRE: before, POST: after}, {POST: after}):
        text = encode_rounds(taken)
        assert decode_rounds(text) == taken, text
    assert encode_rounds({PRE: before}) == "3--2--."  # six characters: option index or "-"
    assert encode_rounds({PRE: {}, POST: after}) == "------." + "".join(
        str(q.options.index(q.right)) for q in QUESTIONS)


@pytest.mark.parametrize("text", [None, "", "x", "3--2--", "3--2-.", "3--2-9.", "3--2-a.",
                                  "../..", "3--2--.3--2--.3--2--"])
def test_a_link_written_wrongly_gives_no_round_and_no_error(text):
    taken = decode_rounds(text)
    assert PRE not in taken and all(len(a) <= len(QUESTIONS) for a in taken.values())


def test_a_learners_rounds_are_read_as_a_students_own_answers():
    taken = {PRE: {"layernorm": "column"}, POST: {"layernorm": "row", "residual": "input"}}
    mine = as_answers(taken)
    assert mine == {("layernorm", PRE): "column", ("layernorm", POST): "row",
                    ("residual", POST): "input"}
    assert own_score(mine) == {PRE: 0, POST: 2}
