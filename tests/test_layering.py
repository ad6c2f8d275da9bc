"""The core's layers, read from its source: the note's math (encoder_core/pipeline/ and the
config, params and trace it stands on) imports neither checkpoint reading nor the views; no
module of the core imports the app, Streamlit or a plotting library; and no two of its modules
import each other, however indirectly. Every `import` node counts, function-level ones too."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "encoder_core"
MATH = ("encoder_core.pipeline", "encoder_core.config", "encoder_core.params",
        "encoder_core.trace")
NOT_FOR_THE_MATH = ("encoder_core.checkpoints", "encoder_core.views", "encoder_core.shapes_model",
                    "encoder_core.export", "encoder_core.bench")
NEVER_IN_THE_CORE = ("lens", "pages", "streamlit", "matplotlib", "torch", "timm", "transformers")


def module_name(path: Path) -> str:
    parts = path.relative_to(CORE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, here: str | None = None) -> set[str]:
    """Every module `path` (the core module `here`, by default its own) imports: absolute
    names; `from x import y` counts x and x.y."""
    here = here or module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module
            found.add(name)
            found |= {f"{name}.{a.name}" for a in node.names}
    return found


def graph() -> dict[str, set[str]]:
    """module -> the core modules it imports."""
    modules = {module_name(p): p for p in CORE.rglob("*.py")}
    return {m: {i for i in imports(p) if i in modules and i != m} for m, p in modules.items()}


def under(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


def test_the_math_imports_no_checkpoint_reading_and_no_view():
    math = {m: deps for m, deps in graph().items() if under(m, MATH)}
    assert "encoder_core.pipeline.attention" in math and "encoder_core.pipeline.encoder" in math
    wrong = {m: sorted(d for d in deps if under(d, NOT_FOR_THE_MATH)) for m, deps in math.items()}
    assert {m: d for m, d in wrong.items() if d} == {}


def test_the_core_imports_no_app_streamlit_plotting_or_framework():
    wrong = {module_name(p): sorted(i for i in imports(p) if under(i, NEVER_IN_THE_CORE))
             for p in CORE.rglob("*.py")}
    assert {m: i for m, i in wrong.items() if i} == {}


def test_no_two_core_modules_import_each_other():
    g = graph()
    # a package's __init__ re-exports its modules; a module importing its own package's name is
    # an import of those, not a cycle worth the name: drop package -> member edges
    edges = {m: {d for d in deps if not m.startswith(d + ".") and not d.startswith(m + ".")}
             for m, deps in g.items()}

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            m = todo.pop()
            if m == goal:
                return True
            if m not in seen:
                seen.add(m)
                todo += edges.get(m, ())
        return False

    cycles = sorted((m, d) for m, deps in edges.items() for d in deps if reaches(d, m))
    assert cycles == []


def test_the_checks_see_an_import_inside_a_function_and_a_relative_one(tmp_path):
    path = tmp_path / "probe.py"
    path.write_text("def f():\n    from ..views import analysis\n    import lens.chrome\n",
                    encoding="utf-8")
    found = imports(path, "encoder_core.pipeline.probe")
    assert "encoder_core.views.analysis" in found and "lens.chrome" in found
    assert under("encoder_core.views.analysis", NOT_FOR_THE_MATH)


def test_the_core_names_no_page_of_the_app():
    """What a page costs is the app's to declare (lens/page_costs.py): the core's text names no
    `lens` module, constant or path and no `pages/` file, and none of its strings is a page's
    id — beyond the names the core gives its own pipeline steps and trace fields, which some
    pages share ("patches", "scores")."""
    from encoder_core.trace import EncoderTrace, LayerTrace
    from encoder_core.views.analysis import STEP_IDS, VIT_STEP_IDS
    from lens.steps import ALL_PAGES

    own = {*STEP_IDS, *VIT_STEP_IDS, *(f.name for f in fields(EncoderTrace)),
           *(f.name for f in fields(LayerTrace))}
    page_only = {p.id for p in ALL_PAGES} - own
    assert {"overview", "multihead", "stack", "compare", "class"} <= page_only
    named, mentions = {}, {}
    for path in CORE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        strings = {n.value for n in ast.walk(ast.parse(text))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        if found := sorted(strings & page_only):
            named[module_name(path)] = found
        if found := sorted(set(re.findall(r"\blens[./]\w+|\bpages/\w+", text))):
            mentions[module_name(path)] = found
    assert named == {} and mentions == {}
