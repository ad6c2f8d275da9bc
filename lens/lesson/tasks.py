"""What a prediction task of the lesson is, how an answer to it is judged, and what the steps'
tasks share (`shape_task`, `mistake`, …); each step's own tasks are in its module of
`lens.walk` (`lens/walk/scores.py`: `TASKS`), named by its entry in `lens.steps`.

A `Spec` declares a task once: its name within its page, its kind, its options (a choice)
and where it applies; its page's entry in the registry binds it to that page (`Spec.page`, so
its id is "scores.shift"). Its builder computes the task's own part as asked now, a
`Question` — the question's values and the right answer computed from the trace
(`encoder_core.views.predictions`), never written down — from the layer, head and query it was
first asked with (`Fixed`: kept inside the task, so moving a selector does not change it);
`Spec.ask` completes it into the `Task` with the Spec's id, kind, options and page.
A task declares the page elements it withholds (their keys) until it is answered or shown.

Kinds: a number (one value or several, e.g. a shape: checked exactly or within a stated
tolerance), a patch chosen on the image (judged by the chosen patch's place among all), a
choice between outcomes, an estimate (a share in %, within a tolerance, entered in a box that
starts empty).
Its words are its page's (`lens/texts/<lang>/<step>.toml`, read with `task_texts`), each key
starting with the task's id written with "_" ("scores.shift": "scores_shift_q" the question,
"scores_shift_why" the reveal's reason, "scores_shift_short" its line in the summary); the words
every card shares are the lesson's own (`lesson.toml`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import KW_ONLY, asdict, dataclass, field, fields, replace
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np

from encoder_core import EncoderConfig, EncoderTrace
from encoder_core.views.predictions import choice_quality

from ..i18n import Texts

if TYPE_CHECKING:
    from lens.context import PageContext

Kind = Literal["number", "patch", "choice", "estimate"]
PATCH_TOLERANCE = 0.05  # a chosen patch within 5 % of the range below the best counts as right


@dataclass(frozen=True)
class Fixed:
    """What a task names, fixed when it is first asked."""

    layer: int = 0
    head: int = 0
    query: int = 0  # a patch index (row-major), not a sequence row


@dataclass(frozen=True)
class Question:
    """A task's own part as asked on the current trace: what its builder computes (its Spec
    declares the rest: id, kind, options, page; `Spec.ask` makes the two one `Task`)."""

    answer: tuple[float, ...] | int | str  # number: its parts; patch: index; choice: option
    #                                        id; estimate: the share in %
    values: dict[str, object]  # what the question's and the reveal's texts are filled with
    withholds: tuple[str, ...]  # element keys of the page, drawn only once answered or shown
    fixed: Fixed = Fixed()
    tolerance: float = 0.0  # number / estimate: |given − right| ≤ tolerance is right
    decimals: int = 0  # number: how the parts are entered and shown
    scores: tuple[float, ...] = ()  # patch: each candidate patch's true value (a weight, …)
    exclude: int | None = None  # patch: a patch that is no candidate (the one compared from)
    grid: int = 0  # patch: the grid's side
    trace: EncoderTrace | None = field(default=None, compare=False, repr=False)  # patch: the
    #                                         trace the picture and the true map come from
    source: str = ""  # "", or "trained": asked on the model trained on shapes (the page's
    #                   own weights are random)
    variant: str = ""  # "_vit": the question and its reason in a ViT's words
    true_map: bool = True  # patch: the reveal draws each patch's true value on the image
    mistakes: tuple[tuple[str, object], ...] = ()  # the wrong answers a misconception gives:
    #   (name, answer) — number: its parts; patch: its index; estimate: (lo, hi), inclusive;
    #   a choice's wrong
    #   options need none (each is its own: "<task>_if_<option>")
    evidence: Callable[[], dict[str, object]] | None = field(default=None, compare=False,
                                                             repr=False)
    #   the experiment the reveal shows, run on the live trace only when revealed (its
    #   numbers are never computed, let alone sent, before the answer)


@dataclass(frozen=True)
class Task(Question):
    """One task as asked on the current trace: its question and what its Spec declares."""

    _: KW_ONLY
    id: str  # "scores.shift": its page, then its name within the page
    kind: Kind
    page: str  # the page that asks it ("scores"): its words are that page's
    options: tuple[str, ...] = ()  # choice: the option ids, in order

    @property
    def text_id(self) -> str:
        return self.id.replace(".", "_")

    def light(self) -> Task:
        """What a widget's callback may keep: no trace, no experiment."""
        return replace(self, trace=None, evidence=None)

    def revealed(self) -> dict[str, object]:
        """The values of the reveal's texts: the question's and the experiment's."""
        return {**self.values, **(self.evidence() if self.evidence is not None else {})}

    def text(self, name: str) -> str:
        """The key of one of its texts: "q", "why" (in its variant), "short", "p0", …"""
        variant = self.variant if name in ("q", "why") else ""
        return f"{self.text_id}_{name}{variant}"


