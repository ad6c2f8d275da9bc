"""The page scripts as Python source: nothing in them relies on Streamlit's "magic", which the
production config turns off (.streamlit/config.toml, `runner.magicEnabled = false`)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from lens.steps import ALL_PAGES

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


def test_every_page_script_is_listed_in_lens_steps():
    """The scripts the checks above read are the pages the app serves: no script left out."""
    listed = {ROOT / p.path for p in ALL_PAGES}
    on_disk = set((ROOT / "app_pages").glob("*.py"))
    assert len(listed) == 12 and listed == on_disk


def test_no_pages_folder_so_app_py_routes_every_link():
    """A folder named pages/ beside app.py makes Streamlit run its pages-folder mode, in which a
    direct link (/multihead) runs the page without app.py and its st.navigation."""
    assert not (ROOT / "pages").exists()


def test_magic_is_off_in_the_production_config():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_no_page_writes_by_magic(script):
    assert bare_expressions(script.read_text()) == [], script.name


def test_the_check_finds_what_magic_would_show():
    source = '"""doc"""\nimport streamlit as st\nx = 1\nx\n"text"\nst.write(x)\nif x:\n    x + 1\n'
    assert bare_expressions(source) == [4, 5, 8]
