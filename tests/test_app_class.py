"""A live class in the app (AppTest): the teacher starts it, students join by link or code, the
class's settings are imposed and locked, a task waits until the teacher opens it, its answers
are stored and counted, the reveal shows each student the class's answers, new settings close
the open tasks, the teacher brings everyone to a step, the teacher key leaves the link, a
student is the same student on a reload, wrong codes are refused and then rate-limited, and an
ended class ends every membership; the teacher's results download as CSV and as a one-page
PDF summary. Each test has a store of its own (a fresh SQLite file)."""

from __future__ import annotations

import csv
import io
import subprocess

import numpy as np
import pytest
import streamlit as st
from PIL import Image

from lens import figures
from lens.classroom.rules import BROWSER_FREE, MAX_NICKNAME
from lens.classroom.store import URL_ENV, Store
from lens.classroom.ui import member as member_module
from lens.classroom.ui.join import PUBLIC_URL_ENV, lan_address, lan_suggestion
from lens.classroom.ui.member import STUDENT_PARAM, TEACHER_PARAM, Member, shared_store
from lens.classroom.ui.teacher import results_bytes, summary_bytes
from lens.figures.pixels import rgb255
from lens.i18n import translate
from lens.keys import CLASS_LANG_SWITCH
from lens.keys import CLASS_MEMBER as MEMBER
from lens.steps import PAGES, TASKS
from tests.support.apptest_helpers import assert_clean, new_app, open_page

TOKENS = "overview_tokens"  # the overview's first task: how many tokens (196 at the defaults)


@pytest.fixture(autouse=True)
def fresh_store(tmp_path, monkeypatch):
    """A store of this test's own: the app's process-wide store reopened on a new file."""
    monkeypatch.setenv(URL_ENV, f"sqlite:///{tmp_path / 'classes.sqlite'}")
    member_module.shared_store.cache_clear()
    yield
    if member_module.shared_store.cache_info().currsize:  # opened (and not on a dead URL)
        shared_store().close()
    member_module.shared_store.cache_clear()


def teacher(**query: str):
    """A teacher who opened /class and started a class (on the link's settings)."""
    at = new_app(advanced=False, **query)
    open_page(at, "class")
    at.button(key="class_start_button").click().run()
    assert_clean(at)
    return at


def code_of(at) -> str:
    return at.session_state[MEMBER].code


def student(code: str, nickname: str = "", **query: str):
    """A student who opened the join link, joined, and is on the class's step."""
    at = new_app(advanced=False, **{"class": code, **query})
    open_page(at, "class")
    at.text_input(key="class_nickname_input").set_value(nickname)
    at.button(key="class_join_button").click().run()
    assert_clean(at)
    assert at.session_state[MEMBER].role == "student"
    return open_page(at, shared_store().state(code)["step"])  # where the switch led


def texts(at, kind: str = "markdown") -> list[str]:
    return [e.value for e in at.get(kind)]


def inputs(at, text_id: str) -> list:
    return [n for n in at.number_input if n.key and n.key.startswith(f"lesson_in_{text_id}_")]


def send(at, text_id: str, *values: float) -> None:
    for box, v in zip(inputs(at, text_id), values, strict=True):
        box.set_value(v)
    at.button(key=f"class_send_{text_id}").click().run()
    assert_clean(at)


def test_a_teacher_starts_a_class_and_a_student_joins_by_its_link():
    t = teacher()
    code = code_of(t)
    assert t.session_state[MEMBER].role == "teacher"
    assert t.query_params["class"] == code and TEACHER_PARAM not in t.query_params
    assert any(code in h.proto.body for h in t.get("html"))  # the code, large
    assert any(f"/class?class={code}" in c.value for c in t.code)  # the join link
    assert len(t.main.get("image")) >= 1  # its QR code
    s = student(code, nickname="Ann")
    token = s.session_state[MEMBER].secret
    assert s.query_params["class"] == code and s.query_params[STUDENT_PARAM] == token
    assert shared_store().state(code)["students"] == 1


def loopback_warning() -> str:
    return translate("link_loopback", "en", "class", base="http://localhost:8501",
                     env=PUBLIC_URL_ENV, lan=lan_suggestion("http://localhost:8501",
                                                            lan_address()))


def test_the_teacher_is_warned_when_the_link_is_a_loopback_address(monkeypatch):
    monkeypatch.delenv(PUBLIC_URL_ENV, raising=False)
    t = teacher()  # AppTest's URL: localhost
    assert any(f"http://localhost:8501/class?class={code_of(t)}" == c.value for c in t.code)
    assert [w.value for w in t.warning] == [loopback_warning()]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_on_loopback_the_start_form_warns_and_the_teacher_link_there_keeps_the_class(
        monkeypatch, lang):
    """Before "Start a class" on localhost: a warning with this machine's network address.
    After: the teacher link on that address (with the class and the key) when not
    presenting, only a word while presenting; that link opened in another browser is the
    same class's teacher."""
    monkeypatch.delenv(PUBLIC_URL_ENV, raising=False)
    lan = lan_address()
    at = new_app(advanced=False, lang=lang)
    open_page(at, "class")
    assert translate("start_loopback", lang, "class", base="http://localhost:8501") in [
        w.value for w in at.warning]
    assert f"{lan_suggestion('http://localhost:8501', lan)}/class" in [c.value for c in at.code]
    at.button(key="class_start_button").click().run()
    member = at.session_state[MEMBER]
    if lan is None:
        pytest.skip("this machine has no network address but loopback")
    assert translate("move_presenting", lang, "class") in [c.value for c in at.caption]
    assert not any(member.secret in c.value for c in at.code), "presenting: no key shown"
    not_presenting(at)
    moved = [c.value for c in at.code if member.secret in c.value]
    assert moved == [f"http://{lan}:8501/class?class={member.code}&teacher={member.secret}"]
    query = dict(part.split("=", 1) for part in moved[0].split("?", 1)[1].split("&"))
    other = new_app(advanced=False, **query)
    open_page(other, "class")
    assert other.session_state[MEMBER] == member  # the teacher moved: the same class


def test_the_public_url_makes_the_link_and_no_warning(monkeypatch):
    monkeypatch.setenv(PUBLIC_URL_ENV, "http://10.0.0.5:8501")
    t = teacher()
    assert [c.value for c in t.code] == [f"http://10.0.0.5:8501/class?class={code_of(t)}"]
    assert not t.warning


