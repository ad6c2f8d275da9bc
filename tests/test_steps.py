"""The registry (lens.steps) is the one place a page is named and where each finds its parts: a
step of the note has every part its kind needs — its page, lesson tasks, handout sheet and lines
of the note, its costs named (None where it derives nothing) — a page beyond the note has no
sheet and no lines of the note, and lesson tasks only from its own module of lens.walk; each
task is declared once, by its name, and the entry that holds it gives it its page (no module of
lens.walk writes a task's id); no other module of the app holds a list of page ids."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest

from encoder_core import EncoderConfig
from lens.steps import (
    ALL_PAGES,
    EXTRA_PAGES,
    PAGES,
    STEPS,
    TASKS,
    PageInfo,
    class_tasks_for,
    tasks_for,
)

ROOT = Path(__file__).resolve().parent.parent


STEP_PACKAGE = "lens.walk"  # a step's tasks and sheet: lens/walk/<id>.py


def missing_parts(info: PageInfo) -> list[str]:
    """What a page lacks that its kind needs (a step: tasks, sheet, note; any page: its
    module), what a page beyond the note has that only steps have, and a step's part that is
    not in the step's own module (`lens/walk/<id>.py`)."""
    out = [] if (ROOT / info.path).is_file() else ["page module"]
    home = f"{STEP_PACKAGE}.{info.stem or info.id}"
    if info.in_note:
        out += [part for part, ok in (("tasks", bool(info.tasks)), ("sheet", callable(info.sheet)),
                                      ("note", info.note is not None)) if not ok]
        if callable(info.sheet) and info.sheet.__module__ != home:
            out.append(f"sheet outside {home}")
    else:  # a page beyond the note may ask tasks (None or some: never an empty tuple)
        out += [f"{part} beyond the note" for part in ("sheet", "note")
                if getattr(info, part) is not None]
        if info.tasks == ():
            out.append("tasks")
    out += [f"task {s.id} built outside {home}" for s in info.tasks or ()
            if s.builder.__module__ != home]
    if info.costs is not None and not callable(info.costs):
        out.append("costs")
    return out


@pytest.mark.parametrize("info", ALL_PAGES, ids=lambda p: p.id)
def test_every_page_has_the_parts_its_kind_needs(info):
    assert missing_parts(info) == []
    for a, b in info.note or ():
        assert 1 <= a <= b, info.note


def test_the_check_sees_a_forgotten_part_and_a_step_part_beyond_the_note():
    step = PAGES["scores"]
    assert missing_parts(PageInfo("scores", tasks=(), sheet=step.sheet, note=step.note,
                                  costs=None)) == ["tasks"]
    assert missing_parts(PageInfo("scores", tasks=step.tasks, sheet=None, note=None,
                                  costs=None)) == ["sheet", "note"]
    assert missing_parts(PageInfo("scores", tasks=step.tasks, sheet=PAGES["qkv"].sheet,
                                  note=step.note, costs=None)) == ["sheet outside lens.walk.scores"]
    assert missing_parts(PageInfo("compare", tasks=None, sheet=step.sheet, note=None, costs=None,
                                  in_note=False)) == ["sheet beyond the note"]
    learn = PAGES["learn"]  # a page beyond the note may ask tasks: its own, from its module
    assert missing_parts(learn) == [] and learn.tasks
    assert missing_parts(PageInfo("compare", tasks=learn.tasks, sheet=None, note=None,
                                  costs=None, in_note=False)) == [
        f"task compare.{s.name} built outside lens.walk.compare" for s in learn.tasks]
    assert missing_parts(PageInfo("learn", tasks=step.tasks, sheet=None, note=None, costs=None,
                                  in_note=False)) == [
        f"task learn.{s.name} built outside lens.walk.learn" for s in step.tasks]


def test_every_part_is_named_in_every_entry():
    """No part has a default (beyond the flags and the optional rows): an entry that forgets
    one does not build."""
    parts = {f.name for f in fields(PageInfo) if f.kw_only} - {"in_note", "stem", "rows"}
    assert parts == {"tasks", "sheet", "note", "costs"}
    with pytest.raises(TypeError, match="sheet"):
        PageInfo("x", tasks=None, note=None, costs=None)  # type: ignore[call-arg]


