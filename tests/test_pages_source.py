"""The pages as modules: one registry names them (lens.steps), each is importable with a
`render(ctx)`, none is reachable by its pages-folder name as a URL, and nothing in them relies on
Streamlit's "magic", which the production config turns off (.streamlit/config.toml,
`runner.magicEnabled = false`)."""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest
from streamlit.source_util import page_icon_and_name

from lens.steps import ALL_PAGES, STEPS, page_for_script

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = [ROOT / "app.py", *(ROOT / p.path for p in ALL_PAGES)]


def bare_expressions(source: str) -> list[int]:
    """Lines of expression statements that magic would write to the page: any bare
    expression except a docstring, a call, an await or a yield (magic leaves those alone)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            if not isinstance(stmt, ast.Expr):
                continue
            value = stmt.value
            docstring = i == 0 and isinstance(value, ast.Constant) and isinstance(value.value, str)
            if not docstring and not isinstance(value, (ast.Call, ast.Await, ast.Yield,
                                                        ast.YieldFrom)):
                lines.append(stmt.lineno)
    return lines


def test_every_page_module_is_listed_in_lens_steps():
    """The modules the checks read are the pages the app serves: no file left out, none named
    twice, and each found again from its own path."""
    listed = [ROOT / p.path for p in ALL_PAGES]
    on_disk = {p for p in (ROOT / "pages").glob("*.py") if p.name != "__init__.py"}
    assert len(set(listed)) == len(listed) and set(listed) == on_disk
    assert all(page_for_script(str(path)).path == p.path for path, p in zip(listed, ALL_PAGES,
                                                                               strict=True))
    assert [p.in_note for p in ALL_PAGES] == [p in STEPS for p in ALL_PAGES]


def pages_folder_name(path: Path) -> str:
    """The URL path Streamlit's pages-folder mode gives a file, by Streamlit's own rule: its
    stem without a leading number and underscores ("07_multihead.py" -> "multihead",
    "_class.py" -> "class")."""
    return page_icon_and_name(path)[1]


def test_every_pages_url_path_is_its_files_pages_folder_name():
    """A fresh server's first visit runs in Streamlit's pages-folder mode, which looks the URL
    up among the files of pages/ by their pages-folder names: found, it runs the file, which
    hands over to app.py (tests/browser/test_first_visit.py); not found, the learner gets a
    "Page not found" dialog. So every page's URL path must be its file's pages-folder name, and
    no other file may sit in pages/ (its name would be a URL that runs it alone)."""
    assert {pages_folder_name(ROOT / p.path): p.id for p in ALL_PAGES} == {
        p.id: p.id for p in ALL_PAGES}
    assert pages_folder_name(Path("pages/multihead_page.py")) != "multihead"  # it can fail
    assert pages_folder_name(Path("pages/07_multihead.py")) == "multihead"
    assert pages_folder_name(Path("pages/_class.py")) == "class"  # /class: not a keyword stem


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda p: p.id)
def test_every_page_imports_as_a_module_with_a_render_function(page):
    module = importlib.import_module(page.module)
    assert callable(module.render) and module.__file__ == str(ROOT / page.path)
    source = (ROOT / page.path).read_text(encoding="utf-8")
    assert 'if __name__ == "__main__":' in source
    # run_page(__file__, render), or with the plan of the variants it computes (Compare)
    plan = getattr(module, "plan", None)
    assert ("run_page(__file__, render, plan)" if callable(plan)
            else "run_page(__file__, render)") in source


def test_magic_is_off_in_the_production_config():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_page_writes_by_magic(script):
    assert bare_expressions(script.read_text()) == [], script.name


def test_the_check_finds_what_magic_would_show():
    source = '"""doc"""\nimport streamlit as st\nx = 1\nx\n"text"\nst.write(x)\nif x:\n    x + 1\n'
    assert bare_expressions(source) == [4, 5, 8]


# --- pages read top to bottom ---------------------------------------------------------------
# A page's render composes named section functions that take what they use as arguments:
# minGPT's `forward` reads top to bottom with every name bound before it is used. So no function
# of a page (or of a lens module that draws a page's sections) is over MAX_FUNCTION_LINES lines,
# none rebinds an enclosing name with `nonlocal`, and no inner function or lambda reads a name
# its enclosing function binds only after it (a closure that reads the page's later state).

MAX_FUNCTION_LINES = 80
# the worked arithmetic, and below every page section (lens/sections)
SECTION_MODULES = ("lens/blocks.py", "lens/blocks_rows.py")
READ_TOP_TO_BOTTOM = (sorted((ROOT / "pages").glob("*.py")) + [ROOT / p for p in SECTION_MODULES]
                      + sorted((ROOT / "lens" / "sections").glob("*.py")))

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _scope(node: ast.AST) -> tuple[dict[str, list[int]], set[str], list[ast.AST]]:
    """What one function's own scope binds (name -> lines), the names it reads (those its
    comprehensions read included), and its inner functions (lambdas included)."""
    bound: dict[str, list[int]] = {}
    loads: set[str] = set()
    inner: list[ast.AST] = []
    args = node.args
    for a in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
        if a is not None:
            bound.setdefault(a.arg, []).append(node.lineno)

    def visit(n: ast.AST) -> None:
        if isinstance(n, _FUNCTIONS):
            inner.append(n)  # its defaults and decorators are read here, its body is its own
            for expr in [*n.args.defaults, *n.args.kw_defaults,
                         *getattr(n, "decorator_list", [])]:
                if expr is not None:
                    visit(expr)
            if not isinstance(n, ast.Lambda):
                bound.setdefault(n.name, []).append(n.lineno)
            return
        if isinstance(n, _COMPREHENSIONS):
            comp_bound = {t.id for g in n.generators for t in ast.walk(g.target)
                          if isinstance(t, ast.Name)}
            comp_loads: set[str] = set()
            for sub in ast.walk(n):
                if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                    comp_loads.add(sub.id)
                elif isinstance(sub, ast.NamedExpr):  # := binds in the enclosing function
                    bound.setdefault(sub.target.id, []).append(sub.lineno)
            loads.update(comp_loads - comp_bound)
            return
        if isinstance(n, ast.ClassDef):
            bound.setdefault(n.name, []).append(n.lineno)
            return
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                loads.add(n.id)
            else:
                bound.setdefault(n.id, []).append(n.lineno)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                name = alias.asname or alias.name.split(".")[0]
                bound.setdefault(name, []).append(n.lineno)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.setdefault(n.name, []).append(n.lineno)
        for child in ast.iter_child_nodes(n):
            visit(child)

    for stmt in node.body if isinstance(node.body, list) else [node.body]:
        visit(stmt)
    return bound, loads, inner


def _free_names(node: ast.AST) -> set[str]:
    """The names a function reads from the functions around it (its inner functions' too)."""
    bound, loads, inner = _scope(node)
    nonlocal_names = {name for n in ast.walk(node) if isinstance(n, ast.Nonlocal)
                      for name in n.names}
    reads = loads.union(*(_free_names(f) for f in inner))
    return reads - (set(bound) - nonlocal_names)


def read_order_offenders(source: str, path: str = "<page>") -> list[str]:
    """Everything in `source` that keeps a page from reading top to bottom: functions over
    MAX_FUNCTION_LINES lines, `nonlocal`, inner functions that read a name their enclosing
    function binds after them."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                found.append(f"{path}:{node.lineno} {node.name}: {lines} lines")
        if isinstance(node, ast.Nonlocal):
            found.append(f"{path}:{node.lineno} nonlocal {', '.join(node.names)}")
        if isinstance(node, _FUNCTIONS):
            bound, _, inner = _scope(node)
            for f in inner:
                for name in sorted(_free_names(f) & set(bound)):
                    later = [line for line in bound[name] if line > f.end_lineno]
                    if later:
                        what = getattr(f, "name", "lambda")
                        found.append(f"{path}:{f.lineno} {what} reads {name!r}, bound later "
                                     f"(line {later[0]})")
    return found


def test_pages_read_top_to_bottom():
    """Each page's render and sections are short, take what they use as arguments, and no
    closure reads a name bound after it or rebinds one."""
    found = [offence for path in READ_TOP_TO_BOTTOM
             for offence in read_order_offenders(path.read_text(encoding="utf-8"),
                                                 str(path.relative_to(ROOT)))]
    assert found == [], "\n".join(found)


def test_the_read_order_check_finds_long_functions_nonlocal_and_late_names():
    source = ("def render(ctx):\n"            # 1
              "    j = 0\n"                    # 2
              "    def formulas():\n"          # 3
              "        nonlocal j\n"           # 4
              "        j = pick(head)\n"       # 5: head is bound at line 8
              "    section(lambda: draw(i, j))\n"  # 6: i is bound at line 7
              "    i = ctx.row(0)\n"           # 7
              "    head = 1\n"                 # 8
              "    section(lambda: draw(i, [k for k in range(head)]))\n"  # 9: all bound before
              "    def shadowed(head):\n"      # 10: its own head
              "        return head\n"          # 11
              + "    pass\n" * 70              # 12 … 81: render is 81 lines
              + "def short(x):\n    return [x for _ in range(3)]\n")
    assert read_order_offenders(source) == [
        "<page>:1 render: 81 lines",
        "<page>:3 formulas reads 'head', bound later (line 8)",
        "<page>:6 lambda reads 'i', bound later (line 7)",
        "<page>:4 nonlocal j",
    ]


# --- a render returns -------------------------------------------------------------------------
# The runner's end — the walk's PDF built when asked (lens.handout.ui.build_asked) — runs after
# `render(ctx)` returns. A page that ended the script with st.stop() skipped it (issue 49): the
# sidebar's button did nothing on that page. So no page stops the script: a variant is a section
# function the render chooses (timm's ResPostBlock beside Block), and a page with a footer draws
# it once, as its render's last statement, whatever the variant.

def stop_calls(source: str) -> list[int]:
    """Lines that stop the script: `st.stop` (or `streamlit.stop`) used in any way, or `stop`
    imported from streamlit."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and node.attr == "stop"
                and isinstance(node.value, ast.Name) and node.value.id in ("st", "streamlit")):
            found.append(node.lineno)
        elif (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit")
              and any(alias.name == "stop" for alias in node.names)):
            found.append(node.lineno)
    return sorted(found)


