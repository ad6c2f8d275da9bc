"""A student's side of a live class: the class's settings imposed, its step followed, its
questions answered on every step's cards, and each revealed with the class's answers.

On a step, the concept check's card comes first while the teacher has a round of it open
(`concept_check`); then every task of the lesson is a card (`ask`): waiting until the teacher
opens it; then the lesson's question and inputs with "Send" (no "Show me": the class answers
first); once sent, what was sent (changeable while the vote is open); in the discussion, the
student's own vote 1 and no inputs; at vote 2 the inputs again, starting from vote 1; once
revealed, the student's answer beside the right one, why, and how the class answered its final
vote (never another student's answer or nickname, and nothing of the class's answers before
the reveal). What a task withholds stays withheld until it is revealed.

The cards are drawn in a fragment the class's changes are pushed to (`follow.cards`,
`push`): a change reaches a student's page as soon as the process sees it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from encoder_core import EncoderConfig

from ... import scroll_js
from ...i18n import LANG_NAMES, Texts
from ...keys import (
    CLASS_CARDS_SEEN,
    CLASS_ENDED,
    CLASS_ENDED_SEEN,
    CLASS_LANG,
    CLASS_SENT,
)
from ...lesson.tasks import Task, fixed_now, judge, task_from_json, task_texts
from ...lesson.ui.cards import given_answer, input_keys, question_inputs, shown_answer, true_map
from ...settings import Settings
from ...steps import TASKS, class_tasks_for
from ..asking import OWN, Asked, asked_on, given_value, stored_value
from ..own_store import OwnResult
from ..rules import CHECK_ROUNDS, RefusedError
from . import concept_check, view
from .follow import remember
from .join import language_switch
from .member import Member, brief, shared_store
from .member import class_state as member_class_state

if TYPE_CHECKING:
    from ...context import PageContext

OWNER = "class"  # lens/texts/<lang>/class.toml
FOLLOW_S = 10.0  # the fallback: how often a student's page looks at the class itself (seconds)



def class_settings_for(member: Member, own: Settings, models: Mapping[str, EncoderConfig],
                       checkpoints: Sequence[int]) -> Settings:
    """A student's settings: the class's image and model, the student's own language and
    selectors, the lesson on."""
    seen = member_class_state()  # None when out of reach: the cards say so; the page keeps its own
    if seen is None:
        return own
    mine = {**own.to_url(), "lang": own_language(member, own.lang)}
    query = {**seen["settings"], **{k: mine[k] for k in OWN}, "lesson": "1"}
    return Settings.from_url(query, models, checkpoints)[0]


def own_language(member: Member, lang: str) -> str:
    """The student's language: on this session's first look, the one the store keeps with them
    (chosen in an earlier session: a reload, a new tab, a replica restart — whatever its link
    says); afterwards the session's own `lang`, kept in the store whenever it changes."""
    state = st.session_state
    known = state.get(CLASS_LANG)
    try:
        if known is None or known[0] != member.secret:  # this session's first look
            kept = shared_store().language_of(member.code, member.secret)
            if kept in LANG_NAMES:
                state[CLASS_LANG] = (member.secret, kept)
                return kept
            known = (member.secret, None)
        if known[1] != lang:
            shared_store().set_language(member.code, member.secret, lang)
        state[CLASS_LANG] = (member.secret, lang)
    except (SQLAlchemyError, RefusedError):
        pass  # out of reach, or the class just ended: the page's own language, tried again
    return lang


def ask(ctx: PageContext, member: Member) -> frozenset[str]:
    """The class's cards on this step; the element keys still withheld. The store out of
    reach: said, and the step's tasks stay withheld."""
    t = Texts(ctx.lang, OWNER)
    try:
        return draw_cards(ctx, member)
    except SQLAlchemyError as err:
        st.error(t("store_down", why=brief(err)))
        return frozenset(k for s in class_tasks_for(ctx.id, ctx.cfg) for k in withheld_by(ctx, s))


