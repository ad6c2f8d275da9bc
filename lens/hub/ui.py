"""The sidebar's "Download a model": the named public models of `lens.hub`, one button each.

A button is disabled (and says "downloaded") once its model is in the cache. Its click runs
the download in the button's callback, before the page's script: the progress bar is drawn at
the top of the sidebar (and in a toast) while the bytes arrive, and on success the registry
is re-read (`model_weights.clear_models`) and the new model becomes the weights
(`session.set_settings`, allowed there because no widget exists yet). The outcome is kept
for the expander to show once: a success line, or the DownloadError's one line as a warning,
in the learner's language.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from .. import hub, model_weights
from ..keys import HUB_OPEN, HUB_OUTCOME
from ..session import set_settings


def button_key(model_id: str) -> str:
    """The session-state key of `model_id`'s download button."""
    return f"hub_download_{model_id}"


def download_controls(t: Callable[..., str], lang: str) -> None:
    """Draw the expander in the sidebar (`t` translates COMMON keys into `lang`). Its content
    is built only while it is open (opening it reruns the page): folded, it costs one element
    instead of ten on every run."""
    if HUB_OPEN in st.session_state:
        st.session_state[HUB_OPEN] = st.session_state[HUB_OPEN]
    box = st.sidebar.expander(t("hub_title"), key=HUB_OPEN, on_change="rerun")  # folded at first
    if not box.open:
        return
    cached = hub.cached_models()
    outcome = st.session_state.pop(HUB_OUTCOME, None)
    with box:
        if outcome:
            show_outcome(outcome, t)
        st.caption(t("hub_caption"))
        for m in hub.MODELS.values():
            st.markdown(t("hub_model", name=m.name, mb=m.mb, licence=m.licence))
            st.caption(t(f"hub_about_{m.id}"))
            done = m.id in cached
            st.button(t("hub_downloaded", name=m.name) if done else t("hub_download", name=m.name),
                      key=button_key(m.id), disabled=done, on_click=download_now,
                      args=(m.id, t))


def show_outcome(outcome: tuple, t: Callable[..., str]) -> None:
    """The last download's result, once."""
    name = hub.lookup(outcome[1]).name
    if outcome[0] == "done":
        st.success(t("hub_done", name=name))
    else:
        _, _, reason, detail = outcome
        st.warning(t(f"hub_error_{reason}", name=name, detail=detail, hint=t("hub_offline_hint")))


def download_now(model_id: str, t: Callable[..., str]) -> None:
    """The button's callback: download with a progress bar, then select the model.

    A callback's elements go to the top of the sidebar, which may be scrolled out of view
    below the expander: the same progress is also a toast (top right, always in view)."""
    model = hub.lookup(model_id)
    text = t("hub_progress", name=model.name, done=0.0, total=model.mb)
    bar = st.sidebar.progress(0.0, text=text)
    note = st.toast(text, icon=":material/download:", duration="long")
    shown = [-1]

    def progress(done: int, total: int) -> None:
        percent = min(100, 100 * done // total) if total else 0
        if percent != shown[0]:  # at most 101 updates, however many chunks
            shown[0] = percent
            text = t("hub_progress", name=model.name, done=done / 1e6, total=total / 1e6)
            bar.progress(percent / 100, text=text)
            note.toast(text, icon=":material/download:", duration="long")

    try:
        hub.download(model_id, progress=progress)
    except hub.DownloadError as err:
        st.session_state[HUB_OUTCOME] = ("error", model_id, err.reason, err.detail)
        note.toast(t(f"hub_error_{err.reason}", name=model.name, detail=err.detail,
                     hint=t("hub_offline_hint")), icon=":material/cloud_off:", duration="long")
        return
    finally:
        bar.empty()
    note.toast(t("hub_done", name=model.name), icon=":material/check:", duration="short")
    model_weights.clear_models()
    set_settings(weights=model_id)
    st.session_state[HUB_OUTCOME] = ("done", model_id)
