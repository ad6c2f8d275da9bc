"""The attention explorer's component in the page: one `st.components.v2` component (in the
page, not an iframe) that shows a payload of `lens.explorer` (the blob it reads: the picture and
every query's maps), repaints the maps of the hovered patch in the browser (no rerun) and
reports a committed query (a click, a tap or the arrow keys) back to the server.

Its browser side is three files of `lens/explorer_web/` (explorer.html, explorer.css,
explorer.js), read once at import as package resources and linted by scripts/test (ESLint).
"""

from __future__ import annotations

from importlib.resources import files

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

WEB = files("lens") / "explorer_web"  # the component's browser side, as package data
HTML = (WEB / "explorer.html").read_text(encoding="utf-8")
CSS = (WEB / "explorer.css").read_text(encoding="utf-8")
JS = (WEB / "explorer.js").read_text(encoding="utf-8")

_component = st.components.v2.component("encoder_lens_explorer", html=HTML, css=CSS, js=JS)
# the similarity explorer: the same files, its root named apart (a page may show both)
_similarity = st.components.v2.component(
    "encoder_lens_similarity", html=HTML.replace('"el-explorer"', '"el-similarity"'), css=CSS,
    js=JS)


def committed(key: str) -> dict | None:
    """The last commit the component reported ({query, nonce}), from the session state."""
    value = st.session_state.get(key)
    try:
        commit = value.get("commit") if value is not None else None
    except AttributeError:
        return None
    return dict(commit) if isinstance(commit, dict) and "query" in commit else None


def show(blob: bytes, *, key: str, where: DeltaGenerator | None = None) -> None:
    """Mount the explorer with a payload already built (`payload`)."""
    with (where or st).container():
        _component(data=blob, key=key, on_commit_change=lambda: None, width="stretch")


def show_similarity(blob: bytes, *, key: str, where: DeltaGenerator | None = None) -> None:
    """Mount the similarity explorer (its root `el-similarity`) with a payload: a
    `similarity_payload`, or a `payload` without maps (the picker alone)."""
    with (where or st).container():
        _similarity(data=blob, key=key, on_commit_change=lambda: None, width="stretch")