def test_an_invalid_public_url_is_ignored_and_said(monkeypatch):
    monkeypatch.setenv(PUBLIC_URL_ENV, "lens.school.example")
    t = teacher(lang="zh")
    ignored = translate("public_url_ignored", "zh", "class", env=PUBLIC_URL_ENV,
                        url="lens.school.example")
    loopback = translate("link_loopback", "zh", "class", env=PUBLIC_URL_ENV,
                         base="http://localhost:8501",
                         lan=lan_suggestion("http://localhost:8501", lan_address()))
    assert [w.value for w in t.warning] == [ignored, loopback]
    assert any(c.value.startswith("http://localhost:8501/class?") for c in t.code)


def test_a_join_link_puts_the_join_form_first():
    """On a phone the two forms stack: a student from a join link finds the join form on top,
    its code filled in."""
    at = new_app(advanced=False, **{"class": "ABCD2345"})
    open_page(at, "class")
    assert [h.value for h in at.main.subheader][:2] == [
        translate("join_title", "en", "class"), translate("start_title", "en", "class")]
    assert at.text_input(key="class_code_input").value == "ABCD2345"


def test_the_class_page_without_a_join_link_offers_to_start_first():
    at = new_app(advanced=False)
    open_page(at, "class")
    assert [h.value for h in at.main.subheader][:2] == [
        translate("start_title", "en", "class"), translate("join_title", "en", "class")]


def not_presenting(at):
    """The teacher turns the "Presenting" switch off: their own screen, not the projector."""
    at.toggle(key="class_presenting").set_value(False).run()
    assert_clean(at)
    return at


def test_nicknames_reach_the_teacher_only_and_as_plain_text():
    t = teacher()
    code = code_of(t)
    s = student(code, nickname="<b>Ann</b> **x**")
    not_presenting(t)
    assert [x.value for x in t.text] == ["<b>Ann</b> **x**"]  # st.text: never markup
    assert not any("Ann" in v for v in texts(t)), "not in any markdown"
    everything = " ".join(texts(s) + texts(s, "caption") + [x.value for x in s.text])
    assert "Ann" not in everything


def test_a_student_gets_the_classes_settings_locked_and_the_lesson_on():
    t = teacher(d_model="256", n_heads="4")
    s = student(code_of(t), d_model="64", use_pe="0")  # a link of other settings
    assert (s.session_state["d_model"], s.session_state["n_heads"]) == (256, 4)
    assert s.session_state["use_pe"] is True and s.session_state["lesson"] is True
    assert [r.key for r in s.sidebar.radio] == ["lang"]  # the image and model: not offered
    assert any(code_of(t) in i.value for i in s.sidebar.info)
    assert not [b for b in s.button if b.key and b.key.startswith("lesson_")], "no lesson card"


def test_a_task_waits_for_the_teacher_then_is_answered_and_revealed_with_the_class():
    t = teacher()
    code = code_of(t)
    s = student(code)
    assert not inputs(s, TOKENS)  # not asked yet: a waiting card, the page withheld
    assert translate("waiting", "en", "class") in texts(s, "caption")
    assert not s.main.get("image")
    t.button(key=f"class_open_{TOKENS}").click().run()
    s.run()
    assert inputs(s, TOKENS) and not [b for b in s.button if b.key and "show" in b.key]
    send(s, TOKENS, 190)  # wrong
    assert any("190" in x.value for x in s.success)
    send(s, TOKENS, 196)  # changed before the reveal: right
    t.run()
    assert "**1 of 1 answered**" in texts(t)
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    assert "1 of 1 right (100 %)" in texts(t)
    s.run()
    assert_clean(s)
    labels = [e.label for e in s.expander]
    assert any(lbl.startswith("✓ right") for lbl in labels), labels
    assert "1 of 1 right (100 %)" in texts(s)  # the class's share, no one's answer
    assert f"class_send_{TOKENS}" not in [b.key for b in s.button]  # answered for good


def test_the_teachers_counts_and_the_share_right():
    t = teacher()
    code = code_of(t)
    t.button(key=f"class_open_{TOKENS}").click().run()
    for value in (196, 196, 195):
        send(student(code), TOKENS, value)
    t.run()
    assert "**3 of 3 answered**" in texts(t)
    assert not any("right (" in v for v in texts(t)), "no right answer before the reveal"
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    assert "2 of 3 right (67 %)" in texts(t)


def test_new_settings_close_the_open_tasks_and_ask_afresh():
    t = teacher()
    code = code_of(t)
    s = student(code)
    t.button(key=f"class_open_{TOKENS}").click().run()
    s.run()
    send(s, TOKENS, 196)
    old = next(k for k, v in shared_store().state(code)["tasks"].items() if v == "open")
    t.session_state["d_model"] = 256  # the teacher's sidebar
    t.run()
    assert translate("settings_differ", "en", "class") in [w.value for w in t.warning]
    t.button(key="class_settings_apply").click().run()
    state = shared_store().state(code)
    assert state["tasks"][old] == "closed" and state["settings"]["d_model"] == "256"
    assert shared_store().answers_to(code, *old) == [[196.0]]  # kept under the old settings
    s.run()
    assert s.session_state["d_model"] == 256 and not inputs(s, TOKENS)  # waiting again


def test_the_teacher_brings_everyone_to_a_step(monkeypatch):
    t = teacher()
    s = student(code_of(t))
    t.selectbox(key="class_step_choice").set_value("multihead").run()
    t.button(key="class_bring").click().run()
    assert shared_store().state(code_of(t))["step"] == "multihead"
    switched = []  # AppTest does not follow a switch of page: the follower's is recorded
    monkeypatch.setattr(st, "switch_page", lambda page, **kw: switched.append(page))
    s.run()  # the follower's look at the class (every 2 s in a browser)
    assert_clean(s)
    assert switched == [PAGES["multihead"].path]
    switched.clear()
    s.run()  # the student stays where they are once there, or where they went themselves
    assert switched == []


def test_the_teacher_key_is_read_once_from_the_link_and_a_reload_keeps_the_student():
    store = shared_store()
    code, key = store.create_class({}, "overview")
    t = new_app(advanced=False, **{"class": code, TEACHER_PARAM: key})
    open_page(t, "class")
    assert t.session_state[MEMBER] == Member(code, "teacher", key)
    assert TEACHER_PARAM not in t.query_params
    forged = new_app(advanced=False, **{"class": code, TEACHER_PARAM: key + "x"})
    open_page(forged, "class")
    assert MEMBER not in forged.session_state  # a wrong key: nobody
    token = store.join(code, "test")
    again = new_app(advanced=False, **{"class": code, STUDENT_PARAM: token})
    open_page(again, "overview")
    assert again.session_state[MEMBER] == Member(code, "student", token)