def withheld_by(ctx: PageContext, spec) -> tuple[str, ...]:  # noqa: ANN001
    task = spec.ask(ctx, fixed_now(ctx)) if spec.possible(ctx) else None
    return task.withholds if task is not None else ()


def draw_cards(ctx: PageContext, member: Member) -> frozenset[str]:
    t = Texts(ctx.lang, OWNER)
    seen = member_class_state()
    if seen is not None:  # the concept check's card on top while a round is open
        concept_check.student_card(ctx.lang, member, seen["checks"],
                                  seen.get("switched", CHECK_ROUNDS))
    mine = shared_store().answers_of(member.code, member.secret)  # out of reach: raises
    withheld: set[str] = set()
    asked = asked_on(ctx, ctx.id, seen or {"tasks": {}, "fixed": {}})
    for n, a in enumerate(asked, 1):
        key = f"class_card_{a.task.text_id}"
        follow_into_view(key, a.state)
        with st.container(border=a.state != "revealed", key=key):
            if a.state in ("discuss", "revealed"):  # the inputs of a vote closed: the next
                forget_inputs(a)  # vote starts from what was sent, a new round from nothing
            if a.state == "revealed":  # the later vote's answer when there are two
                revealed(ctx, member, a, mine.get((a.spec.id, a.key, 1)),
                         mine.get((a.spec.id, a.key, 2)))
                continue
            withheld.update(a.task.withholds)
            first = mine.get((a.spec.id, a.key, 1))
            if a.state == "open":  # vote 1
                answer_card(ctx, member, a, n, len(asked), first, 1)
            elif a.state == "discuss":
                discussing(ctx, a, n, len(asked), first)
            elif a.state == "vote2":
                answer_card(ctx, member, a, n, len(asked),
                            mine.get((a.spec.id, a.key, 2)), 2, first)
            else:
                st.markdown(f"**{t('waiting_title', k=n, n=len(asked))}**")
                st.caption(t("waiting"))
    remember(seen)  # drawn whole (a run interrupted is not): the fallback compares with it
    return frozenset(withheld)


def follow_into_view(key: str, state: str) -> None:
    """A card that has just opened for an answer, for vote 2 or its reveal is scrolled into
    view once (a phone shows the top of a long page: the student would not see it)."""
    seen = st.session_state.setdefault(CLASS_CARDS_SEEN, {})
    if state in ("open", "vote2", "revealed") and seen.get(key) != state:
        scroll_js.ask(key)
    seen[key] = state


def forget_inputs(a: Asked) -> None:
    """What this browser's inputs of a task held: dropped once its vote is closed."""
    for name in input_keys(a.task, a.key):
        st.session_state.pop(name, None)


def shown_as(lang: str, a: Asked, stored: object | None) -> str:
    """A stored answer in words ("— no answer sent" for none)."""
    return shown_answer(lang, a.spec.id, None if stored is None else given_value(a.task, stored))


def discussing(ctx: PageContext, a: Asked, n: int, total: int, first: object | None) -> None:
    """Between the votes: the question and the student's own vote 1, no inputs, nothing of
    the class's answers."""
    t, words = Texts(ctx.lang, OWNER), task_texts(ctx.lang, a.task)
    st.markdown(f"**{t('discuss_title', k=n, n=total)}**")
    st.info(t("discuss"))
    st.markdown(words(a.task.text("q"), **a.task.values))
    st.markdown(t("first_answer", answer=shown_as(ctx.lang, a, first)))