def task_json(task: Task) -> str:
    """A task as asked, light (no trace, no experiment), as JSON: what a class's store keeps,
    so that the teacher's results judge and name its answers after the page that asked it is
    gone (a reload). `task_from_json` reads it back."""
    kept = {f.name: getattr(task, f.name) for f in fields(Task)
            if f.name not in ("trace", "evidence")}
    kept["fixed"] = asdict(task.fixed)
    return json.dumps(kept, default=_plain, ensure_ascii=False)


def _plain(value: object) -> object:
    """A NumPy scalar or array as JSON takes it."""
    if isinstance(value, np.generic | np.ndarray):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not kept with a task")


def _tuples(value: object) -> object:
    """JSON's lists as the tuples a task holds, at every depth."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value


def task_from_json(text: str, page: str = "") -> Task:
    """The task `task_json` wrote (light: no trace, no experiment). `page`: its page, for JSON
    written before a task held its own (the caller looks it up in the registry,
    `lens.steps.TASKS[id].page`)."""
    kept = json.loads(text)
    kept.setdefault("page", page)
    if not kept["page"]:
        raise ValueError(f"task {kept['id']!r} stored without its page, and none given")
    kept["fixed"] = Fixed(**kept["fixed"])
    kept["values"] = {k: _tuples(v) for k, v in kept["values"].items()}
    for name in ("answer", "withholds", "options", "scores", "mistakes"):
        kept[name] = _tuples(kept[name])
    return Task(**kept)


class OnPage(Protocol):
    """A task, its Spec or anything else that knows the page that asks it."""

    @property
    def page(self) -> str: ...


def task_texts(lang: str, task: OnPage) -> Texts:
    """The words of a task (a `Task` or its `Spec`): its page's texts (`scores.toml`)."""
    return Texts(lang, task.page)


@dataclass(frozen=True)
class Verdict:
    right: bool
    detail: dict[str, object]  # patch: value, best, share, rank, of


def judge(task: Task, given: object) -> Verdict:
    """Whether `given` (the learner's answer, as its input returns it) is right."""
    if task.kind == "number":
        parts = tuple(float(g) for g in given)  # type: ignore[union-attr]
        if len(parts) != len(task.answer):  # type: ignore[arg-type]
            return Verdict(False, {})
        return Verdict(all(abs(g - a) <= task.tolerance + 1e-9  # type: ignore[arg-type]
                           for g, a in zip(parts, task.answer, strict=True)), {})
    if task.kind == "estimate":
        off = abs(float(given) - float(task.answer))  # type: ignore[arg-type]
        return Verdict(off <= task.tolerance, {})
    if task.kind == "choice":
        return Verdict(given == task.answer, {})
    q = choice_quality(np.asarray(task.scores), int(given), task.exclude)  # type: ignore[arg-type]
    return Verdict(q.share >= 1 - PATCH_TOLERANCE,
                   {"value": q.value, "best": q.best, "share": q.share, "rank": q.rank,
                    "of": q.of})


def mistake(task: Task, given: object) -> str | None:
    """The misconception a wrong answer reveals: its name (its text is "<task>_if_<name>"), or
    None (right, not answered, or a wrong answer no misconception explains)."""
    if given is None or judge(task, given).right:
        return None
    if task.kind == "choice":
        return str(given)
    for name, answer in task.mistakes:
        if task.kind == "number":
            parts = tuple(float(g) for g in given)  # type: ignore[union-attr]
            if parts == tuple(float(a) for a in answer):  # type: ignore[union-attr]
                return name
        elif task.kind == "patch":
            if int(given) == int(answer):  # type: ignore[call-overload]
                return name
        elif task.kind == "estimate":
            lo, hi = answer  # type: ignore[misc]
            if lo <= float(given) <= hi:  # type: ignore[arg-type]
                return name
    return None