def test_wrong_codes_are_refused_then_slowed_and_the_right_code_joins_in_chinese():
    store = shared_store()
    code, _ = store.create_class({}, "overview")
    at = new_app(advanced=False, lang="zh")
    open_page(at, "class")
    for _ in range(BROWSER_FREE):
        at.text_input(key="class_code_input").set_value("WRONG123")
        at.button(key="class_join_button").click().run()
    assert [e.value for e in at.error] == [translate("join_no_class", "zh", "class")]
    assert MEMBER not in at.session_state
    from sqlalchemy import select  # noqa: PLC0415

    from lens.classroom.database import wrong_codes  # noqa: PLC0415
    with store.engine.connect() as conn:
        counted = conn.execute(select(wrong_codes.c.client, wrong_codes.c.count)).all()
    browsers = [(c, n) for c, n in counted if c.startswith("browser:")]
    assert [n for _, n in browsers] == [BROWSER_FREE]  # this session's, under a hash
    assert store.join_wait("unknown", browsers[0][0].removeprefix("browser:")) == 1.0
    at.text_input(key="class_code_input").set_value(code)  # the right code: it waits, then joins
    at.button(key="class_join_button").click().run()
    assert not at.error and not at.exception
    assert at.session_state[MEMBER].code == code and at.session_state[MEMBER].role == "student"


def test_a_nickname_over_the_limit_is_refused_with_a_word_not_cut():
    code, _ = shared_store().create_class({}, "overview")
    at = new_app(advanced=False, lang="zh")
    open_page(at, "class")
    at.text_input(key="class_code_input").set_value(code)
    at.text_input(key="class_nickname_input").set_value("长" * (MAX_NICKNAME + 1))
    at.button(key="class_join_button").click().run()
    too_long = translate("join_too_long", "zh", "class", n=MAX_NICKNAME)
    assert [e.value for e in at.error] == [too_long] and MEMBER not in at.session_state
    at.text_input(key="class_nickname_input").set_value("长" * MAX_NICKNAME)
    at.button(key="class_join_button").click().run()
    assert at.session_state[MEMBER].code == code


def test_an_upload_cannot_start_a_class():
    at = new_app(advanced=False)
    open_page(at, "class")
    at.sidebar.radio(key="source").set_value("upload").run()
    assert at.button(key="class_start_button").disabled
    assert translate("no_upload", "en", "class") in [w.value for w in at.warning]


def test_an_ended_class_ends_every_membership():
    t = teacher()
    code = code_of(t)
    s = student(code)
    t.checkbox(key="class_end_sure").check().run()
    t.button(key="class_end").click().run()
    assert shared_store().state(code) is None and MEMBER not in t.session_state
    assert t.button(key="class_start_button")  # the start form again
    s.run()
    assert MEMBER not in s.session_state and not s.exception


def test_a_student_of_an_ended_class_is_told_once():
    t = teacher()
    s = student(code_of(t), lang="zh")
    t.checkbox(key="class_end_sure").check().run()
    t.button(key="class_end").click().run()
    notice = translate("class_ended", "zh", "class")
    assert notice not in [i.value for i in t.info]  # the teacher ended it: no notice
    s.run()  # the follower's look finds the class gone: the page runs again
    assert MEMBER not in s.session_state and not s.exception
    assert [i.value for i in s.info].count(notice) == 1
    s.run()
    assert notice not in [i.value for i in s.info]  # said once
    open_page(s, "multihead")
    assert notice not in [i.value for i in s.info]


def test_the_class_page_in_chinese():
    t = teacher(lang="zh")
    assert translate("students_count", "zh", "class", n=0) in [f"{v}".strip("*")
                                                               for v in texts(t)]
    s = student(code_of(t), lang="zh")
    assert translate("waiting_title", "zh", "class", k=1, n=2) in [v.strip("*")
                                                                    for v in texts(s)]


def test_the_store_is_the_processes_own_per_url(tmp_path, monkeypatch):
    """The app's store follows ENCODER_LENS_CLASS_DB (the fixture's file here)."""
    assert isinstance(shared_store(), Store) and str(tmp_path) in shared_store().url


@pytest.mark.parametrize("forwarded, address, behind, client", [
    ("1.2.3.4, 10.0.0.7", "127.0.0.1", True, "10.0.0.7"),  # HAProxy appended the last one
    ("10.0.0.7", "127.0.0.1", True, "10.0.0.7"),
    (None, "127.0.0.1", True, "127.0.0.1"),  # no header: the connection
    ("6.6.6.6", "192.168.1.20", False, "192.168.1.20"),  # no balancer: a header is forged
    (None, None, False, "unknown"),
])
def test_wrong_codes_are_counted_per_client(forwarded, address, behind, client):
    assert member_module.client_from(forwarded, address, behind_proxy=behind) == client


def test_a_store_out_of_reach_is_said_and_breaks_nothing(monkeypatch):
    """The database down in the middle of a class (a PostgreSQL nobody listens for): the
    teacher's page, a student's step and the start button say so, in the learner's language,
    and the pages keep working."""
    t = teacher()
    s = student(code_of(t), lang="zh")
    monkeypatch.setenv(URL_ENV, "postgresql+psycopg://nobody@127.0.0.1:9/none?connect_timeout=2")
    member_module.shared_store.cache_clear()
    down = translate("store_down", "en", "class", why="").split("(")[0]
    t.run()
    assert_clean_but_for_store(t, down)
    s.run()
    assert not s.exception and s.title  # the step is drawn
    assert any(translate("store_down", "zh", "class", why="").split("（")[0] in e.value
               for e in s.error)
    fresh = new_app(advanced=False)
    open_page(fresh, "class")
    fresh.button(key="class_start_button").click().run()
    assert_clean_but_for_store(fresh, down)
    assert MEMBER not in fresh.session_state


def assert_clean_but_for_store(at, down: str) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and all(e.value.startswith(down) for e in at.error), [e.value for e in at.error]


def test_a_student_who_reloads_finds_the_answer_sent_in_its_inputs():
    t = teacher()
    code = code_of(t)
    t.button(key=f"class_open_{TOKENS}").click().run()
    s = student(code)
    send(s, TOKENS, 200)
    token = s.session_state[MEMBER].secret
    again = new_app(advanced=False, **{"class": code, STUDENT_PARAM: token})
    open_page(again, "overview")  # a reload: a new session on the same link
    assert [n.value for n in inputs(again, TOKENS)] == [200]
    again.button(key=f"class_send_{TOKENS}").click().run()  # sent again as it stands
    assert any("200" in x.value for x in again.success)
    assert shared_store().answers_to(code, "overview.tokens",
                                     next(iter(shared_store().state(code)["tasks"]))[1]) == [
        [200.0]]