def answer_card(ctx: PageContext, member: Member, a: Asked, n: int, total: int,
                sent: object | None, vote: int, first: object | None = None) -> None:
    """The question, its inputs and Send, for `vote`; at vote 2 the inputs start from the
    student's vote 1 (`first`): keep it or change it."""
    t = Texts(ctx.lang, OWNER)
    start = sent if sent is not None else first
    given = None if start is None else given_value(a.task, start)
    if given is not None:  # a reload, or vote 2: the inputs hold what was sent
        prefill(a.task, input_keys(a.task, a.key), given)
    names = question_inputs(ctx, a.task, a.key, n, total, given=given)
    if vote == 2 and first is not None:  # carried into vote 2 at its close unless changed
        st.info(t("vote2_student", answer=shown_as(ctx.lang, a, first)))
    light = a.task.light()  # what a callback keeps: never a trace
    row = st.container(horizontal=True)
    row.button(t("send"), type="primary", key=f"class_send_{a.task.text_id}", on_click=send,
               args=(member, light, a.key, names, ctx.lang, given, vote))
    if vote == 2 and first is not None and sent is None:
        row.button(t("keep_button"), key=f"class_keep_{a.task.text_id}", on_click=keep,
                   args=(member, a.spec.id, a.key, first, ctx.lang))
    message = st.session_state.get(CLASS_SENT, {}).get((a.spec.id, a.key, vote))
    if message:
        st.warning(message)
    elif sent is not None:
        st.success(t("sent", answer=shown_answer(ctx.lang, a.spec.id,
                                                 given_value(a.task, sent))))


def prefill(task, names: list[str], given: object) -> None:  # noqa: ANN001
    """Put a sent answer in its inputs (not the patch picker: its state is the browser's, and
    the picker shows the sent patch itself), unless the student has typed since."""
    state = st.session_state
    if task.kind == "number":
        values = [int(v) if not task.decimals and float(v).is_integer() else float(v)
                  for v in given]  # type: ignore[union-attr]
        for k, v in zip(names, values, strict=True):
            state.setdefault(k, v)
    elif task.kind == "estimate":
        state.setdefault(names[0], int(round(float(given))))  # type: ignore[arg-type]
    elif task.kind == "choice":
        state.setdefault(names[0], given)


def send(member: Member, task, key: str, names: list[str], lang: str,  # noqa: ANN001
         sent: object | None = None, vote: int = 1) -> None:
    """Send: store the answer (a callback). Committed before the page says "sent". A patch
    not tapped again since the last send is that patch."""
    t = Texts(lang, OWNER)
    messages = st.session_state.setdefault(CLASS_SENT, {})
    given = given_answer(task, names)
    if given is None and task.kind == "patch":
        given = sent
    if given is None:
        messages[(task.id, key, vote)] = t("answer_first")
        return
    try:
        shared_store().answer(member.code, member.secret, task.id, key,
                              stored_value(task, given), vote=vote)
        messages.pop((task.id, key, vote), None)
    except RefusedError as err:
        messages[(task.id, key, vote)] = t(f"refused_{err.reason}")
    except SQLAlchemyError as err:  # not stored: never said "sent"
        messages[(task.id, key, vote)] = t("store_down", why=brief(err))


def keep(member: Member, task_id: str, key: str, first: object, lang: str) -> None:
    """Keep my answer: the student's vote 1 sent as their vote 2 (a callback)."""
    t = Texts(lang, OWNER)
    messages = st.session_state.setdefault(CLASS_SENT, {})
    try:
        shared_store().answer(member.code, member.secret, task_id, key, first, vote=2)
        messages.pop((task_id, key, 2), None)
    except RefusedError as err:
        messages[(task_id, key, 2)] = t(f"refused_{err.reason}")
    except SQLAlchemyError as err:
        messages[(task_id, key, 2)] = t("store_down", why=brief(err))


