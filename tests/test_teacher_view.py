"""The teacher's switches kept in the browser (issue 51, item 7): the cookie's value is written
and read back for its own class only, and carries nothing but the switches."""

from __future__ import annotations

from lens.classroom.ui.switches import view_from, view_text
from lens.classroom.ui.teacher import show_key


def test_the_switches_come_back_as_they_were_written():
    shown = {show_key("overview_tokens", 1), show_key("scores.divisor", 2)}
    text = view_text("ABCD-EFGH", False, shown)
    assert view_from(text, "ABCD-EFGH") == (False, frozenset(shown))
    assert view_from(view_text("ABCD-EFGH", True, []), "ABCD-EFGH") == (True, frozenset())


def test_another_class_or_no_cookie_says_nothing():
    text = view_text("ABCD-EFGH", False, {show_key("overview_tokens", 1)})
    assert view_from(text, "WXYZ-0000") == (None, frozenset())
    assert view_from(None, "ABCD-EFGH") == (None, frozenset())
    assert view_from("ABCD-EFGH~maybe", "ABCD-EFGH") == (None, frozenset())


def test_only_the_answer_toggles_keys_in_plain_characters_are_kept():
    text = view_text("C", True, {"class_presenting", "class_show_a b_1", "class_show_ok_1",
                                 "lesson_secret"})
    assert text == "C~1~class_show_ok_1"
    # a forged cookie cannot put another session key in: only the toggles' are read
    assert view_from("C~0~lesson_secret~class_show_ok_2", "C") == (
        False, frozenset({"class_show_ok_2"}))
