"""The app's navigation: the router that app.py (and `lens/entry.py`, the installed app's
script) runs on every script run — Streamlit's `st.navigation` over the registry's pages
(`lens.steps`), titled in the learner's language and numbered in the note's order, each at its
own URL (/multihead) — and the hidden landing page a link without a page reaches.

It sits below every page run: `st.navigation(...).run()` runs the page's script, whose
`lens.runner.run_page` draws it. The runner calls it only for a page reached without it (a
fresh server's first visit in pages-folder mode, an AppTest run), and nothing else of the app
calls back into it.
"""

from __future__ import annotations

import streamlit as st

from . import keys, traces
from .i18n import LANG_NAMES
from .steps import ALL_PAGES, STEPS, nav_label


def _landing() -> None:
    """A link without a page: forward to the first step with the link's settings."""
    traces.warming()
    st.switch_page(STEPS[0].path, query_params=st.query_params.to_dict())


def route() -> None:
    """The router (app.py, and a page run without it): the app's navigation runs the page the
    link asks for; `runner.run_page` draws it only when it was reached this way."""
    st.session_state[keys.ENTRY] = True
    st.navigation(navigation_pages(), expanded=True).run()


def navigation_pages() -> list:
    """The pages for `st.navigation`, in the learner's language (the language control's value,
    else the link's `lang`): the hidden landing page, then every page at its id's URL."""
    lang = st.session_state.get(keys.LANG) or st.query_params.get("lang", "en")
    lang = lang if lang in LANG_NAMES else "en"
    return [st.Page(_landing, title="Encoder Lens", url_path="start", default=True,
                    visibility="hidden"),
            *(st.Page(p.path, title=nav_label(p, lang), url_path=p.id) for p in ALL_PAGES)]
