"""The concept check (`concepts.py`) taken by a learner alone: before the lesson, on the
overview, a card with the six questions (send, or skip); at the lesson's end, in the summary,
the same six again, then the learner's own result — right before and after, each answer and the
right one with why. Nothing of the right answers shows before the after round is sent.

The rounds live in the session and travel in the link (`concepts.encode_rounds`, "lc"), as the
lesson's records do. The six radios and the result are drawn by the same functions for a class's
student (`lens.classroom.ui.concept_check`), whose answers the class's store keeps instead.
"""

from __future__ import annotations

from collections.abc import Mapping

import streamlit as st

from ... import scroll_js
from ...i18n import Texts
from ...keys import LESSON_CHECK, LESSON_CHECK_MISSING, LESSON_RECORDS
from ..concepts import (
    OWNER,
    POST,
    PRE,
    QUESTIONS,
    URL_KEY,
    as_answers,
    decode_rounds,
    encode_rounds,
    own_score,
)

PREFIX = "concept_check"  # the learner's radios: concept_check_<round>_<question>


# --- drawn for a learner and for a class's student alike -------------------------------------

def radio_key(prefix: str, round_: str, question: str) -> str:
    return f"{prefix}_{round_}_{question}"


def radios(lang: str, prefix: str, round_: str, sent: Mapping[str, object]) -> None:
    """The six questions, each a radio (none chosen; on a reload, what was sent)."""
    words = Texts(lang, OWNER)
    for n, q in enumerate(QUESTIONS, 1):
        key = radio_key(prefix, round_, q.id)
        if sent.get(q.id) in q.options:
            st.session_state.setdefault(key, sent[q.id])
        st.radio(f"{n}. {words(q.text('q'))}", q.options, index=None, key=key,
                 format_func=lambda o, q=q: words(q.text(o)))


def chosen(prefix: str, round_: str) -> dict[str, str]:
    """The options chosen on the radios of one round: question -> option id."""
    picked = {q.id: st.session_state.get(radio_key(prefix, round_, q.id)) for q in QUESTIONS}
    return {q: v for q, v in picked.items() if v is not None}


def own_result(lang: str, mine: Mapping[tuple[str, str], object]) -> None:
    """Right before and after, then per question the answers given and the right one, why."""
    t = Texts(lang, OWNER)
    score = own_score(mine)
    took_pre = any(r == PRE for _, r in mine)
    st.info(t("result", pre=score[PRE], post=score[POST], n=len(QUESTIONS)) if took_pre
            else t("result_after_only", post=score[POST], n=len(QUESTIONS)))
    with st.expander(t("review")):
        for n, q in enumerate(QUESTIONS, 1):
            st.markdown(f"**{n}. {t(q.text('q'))}**")
            given = {r: mine.get((q.id, r)) for r in (PRE, POST) if r == POST or took_pre}
            if len(given) == 2 and given[PRE] == given[POST]:  # the same twice: said once
                given = {"both": given[POST]}
            st.markdown("\n".join(f"- {t(f'yours_{r}', answer=answer_words(t, q.id, v))}"
                                  for r, v in given.items()))
            st.markdown(t("right", answer=t(q.text(q.right))))
            st.caption(t(q.text("why")))


def answer_words(t: Texts, question: str, value: object) -> str:
    """An answer as the learner chose it, marked right or wrong; "—" when none was given."""
    q = next(q for q in QUESTIONS if q.id == question)
    if value not in q.options:
        return "—"
    return f"{t(q.text(str(value)))} {'✓' if value == q.right else '✗'}"


# --- a learner alone --------------------------------------------------------------------------

def taken() -> dict[str, dict[str, str]]:
    """The rounds this learner took (round -> question -> option), first read from the link."""
    state = st.session_state
    if LESSON_CHECK not in state:
        state[LESSON_CHECK] = decode_rounds(st.query_params.get(URL_KEY))
    return state[LESSON_CHECK]


def sync_url(lesson: bool) -> None:
    """The rounds in the link while the lesson is on; none in it otherwise."""
    text = encode_rounds(taken()) if lesson else ""
    if text and st.query_params.get(URL_KEY) != text:
        st.query_params[URL_KEY] = text
    elif not text and URL_KEY in st.query_params:
        del st.query_params[URL_KEY]


RESULT_KEY = "concept_check_result"  # the learner's before → after, scrolled to once sent


def before(lang: str) -> bool:
    """On the overview in lesson mode: the before round's card until it is sent or skipped.
    True while it waits (the lesson's first task comes after it)."""
    if PRE in taken():
        return False
    with st.container(border=True, key="concept_check_card_pre"):
        card(lang, PRE)
    return True


def offer(lang: str, first_page: str) -> None:
    """On a step reached by a link in lesson mode, before any answer and before the check was
    sent or skipped: the check offered (on the walk's first page, `first_page`'s script) or
    skipped, never passed over unsaid."""
    if PRE in taken() or progress_started():
        return
    t = Texts(lang, OWNER)
    with st.container(border=True, key="concept_check_offer"):
        st.markdown(f"**{t('alone_title_pre')}**")
        st.caption(t("alone_offer"))
        row = st.container(horizontal=True)
        if row.button(t("alone_take"), type="primary", key="concept_check_take"):
            st.switch_page(first_page)
        row.button(t("alone_skip"), key="concept_check_skip_here", on_click=skip)


def progress_started() -> bool:
    """Whether the learner has answered (or been shown) a lesson task already."""
    return bool(st.session_state.get(LESSON_RECORDS))


def after(lang: str) -> None:
    """In the lesson's summary: the after round's card, then the learner's own result."""
    if POST not in taken():
        with st.container(border=True, key="concept_check_card_post"):
            card(lang, POST)
        return
    with st.container(key=RESULT_KEY):
        own_result(lang, as_answers(taken()))


def card(lang: str, round_: str) -> None:
    t = Texts(lang, OWNER)
    st.markdown(f"**{t(f'alone_title_{round_}')}**")
    st.caption(t(f"alone_help_{round_}"))
    radios(lang, PREFIX, round_, {})
    row = st.container(horizontal=True)
    row.button(t(f"alone_send_{round_}"), type="primary", key=f"concept_check_send_{round_}",
               on_click=send, args=(round_,))
    if round_ == PRE:
        row.button(t("alone_skip"), key="concept_check_skip", on_click=skip)
    if st.session_state.get(LESSON_CHECK_MISSING) == round_:
        blank = len(QUESTIONS) - len(chosen(PREFIX, round_))
        st.warning(t("alone_answer_all", n=blank) if round_ == POST and blank
                   else t("alone_answer_first"))


def send(round_: str) -> None:
    """Keep the round's answers (a callback); at least one must be chosen."""
    answers = chosen(PREFIX, round_)
    # the before round may be sent in part (or skipped); the after round measures the gain:
    # every question answered
    if not answers or (round_ == POST and len(answers) < len(QUESTIONS)):
        st.session_state[LESSON_CHECK_MISSING] = round_
        return
    st.session_state.pop(LESSON_CHECK_MISSING, None)
    taken()[round_] = answers
    if round_ == POST:
        scroll_js.ask(RESULT_KEY, focus=True)  # before → after, where the card was


def skip() -> None:
    """No before round (a callback): the lesson starts; the after round is still offered."""
    st.session_state.pop(LESSON_CHECK_MISSING, None)
    taken()[PRE] = {}
