"""The sidebar's "Download the walk as PDF" in AppTest (issue 27): built only when asked, kept
until what it shows changes, under the server's budget, with the lesson's answers; not
offered while a page withholds a part until an answer."""

from __future__ import annotations

import subprocess

import pytest

from lens import keys, resources
from lens.i18n import translate
from lens.lesson.progress import URL_KEY as PROGRESS
from lens.lesson.progress import encode
from lens.page_costs import handout_cost
from lens.settings import Settings
from lens.steps import STEPS, step_number, tasks_for
from tests.support.apptest_helpers import (
    assert_clean,
    build_button,
    errors,
    opened,
    shown_record,
)
from tests.test_app_admission import Recording
from tests.test_app_lesson import answer_with, expose_truth, lesson_page  # noqa: F401

pytestmark = pytest.mark.slow  # each builds a PDF of the ten steps


def text_of(pdf: bytes, tmp_path) -> str:
    path = tmp_path / "walk.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True,
                         check=True).stdout
    return " ".join(out.split())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_button_builds_the_pdf_and_then_offers_it(lang, tmp_path):
    at = opened("scores", lang=lang)
    assert build_button(at) and keys.HANDOUT not in at.session_state
    build_button(at)[0].click().run(timeout=180)
    assert_clean(at)
    ident, pdf = at.session_state[keys.HANDOUT]
    assert pdf.startswith(b"%PDF") and len(pdf) < 5 * 2**20
    assert not build_button(at)  # the download in its place
    text = text_of(pdf, tmp_path)
    assert translate("doc_title", lang, "handout") in text
    assert translate("step_title", lang, "handout", k=step_number("scores"), n=len(STEPS),
                     title=translate("title", lang, "scores")) in text
    # the image named in the learner's language (title page and every page's foot)
    name = translate("name_builtin", lang, "common")
    assert text.count(name) >= 10, (name, text.count(name))


def test_a_kept_pdf_goes_once_what_it_shows_changes():
    at = opened("scores")
    build_button(at)[0].click().run(timeout=180)
    assert keys.HANDOUT in at.session_state
    at.run()  # a rerun: still offered
    assert keys.HANDOUT in at.session_state and not build_button(at)
    at.select_slider(key="head").set_value(2).run()
    assert keys.HANDOUT not in at.session_state and build_button(at)


def test_a_lessons_answers_are_in_the_pdf_and_the_steps_ahead_are_not(tmp_path):
    """In the lesson the PDF holds the steps done (issue 50): nothing before any answer; with
    the steps before Positional shown and Positional's tasks answered, their sheets and the
    answers, and no sheet of a step still ahead."""
    assert not build_button(lesson_page("positional"))  # every step ahead: nothing to hold
    cfg = Settings().to_config()
    done = {s.id: shown_record(s) for p in STEPS[:step_number("positional") - 1]
            for s in tasks_for(p.id, cfg)}
    at = lesson_page("positional", **{PROGRESS: encode(done)})
    assert build_button(at)  # the steps before it are done: their sheets can be had
    answer_with(at, "positional.similar", right=False)
    answer_with(at, "positional.shuffle", right=True)
    build_button(at)[0].click().run(timeout=180)
    assert_clean(at)
    text = text_of(at.session_state[keys.HANDOUT][1], tmp_path)
    say = lambda key, owner="lesson": translate(key, "en", owner)  # noqa: E731
    assert translate("h_answers", "en", "handout") in text
    assert say("positional_similar_short", "positional") in text and say("result_wrong") in text
    assert say("result_right") in text

    def heading(info) -> str:
        return translate("step_title", "en", "handout", k=step_number(info.id), n=len(STEPS),
                         title=info.title_in("en"))

    k = step_number("positional")
    assert all(heading(info) in text for info in STEPS[:k])
    assert not any(heading(info) in text for info in STEPS[k:])  # Q, K, V … still ahead


def test_a_pdf_that_could_never_fit_the_budget_is_refused_with_a_message(monkeypatch):
    at = opened("scores")
    cfg = Settings().normalised()[0].to_config()
    small = Recording(handout_cost(cfg).bytes - 1)  # the page's own run fits, the PDF not
    monkeypatch.setattr(resources, "budget", lambda: small)
    build_button(at)[0].click().run(timeout=120)
    assert keys.HANDOUT not in at.session_state
    said = errors(at)
    assert said and translate("handout_failed", "en", "handout", msg="")[:20] in said[0]
    at.run()  # and the app goes on
    assert build_button(at)
