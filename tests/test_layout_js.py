"""lens.layout_js: the page's layout behaviours are one in-page component built from
lens/layout_web/layout.js as it is, shipped as package data, carrying numbers and no text; a
tablet's sidebar is held out of the page by a style (layout_web/tablet_sidebar.css) until the
component has decided how it starts, unless the learner chose."""

from __future__ import annotations

import contextlib
import importlib.util
import re
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
    layout_js.layout_behaviours("zh")
    [kw] = mounted
    assert kw["data"] == {"min_scale": layout_js.MIN_SCALE, "mobile": layout_js.MOBILE_PX,
                          "wide": layout_js.WIDE_PX, "chose_cookie": layout_js.CHOSE_COOKIE,
                          "lang": "zh-CN", "lang_cookie": layout_js.LANG_COOKIE,
                          "kept_lang": "zh"}  # a language tag and code, not a text
    assert re.fullmatch(r"[a-z_]+", layout_js.CHOSE_COOKIE)  # a cookie's name, not a text
    assert layout_js.MOBILE_PX < 820 < layout_js.WIDE_PX <= 1400  # a tablet, not a desktop
    assert "innerHTML" not in layout_js.JS


def test_package_data_ships_layout_web():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["lens"]
    shipped = {f for pattern in globs for f in WEB.parent.glob(pattern)}
    assert set(WEB.iterdir()) <= shipped


def test_the_hold_covers_exactly_the_widths_the_component_collapses():
    """The style's media query is the component's range (above MOBILE_PX, below WIDE_PX), it
    hides the sidebar only until the root is marked, and for at most HOLD_S seconds."""
    css = layout_js.TABLET_CSS
    assert "$" not in css  # every placeholder filled
    [(lo, hi)] = re.findall(r"@media \(min-width: (\d+)px\) and \(max-width: (\d+)px\)", css)
    assert (int(lo), int(hi)) == (layout_js.MOBILE_PX + 1, layout_js.WIDE_PX - 1)
    assert 'html:not([data-el-sidebar]) section[data-testid="stSidebar"]' in css
    assert f"animation: el-sidebar-held {layout_js.HOLD_S}s;" in css
    assert "dataset.elSidebar" in layout_js.JS  # the component marks the root
    # Streamlit's HTML sanitiser drops a <style> whose text looks like markup
    assert "<" not in css


class _Context:
    def __init__(self, cookies: dict[str, str]):
        self.cookies = cookies


def test_the_hold_is_sent_unless_the_learner_chose(monkeypatch):
    sent = []
    monkeypatch.setattr(layout_js.st, "markdown", lambda body, **kw: sent.append((body, kw)))
    monkeypatch.setattr(layout_js.st, "container", lambda key: contextlib.nullcontext(key))
    monkeypatch.setattr(layout_js.st, "context", _Context({}))
    layout_js.hold_tablet_sidebar()
    [(body, kw)] = sent
    assert body == f"<style>{layout_js.TABLET_CSS}</style>" and kw == {"unsafe_allow_html": True}
    assert f".st-key-{layout_js.HOLD_KEY}" in body  # its own container hidden: no gap
    monkeypatch.setattr(layout_js.st, "context", _Context({layout_js.CHOSE_COOKIE: "1"}))
    layout_js.hold_tablet_sidebar()
    assert len(sent) == 1, "a learner who chose the sidebar's state got the hold"


def test_a_page_framed_by_nothing_gets_the_language_part_alone(monkeypatch):
    """The projector (no sidebar) mounts the component for `<html lang>` only."""
    mounted = []
    monkeypatch.setattr(layout_js, "_component", lambda **kw: mounted.append(kw))
    layout_js.page_language("zh")
    [kw] = mounted
    assert kw["data"] == {"lang": "zh-CN", "only_lang": True}
    assert kw["key"] != "layout_behaviours"  # both may be on one page without a clash
    assert "if (onlyLang) return undefined;" in layout_js.JS
    assert re.fullmatch(r"[a-z_]+", layout_js.LANG_COOKIE)


def test_the_connection_watcher_asks_the_health_url_under_the_base_path():
    from lens.connection_js import health_url

    assert health_url("") == "/_stcore/health"
    assert health_url("/lens/") == "/lens/_stcore/health"
    assert health_url("a/b") == "/a/b/_stcore/health"