def test_a_student_sees_no_trained_model_button_and_the_reveal_named_as_the_teachers():
    t = teacher()
    s = student(code_of(t))
    open_page(s, "scores")
    assert "meaning_show_trained" not in [b.key for b in s.button]
    assert translate("withheld_class", "en") in texts(s, "caption")
    assert translate("withheld", "en") not in texts(s, "caption")


SIMILAR = "positional_similar"  # the Positional encoding step's patch question


@pytest.fixture
def drawn(monkeypatch):
    """Every picture the pages render, as (figure function, args, kwargs, PNG bytes)."""
    import lens.classroom.ui.view as class_view  # noqa: PLC0415
    import lens.widgets as widgets  # noqa: PLC0415

    seen: list[tuple] = []
    real = widgets.render

    def render(draw, *args, **kwargs):
        png = real(draw, *args, **kwargs)
        seen.append((draw, args, kwargs, png))
        return png

    monkeypatch.setattr(widgets, "render", render)
    monkeypatch.setattr(class_view, "render", render)
    return seen


def pixels_of(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def colour_count(png: bytes, colour: str) -> int:
    return int((pixels_of(png) == rgb255(colour)).all(axis=-1).sum())


def card(at, key: str):
    """The container keyed `key` (a card) in the page's tree."""
    def walk(node):
        if getattr(node, "key", None) == key:
            return node
        children = getattr(node, "children", None) or {}
        for child in children.values():
            if (found := walk(child)) is not None:
                return found
        return None
    found = walk(at.main)
    assert found is not None, key
    return found


def asked_patch(code: str) -> int:
    """The query patch the teacher asked the patch question with (its patch i)."""
    fixed = shared_store().state(code)["fixed"]
    (f,) = [f for (task_id, _), f in fixed.items() if task_id == "positional.similar"]
    return f[2]


def on_positional(t) -> None:
    t.selectbox(key="class_step_choice").set_value("positional").run()
    t.button(key="class_bring").click().run()
    assert_clean(t)


def test_the_teachers_card_of_a_patch_question_shows_its_image_framed_in_magenta(drawn):
    """What the students pick on, as the question's text names it ("framed in magenta"): the
    class's image, the question's patch framed in MARK_COLOUR where it is, no QUERY_COLOUR
    (a student's own choice, in the picker)."""
    t = teacher()
    on_positional(t)
    t.button(key=f"class_open_{SIMILAR}").click().run()
    assert_clean(t)
    assert card(t, f"class_question_{SIMILAR}").get("image"), "no picture on the card"
    *_, (_, args, kwargs, png) = [d for d in drawn if d[0] is figures.image_with_grid]
    assert kwargs["mark"] == asked_patch(code_of(t)) and kwargs.get("highlight") is None
    pic = figures.image_with_grid_picture(*args, **kwargs)
    (panel,) = pic.panels
    (rect,) = panel.rects
    x, y = (round(v) for v in panel.to_px(rect.x + rect.w / 2, rect.y))  # its top edge
    img = pixels_of(png)
    assert tuple(img[y, x]) == rgb255(figures.MARK_COLOUR)
    assert colour_count(png, figures.QUERY_COLOUR) == 0


def revealed_maps(drawn: list, lang: str = "en") -> tuple[int, list[tuple]]:
    """A teacher asks the patch question, three students answer, the teacher reveals: the
    question's patch and the maps over the image drawn then."""
    t = teacher(lang=lang)
    on_positional(t)
    code = code_of(t)
    t.button(key=f"class_open_{SIMILAR}").click().run()
    (key,) = [k for (task_id, k), v in shared_store().state(code)["tasks"].items()
              if task_id == "positional.similar" and v == "open"]
    for choice in (3, 3, 40):
        shared_store().answer(code, shared_store().join(code, "test"), "positional.similar", key,
                              choice)
    drawn.clear()
    t.button(key=f"class_reveal_{SIMILAR}").click().run()
    assert_clean(t)
    maps = [d for d in drawn if d[0] is figures.attention_grid]
    assert len(maps) == 2, "the class's choices and the true map"
    return asked_patch(code), maps


def test_the_teachers_answer_maps_frame_the_questions_patch_in_magenta_as_the_students_see_it(
        drawn):
    """Revealed: the class's choices and the true map over the image frame the question's
    patch in MARK_COLOUR, as the students' picker and the question's text do; QUERY_COLOUR
    (a student's own choice in the picker) marks nothing there."""
    i, maps = revealed_maps(drawn)
    for _, _, kwargs, png in maps:
        assert kwargs["mark"] == i and kwargs.get("query") is None
        assert colour_count(png, figures.MARK_COLOUR) > 0
        assert colour_count(png, figures.QUERY_COLOUR) == 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_maps_of_a_revealed_patch_question_cut_no_title_short(drawn, lang):
    """A map's title is one line: the class's map is titled with the question's short name,
    as the true map beside it, and says in its panel that it holds the class's choices."""
    _, maps = revealed_maps(drawn, lang)
    for _, args, _, png in maps:
        assert figures.CUT_KEY not in figures.png_texts(png), args[3]


def test_on_random_weights_a_classs_patch_question_is_asked_on_the_classs_photo(
        drawn, monkeypatch):
    """The default weights are random: the patch question (positional encodings, which no
    weight changes) is still asked on the class's own photo, on the teacher's card and in
    each student's picker alike, and no card says it is asked on another model or image
    (lesson.toml `on_trained`, for a task whose `source` is "trained": none is, today)."""
    import json  # noqa: PLC0415
    import struct  # noqa: PLC0415

    from lens import explorer, explorer_component, images  # noqa: PLC0415

    shown: list[bytes] = []  # the pickers' blobs, as sent to the browser
    real = explorer_component.show
    monkeypatch.setattr(explorer_component, "show",
                        lambda blob, **kw: shown.append(blob) or real(blob, **kw))
    t = teacher()
    assert t.session_state["weights"] == "random"
    on_positional(t)
    t.button(key=f"class_open_{SIMILAR}").click().run()
    s = student(code_of(t))
    assert_clean(s)
    photo = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), 224, 1)[1]
    *_, (_, args, kwargs, _) = [d for d in drawn if d[0] is figures.image_with_grid]
    np.testing.assert_array_equal(args[0], photo)  # the teacher's card
    blob = shown[-1]  # the student's card
    (n,) = struct.unpack("<I", blob[:4])
    head = json.loads(blob[4:4 + n])
    at = 4 + n + head["image_at"]
    pixels = explorer.picture_pixels(photo, head["G"]).tobytes()
    assert blob[at:at + len(pixels)] == pixels
    assert head["mark"] == kwargs["mark"] == asked_patch(code_of(t))
    elsewhere = translate("on_trained", "en", "lesson")
    assert elsewhere not in texts(t, "caption") + texts(s, "caption")


