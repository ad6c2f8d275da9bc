"""The projector view of a live class (issue 51) in the app (AppTest), in English and 中文: at
its own link (`/class?class=CODE&projector=TOKEN`, the class's projector token, not the
teacher's key) it draws no sidebar and no control, and each stage as the wall must see it —
joining (the code, the join link, how many joined), vote 1 (the question, a count of answers,
no answer), the discussion, vote 2, the reveal (both votes' charts, the moves, the answer) and
the end. A student's nickname and the answers given before the reveal appear nowhere in what
the projector is sent. The teacher's phone as a remote: the teacher link with `remote=1`
drives the class. Each test has a store of its own (a fresh SQLite file)."""

from __future__ import annotations

import pytest

from lens.classroom import room
from lens.classroom.ui.member import shared_store
from lens.i18n import translate
from lens.keys import CLASS_MEMBER
from tests.support.apptest_helpers import assert_clean, new_app, open_page
from tests.test_app_class import TOKENS, code_of, fresh_store, send, student, teacher

__all__ = ["fresh_store"]  # the store fixture of the class tests, used here too

NICK = "Zebedee"
WRONG = 777  # vote 1's answer: never on the projector before the reveal


def projector(code: str, token: str, lang: str):
    at = new_app(advanced=False, **{"class": code, "projector": token, "lang": lang})
    open_page(at, "class")
    assert_clean(at)
    return at


def everything(at) -> str:
    """All the text the projector's page holds: markdown, HTML, captions, code, alerts."""
    parts = [e.value for e in at.markdown] + [h.proto.body for h in at.get("html")]
    parts += [e.value for e in at.caption] + [e.value for e in at.code]
    parts += [e.value for e in at.info] + [e.value for e in at.warning]
    return "\n".join(str(p) for p in parts)


def no_control(at) -> None:
    for kind in ("button", "download_button", "text_input", "number_input", "selectbox",
                 "radio", "checkbox", "toggle", "slider", "select_slider"):
        assert not at.get(kind), (kind, at.get(kind))
    assert not at.sidebar.get("markdown") and not at.sidebar.get("subheader"), "a sidebar"


def say(key: str, lang: str, **values: object) -> str:
    return translate(key, lang, "room", **values)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_projector_shows_each_stage_and_never_a_nickname_nor_an_early_answer(lang):
    t = teacher()
    code, key = code_of(t), t.session_state[CLASS_MEMBER].secret
    token = room.projector_token(shared_store(), code, key)
    assert token != key and key not in token
    p = projector(code, token, lang)
    no_control(p)
    assert CLASS_MEMBER not in p.session_state  # no member of the class
    assert code in everything(p) and f"class={code}" in everything(p)  # the code, the link
    assert p.image  # the join QR code

    s = student(code, nickname=NICK)
    p.run()
    assert say("projector_students", lang, n=1) in everything(p)

    t.button(key=f"class_open_{TOKENS}").click().run()  # vote 1
    p.run()
    assert say("stage_open", lang) in everything(p)
    assert "0 / 1" in everything(p)
    s.run()
    send(s, TOKENS, WRONG)
    (task, settings_key), = shared_store().state(code)["tasks"]
    room.start_countdown(shared_store(), code, key, task, settings_key, 60)
    p.run()
    assert "1 / 1" in everything(p) and str(WRONG) not in everything(p)
    assert say("projector_left", lang, s=60) in everything(p)  # the countdown, on the wall
    no_control(p)

    t.button(key=f"class_close_{TOKENS}").click().run()  # the discussion
    p.run()
    assert say("stage_discuss", lang) in everything(p)
    assert say("projector_discuss", lang) in everything(p)
    assert str(WRONG) not in everything(p)

    t.button(key=f"class_vote2_{TOKENS}").click().run()  # vote 2
    p.run()
    assert say("stage_vote2", lang) in everything(p) and "0 / 1" in everything(p)
    s.run()
    send(s, TOKENS, 196)
    p.run()
    assert "1 / 1" in everything(p) and str(WRONG) not in everything(p)

    t.button(key=f"class_reveal_{TOKENS}").click().run()  # the reveal
    p.run()
    shown = everything(p)
    assert say("projector_answer", lang, answer="196") in shown  # the right answer
    assert say("projector_vote", lang, vote=1) in shown
    assert say("projector_vote", lang, vote=2) in shown
    assert say("projector_moves", lang) in shown
    assert len(p.image) >= 3  # vote 1, vote 2, the moves
    no_control(p)

    t.checkbox(key="class_end_sure").check().run()
    t.button(key="class_end").click().run()
    p.run()
    assert say("projector_ended", lang) in everything(p)
    assert NICK not in everything(p)
    assert_clean(p)


def test_a_wrong_projector_token_shows_nothing_of_the_class():
    t = teacher()
    code = code_of(t)
    p = projector(code, "not-the-token", "en")
    assert say("projector_ended", "en") in everything(p)
    assert code not in "\n".join(h.proto.body for h in p.get("html"))
    no_control(p)


def test_the_teachers_phone_drives_the_class_with_the_vote_1_hint():
    t = teacher()
    code, key = code_of(t), t.session_state[CLASS_MEMBER].secret
    phone = new_app(advanced=False, **{"class": code, "teacher": key, "remote": "1"})
    open_page(phone, "class")
    assert_clean(phone)
    assert phone.session_state[CLASS_MEMBER].teacher
    s = student(code)
    phone.button(key="class_remote_next").click().run()  # the step's first question
    assert shared_store().state(code)["tasks"]
    assert_clean(phone)
    s.run()
    send(s, TOKENS, WRONG)
    phone.button(key=f"class_remote_close_vote_{TOKENS}").click().run()
    assert_clean(phone)
    assert any(v == "discuss" for v in shared_store().state(code)["tasks"].values())
    hint = [e.value for e in phone.info if "%" in e.value]
    assert hint and hint[0].startswith("0 %"), hint  # 0 of 1 right: explain again
    assert "30 %" in hint[0]
    t.run()  # the laptop's page follows: the question in its discussion
    assert any(translate("state_discuss", "en", "class") in m.value for m in t.markdown)


def test_a_countdown_run_out_closes_vote_1_from_the_teachers_page():
    t = teacher()
    code, key = code_of(t), t.session_state[CLASS_MEMBER].secret
    t.button(key=f"class_open_{TOKENS}").click().run()
    (task, settings_key), = shared_store().state(code)["tasks"]
    assert shared_store().state(code)["tasks"][(task, settings_key)] == "open"
    room.start_countdown(shared_store(), code, key, task, settings_key, 0)  # already out
    t.run()  # the teacher's follower looks at the class: the vote closes
    assert_clean(t)
    assert shared_store().state(code)["tasks"][(task, settings_key)] == "discuss"
    assert room.countdown_end(shared_store(), code, task, settings_key, "open") is None


def test_the_teachers_page_links_the_projector_and_shows_the_remote_qr_only_not_presenting():
    t = teacher()
    code = code_of(t)
    links = [h.proto.body for h in t.get("html") if "el-projector-link" in h.proto.body]
    assert links and f"class={code}&amp;projector=" in links[0]
    assert "teacher=" not in links[0]  # the projector's link holds no key
    shown = [c.value for c in t.caption]
    assert translate("remote_presenting", "en", "room") in shown  # presenting: no QR code
    images = len(t.main.get("image"))
    t.toggle(key="class_presenting").set_value(False).run()
    assert_clean(t)
    assert len(t.main.get("image")) == images + 1  # the teacher link's QR code, on demand
    assert translate("remote_help", "en", "room") in [c.value for c in t.caption]
