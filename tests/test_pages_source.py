"""The pages as modules: one registry names them (lens.steps), each is importable with a
`render(ctx)`, none is reachable by its pages-folder name as a URL, and nothing in them relies on
Streamlit's "magic", which the production config turns off (.streamlit/config.toml,
`runner.magicEnabled = false`)."""

from __future__ import annotations

import ast
import importlib
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
