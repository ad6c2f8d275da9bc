"""What the room's screens read of a class (lens.classroom.room), on a real store (SQLite here,
PostgreSQL too with the slow marker): the projector token is the class's own — not the key,
refused to another key, dead with the class; before a reveal the projector gets a count and
never an answer; the countdown closes vote 1 only, for the teacher only; the Crouch–Mazur
hint's bands."""

from __future__ import annotations

import pytest

from lens.classroom import room
from lens.classroom.rules import RefusedError, Rule
from lens.classroom.store import Store
from tests.test_class_store import SETTINGS, pg_url, url  # noqa: F401 (fixtures)

CHOICE = Rule("choice", options=("sharper", "flatter", "same"))


@pytest.fixture
def store(url):  # noqa: F811
    s = Store(url)
    yield s
    s.close()


def test_the_projector_token_is_the_classs_own_and_ends_with_it(store):
    code, key = store.create_class(SETTINGS, "scores")
    other, other_key = store.create_class(SETTINGS, "scores")
    token = room.projector_token(store, code, key)
    assert token != key and key not in token and len(token) == room.TOKEN_CHARS
    assert room.is_projector(store, code, token)
    assert not room.is_projector(store, other, token)  # another class's screen: no
    assert room.projector_token(store, other, other_key) != token
    with pytest.raises(RefusedError):
        room.projector_token(store, code, other_key)
    store.end_class(code, key)
    assert not room.is_projector(store, code, token)


def test_before_the_reveal_the_projector_gets_counts_then_the_pairs(store):
    code, key = store.create_class(SETTINGS, "scores")
    store.open_task(code, key, "scores.sharper", "s1", CHOICE)
    a, b = store.join(code, "1.1.1.1", "Ann"), store.join(code, "1.1.1.2", "Bob")
    store.answer(code, a, "scores.sharper", "s1", "flatter")
    store.answer(code, b, "scores.sharper", "s1", "same")
    assert room.answer_count(store, code, "scores.sharper", "s1", 1) == 2
    with pytest.raises(RefusedError):
        room.revealed_pairs(store, code, "scores.sharper", "s1")
    store.close_vote(code, key, "scores.sharper", "s1")
    store.open_vote2(code, key, "scores.sharper", "s1")
    store.answer(code, a, "scores.sharper", "s1", "sharper", vote=2)
    with pytest.raises(RefusedError):
        room.revealed_pairs(store, code, "scores.sharper", "s1")
    store.reveal(code, key, "scores.sharper", "s1")
    pairs = sorted(room.revealed_pairs(store, code, "scores.sharper", "s1"), key=str)
    assert ("flatter", "sharper") in pairs and len(pairs) == 2
    assert all("Ann" not in str(p) and a not in str(p) for p in pairs)  # nobody named
    assert set(room.opened_at(store, code)) == {("scores.sharper", "s1")}


def test_a_countdown_closes_vote_1_only_and_only_the_teacher_starts_it(store):
    code, key = store.create_class(SETTINGS, "scores")
    with pytest.raises(RefusedError):  # nothing open
        room.start_countdown(store, code, key, "scores.sharper", "s1", 30, now=100.0)
    store.open_task(code, key, "scores.sharper", "s1", CHOICE)
    with pytest.raises(RefusedError):
        room.start_countdown(store, code, "not-the-key", "scores.sharper", "s1", 30)
    ends = room.start_countdown(store, code, key, "scores.sharper", "s1", 30, now=100.0)
    assert ends == 130.0
    assert room.countdown_end(store, code, "scores.sharper", "s1", "open") == 130.0
    assert room.countdown_end(store, code, "scores.sharper", "s1", "vote2") is None
    assert not room.due(ends, now=129.9) and room.due(ends, now=130.0)
    room.stop_countdown(store, code, "scores.sharper", "s1")
    assert room.countdown_end(store, code, "scores.sharper", "s1", "open") is None
    store.close_vote(code, key, "scores.sharper", "s1")
    with pytest.raises(RefusedError):  # the discussion: no vote to close
        room.start_countdown(store, code, key, "scores.sharper", "s1", 30)


@pytest.mark.parametrize(("share", "band"), [(0.0, "low"), (0.29, "low"), (0.3, "mid"),
                                             (0.5, "mid"), (0.7, "mid"), (0.71, "high"),
                                             (1.0, "high")])
def test_the_crouch_mazur_hint_by_the_share_right_at_vote_1(share, band):
    assert room.hint(share) == band
