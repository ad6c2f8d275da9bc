"""What a live class allows, whatever a page asks: the limits of join codes, nicknames and answers,
what an answer to a task may be (`Rule`), and the refusal a page is given when it asks for
something else (`RefusedError`, with a reason the page says in the asker's language).

A join code carries 40 bits (8 characters of an alphabet of 32 in which no symbol is mistaken
for another). A wrong code is never answered by a refusal of the right one: past an allowance
of wrong codes in `WRONG_WINDOW_S` (`BROWSER_FREE` from one browser session, `ADDRESS_FREE`
from one address — a lecture hall behind one NAT), each try from that browser or address waits
a growing delay before its code is looked at (`join_delay`: 1, 2, 4, then `MAX_DELAY_S` s), so
the right code still joins within `MAX_DELAY_S` (docs/classroom.md has the arithmetic). An answer is
checked against its task's rule before it is stored, and its JSON may not be longer than
`MAX_ANSWER_CHARS`. A class lasts `CLASS_HOURS`. The store (`store.Store`) keeps these rules;
nothing here touches the database.
"""

from __future__ import annotations

import hashlib
import json
import math
import secrets
from dataclasses import dataclass

ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # 32 symbols, none mistaken for another
CODE_LENGTH = 8  # 8 × 5 = 40 bits
CLASS_HOURS = 12.0
BROWSER_FREE = 3  # wrong join codes a browser session may try without waiting …
ADDRESS_FREE = 1000  # … and an address (300 students behind one NAT, typos and all) …
WRONG_WINDOW_S = 600.0  # … in this many seconds; past them each try waits `join_delay`
MAX_DELAY_S = 5.0  # the longest a try waits: the right code joins within this
MAX_NICKNAME = 24
MAX_ANSWER_CHARS = 200  # an answer's JSON
MAX_QUESTION_ID = 64  # a concept check question's id
CHECK_ROUNDS = ("pre", "post")  # the concept check: before the lesson, after it
# A task's states, the peer-instruction cycle (Mazur): vote 1 ("open", the name it always had)
# → "discuss" (vote 1 closed, no answer taken) → "vote2" (a student's vote 1 stays as it was)
# → "revealed". The teacher may reveal straight after vote 1 (a single vote) and ask a revealed
# task again (vote 1 afresh, the task's answers deleted). "closed": the class's settings
# changed while it was asked (its answers stay under the old settings).
TASK_STATES = ("open", "discuss", "vote2", "revealed", "closed")
VOTE_STATES = {1: "open", 2: "vote2"}  # the task's state in which each vote is taken
OPENABLE = ("open", "closed")  # `open_task` starts vote 1 from these (or a task not asked yet)
MOVES = {  # a teacher's action on a task: (the states it may come from, the state it leads to)
    "close_vote": (("open",), "discuss"),
    "open_vote2": (("discuss",), "vote2"),
    "reveal": (("open", "discuss", "vote2", "revealed"), "revealed"),
    "ask_again": (("revealed",), "open"),
}


class RefusedError(Exception):
    """What was asked is not allowed; its message says why, `reason` names it for the page to
    say in the asker's language: bad_answer, not_teacher, no_task, no_class, not_student,
    closed (that vote is not open), too_long, wrong_state (a teacher's action
    the task's state does not allow: `MOVES`)."""

    def __init__(self, message: str, reason: str = "bad_answer") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Rule:
    """What an answer to a task may be: a patch index below `n`, one of `options`, `parts`
    finite numbers, or one number in [lo, hi]."""

    kind: str  # "patch", "choice", "number", "estimate"
    n: int = 0
    options: tuple[str, ...] = ()
    parts: int = 0
    lo: float = 0.0
    hi: float = 100.0

    def check(self, value: object) -> object:
        """The value as stored, or RefusedError."""
        def finite(v: object) -> bool:
            return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)

        if self.kind == "patch":
            if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < self.n:
                return value
            raise RefusedError(f"a patch is a whole number from 0 to {self.n - 1}")
        if self.kind == "choice":
            if isinstance(value, str) and value in self.options:
                return value
            raise RefusedError("not one of the task's choices")
        if self.kind == "number":
            if (isinstance(value, list | tuple) and len(value) == self.parts
                    and all(finite(v) and abs(v) < 1e12 for v in value)):
                return [float(v) for v in value]
            raise RefusedError(f"the answer is {self.parts} finite number(s)")
        if self.kind == "estimate" and finite(value) and self.lo <= value <= self.hi:
            return float(value)
        raise RefusedError(f"the answer is a number from {self.lo:g} to {self.hi:g}")

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "n": self.n, "options": list(self.options),
                           "parts": self.parts, "lo": self.lo, "hi": self.hi})

    @classmethod
    def from_json(cls, text: str) -> Rule:
        d = json.loads(text)
        return cls(d["kind"], d["n"], tuple(d["options"]), d["parts"], d["lo"], d["hi"])


def join_delay(wrong: int, free: int) -> float:
    """Seconds a join try waits after `wrong` wrong codes from its browser (or address) in the
    window, of which `free` cost nothing: 0 within the allowance, then 1, 2, 4, … doubling, at
    most `MAX_DELAY_S`."""
    if wrong < free:
        return 0.0
    return min(MAX_DELAY_S, 2.0 ** (wrong - free))


def new_code() -> str:
    """A fresh join code: `CODE_LENGTH` symbols of `ALPHABET`, each drawn by `secrets`."""
    return "".join(secrets.choice(ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(text: str) -> str:
    """A join code as typed: upper case, spaces and dashes left out."""
    return "".join(ch for ch in str(text).upper() if ch not in " -")[:16]


def pseudonym(token: str) -> str:
    """A student as the teacher's results name them: stable within the class, and no way back
    to the token (which would let its holder answer as that student)."""
    return "s-" + hashlib.sha256(f"pseudonym:{token}".encode()).hexdigest()[:10]
