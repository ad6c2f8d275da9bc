"""The page's connection to the server, watched in the browser (`layout_web/connection.js`):
when every replica is down (or the network is gone) the page shows the app's own notice in its
language — not Streamlit's English "Connection error" dialog — and comes back by itself within
about a second of the server answering its health URL again (issue 51: a class in a hall).

One in-page component, mounted on every page run (framed pages in the sidebar, a projector in
its main area), that installs the watcher once per browser tab; nothing is asked of the server
while the page is connected. Times (`GRACE_MS`, `POLL_MS`, `RELOAD_MS`) in milliseconds.
"""

from __future__ import annotations

from importlib.resources import files

import streamlit as st

from .i18n import Texts

GRACE_MS = 1500  # a connection away this long is said to be lost (a blip is not)
POLL_MS = 500  # while it is lost, the health URL is asked this often
RELOAD_MS = 1000  # once the server answers: this long for Streamlit to reconnect, else a reload

JS = (files("lens") / "layout_web" / "connection.js").read_text(encoding="utf-8")
_component = st.components.v2.component(
    "encoder_lens_connection", html='<span data-testid="el-connection"></span>', js=JS)


def health_url(base_path: str) -> str:
    """The server's health URL as the page asks for it: Streamlit's `/_stcore/health` under
    the server's base path (`server.baseUrlPath`, "" by default)."""
    base = "/".join(p for p in base_path.split("/") if p)
    return f"/{base}/_stcore/health" if base else "/_stcore/health"


def watch_connection(lang: str, html_lang: str, framed: bool) -> None:
    """Mount the watcher with this page's words (`lang`, a settings language; `html_lang` its
    BCP 47 tag): in the sidebar of a framed page, else in the main area."""
    t = Texts(lang)
    data = {"lost": t("connection_lost"), "back": t("connection_back"), "lang": html_lang,
            "health": health_url(str(st.get_option("server.baseUrlPath") or "")),
            "grace_ms": GRACE_MS, "poll_ms": POLL_MS, "reload_ms": RELOAD_MS}
    if framed:
        with st.sidebar:
            _component(data=data, key="connection_watch")
    else:
        _component(data=data, key="connection_watch")