# --- peer instruction: vote 1, discussion, vote 2, reveal, ask again ------------------------

def markdowns(node) -> list[str]:
    return [m.value for m in node.get("markdown")]


def pictures(node) -> list:
    return [*node.get("image"), *node.get("pyplot")]


def charts_titled(drawn: list, title: str) -> list[tuple]:
    """The bar charts (`figures.answer_counts`) drawn with `title`: (labels, counts, marked)."""
    return [(list(a[0]), list(a[1]), list(a[4])) for f, a, _, _ in drawn
            if f is figures.answer_counts and a[2] == title]


def moved_title(lang: str = "en") -> str:
    from lens.lesson.tasks import task_texts  # noqa: PLC0415
    short = task_texts(lang, TASKS["overview.tokens"])("overview_tokens_short")
    return translate("transitions_title", lang, "class", task=short)


def test_the_peer_instruction_cycle_shows_counts_only_until_the_reveal_then_how_they_moved(
        drawn):
    """Vote 1 (one right, one wrong): the teacher's card says how many answered, draws
    nothing; the discussion: each student sees their own vote 1 and no inputs; vote 2: the
    wrong student answers right; the reveal: the transitions (wrong→right 1, right→right 1)
    and the share right at each vote, and each student's reveal."""
    from lens.lesson.ui.cards import shown_answer  # noqa: PLC0415

    t = teacher()
    code = code_of(t)
    right, wrong = student(code), student(code)
    t.button(key=f"class_open_{TOKENS}").click().run()
    for s, v in ((right, 196), (wrong, 190)):
        s.run()
        send(s, TOKENS, v)
    drawn.clear()
    t.run()
    assert_clean(t)
    q = card(t, f"class_question_{TOKENS}")
    assert "**2 of 2 answered**" in markdowns(q)
    assert not pictures(q) and not drawn, "no histogram: the projector gives nothing away"
    assert not toggles(t, "class_show_"), "presenting: no toggle shows the answers"
    assert not any("right (" in v for v in texts(t))

    t.button(key=f"class_close_{TOKENS}").click().run()
    assert_clean(t)
    assert translate("discuss_teacher", "en", "class") in [i.value for i in t.info]
    assert not pictures(card(t, f"class_question_{TOKENS}"))
    for s, v in ((right, 196), (wrong, 190)):
        s.run()
        assert_clean(s)
        c = card(s, f"class_card_{TOKENS}")
        assert translate("discuss", "en", "class") in [i.value for i in c.get("info")]
        first = translate("first_answer", "en", "class",
                          answer=shown_answer("en", "overview.tokens", (float(v),)))
        assert first in markdowns(c)
        assert not inputs(s, TOKENS) and not pictures(c)
        assert f"class_send_{TOKENS}" not in [b.key for b in s.button]

    t.button(key=f"class_vote2_{TOKENS}").click().run()
    wrong.run()
    assert [n.value for n in inputs(wrong, TOKENS)] == [190]  # vote 2 starts from vote 1
    send(wrong, TOKENS, 196)
    right.run()
    right.button(key=f"class_send_{TOKENS}").click().run()  # kept as it was
    drawn.clear()
    t.run()
    q = card(t, f"class_question_{TOKENS}")
    assert "**2 of 2 answered**" in markdowns(q) and not pictures(q) and not drawn
    assert not toggles(t, "class_show_")
    not_presenting(t)
    assert t.toggle(key=f"class_show_{TOKENS}_2").value is False
    assert not pictures(card(t, f"class_question_{TOKENS}")), "hidden until turned on"

    t.button(key=f"class_reveal_{TOKENS}").click().run()
    assert_clean(t)
    assert charts_titled(drawn, moved_title()) == [
        ([translate(f"move_{m}", "en", "class") for m in
          ("right_right", "wrong_right", "right_wrong", "wrong_wrong")],
         [1, 1, 0, 0], [True, True, False, False])]
    assert translate("shares_right", "en", "class", n=2, p1=50, p2=100) in texts(t)
    assert "2 of 2 right (100 %)" in texts(t)  # the final vote
    assert t.button(key=f"class_again_{TOKENS}")
    for s in (right, wrong):
        s.run()
        assert_clean(s)
        assert any(e.label.startswith("✓ right") for e in s.expander)
        assert "2 of 2 right (100 %)" in texts(s)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_vote_2_counts_a_student_who_keeps_their_answer_without_sending(drawn, lang):
    """Vote 2: each student's card says their vote 1 counts unless changed, with "Keep my
    answer"; one keeps it by that button, one changes, one touches nothing. At the reveal all
    three are counted — the untouched one with their vote 1 — in the final tally, the moves
    and their own verdict."""
    t = teacher()
    code = code_of(t)
    keeper, changer, idle = (student(code, lang=lang) for _ in range(3))
    t.button(key=f"class_open_{TOKENS}").click().run()
    for s, v in ((keeper, 196), (changer, 190), (idle, 196)):
        s.run()
        send(s, TOKENS, v)
    t.button(key=f"class_close_{TOKENS}").click().run()
    t.button(key=f"class_vote2_{TOKENS}").click().run()
    from lens.lesson.ui.cards import shown_answer  # noqa: PLC0415
    for s in (keeper, changer, idle):
        s.run()
        assert_clean(s)
        c = card(s, f"class_card_{TOKENS}")
        v = 190 if s is changer else 196
        said = translate("vote2_student", lang, "class",
                         answer=shown_answer(lang, "overview.tokens", (float(v),)))
        assert said in [i.value for i in c.get("info")]
        assert s.button(key=f"class_keep_{TOKENS}").label == translate("keep_button", lang,
                                                                       "class")
    keeper.button(key=f"class_keep_{TOKENS}").click().run()
    assert_clean(keeper)
    assert f"class_keep_{TOKENS}" not in [b.key for b in keeper.button]  # sent: no keep
    send(changer, TOKENS, 196)
    store = shared_store()
    key = store.state(code)["tasks"]
    where = next(k for k in key if k[0] == "overview.tokens")
    assert sorted(store.answers_to(code, *where, vote=2)) == [[196.0], [196.0]]  # idle: not yet
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    assert_clean(t)
    assert sorted(store.answers_to(code, *where, vote=2)) == [[196.0]] * 3  # idle carried
    assert charts_titled(drawn, moved_title())[-1][1] == [2, 1, 0, 0]
    assert "3 of 3 right (100 %)" in texts(t)
    idle.run()
    assert_clean(idle)
    right = translate("verdict_right", lang, "class")
    assert any(right in e.label for e in idle.expander)


