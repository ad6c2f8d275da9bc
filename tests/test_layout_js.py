"""lens.layout_js: the page's layout behaviours are one in-page component built from
lens/layout_web/layout.js as it is, shipped as package data, carrying numbers and no text."""

from __future__ import annotations

import importlib.util
import sys
import tomllib
from pathlib import Path

from lens import layout_js

WEB = Path(layout_js.__file__).parent / "layout_web"


def test_the_component_is_built_from_layout_js_as_it_is(monkeypatch):
    calls = []
    monkeypatch.setattr(layout_js.st.components.v2, "component",
                        lambda name, **kw: calls.append((name, kw)))
    # a second copy of the module, so that the real one (which others hold) is left as it is
    spec = importlib.util.spec_from_file_location("lens._layout_js_copy", layout_js.__file__)
    copy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, copy)
    spec.loader.exec_module(copy)
    js = (WEB / "layout.js").read_text(encoding="utf-8")
    [(name, kw)] = calls
    assert name == "encoder_lens_layout" and kw["js"] == js == layout_js.JS
    assert "export default function (component)" in js


def test_it_is_handed_its_numbers_and_no_text(monkeypatch):
    mounted = []
    monkeypatch.setattr(layout_js, "_component", lambda **kw: mounted.append(kw))
    layout_js.layout_behaviours()
    [kw] = mounted
    assert kw["data"] == {"min_scale": layout_js.MIN_SCALE, "mobile": layout_js.MOBILE_PX,
                          "wide": layout_js.WIDE_PX}
    assert layout_js.MOBILE_PX < 820 < layout_js.WIDE_PX <= 1400  # a tablet, not a desktop
    assert "innerHTML" not in layout_js.JS


def test_package_data_ships_layout_web():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["lens"]
    shipped = {f for pattern in globs for f in WEB.parent.glob(pattern)}
    assert set(WEB.iterdir()) <= shipped
