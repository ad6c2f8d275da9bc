"""The maps of the code name every module: `lens/__init__.py`'s docstring every module and
package of lens/, and docs/code-map.md every module of encoder_core/, lens/ and pages/ — so a
new module cannot be added without its line in the map (issue 49: the hand-kept maps had
drifted, 18 of 38 and 17 of 92 modules missing)."""

from __future__ import annotations

import re
from pathlib import Path

import lens

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("encoder_core", "lens", "pages")


def modules(top: str) -> list[Path]:
    """Every module file of a package, its `__init__.py` files left out (a package is named by
    its folder), test and asset folders excluded."""
    return sorted(p for p in (ROOT / top).rglob("*.py")
                  if p.name != "__init__.py" and "assets" not in p.parts)


def named_in_map(path: Path, text: str, top: str) -> bool:
    """Whether the map names the module: its path below its package (`sections/pca.py`), or its
    file name (`pca.py`), or — for a module listed in a sentence of its folder's — its stem in
    backticks (`heatmaps`)."""
    rel = path.relative_to(ROOT / top).as_posix()
    return (rel in text or f"`{path.name}`" in text or f"{path.name}" in text
            or f"`{path.stem}`" in text)


def missing_in_code_map(text: str) -> list[str]:
    return [f"{top}/{p.relative_to(ROOT / top).as_posix()}" for top in PACKAGES
            for p in modules(top) if not named_in_map(p, text, top)]


def lens_entries() -> list[str]:
    """lens/'s modules (`name.py`) and packages (`name/`), one level down."""
    root = ROOT / "lens"
    return sorted([p.name for p in root.glob("*.py") if p.name != "__init__.py"]
                  + [f"{p.name}/" for p in root.iterdir()
                     if p.is_dir() and (p / "__init__.py").exists()])


def missing_in_lens_docstring(doc: str) -> list[str]:
    return [e for e in lens_entries() if not re.search(rf"(?<![\w/]){re.escape(e)}", doc)]


def test_the_code_map_names_every_module():
    text = (ROOT / "docs" / "code-map.md").read_text(encoding="utf-8")
    assert missing_in_code_map(text) == []


def test_lens_docstring_names_every_module_and_package():
    assert missing_in_lens_docstring(lens.__doc__) == []


def test_the_map_checks_find_a_missing_module():
    text = (ROOT / "docs" / "code-map.md").read_text(encoding="utf-8")
    assert "lens/roles.py" in missing_in_code_map(text.replace("roles.py", "r.py")
                                                  .replace("`roles`", ""))
    assert "roles.py" in missing_in_lens_docstring(lens.__doc__.replace("roles.py", ""))
