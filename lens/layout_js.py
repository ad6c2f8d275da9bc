"""The page's layout behaviours, done in the browser: the server never learns the window's size
or where the learner has scrolled.

One `st.components.v2` component (in the page, not an iframe; its script is
`layout_web/layout.js`, linted with ESLint) mounted once per page at the end of the sidebar.
It shows nothing and carries no text, only the three numbers below:

- wide formulas on narrow screens: every displayed formula (st.latex) wider than its column is
  drawn smaller until it fits — down to `MIN_SCALE` of its size, below which it scrolls sideways;
- a new page opens at its top: Next / Previous (at the top or the bottom of a page), a
  navigation link or the browser's back scroll the main pane (which scrolls inside itself) to 0
  once the URL's path changes, and keep it there while the new page arrives; a rerun of the same
  page (a slider moved) keeps its position, and the learner's own scrolling always wins;
- a tablet's sidebar starts collapsed: at a window width above Streamlit's own mobile breakpoint
  (`MOBILE_PX`, where Streamlit collapses it itself) and below `WIDE_PX`, so that the main column
  keeps its width (≥ 600 px at 820 px); once the learner opens or closes it, it stays so.
"""

from __future__ import annotations

from importlib.resources import files

import streamlit as st

MIN_SCALE = 0.5  # the smallest a formula is drawn, relative to its own size
MOBILE_PX = 768  # Streamlit's breakpoint "md": at or below it Streamlit collapses the sidebar
WIDE_PX = 1100  # from this window width up, the sidebar (300 px) starts open

JS = (files("lens") / "layout_web" / "layout.js").read_text(encoding="utf-8")

_component = st.components.v2.component(
    "encoder_lens_layout", html='<div data-testid="el-layout"></div>', js=JS)


def layout_behaviours() -> None:
    """Mount the page's layout behaviours (once per page run, at the end of the sidebar)."""
    with st.sidebar:
        _component(data={"min_scale": MIN_SCALE, "mobile": MOBILE_PX, "wide": WIDE_PX},
                   key="layout_behaviours")