# --- where a task applies -------------------------------------------------------------------

def everywhere(cfg: EncoderConfig) -> bool:
    return True


def always(ctx: PageContext) -> bool:
    return True


@dataclass(frozen=True)
class Spec:
    """A task declared once, in its page's module of `lens.walk` (`TASKS`): its name, kind,
    options and builder; its page's entry in `lens.steps` binds it to the page (`page`)."""

    name: str  # "shift": the task's name within its page
    kind: Kind
    builder: Callable[[PageContext, Fixed], Question | None]  # None: not possible here and now
    applies: Callable[[EncoderConfig], bool] = everywhere
    possible: Callable[[PageContext], bool] = always  # whether it can be asked here and now
    options: tuple[str, ...] = ()  # choice: its option ids, in order
    page: str = ""  # the page that asks it: set by its entry in the registry (`lens.steps`)

    @property
    def id(self) -> str:
        """Its id, "scores.shift": its page, then its name."""
        if not self.page:
            raise ValueError(f"task {self.name!r} has no page: its page's entry in lens.steps "
                             "binds it")
        return f"{self.page}.{self.name}"

    def ask(self, ctx: PageContext, fixed: Fixed) -> Task | None:
        """The task as asked now, from the layer, head and query `fixed` (None: not possible
        here and now): its builder's question with this Spec's id, kind, options and page."""
        question = self.builder(ctx, fixed)
        if question is None:
            return None
        own = {f.name: getattr(question, f.name) for f in fields(Question)}
        return Task(**own, id=self.id, kind=self.kind, page=self.page, options=self.options)


def bind(page: str, specs: tuple[Spec, ...] | None) -> tuple[Spec, ...] | None:
    """A page's tasks bound to it (`Spec.page`): what its entry in the registry holds."""
    return None if specs is None else tuple(replace(s, page=page) for s in specs)


def fixed_now(ctx: PageContext) -> Fixed:
    """The layer, head and query the page's selectors hold."""
    s = ctx.settings
    return Fixed(layer=s.layer, head=s.head, query=s.query)


def another(fixed: Fixed, cfg: EncoderConfig) -> Fixed:
    """The next layer, head and patch (the diagonal neighbour, wrapping round): what "Ask me
    again" asks with, so the answer just revealed is not the new one's."""
    return Fixed(layer=(fixed.layer + 1) % cfg.n_layers, head=(fixed.head + 1) % cfg.n_heads,
                 query=(fixed.query + cfg.grid_size + 1) % cfg.n_tokens)


def cls_mistake(cfg: EncoderConfig, answer: tuple[float, ...]) -> tuple[tuple[str, object], ...]:
    """The [CLS] misconception of a count of rows: a ViT's class token added to an encoder
    that has none (the note's: 196 patches, not 197) — `answer` is the shape it gives."""
    return () if cfg.n_prefix else (("cls", answer),)


def shape_task(array: np.ndarray, values: dict[str, object], withholds: tuple[str, ...],
               fixed: Fixed, variant: str = "",
               mistakes: tuple[tuple[str, object], ...] = ()) -> Question:
    """The question of a number task (its Spec's kind: "number") whose answer is the shape of
    one of the trace's matrices [rows, cols];
    `mistakes` the shapes a misconception gives (each also transposed: rows vs columns is
    recognised for every shape)."""
    rows, cols = array.shape[-2:]
    known = {tuple(map(float, a)) for _, a in mistakes}  # type: ignore[call-overload]
    flipped = (float(cols), float(rows))
    extra = (("transposed", flipped),) if rows != cols and flipped not in known else ()
    return Question((float(rows), float(cols)), values, withholds, fixed, variant=variant,
                    mistakes=tuple(mistakes) + extra)


# --- what several steps' tasks share -----------------------------------------------------

PAGE = ("page",)  # withheld: the whole page below the cards (`lens.runner.run_page`)
