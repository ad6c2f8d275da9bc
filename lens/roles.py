"""Who is looking at a page: a learner on their own (free or in the lesson), a class's student or
its teacher — chosen once per run (`pick`) by the page runner, which then asks the role, never
the role's kind, for what differs between them:

- `settings`: the settings the page runs with (a student's are the class's image and model);
- `class_code`: the class the sidebar says its settings are locked to ("" for none);
- `caption`: the header's line under the step's navigation (the lesson's progress, the class);
- `asks_first`: whether the step's questions come before its one-line takeaway;
- `cards`: draws the role's cards at the top of the page and returns the page's element keys
  they withhold (`PageContext.withheld`), with `withheld_note`, the key of the line that
  stands in place of a withheld part;
- `ahead`: the walk's steps with a question still ahead, which the places beyond a step's own
  page keep closed (`PageContext.ahead`: the overview's table, the sidebar, the PDF);
- `framed`: whether the runner draws the app's frame around the page (sidebar, header, the
  walk's PDF); a class's projector has none (`Projector.unframe` hides Streamlit's own).

One run is a straight path: runner → role → the page's sections → runner. A role draws with the
lesson's and the class's cards (`lens.lesson`, `lens.classroom`); nothing below it imports a
role or the runner (tests/test_app_layering.py). A class's projector (`/class?class=CODE&
projector=TOKEN`) is one more class here; the teacher's phone as a remote is the teacher's role
on a second device (the teacher link), laid out for a phone by the class page.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from encoder_core import EncoderConfig

from . import keys
from .classroom.ui import follow, projector, remote, student, teacher
from .classroom.ui.member import Member, class_state
from .lesson.ahead import closed, steps_ahead
from .lesson.ui import cards, check, course
from .settings import Settings
from .steps import STEPS, class_tasks_for

if TYPE_CHECKING:
    from .context import PageContext

Caption = Callable[[], None]  # draws the header's line


class Role(Protocol):
    member: Member | None  # this browser in a live class, or None

    def settings(self, own: Settings, models: Mapping[str, EncoderConfig],
                 checkpoints: Sequence[int]) -> Settings: ...

    @property
    def class_code(self) -> str: ...

    def caption(self, ctx: PageContext) -> Caption | None: ...

    def asks_first(self, ctx: PageContext) -> bool: ...

    def cards(self, ctx: PageContext) -> frozenset[str]: ...

    def withheld_note(self, withheld: frozenset[str]) -> str: ...

    def ahead(self, page_id: str, settings: Settings, state: Mapping[str, object],
              ) -> frozenset[str]: ...

    @property
    def framed(self) -> bool: ...


class _OwnSettings:
    """A role that runs the page with the session's own settings (no class locks them), in
    the app's frame."""

    framed = True

    def settings(self, own: Settings, models: Mapping[str, EncoderConfig],
                 checkpoints: Sequence[int]) -> Settings:
        return own

    @property
    def class_code(self) -> str:
        return ""


@dataclass(frozen=True)
class Learner(_OwnSettings):
    """A learner on their own: free, or in the lesson (`Settings.lesson`) — the walk's first
    page offers the choice and, in the lesson, the concept check before its first task; each
    step's tasks are cards that withhold what they ask about until answered or shown."""

    member: None = None

    def caption(self, ctx: PageContext) -> Caption | None:
        return (lambda: course.progress_caption(ctx)) if ctx.settings.lesson else None

    def asks_first(self, ctx: PageContext) -> bool:
        """In the lesson the takeaway would answer the step's questions (it states what the
        step does): it follows the cards, once none is open — and on the first page before
        its choice, which counts as the lesson's."""
        return ctx.settings.lesson or (ctx.id == STEPS[0].id and not course.chosen(ctx))

    def cards(self, ctx: PageContext) -> frozenset[str]:
        student.ended_results(ctx.lang)  # a class this session was in ended: its results
        waiting = False  # for the concept check before the lesson
        if ctx.id == STEPS[0].id:  # the walk's first page: the lesson or a free walk
            course.choose(ctx)
            if not course.chosen(ctx):  # its overview states the lesson's answers
                return frozenset({"page", "choice"})
            waiting = ctx.settings.lesson and check.before(ctx.lang)
        if not ctx.settings.lesson:
            return frozenset()
        if ctx.id != STEPS[0].id:  # a step reached by a link: the check offered first
            check.offer(ctx.lang, STEPS[0].path)
        return frozenset({"page", "concept_check"}) if waiting else cards.ask(ctx)

    def withheld_note(self, withheld: frozenset[str]) -> str:
        """A learner alone answers or presses "Show me" (or sends or skips the concept check
        before the lesson, or makes the first page's choice)."""
        if "choice" in withheld:
            return "withheld_choice"
        return "withheld_check" if "concept_check" in withheld else "withheld"

    def ahead(self, page_id: str, settings: Settings, state: Mapping[str, object],
              ) -> frozenset[str]:
        """In the lesson — and on the first page before its choice — every step whose
        questions are not all answered or shown; none in free mode."""
        undecided = page_id == STEPS[0].id and not state.get(keys.LESSON_CHOSEN)
        if not (settings.lesson or undecided):
            return frozenset()
        return steps_ahead(settings.to_config(), cards.records())


