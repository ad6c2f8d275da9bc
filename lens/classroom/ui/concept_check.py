"""The concept check in a live class (the questions: `concepts.py`): the teacher opens and
closes a "before" and an "after" round; a student answers the six questions on a card at the
top of their page while a round is open, and once the after round is closed sees their own
right count, before and after.

The teacher's section shows how many answered a round while it is open, never what (the
projector); once both rounds have answers and neither is open, per question the share right
before and after and the normalised gain (`concepts.gain_table`), as a small table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from ...i18n import Texts
from ...keys import CLASS_CHECK_SENT, TEACHER_ERROR
from ...lesson.concepts import OWNER as WORDS
from ...lesson.concepts import POST, PRE, QUESTIONS, GainRow, answered_by, gain_table
from ...lesson.ui.check import chosen, own_result, radios
from ..rules import CHECK_ROUNDS, RefusedError
from .member import Member, brief, shared_store

OWNER = "class"  # the check's own labels; the questions' words are WORDS'
LIVE_S = 2.0  # how often the teacher's counts look at the store (seconds)


def round_name(lang: str, round_: str) -> str:
    return Texts(lang, OWNER)(f"check_round_{round_}")


# --- the teacher's section ------------------------------------------------------------------

def teacher_section(lang: str, member: Member, checks: Mapping[str, str]) -> None:
    """Open and close the two rounds; the counts while one is open, else the results."""
    t = Texts(lang, OWNER)
    st.subheader(t("check_title"))
    st.caption(t("check_help"))
    row = st.container(horizontal=True)
    for r in CHECK_ROUNDS:
        name, opened = round_name(lang, r), checks.get(r) == "open"
        row.button(t("check_close" if opened else "check_open", round=name),
                   key=f"class_check_{'close' if opened else 'open'}_{r}",
                   type="primary" if opened else "secondary",
                   on_click=switch, args=(member, lang, r, not opened))
    opened = tuple(r for r in CHECK_ROUNDS if checks.get(r) == "open")
    if opened:
        counts(member.code, member.secret, lang, opened)
    else:
        results(member.code, member.secret, lang)


def switch(member: Member, lang: str, round_: str, open_: bool) -> None:
    """Open or close a round (a callback; the store checks the teacher's key)."""
    store = shared_store()
    try:
        (store.open_check if open_ else store.close_check)(member.code, member.secret, round_)
    except RefusedError as err:
        st.session_state[TEACHER_ERROR] = Texts(lang, OWNER)(f"refused_{err.reason}")
    except SQLAlchemyError as err:
        st.session_state[TEACHER_ERROR] = Texts(lang, OWNER)("store_down", why=brief(err))


@st.fragment(run_every=LIVE_S)
def counts(code: str, key: str, lang: str, opened: tuple[str, ...]) -> None:
    """How many students answered each open round, live: counts only."""
    t = Texts(lang, OWNER)
    try:
        answers = shared_store().check_answers(code, key)
        class_state = shared_store().state(code)
    except (RefusedError, SQLAlchemyError):
        return  # the class ended or the store is out of reach: the page says so
    students = class_state["students"] if class_state else 0
    for r in opened:
        st.markdown(t("check_answered", n=answered_by(answers, r), of=students,
                      round=round_name(lang, r)))


def results(code: str, key: str, lang: str) -> None:
    """The results table, once both rounds have answers (no round open)."""
    t = Texts(lang, OWNER)
    answers = shared_store().check_answers(code, key)
    if not (answered_by(answers, PRE) and answered_by(answers, POST)):
        st.caption(t("check_table_later"))
        return
    st.markdown(gain_markdown(lang, answers))
    st.caption(t("check_students_both", n=gain_table(answers).students))


def gain_markdown(lang: str, answers: Mapping[tuple[str, str, str], object]) -> str:
    """The table: per question and overall, students (overall: who answered in both rounds,
    not their answers), share right before and after, g."""
    t, words = Texts(lang, OWNER), Texts(lang, WORDS)
    table = gain_table(answers)
    head = [t(f"check_col_{c}") for c in ("question", "n", "pre", "post", "gain")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in table.rows:
        lines.append(table_line(words(f"{row.question}_short"), row))
    overall = dataclasses.replace(table.overall, n=table.students)  # students, not answers
    lines.append(table_line(f"**{t('check_overall')}**", overall))
    return "\n".join(lines)


def table_line(name: str, row: GainRow) -> str:
    return (f"| {name} | {row.n} | {percent(row.pre)} | {percent(row.post)} | "
            f"{'—' if row.gain is None else f'{row.gain:.2f}'} |")


def percent(share: float | None) -> str:
    return "—" if share is None else f"{100 * share:.0f} %"


# --- the student's card -----------------------------------------------------------------------

def student_card(lang: str, member: Member, checks: Mapping[str, str],
                 switched: Collection[str] = CHECK_ROUNDS) -> None:
    """A card per open round; after the after round, the student's own result. `switched`:
    the rounds the teacher ever opened (none: nothing to show, nothing read)."""
    opened = [r for r in CHECK_ROUNDS if checks.get(r) == "open"]
    if not opened and (checks.get(POST) != "closed" or POST not in switched):
        return
    mine = shared_store().check_answers_of(member.code, member.secret)  # out of reach: raises
    for r in opened:
        with st.container(border=True, key=f"class_check_card_{r}"):
            answer_card(lang, member, r, mine)
    if not opened and any(rr == POST for _, rr in mine):
        own_result(lang, mine)


PREFIX = "class_check"  # a student's radios: class_check_<round>_<question>


def answer_card(lang: str, member: Member, round_: str,
                mine: Mapping[tuple[str, str], object]) -> None:
    t = Texts(lang, OWNER)
    st.markdown(f"**{t('check_card_title', round=round_name(lang, round_))}**")
    st.caption(t("check_card_help"))
    radios(lang, PREFIX, round_, {q: v for (q, r), v in mine.items() if r == round_})
    st.button(t("check_send"), type="primary", key=f"class_check_send_{round_}",
              on_click=send, args=(member, lang, round_))
    message = st.session_state.get(CLASS_CHECK_SENT, {}).get(round_)
    k = sum((q.id, round_) in mine for q in QUESTIONS)
    if message:
        st.warning(message)
    elif k:
        st.success(t("check_sent", k=k, n=len(QUESTIONS)))


def send(member: Member, lang: str, round_: str) -> None:
    """Send: each question chosen, stored (a callback); "sent" only once committed."""
    t = Texts(lang, OWNER)
    messages = st.session_state.setdefault(CLASS_CHECK_SENT, {})
    answers = chosen(PREFIX, round_)
    if not answers:
        messages[round_] = t("check_answer_first")
        return
    try:
        for question, value in answers.items():
            shared_store().check_answer(member.code, member.secret, question, round_, value)
        messages.pop(round_, None)
    except RefusedError as err:
        messages[round_] = t(f"refused_{err.reason}")
    except SQLAlchemyError as err:
        messages[round_] = t("store_down", why=brief(err))
