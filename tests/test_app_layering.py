"""The app's layers, read from its source: no module of `lens/` or `pages/` imports another that
imports it back, however indirectly. Every `import` node counts — function-level ones and those
under `if TYPE_CHECKING:` too — so a cycle cannot hide behind a deferred import. The page's types
(`lens.context`) import nothing of the frame around a page; the runner (`lens.runner`) is
imported by the pages alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.test_layering import imports, module_name

ROOT = Path(__file__).resolve().parent.parent
APP = ("lens", "pages")


def graph() -> dict[str, set[str]]:
    """module -> the modules of lens/ and pages/ it imports (a package: its __init__)."""
    modules = {module_name(p): p for top in APP for p in (ROOT / top).rglob("*.py")}
    return {m: {i for i in imports(p) if i in modules and i != m} for m, p in modules.items()}


def cycles(edges: dict[str, set[str]]) -> list[tuple[set[str], list[str]]]:
    """Each strongly connected group of more than one module (each imports each other,
    however indirectly) and one cycle through it (a → b → … → a); [] when the graph has none
    (Tarjan, then a breadth-first walk)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [(g, _cycle_in(g, edges)) for g in sorted(groups, key=len, reverse=True)]


def _cycle_in(group: set[str], edges: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the group's first module, by breadth-first search."""
    start = min(group)
    paths = {start: [start]}
    todo = [start]
    while todo:
        m = todo.pop(0)
        for d in sorted(edges.get(m, ()) & group):
            if d == start:
                return [*paths[m], start]
            if d not in paths:
                paths[d] = [*paths[m], d]
                todo.append(d)
    raise AssertionError(f"no cycle through {start}")  # a strongly connected group has one


def test_no_two_app_modules_import_each_other():
    found = cycles(graph())
    named = [f"{len(group)} modules import each other ({', '.join(sorted(group))}), e.g. "
             + " → ".join(cycle) for group, cycle in found]
    assert named == [], "import cycles in the app's layer:\n" + "\n".join(named)


def test_the_page_types_import_nothing_of_the_frame():
    frame = {"lens.runner", "lens.chrome", "lens.sidebar", "lens.lesson.ui.cards",
             "lens.handout.ui", "lens.classroom.ui.student", "lens.classroom.ui.teacher"}
    g = graph()
    assert g["lens.context"] & frame == set()
    assert {m for m, deps in g.items() if "lens.runner" in deps} == {
        m for m in g if m.startswith("pages.") and m != "pages"}


def test_the_cycle_check_finds_and_names_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(edges) == [({"a", "b", "c"}, ["a", "b", "c", "a"])]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_a_type_checking_and_a_function_level_import(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                    "    from .context import PageContext\n"
                    "def f():\n    from . import runner\n", encoding="utf-8")
    found = imports(path, "lens.probe")
    assert {"lens.context", "lens.runner"} <= found


PURE = ("lens.lesson.tasks", "lens.classroom.tally", "lens.settings", "lens.page_costs",
        "lens.explorer")
NOT_IN_PURE = ("streamlit", "matplotlib", "pandas")


def imported_tops(modules: list[str], cwd: Path = ROOT) -> set[str]:
    """The top-level packages a fresh interpreter holds once it has imported `modules`."""
    probe = (f"import sys\nimport {', '.join(modules)}\n"
             "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=cwd, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


# A package with a Streamlit part keeps it in its `ui` (a subpackage, or one module `ui.py`);
# its other modules, its __init__ included, are its pure part: no Streamlit.
SPLIT_PACKAGES = ("lens.lesson", "lens.classroom", "lens.hub", "lens.handout")


def pure_part(folder: Path, package: str) -> list[str]:
    """Every module of the package in `folder` outside its `ui`: the package, its modules and
    its other subpackages' modules."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).with_suffix("").parts
        if parts[0] == "ui":
            continue
        parts = parts[:-1] if parts[-1] == "__init__" else parts
        found.append(".".join((package, *parts)))
    return found


def test_the_pure_part_of_every_split_package_imports_no_streamlit():
    """`lens.lesson`, `lens.classroom`, `lens.hub`: every module outside the package's `ui`,
    all imported in one fresh interpreter, leave Streamlit out of it; each package has its
    `ui`."""
    for package in SPLIT_PACKAGES:
        folder = ROOT.joinpath(*package.split("."))
        assert (folder / "ui").is_dir() or (folder / "ui.py").is_file(), package
        modules = pure_part(folder, package)
        assert modules[0] == package and (len(modules) > 1 or package == "lens.hub"), modules
        assert not any(".ui" in m for m in modules)
        assert "streamlit" not in imported_tops(modules), package


def test_the_purity_check_finds_streamlit_in_a_pure_part(tmp_path):
    """A package whose pure part imports Streamlit (through another of its pure modules) is
    caught; the same import in its `ui` is not."""
    package = tmp_path / "probe_pkg"
    (package / "ui").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "ui" / "__init__.py").write_text("", encoding="utf-8")
    (package / "ui" / "cards.py").write_text("import streamlit\n", encoding="utf-8")
    (package / "rules.py").write_text("X = 1\n", encoding="utf-8")
    modules = pure_part(package, "probe_pkg")
    assert modules == ["probe_pkg", "probe_pkg.rules"]
    assert "streamlit" not in imported_tops(modules, cwd=tmp_path)
    (package / "tally.py").write_text("from . import store\n", encoding="utf-8")
    (package / "store.py").write_text("import streamlit.runtime\n", encoding="utf-8")
    assert "streamlit" in imported_tops(pure_part(package, "probe_pkg"), cwd=tmp_path)


def test_the_tasks_their_judging_and_the_tally_import_no_streamlit():
    """Imported in a fresh interpreter, what a task is (and `judge`), the class's tally, the
    settings and the pages' costs bring in neither Streamlit nor pandas: they are data and
    numbers, tested and reused without a running app. (The explorer's payload colours its maps
    with a matplotlib colour map, so only Streamlit is kept out of it.)"""
    assert imported_tops(list(PURE[:-2])) & set(NOT_IN_PURE) == set()
    assert imported_tops(list(PURE[-2:])) & {"streamlit", "pandas"} == set()


def test_each_steps_tasks_and_sheet_import_no_streamlit():
    """A step's module (`lens.walk.<id>`, found through the registry) holds its tasks and its
    handout sheet: no Streamlit, so both are built and tested without a running app. (Its sheet
    draws with `lens.figures`, so matplotlib is there.)"""
    from lens.steps import STEPS  # noqa: PLC0415

    modules = sorted({s.builder.__module__ for p in STEPS for s in p.tasks}
                     | {p.sheet.__module__ for p in STEPS})
    assert len(modules) == len(STEPS)
    assert "streamlit" not in imported_tops(modules)


def test_the_registry_and_every_walk_module_import_no_streamlit():
    """The registry (`lens.steps`) and each module of `lens.walk` (a step's tasks and sheet,
    and the lesson tasks of a page beyond the note), each imported alone in a fresh
    interpreter: no Streamlit. A task reads a page's own inputs from `PageContext.state` and
    its caches through `PageContext.services`, never from a module of the app's frame."""
    import lens.walk  # noqa: PLC0415

    walk = sorted(f"lens.walk.{p.stem}" for p in Path(lens.walk.__file__).parent.glob("*.py")
                  if p.stem != "__init__")
    assert "lens.walk.learn" in walk
    for module in ["lens.steps", "lens.context", *walk]:  # the context a sheet gets too
        assert "streamlit" not in imported_tops([module]), module


# What a page reaches beyond its trace goes through its context's services (lens.services):
# the server's caches, the compute gate and budget, the weights, the traces.
SERVER_SIDE = {"lens.resources", "lens.traces", "lens.model_weights", "lens.images", "lens.cache",
               "lens.compute_gate", "lens.admission", "lens.fair_queue"}
FRAME = {"lens.runner"}  # what the pages import of the frame around them (it sets them up)


def test_no_page_or_page_section_imports_the_servers_caches():
    """No module under pages/, nor any module a page imports (a page section: widgets, blocks,
    the views…) other than the runner and the header's, imports the caches, the compute gate or
    the weights' and traces' modules: they reach them through `ctx.services`."""
    g = graph()
    pages = {m for m in g if m.startswith("pages.")}
    sections = set().union(*(g[m] for m in pages)) - FRAME
    found = {m: sorted(g[m] & SERVER_SIDE) for m in sorted(pages | sections)
             if g.get(m, set()) & SERVER_SIDE}
    assert found == {}
    assert "lens.widgets" in sections and "lens.sections.similarity" in sections


def test_a_role_is_chosen_by_the_runner_alone_and_nothing_below_it_calls_back():
    """One run is one path: the runner picks the role (`lens.roles`); the modules a role draws
    with (the lesson's and the class's cards) import neither a role nor the runner, however
    indirectly."""
    g = graph()
    assert {m for m, deps in g.items() if "lens.roles" in deps} == {"lens.runner"}
    below: set[str] = set()
    todo = list(g["lens.roles"])
    while todo:
        m = todo.pop()
        if m not in below:
            below.add(m)
            todo += g.get(m, ())
    assert below & {"lens.roles", "lens.runner"} == set()
    assert {"lens.lesson.ui.cards", "lens.classroom.ui.student",
            "lens.classroom.ui.teacher"} <= below


def test_the_router_is_below_every_page_run_and_nothing_calls_back_into_it():
    """`lens.router` runs the page's script (st.navigation), so it is under every run: only the
    entry script and the runner (for a page reached without it) may name it; the header and
    footer (`lens.chrome`) are the runner's, not the router's."""
    g = graph()
    assert {m for m, deps in g.items() if "lens.router" in deps} == {"lens.runner", "lens.entry"}
    assert "lens.router" not in g["lens.chrome"]


def test_the_purity_probe_sees_streamlit():
    probe = "import sys\nimport lens.lesson.ui.cards\nprint('streamlit' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.strip() == "True", out.stderr


# a literal or an f-string: a key built in place is a literal too (keys.py builds those)
KEY_LITERAL = re.compile(r"""session_state\[\s*f?["']"""
                         r"""|session_state\.(get|pop|setdefault)\(\s*f?["']"""
                         r"""|\bstate\[\s*f?["']|\bstate\.(get|pop|setdefault)\(\s*f?["']"""
                         r"""|f?["'][\w{}]+["'] (not )?in (st\.)?(session_)?state\b""")


def literal_keys(text: str) -> list[int]:
    """The lines that read or write a session-state key given as a string literal."""
    return [n for n, line in enumerate(text.splitlines(), 1) if KEY_LITERAL.search(line)]


def test_every_session_state_key_is_named_in_lens_keys():
    found = {str(p.relative_to(ROOT)): lines for top in APP for p in (ROOT / top).rglob("*.py")
             if p.name != "keys.py" and (lines := literal_keys(p.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_key_check_sees_a_literal_key_and_not_a_named_one():
    assert literal_keys('st.session_state["query"] = 1\nx = state.get("_seen")\n'
                        'if "lang" in st.session_state:\n') == [1, 2, 3]
    assert literal_keys('v = st.session_state.get(f"win_{axis}_{key}", 0)\n'
                        'x = state[f"cmp_{side}"]\nif f"a_{b}" in state:\n') == [1, 2, 3]
    assert literal_keys("st.session_state[keys.QUERY] = 1\nstate.get(keys.SEEN, {})\n") == []


MAX_MODULE_LINES = 400


def test_no_module_of_the_app_is_over_400_lines():
    """A module does one job and is read in one sitting: the longer ones are split by job."""
    long = {str(p.relative_to(ROOT)): n for top in APP for p in (ROOT / top).rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}