def is_footer_call(node: ast.AST) -> bool:
    """`chrome.footer(ctx)`."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr == "footer" and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "chrome")


def footer_offences(source: str, path: str = "<page>") -> list[str]:
    """A footer drawn anywhere but as the render's last statement, or more than once."""
    tree = ast.parse(source)
    calls = [n for n in ast.walk(tree) if is_footer_call(n)]
    if not calls:
        return []  # a page without a footer (★ ViT, Compare, the class)
    render = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "render")
    last = render.body[-1]
    if len(calls) == 1 and isinstance(last, ast.Expr) and last.value is calls[0]:
        return []
    return [f"{path}:{line} chrome.footer" for line in sorted(c.lineno for c in calls)]


@pytest.mark.parametrize("path", sorted((ROOT / "pages").glob("*.py")), ids=lambda p: p.name)
def test_no_page_stops_the_script_and_each_footer_ends_its_render(path):
    source = path.read_text(encoding="utf-8")
    assert stop_calls(source) == [], f"{path.name} calls st.stop(): return from render instead"
    assert footer_offences(source, path.name) == []


def test_the_stop_and_footer_checks_find_what_they_look_for():
    source = ("import streamlit as st\n"                             # 1
              "from streamlit import stop\n"                         # 2
              "def render(ctx):\n"                                   # 3
              "    if ctx.cfg.norm_first:\n"                         # 4
              "        chrome.footer(ctx)\n"                         # 5
              "        st.stop()\n"                                  # 6
              "    halt = st.stop\n"                                 # 7
              "    st.stop_watch()\n"                                # 8: another name
              "    chrome.footer(ctx)\n")                            # 9
    assert stop_calls(source) == [2, 6, 7]
    assert footer_offences(source) == ["<page>:5 chrome.footer", "<page>:9 chrome.footer"]
    ends = "def render(ctx):\n    if x:\n        a(ctx)\n    else:\n        b(ctx)\n"
    assert footer_offences(ends + "    chrome.footer(ctx)\n") == []
    assert footer_offences(ends) == []  # no footer at all
    assert footer_offences("def render(ctx):\n    chrome.footer(ctx)\n    more(ctx)\n") == [
        "<page>:2 chrome.footer"]


# The walk's length is said once, by the registry (`len(STEPS)`): a docstring or a text that
# says "Step 4 of 10" or "the ten steps" goes stale the day a step is added.
RESTATED = re.compile(r"\bstep \d+ of \d+\b|\b(ten|10) steps\b|十个步骤", re.IGNORECASE)


def restated_counts(text: str) -> list[str]:
    return [m.group(0) for m in RESTATED.finditer(text)]


def test_nothing_restates_the_number_of_steps():
    roots = [ROOT / "pages", ROOT / "lens"]
    found = {str(p.relative_to(ROOT)): hits for root in roots
             for p in [*root.rglob("*.py"), *root.rglob("*.toml")]
             if (hits := restated_counts(p.read_text(encoding="utf-8")))}
    assert found == {}


def test_the_count_check_finds_a_restated_count():
    assert restated_counts('"""Step 4 of 10 — the positional encoding."""') == ["Step 4 of 10"]
    assert restated_counts("Walk through the ten steps") == ["ten steps"]
    assert restated_counts("依次浏览十个步骤") == ["十个步骤"]
    assert restated_counts("then ten more steps on this image") == []  # How it learns