def revealed(ctx: PageContext, member: Member, a: Asked, first: object | None,
             second: object | None) -> None:
    """The student's answer (the later vote's) beside the right one, why, and the class's
    answers to the vote that decided (vote 2 when there was one)."""
    lang, task = ctx.lang, a.task
    t, words = Texts(lang, OWNER), task_texts(lang, task)
    vote, values = view.final_vote(shared_store(), member.code, task.id, a.key)
    sent = second if vote == 2 and second is not None else first
    given = None if sent is None else given_value(task, sent)
    verdict = ("none" if given is None else "right" if judge(task, given).right else "wrong")
    label = t("revealed_label", verdict=t(f"verdict_{verdict}"),
                task=words(task.text("short")))
    with st.expander(label, expanded=True):
        st.markdown(words(task.text("q"), **task.values))
        st.markdown(Texts(lang, "lesson")("yours_and_right",
                                          yours=shown_answer(lang, task.id, given),
                                          right=shown_answer(lang, task.id, task.answer)))
        if vote == 2:
            st.caption(t("first_answer", answer=shown_as(lang, a, first)))
        left, right = st.columns(2, gap="large")
        with left:
            if task.kind == "patch" and task.trace is not None and task.true_map:
                true_map(ctx, task)
            else:
                st.markdown(words(task.text("why"), **task.revealed()))
        with right:
            view.class_answers(lang, task, values, revealed=True,
                               image=task.trace.image if task.trace is not None else None)
        if task.kind == "patch" and task.trace is not None and task.true_map:
            st.markdown(words(task.text("why"), **task.revealed()))


def caption(ctx: PageContext, member: Member) -> None:
    """The header's line for a student: in which class, and that its settings are locked."""
    t = Texts(ctx.lang, OWNER)
    st.caption(t("student_caption", code=member.code))
    language_switch(ctx.lang)  # on a phone the sidebar is folded away


def ended_results(lang: str) -> None:
    """A student of a class that ended (the teacher ended it; `CLASS_ENDED`, kept in the
    session and found again from the link after a reload): on top of each page, that it
    ended — the pages are the student's own now — and the student's own results, each
    question with their vote 1 and vote 2, right or wrong, and the model's answer; open on the
    first page, folded after. Read from the store while it keeps the class's data (until it
    expires); then nothing. Never another student's answer or nickname: `results_of` has none."""
    ended = st.session_state.get(CLASS_ENDED)
    if not ended:
        return
    t = Texts(lang, OWNER)
    code, token = ended
    try:
        mine = shared_store().results_of(code, token)
    except SQLAlchemyError as err:
        st.caption(t("store_down", why=brief(err)))
        return
    first = not st.session_state.get(CLASS_ENDED_SEEN)
    if first:
        st.info(t("class_ended"))
    st.session_state[CLASS_ENDED_SEEN] = True
    if mine is None:  # expired (or a link of no student): the data are gone
        st.session_state.pop(CLASS_ENDED, None)
        return
    with st.expander(t("own_results_title", code=code), expanded=first):
        st.caption(t("own_results_kept"))
        shown = [(r, task) for r in mine if (task := asked_task(r)) is not None]
        if not shown:
            st.markdown(t("own_results_none"))
        for k, (r, task) in enumerate(shown, 1):
            own_result(lang, k, r, task)


def asked_task(r: OwnResult) -> Task | None:
    """The question of a result as the class was asked it (None: one the app has no more)."""
    if r.task not in TASKS:
        return None
    try:
        return task_from_json(r.asked, TASKS[r.task].page)
    except (KeyError, TypeError, ValueError):
        return None


def own_result(lang: str, k: int, r: OwnResult, task: Task) -> None:
    """One question of the student's results: its short title, each vote's answer with ✓ or
    ✗ in words, and the live model's answer."""
    t, words = Texts(lang, OWNER), task_texts(lang, task)
    st.markdown(f"**{k}. {words(task.text('short'))}**")
    votes = [(1, r.first), *([(2, r.second)] if r.second is not None else [])]
    for vote, value in votes:
        given = None if value is None else given_value(task, value)
        verdict = "none" if given is None else "right" if judge(task, given).right else "wrong"
        st.markdown(t("own_vote", k=vote, answer=shown_answer(lang, task.id, given),
                      verdict=t(f"verdict_{verdict}")))
    st.markdown(t("own_model", answer=shown_answer(lang, task.id, task.answer)))
    if r.state != "revealed":
        st.caption(t("own_not_revealed"))
