"""The concept check's questions and how a class, or a learner alone, did on them: six
multiple-choice questions on the note's ideas, asked before the lesson ("pre") and after it
("post"), whose right answer is
the same for every image and setting (no number of the trace is needed). Each question and each
option has a stable id; their words are `lens/texts/<lang>/concepts.toml`
(`<question>_q`, `<question>_short`, `<question>_<option>`, `<question>_why`).

Where the note and the 2017 paper differ (√d_model or √d_k, post-norm or pre-norm) a question
asks only what both say. Pure: no Streamlit; the store keeps an answer as its option's id.

`gain_table` counts, per question, the students who answered it in both rounds: the share right
before and after, and Hake's normalised gain g = (post − pre)/(1 − pre) (`normalised_gain`;
None when undefined); the overall row counts every (student, question) answered in both rounds.

A learner alone keeps their rounds in the link (`encode_rounds`, key "lc"), as the lesson keeps
its records: a reload or a shared link still knows what was answered before.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

OWNER = "concepts"  # lens/texts/<lang>/concepts.toml
PRE, POST = "pre", "post"  # the rounds, as the store names them (rules.CHECK_ROUNDS)


@dataclass(frozen=True)
class Concept:
    id: str  # stable: the store keeps answers under it
    options: tuple[str, ...]  # option ids, in the order shown
    right: str  # the one right option's id

    def text(self, part: str) -> str:
        """The key of one of its texts: "q", "short", "why" or an option's id."""
        return f"{self.id}_{part}"


QUESTIONS: tuple[Concept, ...] = (
    Concept("softmax_rows", ("keeps_max", "rows_to_weights", "columns_normalised", "sorts"),
            "rows_to_weights"),
    Concept("score_scaling", ("sum_to_one", "all_positive", "no_saturation", "fewer_sums"),
            "no_saturation"),
    Concept("residual", ("input", "positions_again", "bias", "other_heads"), "input"),
    Concept("layernorm", ("column", "whole_matrix", "row"), "row"),
    Concept("heads_out", ("average", "largest_kept", "summed", "concat_w_o"), "concat_w_o"),
    Concept("positional", ("value_range", "order", "noise"), "order"),
)
BY_ID: dict[str, Concept] = {q.id: q for q in QUESTIONS}


def normalised_gain(pre: float, post: float) -> float | None:
    """Hake's normalised gain, g = (post − pre) / (1 − pre): the share of what could be gained
    that was (pre, post: shares right in [0, 1]; negative when the class lost). None when
    pre = 1: nothing could be gained."""
    assert 0.0 <= pre <= 1.0 and 0.0 <= post <= 1.0, f"shares in [0, 1]: {pre}, {post}"
    if pre >= 1.0:
        return None
    return (post - pre) / (1.0 - pre)


def is_right(question: str, value: object) -> bool:
    """Whether a stored answer (an option's id) is the question's right one."""
    q = BY_ID.get(question)
    return q is not None and value == q.right


@dataclass(frozen=True)
class GainRow:
    question: str | None  # a question's id; None: all questions together
    n: int  # answers counted: students who answered it in both rounds (overall: pairs)
    pre: float | None  # share of those right before (None: n = 0)
    post: float | None  # share of those right after

    @property
    def gain(self) -> float | None:
        """The normalised gain (None when n = 0 or everyone was right before)."""
        if self.pre is None or self.post is None:
            return None
        return normalised_gain(self.pre, self.post)


@dataclass(frozen=True)
class GainTable:
    rows: tuple[GainRow, ...]  # one per question, in QUESTIONS' order
    overall: GainRow  # every (student, question) answered in both rounds
    students: int  # students who answered at least one question in both rounds


def gain_table(answers: Mapping[tuple[str, str, str], object]) -> GainTable:
    """The class's check from the store's answers ((student, question, round) -> value,
    `Store.check_answers`). Only answers given in both rounds count, so that the two shares
    are of the same students."""
    pairs: dict[str, list[tuple[bool, bool]]] = {q.id: [] for q in QUESTIONS}
    both: set[str] = set()
    for (who, question, round_), value in answers.items():
        if round_ != PRE or question not in pairs or (who, question, POST) not in answers:
            continue
        pairs[question].append((is_right(question, value),
                                is_right(question, answers[(who, question, POST)])))
        both.add(who)
    rows = tuple(_row(q.id, pairs[q.id]) for q in QUESTIONS)
    return GainTable(rows, _row(None, [p for q in QUESTIONS for p in pairs[q.id]]), len(both))


def _row(question: str | None, pairs: list[tuple[bool, bool]]) -> GainRow:
    n = len(pairs)
    if n == 0:
        return GainRow(question, 0, None, None)
    return GainRow(question, n, sum(a for a, _ in pairs) / n, sum(b for _, b in pairs) / n)


def own_score(mine: Mapping[tuple[str, str], object]) -> dict[str, int]:
    """A student's own right answers per round, from `Store.check_answers_of`
    ((question, round) -> value): round -> how many right."""
    return {r: sum(is_right(q, v) for (q, rr), v in mine.items() if rr == r) for r in (PRE, POST)}


def answered_by(answers: Mapping[tuple[str, str, str], object], round_: str) -> int:
    """How many students sent at least one answer to `round_`."""
    return len({who for (who, _, r) in answers if r == round_})


# --- a learner alone: the rounds in the link --------------------------------------------------

URL_KEY = "lc"  # the link's concept check: "<pre>.<post>"
UNANSWERED = "-"


def encode_rounds(taken: Mapping[str, Mapping[str, str]]) -> str:
    """A learner's rounds as "<pre>.<post>": per round taken, one character per question (its
    option's index, "-" unanswered: a skipped round is all "-"); a round not taken is empty.
    "" when no round was taken."""
    if not taken:
        return ""
    return ".".join("".join(str(q.options.index(taken[r][q.id])) if taken[r].get(q.id)
                            in q.options else UNANSWERED for q in QUESTIONS)
                    if r in taken else "" for r in (PRE, POST))


def decode_rounds(text: str | None) -> dict[str, dict[str, str]]:
    """The rounds of `encode_rounds`' text (round -> question -> option id); a round written
    wrongly (a hand-edited link) is left out, never an error."""
    parts = (text or "").split(".")
    if len(parts) != 2:
        return {}
    taken: dict[str, dict[str, str]] = {}
    for r, part in zip((PRE, POST), parts, strict=True):
        if len(part) != len(QUESTIONS):
            continue
        answers = {}
        for q, c in zip(QUESTIONS, part, strict=True):
            if c.isdigit() and int(c) < len(q.options):
                answers[q.id] = q.options[int(c)]
            elif c != UNANSWERED:
                break
        else:
            taken[r] = answers
    return taken


def as_answers(taken: Mapping[str, Mapping[str, str]]) -> dict[tuple[str, str], str]:
    """The rounds as the store gives a student's own answers: (question, round) -> option."""
    return {(q, r): v for r, answers in taken.items() for q, v in answers.items()}
