"""Everything imports as a package, from the repository root: no file edits `sys.path` and no
script, test or benchmark sets `PYTHONPATH`. The helpers are `tests.support.*`, a benchmark
runs as `python -m benchmarks.<name>`, and pytest's own `pythonpath = ["."]` (pyproject.toml)
is the one place the root is put on the path. The check is an `ast` walk of every Python file
of the repository (and of the Python scripts in scripts/ without a .py), and it is shown to
catch each form it looks for. Last, what a test module imports decides one of its markers: a
module that imports torch is marked `parity` (the fast lane and scripts/check-floors leave
those out)."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP = {".venv", ".git", "node_modules", "test-artifacts", "build", "dist", "__pycache__"}
# Where a PYTHONPATH would be juggled (the app's own code has no reason to name it either).
ENV_DIRS = ("scripts", "tests", "benchmarks")
# Spelled in two pieces so that this file passes its own check.
ENV_VAR = "PYTHON" + "PATH"
# sys.path's methods that change it, and site's function that appends to it.
MUTATORS = {"insert", "append", "extend", "remove", "pop", "clear", "reverse", "sort",
            "__setitem__", "__delitem__", "__iadd__"}


def python_files(root: Path = ROOT) -> list[Path]:
    """Every *.py under root outside SKIP, and the files of scripts/ whose first line runs
    Python (scripts/subset-font)."""
    files = []
    for folder, dirs, names in os.walk(root):  # pruned: .venv alone holds ~100,000 files
        dirs[:] = [d for d in dirs if d not in SKIP and not d.endswith(".egg-info")]
        files += [Path(folder, n) for n in names if n.endswith(".py")]
    for p in (root / "scripts").glob("*"):
        if p.is_file() and p.suffix != ".py":
            first = p.read_text(encoding="utf-8", errors="replace").partition("\n")[0]
            if first.startswith("#!") and "python" in first:
                files.append(p)
    return sorted(files)


def _names_of_sys(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names bound to the sys module, names bound to sys.path itself) in this file."""
    modules, paths = {"sys"}, set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "sys"}
        elif isinstance(node, ast.ImportFrom) and node.module == "sys":
            paths |= {a.asname or a.name for a in node.names if a.name == "path"}
    return modules, paths


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (prose may name PYTHONPATH)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def path_edits(source: str, name: str = "<source>", check_env: bool = True) -> list[str]:
    """`name:line: what` for every edit of sys.path in source (a call of one of its methods,
    an assignment to it or to a slice or item of it, a `del`, `site.addsitedir`), and, with
    check_env, every string constant naming PYTHONPATH (docstrings aside)."""
    tree = ast.parse(source, filename=name)
    modules, paths = _names_of_sys(tree)

    def is_sys_path(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id in paths
        return (isinstance(node, ast.Attribute) and node.attr == "path"
                and isinstance(node.value, ast.Name) and node.value.id in modules)

    def touches(target: ast.AST) -> bool:  # sys.path, sys.path[...], (a, sys.path), ...
        if isinstance(target, ast.Subscript | ast.Starred):
            return touches(target.value)
        if isinstance(target, ast.Tuple | ast.List):
            return any(touches(t) for t in target.elts)
        return is_sys_path(target)

    found = []
    docstrings = _docstrings(tree) if check_env else set()
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and is_sys_path(f.value) and f.attr in MUTATORS:
                found.append(f"{name}:{line}: sys.path.{f.attr}(...)")
            elif isinstance(f, ast.Attribute) and f.attr == "addsitedir":
                found.append(f"{name}:{line}: site.addsitedir(...)")
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            if any(touches(t) for t in targets):
                found.append(f"{name}:{line}: {type(node).__name__.lower()} to sys.path")
        elif (check_env and isinstance(node, ast.Constant) and isinstance(node.value, str)
              and ENV_VAR in node.value and id(node) not in docstrings):
            found.append(f"{name}:{line}: the string {node.value!r}")
    return found


def test_the_walk_covers_the_tests_the_benchmarks_the_scripts_and_the_app():
    files = {p.relative_to(ROOT).as_posix() for p in python_files()}
    assert {"app.py", "tests/conftest.py", "tests/support/serverctl.py",
            "benchmarks/load.py", "scripts/screenshots.py", "scripts/subset-font",
            "lens/steps.py", "encoder_core/__init__.py"} <= files
    assert not any(f.startswith(".venv/") for f in files)


def test_no_file_edits_sys_path_and_no_script_test_or_benchmark_sets_pythonpath():
    found = []
    for p in python_files():
        rel = p.relative_to(ROOT)
        found += path_edits(p.read_text(encoding="utf-8"), rel.as_posix(),
                            check_env=rel.parts[0] in ENV_DIRS)
    assert found == []


def shell_scripts(root: Path = ROOT) -> list[Path]:
    """The shell scripts of scripts/ and .ci/ (the files there that python_files leaves out)."""
    python = set(python_files(root))
    return sorted(p for folder in ("scripts", ".ci") for p in (root / folder).glob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and p not in python)


def test_no_shell_script_sets_pythonpath_or_edits_sys_path():
    scripts = shell_scripts()
    assert {"scripts/test", "scripts/app", "scripts/serve", ".ci/run"} <= {
        p.relative_to(ROOT).as_posix() for p in scripts}
    found = [f"{p.relative_to(ROOT)}:{n}: {line.strip()}" for p in scripts
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
             if ENV_VAR in line or re.search(r"sys\.path\s*(\.\w+\(|\[|\+?=)", line)]
    assert found == []


@pytest.mark.parametrize("snippet", [
    "import sys\nsys.path.insert(0, 'tests')\n",
    "import sys\nsys.path.append('scripts')\n",
    "import sys\nsys.path[:0] = ['a', 'b']\n",
    "import sys\nsys.path = ['a', *sys.path]\n",
    "import sys\nsys.path += ['a']\n",
    "import sys\ndel sys.path[0]\n",
    "import sys as s\ns.path.extend(['a'])\n",
    "from sys import path\npath.insert(0, 'a')\n",
    "import site\nsite.addsitedir('a')\n",
    "def f():\n    import sys\n    sys.path.insert(0, 'a')\n",
    "import os\nenv = {**os.environ, '" + ENV_VAR + "': '.'}\n",
    "import os\nos.environ['" + ENV_VAR + "'] = '.'\n",
])
def test_the_check_catches_each_way_of_editing_the_path(snippet):
    assert len(path_edits(snippet)) == 1, snippet


@pytest.mark.parametrize("snippet", [
    "import sys\nprint(sys.path[0])\n",  # reading it is no edit
    "import os\nos.path.join('a', 'b')\n",
    "from pathlib import Path\nPath('a').parent\n",
    '"""Never set ' + ENV_VAR + ': run python -m benchmarks.load."""\n',
])
def test_the_check_lets_reading_and_prose_pass(snippet):
    assert path_edits(snippet) == []


# --- what a test module imports decides its marker ---------------------------------------------

TORCH = ("torch", "timm", "transformers", "torchvision", "tests.support.torch_shim")


def imports_torch(tree: ast.AST) -> bool:
    """Whether the module imports PyTorch or a library built on it, anywhere in it."""
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        if any(n == t or n.startswith(t + ".") for n in names for t in TORCH):
            return True
    return False


def module_marks(tree: ast.AST) -> set[str]:
    """The markers of `pytestmark = pytest.mark.X` (or a list of them) at the module's top."""
    marks = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            marks |= {n.attr for n in ast.walk(node.value) if isinstance(n, ast.Attribute)
                      and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"}
    return marks


def test_every_test_module_that_imports_torch_is_marked_parity():
    modules = {p.relative_to(ROOT).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
               for p in sorted((ROOT / "tests").rglob("test_*.py"))}
    torch_users = {name for name, tree in modules.items() if imports_torch(tree)}
    assert {"tests/test_checkpoint_parity.py", "tests/test_resample.py",
            "tests/test_torchfile.py"} <= torch_users
    assert {name for name in torch_users if "parity" not in module_marks(modules[name])} == set()
