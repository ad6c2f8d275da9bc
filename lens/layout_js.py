"""The page's layout behaviours, done in the browser: the server never learns the window's size
or where the learner has scrolled.

One `st.components.v2` component (in the page, not an iframe; its script is
`layout_web/layout.js`, linted with ESLint) mounted once per page at the end of the sidebar.
It shows nothing and carries no text, only the three numbers below, the page's language tag
and the name of the cookie by which it tells the server that the learner chose the sidebar's
state (`CHOSE_COOKIE`):

- wide formulas on narrow screens: every displayed formula (st.latex) wider than its column is
  drawn smaller until it fits — down to `MIN_SCALE` of its size, below which it scrolls sideways
  (and takes the keyboard's focus, to be scrolled by it);
- a new page opens at its top: Next / Previous (at the top or the bottom of a page), a
  navigation link or the browser's back scroll the main pane (which scrolls inside itself) to 0
  once the URL's path changes, and keep it there while the new page arrives; a rerun of the same
  page (a slider moved) keeps its position, and the learner's own scrolling always wins;
- a tablet's sidebar starts collapsed: at a window width above Streamlit's own mobile breakpoint
  (`MOBILE_PX`, where Streamlit collapses it itself) and below `WIDE_PX`, so that the main column
  keeps its width (≥ 600 px at 820 px); once the learner opens or closes it, it stays so.
  Until the component has decided, a style sent with the page's first element
  (`layout_web/tablet_sidebar.css`, `hold_tablet_sidebar`) keeps the sidebar out of the page at
  those widths, so that nothing is first drawn in the narrow column;
- the page's language: `<html lang>` ("en", "zh-CN": `html_lang`), which Streamlit's
  index.html fixes at "en", so that a screen reader reads 中文 with Chinese rules; and this
  browser's last language in a cookie (`LANG_COOKIE`), which a new session opened by a class's
  link that names no language starts in (`session.current_settings`: a student who opens the
  join link again in a new tab is in 中文 again).

A page framed by nothing (a class's projector) mounts the language part alone
(`page_language`): no sidebar to hold, no formula to fit.
"""

from __future__ import annotations

from importlib.resources import files
from string import Template

import streamlit as st

MIN_SCALE = 0.5  # the smallest a formula is drawn, relative to its own size
MOBILE_PX = 768  # Streamlit's breakpoint "md": at or below it Streamlit collapses the sidebar
WIDE_PX = 1100  # from this window width up, the sidebar (300 px) starts open

HTML_LANG = {"zh": "zh-CN"}  # a settings language whose BCP 47 tag differs from its name
HOLD_S = 10  # the tablet's sidebar is held out of the page at most this long, if no script runs

CHOSE_COOKIE = "encoder_lens_sidebar_chosen"  # set by layout.js once the learner chose: no hold
LANG_COOKIE = "encoder_lens_lang"  # this browser's last language ("en", "zh"), kept by layout.js
HOLD_KEY = "tablet_sidebar_hold"  # the style's container (.st-key-…), hidden by the style

WEB = files("lens") / "layout_web"
JS = (WEB / "layout.js").read_text(encoding="utf-8")
TABLET_CSS = Template((WEB / "tablet_sidebar.css").read_text(encoding="utf-8")).substitute(
    lo=MOBILE_PX + 1, hi=WIDE_PX - 1, hold_s=HOLD_S, key=HOLD_KEY)

_component = st.components.v2.component(
    "encoder_lens_layout", html='<div data-testid="el-layout"></div>', js=JS)


def hold_tablet_sidebar() -> None:
    """Keep a tablet's sidebar out of the page until the layout behaviours have decided how it
    starts (first thing in a page run: the style arrives before the title and the pictures).
    A learner who opened or closed the sidebar (Streamlit keeps that choice) is left no hold:
    their sidebar would vanish for a moment on a reload."""
    if st.context.cookies.get(CHOSE_COOKIE):
        return
    with st.container(key=HOLD_KEY):  # hidden by its own style: no gap in the page
        st.markdown(f"<style>{TABLET_CSS}</style>", unsafe_allow_html=True)


FOCUS_CSS = (WEB / "focus.css").read_text(encoding="utf-8")


def mark_focus() -> None:
    """The keyboard's focus marked plainly where Streamlit's own mark is faint or hidden
    (`layout_web/focus.css`): a style alone, which takes no room (st.html sends it apart from
    the page's elements); first thing in a page run, with the tablet's hold."""
    st.html(f"<style>{FOCUS_CSS}</style>")


def html_lang(lang: str) -> str:
    """The page's language as `<html lang>` declares it (BCP 47): "zh" is "zh-CN"."""
    return HTML_LANG.get(lang, lang)


def layout_behaviours(lang: str = "en") -> None:
    """Mount the page's layout behaviours (once per page run, at the end of the sidebar),
    `<html lang>` set to the page's language `lang` (a settings language: "en", "zh")."""
    with st.sidebar:
        _component(data={"min_scale": MIN_SCALE, "mobile": MOBILE_PX, "wide": WIDE_PX,
                         "chose_cookie": CHOSE_COOKIE, "lang": html_lang(lang),
                         "lang_cookie": LANG_COOKIE, "kept_lang": lang},
                   key="layout_behaviours")


def page_language(lang: str) -> None:
    """Only `<html lang>` of the layout behaviours, for a page framed by nothing (a class's
    projector: `layout_behaviours` is mounted in the sidebar of framed pages)."""
    _component(data={"lang": html_lang(lang), "only_lang": True}, key="layout_language")