def test_the_teacher_may_show_the_answers_on_their_own_screen(drawn):
    t = teacher()
    code = code_of(t)
    t.button(key=f"class_open_{TOKENS}").click().run()
    send(student(code), TOKENS, 196)
    not_presenting(t)
    t.toggle(key=f"class_show_{TOKENS}_1").set_value(True).run()
    assert_clean(t)
    assert card(t, f"class_question_{TOKENS}").get("image"), "the histogram, on demand"
    assert not any("right (" in v for v in texts(t)), "the right answer still unmarked"


def test_a_single_vote_reveal_shows_no_transitions_and_ask_again_starts_afresh(drawn):
    t = teacher()
    code = code_of(t)
    s = student(code)
    t.button(key=f"class_open_{TOKENS}").click().run()
    s.run()
    send(s, TOKENS, 196)
    t.button(key=f"class_reveal_{TOKENS}").click().run()  # the discussion skipped
    assert_clean(t)
    assert "1 of 1 right (100 %)" in texts(t)
    assert charts_titled(drawn, moved_title()) == []
    assert not any(v.startswith("Right at vote 1") for v in texts(t))
    s.run()  # the follower's look: revealed
    assert any(e.label.startswith("✓ right") for e in s.expander)
    t.button(key=f"class_again_{TOKENS}").click().run()
    assert_clean(t)
    ((task, key), state), = shared_store().state(code)["tasks"].items()
    assert state == "open" and shared_store().answers_to(code, task, key) == []
    assert "**0 of 1 answered**" in markdowns(card(t, f"class_question_{TOKENS}"))
    s.run()
    assert_clean(s)
    assert [n.value for n in inputs(s, TOKENS)] == [None], "asked afresh: nothing filled in"
    assert not s.expander, "no reveal any more"


def test_the_discussion_in_chinese():
    t = teacher()
    s = student(code_of(t), lang="zh")
    t.button(key=f"class_open_{TOKENS}").click().run()
    t.button(key=f"class_close_{TOKENS}").click().run()
    s.run()
    assert_clean(s)
    assert translate("discuss", "zh", "class") in [i.value for i in s.info]
    assert translate("discuss_title", "zh", "class", k=1, n=2) in [v.strip("*")
                                                                   for v in texts(s)]


def download_buttons(at, label_key: str, lang: str) -> list:
    """The page's download buttons labelled with the class text `label_key`."""
    return [b for b in at.get("download_button")
            if b.proto.label == translate(label_key, lang, "class")]


def test_the_teacher_downloads_the_results_as_csv():
    t = teacher()
    code = code_of(t)
    assert download_buttons(t, "results_button", "en"), "the results' download button"
    t.button(key=f"class_open_{TOKENS}").click().run()
    send(student(code, nickname="李雷"), TOKENS, 196)
    send(student(code), TOKENS, 195)
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    member = t.session_state[MEMBER]
    data = results_bytes(member.code, member.secret, "zh")  # the code and key alone: no
    lines = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))  # session's
    col = {name: n for n, name in enumerate(lines[0])}  # memory
    assert [(r[col["nickname"]], r[col["answer"]], r[col["answer_id"]], r[col["right"]])
            for r in sorted(lines[1:], key=lambda r: r[1])] == [
        ("", "195", "[195.0]", "no"), ("李雷", "196", "[196.0]", "yes")]  # judged and said as
    #                                                                   the teacher asked it
    assert member.secret.encode() not in data


