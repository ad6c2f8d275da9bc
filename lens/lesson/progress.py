"""The lesson's progress: what was asked, what the learner answered, and the link that keeps it.

A task is bound to the trace it was asked on (`binding`: the image, the weights, the
architecture with its seed); the layer, head and query it names are fixed inside it. An asked
task whose binding changes before it is answered is asked afresh. An answer is a `Record`:
the learner's answer (None: "Show me", which counts as unanswered), whether it was right, and
the right answer then — so the summary can list it after the settings changed.

Records travel in the link (`lesson` progress, key "lp": compact JSON in URL-safe base64), so a
reload, a shared link or a phone waking up (a new Streamlit session) keeps the progress. What a
link holds is checked field by field (known task ids, numbers and option ids only); anything
else is dropped, never shown.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig

from ..digests import array_digest
from ..steps import TASKS
from .tasks import Fixed, Spec

if TYPE_CHECKING:
    from ..context import PageContext
    from .tasks import Task

URL_KEY = "lp"  # the link's progress
MAX_URL_CHARS = 8000  # a longer value is not read
Answer = tuple[float, ...] | int | str | float


@dataclass(frozen=True)
class Record:
    """One task answered (or shown)."""

    task: str  # its id
    bound: str  # the binding it was asked on
    fixed: Fixed
    given: Answer | None  # the learner's answer; None: shown without an answer
    right: bool
    answer: Answer  # the right answer, as it was then

    @property
    def answered(self) -> bool:
        return self.given is not None


def binding(image_key: str, weights_id: str, cfg: EncoderConfig) -> str:
    """A short name of what a task's answer depends on: image, weights, architecture, seed."""
    text = repr((image_key, weights_id, cfg))
    return hashlib.sha256(text.encode()).hexdigest()[:10]


def trace_binding(ctx: PageContext, task: Task) -> str:
    """The binding of the trace a task was computed on (its own, or the page's)."""
    if task.trace is None or task.trace is ctx.trace:
        return binding(ctx.image_key, ctx.weights_id, ctx.cfg)
    tr = task.trace  # its image's digest is remembered: a rerun pays a look-up
    return binding(array_digest(tr.image).hex(), task.source or "trained", tr.config)


# --- the link ---------------------------------------------------------------------------------

def encode(records: dict[str, Record]) -> str:
    """The records as link text ("" for none)."""
    if not records:
        return ""
    rows = [[r.task, r.bound, [r.fixed.layer, r.fixed.head, r.fixed.query],
             _plain(r.given), int(r.right), _plain(r.answer)] for r in records.values()]
    raw = json.dumps(rows, separators=(",", ":"), ensure_ascii=True).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(text: str | None) -> dict[str, Record]:
    """The records a link holds; what is not a well-formed record is dropped."""
    if not text or len(text) > MAX_URL_CHARS:
        return {}
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        rows = json.loads(raw.decode())
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(rows, list):
        return {}
    out: dict[str, Record] = {}
    for row in rows:
        record = _record(row)
        if record is not None:
            out[record.task] = record
    return out


def _plain(value: Answer | None) -> object:
    if isinstance(value, tuple):
        return [float(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _record(row: object) -> Record | None:
    if not (isinstance(row, list) and len(row) == 6):
        return None
    task, bound, fixed, given, right, answer = row
    spec = TASKS.get(task) if isinstance(task, str) else None
    if spec is None or not (isinstance(bound, str) and bound.isalnum() and len(bound) <= 16):
        return None
    if not (isinstance(fixed, list) and len(fixed) == 3
            and all(isinstance(v, int) and 0 <= v < 1_000_000 for v in fixed)):
        return None
    if right not in (0, 1):
        return None
    answer_value = _answer(spec, answer)
    given_value = None if given is None else _answer(spec, given)
    if answer_value is None or (given is not None and given_value is None):
        return None
    return Record(task, bound, Fixed(*fixed), given_value, bool(right), answer_value)


def _answer(spec: Spec, value: object) -> Answer | None:
    """A value of the task's kind, or None."""
    kind = spec.kind
    def number(v: object) -> float | None:
        ok = isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
        return float(v) if ok else None

    if kind == "number":
        if not (isinstance(value, list) and 1 <= len(value) <= 4):
            return None
        parts = [number(v) for v in value]
        return None if None in parts else tuple(parts)  # type: ignore[arg-type]
    if kind == "patch":
        ok = isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1_000_000
        return value if ok else None
    if kind == "choice":
        ok = isinstance(value, str) and value in spec.options
        return value if ok else None
    return number(value)  # estimate