def test_the_registry_orders_the_steps_and_knows_every_task():
    assert [p.id for p in ALL_PAGES] == [p.id for p in STEPS] + [p.id for p in EXTRA_PAGES]
    assert all(p.in_note for p in STEPS) and not any(p.in_note for p in EXTRA_PAGES)
    assert set(TASKS) == {s.id for p in ALL_PAGES for s in p.tasks or ()}
    assert len(TASKS) == sum(len(p.tasks or ()) for p in ALL_PAGES)  # no task id twice
    assert tasks_for("compare", EncoderConfig()) == []
    assert [s.id for s in tasks_for("learn", EncoderConfig())] == ["learn.logit", "learn.value"]
    assert [s.id for s in tasks_for("vit", EncoderConfig())] == ["vit.settles"]
    # a class asks the note's steps only: the teacher opens none beyond them
    assert class_tasks_for("learn", EncoderConfig()) == []
    assert class_tasks_for("ffn", EncoderConfig()) == tasks_for("ffn", EncoderConfig())
    assert [s.id for s in tasks_for("ffn", EncoderConfig(use_ffn=False))] == []


def test_every_task_has_the_page_of_the_entry_that_holds_it():
    """A task is declared by its name within its page (`Spec("shift", …)`); its entry binds it:
    its page is that entry's, its id "<page>.<name>", and the registry finds it by that id."""
    for info in ALL_PAGES:
        for spec in info.tasks or ():
            assert spec.page == info.id, (info.id, spec.name)
            assert spec.id == f"{info.id}.{spec.name}" and TASKS[spec.id] is spec


TASK_CALLS = ("Task", "Question", "shape_task", "Spec")  # where a module of lens.walk might
#                                                         write a task's id


def written_task_ids(path: Path, pages: set[str]) -> list[tuple[int, str]]:
    """Where `path` builds a `Task` itself (("Task", line): `Spec.ask` makes every task) or
    writes a task's id ("scores.shift": a page's id, a dot, a name) as a string in a call of
    `Task`, `Question`, `shape_task` or `Spec`."""
    an_id = re.compile(rf"^(?:{'|'.join(map(re.escape, sorted(pages)))})\.\w+$")
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in TASK_CALLS):
            continue
        if node.func.id == "Task":
            out.append((node.lineno, "Task"))
        for arg in (*node.args, *(k.value for k in node.keywords)):
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) \
                    and an_id.match(arg.value):
                out.append((node.lineno, arg.value))
    return out


def test_no_module_of_the_walk_writes_a_tasks_id():
    pages = {p.id for p in ALL_PAGES}
    found = {str(p.relative_to(ROOT)): ids for p in (ROOT / "lens" / "walk").glob("*.py")
             if (ids := written_task_ids(p, pages))}
    assert found == {}


def test_the_id_check_sees_a_written_id_and_a_task_built_by_hand(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('a = shape_task("scores.shape", x, {}, PAGE, fixed)\n'
                     'b = Question("moved", {}, PAGE, fixed)\n'
                     'c = Task("moved", {}, PAGE, id=ID)\n'
                     'd = Spec("qkv.slip", "choice", qkv_slip)\n', encoding="utf-8")
    assert written_task_ids(probe, {"scores", "qkv"}) == [
        (1, "scores.shape"), (3, "Task"), (4, "qkv.slip")]


def id_lists(path: Path, ids: set[str]) -> list[tuple[int, list[str]]]:
    """The collections (tuple, list, set, dict keys) in `path` that hold two or more page ids."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        found = [e.value for e in items if isinstance(e, ast.Constant) and e.value in ids]
        if len(found) >= 2:
            out.append((node.lineno, found))
    return out


def test_no_other_module_of_the_app_lists_page_ids():
    ids = {p.id for p in ALL_PAGES}
    files = [p for top in ("lens", "pages") for p in (ROOT / top).rglob("*.py")]
    found = {str(p.relative_to(ROOT)): lists for p in files
             if p.name != "steps.py" and (lists := id_lists(p, ids))}
    assert found == {}


def test_the_list_check_sees_a_dict_and_a_tuple_of_ids(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('LINES = {"qkv": 1, "scores": 2}\nORDER = ("stack", "x", "ffn")\n'
                     'ONE = ("stack",)\n', encoding="utf-8")
    assert id_lists(probe, {"qkv", "scores", "stack", "ffn"}) == [
        (1, ["qkv", "scores"]), (2, ["stack", "ffn"])]