def test_the_teacher_downloads_a_one_page_summary_as_pdf(tmp_path):
    """Beside the CSV, in the teacher's language: the button's data is built when pressed,
    from the questions as the store keeps them; the PDF names the question and no nickname."""
    t = teacher(lang="zh")
    code = code_of(t)
    assert download_buttons(t, "summary_button", "zh"), "the summary's download button"
    t.button(key=f"class_open_{TOKENS}").click().run()
    send(student(code, nickname="李雷"), TOKENS, 196)
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    member = t.session_state[MEMBER]
    data = summary_bytes(member.code, member.secret, "zh")
    assert data.startswith(b"%PDF") and member.secret.encode() not in data
    (tmp_path / "summary.pdf").write_bytes(data)
    text = subprocess.run(["pdftotext", str(tmp_path / "summary.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert translate("overview_tokens_short", "zh", "overview") in text
    assert "李雷" not in text


def toggles(at, prefix: str) -> list:
    return [x for x in at.toggle if x.key and x.key.startswith(prefix)]


def tree_text(at) -> str:
    """Every element of the page's tree (main and sidebar), as its protobuf's text."""
    out: list[str] = []

    def walk(node):
        if (proto := getattr(node, "proto", None)) is not None:
            out.append(str(proto))
        for child in (getattr(node, "children", None) or {}).values():
            walk(child)

    walk(at._tree)
    return "\n".join(out)


def test_presenting_is_on_while_a_class_runs_and_hides_nicknames_key_and_answers(drawn):
    """On a projector (the default): the count of students, never a nickname; nothing about
    the teacher's key; how many answered, and no toggle that would show what."""
    t = teacher()
    code = code_of(t)
    t.button(key=f"class_open_{TOKENS}").click().run()
    send(student(code, nickname="Zed"), TOKENS, 196)
    drawn.clear()
    t.run()
    assert_clean(t)
    assert t.toggle(key="class_presenting").value is True
    assert translate("students_count", "en", "class", n=1) in [v.strip("*") for v in texts(t)]
    assert "Zed" not in tree_text(t) and not t.text
    assert translate("teacher_kept", "en", "class") not in texts(t, "caption")
    assert not toggles(t, "class_show_")
    q = card(t, f"class_question_{TOKENS}")
    assert "**1 of 1 answered**" in markdowns(q) and not pictures(q) and not drawn


def test_presenting_off_shows_the_nicknames_and_the_answers_toggle_and_stays_off():
    t = teacher(lang="zh")
    code = code_of(t)
    t.button(key=f"class_open_{TOKENS}").click().run()
    student(code, nickname="Zed")
    assert t.toggle(key="class_presenting").label == translate("presenting", "zh", "class")
    not_presenting(t)
    assert [x.value for x in t.text] == ["Zed"]
    assert translate("teacher_kept", "zh", "class") in texts(t, "caption")
    assert [x.key for x in toggles(t, "class_show_")] == [f"class_show_{TOKENS}_1"]
    open_page(t, "overview")  # elsewhere, and back: still off (this browser session)
    open_page(t, "class")
    assert_clean(t)
    assert t.toggle(key="class_presenting").value is False and [x.value for x in t.text]


def test_a_revealed_question_shows_its_results_presenting_or_not(drawn):
    t = teacher()
    code = code_of(t)
    t.button(key=f"class_open_{TOKENS}").click().run()
    send(student(code, nickname="Zed"), TOKENS, 196)
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    for on in (True, False):
        drawn.clear()
        t.toggle(key="class_presenting").set_value(on).run()
        assert_clean(t)
        q = card(t, f"class_question_{TOKENS}")
        assert pictures(q) and drawn, f"presenting={on}: the class's answers, drawn"
        assert "1 of 1 right (100 %)" in texts(t)
        assert ("Zed" in tree_text(t)) is not on


def test_the_teachers_step_page_withholds_what_the_classs_open_questions_give_away():
    """The teacher opens /overview while the class answers its question (the projector may
    show it): the page is the lesson's, withheld until the reveal — not the free page that
    shows every answer; no card of the teacher's own offers a "Show me"."""
    free = open_page(new_app(advanced=False), "overview")
    assert free.main.get("image"), "alone, the free page: its pictures"
    t = teacher()
    t.button(key=f"class_open_{TOKENS}").click().run()
    open_page(t, "overview")
    assert_clean(t)
    captions = texts(t, "caption")
    assert translate("step_withheld", "en", "class") in captions
    assert translate("withheld_teacher", "en", "common") in captions
    assert not t.main.get("image") and not t.main.get("pyplot"), "the page withheld"
    assert not [b for b in t.button if b.key and b.key.startswith("lesson_")], "no Show me"
    assert not inputs(t, TOKENS)
    open_page(t, "class")
    for ident in (TOKENS, "overview_output"):  # both revealed: nothing left to give away
        if ident != TOKENS:
            t.button(key=f"class_open_{ident}").click().run()
        t.button(key=f"class_reveal_{ident}").click().run()
        assert_clean(t)
    open_page(t, "overview")
    assert_clean(t)
    assert t.main.get("image")
    assert translate("step_withheld", "en", "class") not in texts(t, "caption")


# --- the concept check: before and after the lesson ------------------------------------------

def check_send(s, round_: str, right: int) -> None:
    """A student answers the check's open round: the first `right` questions right, the
    others wrong, then Send."""
    from lens.classroom.ui.concept_check import PREFIX  # noqa: PLC0415
    from lens.lesson.concepts import QUESTIONS  # noqa: PLC0415
    from lens.lesson.ui.check import radio_key  # noqa: PLC0415

    s.run()  # the follower's look: the round opened
    for i, q in enumerate(QUESTIONS):
        wrong = next(o for o in q.options if o != q.right)
        s.radio(key=radio_key(PREFIX, round_, q.id)).set_value(q.right if i < right else wrong)
    s.button(key=f"class_check_send_{round_}").click().run()
    assert_clean(s)
    assert translate("check_sent", "en", "class", k=6, n=6) in [x.value for x in s.success]


def check_count(n: int, round_: str, lang: str = "en", of: int = 2) -> str:
    return translate("check_answered", lang, "class", n=n, of=of,
                     round=translate(f"check_round_{round_}", lang, "class"))


def test_the_concept_check_before_and_after_shows_counts_then_shares_and_gain():
    """Before: one student all right, one half right; the teacher sees counts only. After:
    both all right. The table: the first three questions 100 % → 100 %, g —; the last three
    50 % → 100 %, g = 1.00; all: 12 answers, 75 % → 100 %, g = 1.00; each student sees their
    own count."""
    from lens.lesson.concepts import OWNER, QUESTIONS  # noqa: PLC0415

    t = teacher()
    code = code_of(t)
    full, half = student(code), student(code)
    assert not [r for r in full.radio if (r.key or "").startswith("class_check")], "none open"
    t.button(key="class_check_open_pre").click().run()
    assert_clean(t)
    check_send(full, "pre", 6)
    check_send(half, "pre", 3)
    t.run()
    assert check_count(2, "pre") in texts(t)
    assert not any(v.startswith("| ") for v in texts(t)), "counts only while it is open"
    t.button(key="class_check_close_pre").click().run()
    assert translate("check_table_later", "en", "class") in texts(t, "caption")
    half.run()
    assert not [r for r in half.radio if (r.key or "").startswith("class_check")]
    assert not [i for i in half.info if i.value.startswith("Your concept check")], "not yet"
    t.button(key="class_check_open_post").click().run()
    for s in (full, half):
        check_send(s, "post", 6)
    t.run()
    assert check_count(2, "post") in texts(t)
    t.button(key="class_check_close_post").click().run()
    assert_clean(t)
    short = [translate(f"{q.id}_short", "en", OWNER) for q in QUESTIONS]
    table = "\n".join([
        "| question | students | right before | right after | gain g |",
        "|---|---|---|---|---|",
        *(f"| {s} | 2 | 100 % | 100 % | — |" for s in short[:3]),
        *(f"| {s} | 2 | 50 % | 100 % | 1.00 |" for s in short[3:]),
        "| **all questions** | 2 | 75 % | 100 % | 1.00 |"])  # students, not their 12 answers
    assert table in texts(t)
    assert translate("check_students_both", "en", "class", n=2) in texts(t, "caption")
    for s, before in ((full, 6), (half, 3)):
        s.run()
        assert_clean(s)
        assert translate("result", "en", "concepts", pre=before, post=6, n=6) in [
            i.value for i in s.info]


def test_the_concept_check_in_chinese():
    from lens.classroom.ui.concept_check import PREFIX  # noqa: PLC0415
    from lens.lesson.concepts import OWNER, QUESTIONS  # noqa: PLC0415
    from lens.lesson.ui.check import radio_key  # noqa: PLC0415

    t = teacher(lang="zh")
    s = student(code_of(t), lang="zh")
    t.button(key="class_check_open_pre").click().run()
    assert check_count(0, "pre", "zh", of=1) in texts(t)
    s.run()
    assert_clean(s)
    title = translate("check_card_title", "zh", "class",
                      round=translate("check_round_pre", "zh", "class"))
    assert f"**{title}**" in texts(s)
    q = QUESTIONS[0]
    assert s.radio(key=radio_key(PREFIX, "pre", q.id)).label == \
        f"1. {translate(q.text('q'), 'zh', OWNER)}"


# --- issue 51, item 9: the language kept and in sight; a student's results after the end ------
def test_the_language_switch_is_in_the_main_area_of_the_join_page_and_a_students_page():
    """A phone's sidebar is folded: the join page and a student's page have English / 中文 in
    the page itself; choosing 中文 there turns the page and the sidebar's radio to 中文."""
    code, _ = shared_store().create_class({}, "overview")
    at = new_app(advanced=False, **{"class": code})
    open_page(at, "class")
    assert [r.key for r in at.main.radio].count(CLASS_LANG_SWITCH) == 1
    switch = at.main.radio(key=CLASS_LANG_SWITCH)
    assert switch.value == "en" and switch.options == ["English", "中文"]
    switch.set_value("zh").run()
    assert_clean(at)
    assert at.session_state["lang"] == "zh" and at.sidebar.radio(key="lang").value == "zh"
    assert at.button(key="class_join_button").label == translate("join_button", "zh", "class")
    assert at.main.radio(key=CLASS_LANG_SWITCH).value == "zh"  # it shows the page's language
    s = student(code)
    assert s.main.radio(key=CLASS_LANG_SWITCH).value == "en"
    s.main.radio(key=CLASS_LANG_SWITCH).set_value("zh").run()
    assert_clean(s)
    assert translate("student_caption", "zh", "class", code=code) in texts(s, "caption")


def test_a_student_who_chose_chinese_gets_it_again_in_a_new_session():
    """Chosen on the page, 中文 is kept with the student in the store: a new session with
    their link (a reload, a replica restart) opens in 中文 even when the link says no
    language, or an old one; the join link opened again in a new tab of the same browser is
    in 中文 by the browser's cookie (`session.kept_language`), and a new join keeps it."""
    code, _ = shared_store().create_class({}, "overview")
    s = student(code)
    token = s.session_state[MEMBER].secret
    assert shared_store().language_of(code, token) == "en"  # as joined
    s.main.radio(key=CLASS_LANG_SWITCH).set_value("zh").run()
    s.run()
    assert shared_store().language_of(code, token) == "zh"
    for link_lang in ({}, {"lang": "en"}):
        again = new_app(advanced=False, **{"class": code, STUDENT_PARAM: token, **link_lang})
        open_page(again, "overview")
        assert_clean(again)
        assert again.session_state[MEMBER] == Member(code, "student", token)
        assert again.session_state["lang"] == "zh" and again.query_params["lang"] == "zh"
        assert translate("student_caption", "zh", "class", code=code) in texts(again, "caption")


def test_the_join_link_in_a_new_tab_opens_in_the_browsers_last_language(monkeypatch):
    from lens import session  # noqa: PLC0415

    assert session.CLASS_LINK == member_module.CLASS_PARAM  # the join link's parameter
    code, _ = shared_store().create_class({}, "overview")
    for kept, lang in ((None, "en"), ("zh", "zh"), ("xx", "en")):
        monkeypatch.setattr(session, "kept_language", lambda k=kept: k)
        at = new_app(advanced=False, **{"class": code})
        open_page(at, "class")
        assert at.session_state["lang"] == lang, kept
        assert at.button(key="class_join_button").label == translate("join_button", lang, "class")
    at.button(key="class_join_button").click().run()  # the last: "xx" is no language
    assert shared_store().language_of(code, at.session_state[MEMBER].secret) == "en"
    monkeypatch.setattr(session, "kept_language", lambda: "zh")
    at = new_app(advanced=False, **{"class": code})
    open_page(at, "class")
    at.button(key="class_join_button").click().run()
    assert shared_store().language_of(code, at.session_state[MEMBER].secret) == "zh"
    plain = new_app(advanced=False)  # no class in the link: the cookie is not asked
    open_page(plain, "overview")
    assert plain.session_state["lang"] == "en"


def own_lines(at) -> list[str]:
    """The markdown of the ended class's results expander."""
    [box] = [e for e in at.expander if e.label.startswith(("Your results", "你在课堂"))]
    return [m.value for m in box.markdown]


def test_a_student_keeps_their_own_results_after_the_class_ends_also_after_a_reload():
    """Ended by the teacher, a student's page says so and shows their own results — the
    question, vote 1 and vote 2 with ✓/✗ in words, the live model's answer — from the store,
    so a new session with their link shows them too; never another student's nickname or
    answer; a question still open at the end is marked as not revealed."""
    from lens.lesson.ui.cards import shown_answer  # noqa: PLC0415

    t = teacher()
    code = code_of(t)
    ann, bob = student(code, nickname="Ann"), student(code, nickname="Bobzilla")
    t.button(key=f"class_open_{TOKENS}").click().run()
    for s, v in ((ann, 190), (bob, 123)):
        s.run()
        send(s, TOKENS, v)
    t.button(key=f"class_close_{TOKENS}").click().run()
    t.button(key=f"class_vote2_{TOKENS}").click().run()
    ann.run()
    send(ann, TOKENS, 196)
    t.button(key=f"class_reveal_{TOKENS}").click().run()
    t.checkbox(key="class_end_sure").check().run()
    t.button(key="class_end").click().run()

    def said(lang: str, k: int, v: float, verdict: str) -> str:
        return translate("own_vote", lang, "class", k=k,
                         answer=shown_answer(lang, "overview.tokens", (v,)),
                         verdict=translate(f"verdict_{verdict}", lang, "class"))

    model = translate("own_model", "en", "class",
                      answer=shown_answer("en", "overview.tokens", (196.0,)))
    ann.run()
    assert_clean(ann)
    assert MEMBER not in ann.session_state
    assert translate("class_ended", "en", "class") in [i.value for i in ann.info]
    lines = own_lines(ann)
    assert said("en", 1, 190.0, "wrong") in lines and said("en", 2, 196.0, "right") in lines
    assert model in lines
    assert "✗" in said("en", 1, 190.0, "wrong") and "✓" in said("en", 2, 196.0, "right")
    page = str(ann.main)
    assert "Bobzilla" not in page and "123" not in " ".join(lines)
    token = ann.query_params[STUDENT_PARAM]
    again = new_app(advanced=False, **{"class": code, STUDENT_PARAM: token, "lang": "zh"})
    open_page(again, "overview")  # a reload: a new session, nothing of the old one
    assert_clean(again)
    assert said("zh", 1, 190.0, "wrong") in own_lines(again)
    assert said("zh", 2, 196.0, "right") in own_lines(again)
    open_page(again, "multihead")  # on every page while the link names the student
    assert said("zh", 2, 196.0, "right") in own_lines(again)
    bob.run()
    assert said("en", 1, 123.0, "wrong") in own_lines(bob)
    assert said("en", 2, 123.0, "wrong") in own_lines(bob)  # carried into vote 2
    assert "Ann" not in str(bob.main) and "190" not in " ".join(own_lines(bob))
    forged = new_app(advanced=False, **{"class": code, STUDENT_PARAM: token + "x"})
    open_page(forged, "overview")
    assert not [e for e in forged.expander if e.label.startswith("Your results")]