@dataclass(frozen=True)
class Student:
    """A class's student: the class's settings, its questions as cards answered when the
    teacher asks, the page following the teacher's step."""

    member: Member
    framed = True

    def settings(self, own: Settings, models: Mapping[str, EncoderConfig],
                 checkpoints: Sequence[int]) -> Settings:
        return student.class_settings_for(self.member, own, models, checkpoints)

    @property
    def class_code(self) -> str:
        return self.member.code

    def caption(self, ctx: PageContext) -> Caption | None:
        return lambda: student.caption(ctx, self.member)

    def asks_first(self, ctx: PageContext) -> bool:
        return True

    def cards(self, ctx: PageContext) -> frozenset[str]:
        withheld = follow.cards(ctx, self.member, student.ask)
        follow.follow(self.member.code, ctx.id, ctx.lang)
        return withheld

    def withheld_note(self, withheld: frozenset[str]) -> str:
        return "withheld_class"  # the class waits for the reveal

    def ahead(self, page_id: str, settings: Settings, state: Mapping[str, object],
              ) -> frozenset[str]:
        """The walk's steps with a class question not yet revealed (all of them while the
        class is out of reach)."""
        seen = class_state()
        tasks = seen["tasks"] if seen is not None else {}
        revealed = {task for (task, _), state in tasks.items() if state == "revealed"}
        cfg = settings.to_config()
        first = next((k for k, p in enumerate(STEPS)
                      if any(s.id not in revealed for s in class_tasks_for(p.id, cfg))), None)
        return closed(STEPS[first:]) if first is not None else frozenset()


@dataclass(frozen=True)
class Teacher(_OwnSettings):
    """A class's teacher on a step (the page may be projected): no card, and no answer of the
    class's questions before its reveal (the teacher reveals on the class page)."""

    member: Member

    def caption(self, ctx: PageContext) -> Caption | None:
        return None

    def asks_first(self, ctx: PageContext) -> bool:
        return ctx.settings.lesson

    def cards(self, ctx: PageContext) -> frozenset[str]:
        return teacher.withheld_on_step(ctx)

    def withheld_note(self, withheld: frozenset[str]) -> str:
        return "withheld_teacher"

    def ahead(self, page_id: str, settings: Settings, state: Mapping[str, object],
              ) -> frozenset[str]:
        return frozenset()  # the teacher reveals: nothing is kept from them


@dataclass(frozen=True)
class Remote(Teacher):
    """The class's teacher on a phone used as a remote (the teacher link with `remote=1`):
    the teacher's role without the app's frame — the class page is the remote's panel."""

    framed = False

    def unframe(self) -> None:
        remote.hide_frame()


@dataclass(frozen=True)
class Projector:
    """A class's projector (`projector.Screen`): the class's settings, no frame, no card; the
    class page draws the view (`projector.show`). It is no member of the class."""

    screen: projector.Screen
    member: None = None
    framed = False

    def settings(self, own: Settings, models: Mapping[str, EncoderConfig],
                 checkpoints: Sequence[int]) -> Settings:
        seen = projector.class_state_of(self.screen)
        if seen is None:
            return own
        query = {**seen["settings"], "lang": own.lang, "lesson": "0"}
        return Settings.from_url(query, models, checkpoints)[0]

    @property
    def class_code(self) -> str:
        return self.screen.code

    def caption(self, ctx: PageContext) -> Caption | None:
        return None

    def asks_first(self, ctx: PageContext) -> bool:
        return False

    def cards(self, ctx: PageContext) -> frozenset[str]:
        return frozenset()

    def withheld_note(self, withheld: frozenset[str]) -> str:
        return "withheld_teacher"

    def ahead(self, page_id: str, settings: Settings, state: Mapping[str, object],
              ) -> frozenset[str]:
        return frozenset()  # the view shows no step's answers of its own

    def unframe(self) -> None:
        projector.hide_frame()


def pick(member: Member | None, screen: projector.Screen | None = None) -> Role:
    """The role of this run: a class's projector (its link), else this browser's place in a
    live class, else a learner."""
    if screen is not None:
        return Projector(screen)
    if member is None:
        return Learner()
    if member.teacher:
        return Remote(member) if remote.on_phone() else Teacher(member)
    return Student(member)
