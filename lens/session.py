"""The settings of this session: read from the link once, then kept in widget state.

`current_settings` is the one way the app reads settings: on a session's first run they come
from the link (`Settings.from_url`; what could not be used is kept for a warning; a class's
link that names no language takes this browser's last, `link_query`), afterwards
from the widgets; either way they are made possible (`Settings.normalised`) and written back
before any widget is drawn. `sync_url` mirrors them in the link.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from encoder_core import EncoderConfig

from . import keys
from .layout_js import LANG_COOKIE
from .settings import ARCHITECTURE, DEFAULTS, LANGS, URL_KEYS, Notice, Settings

CLASS_LINK = "class"  # a class's link names it (`classroom.ui.member.CLASS_PARAM`)

# What a model that fixes the architecture (trained, a checkpoint) overwrites, kept to give back
# when the learner returns to random weights; the query's number depends on the grid.
OWN = (*ARCHITECTURE, keys.QUERY)

# Adjustments worth a word when the learner changed something (a layer, head or query out of
# range after fewer layers, heads or tokens is simply moved, as a slider would be).
SHOWN_WHEN_CHANGED = ("patch_divide", "heads_divide", "heads_memory", "no_model")


def current_settings(models: Mapping[str, EncoderConfig],
                     checkpoints: Sequence[int] = ()) -> Settings:
    """The session's settings, possible for the available `models` (and the trained model's
    `checkpoints`, its training steps), mirrored in the state."""
    state = st.session_state
    if not state.get(keys.INITIALISED):
        settings, notices = Settings.from_url(link_query(), models, checkpoints)
        state[keys.URL_NOTICES] = notices
        state[keys.URL_SETTINGS] = settings
        # a link that carries settings (lesson=1 or 0 among them: every link the app writes
        # does) has made the first page's choice; a first visit without one has not
        state[keys.LESSON_CHOSEN] = any(k in st.query_params for k in URL_KEYS)
        _write(settings)
        state[keys.WEIGHTS_BEFORE] = settings.weights
        state[keys.INITIALISED] = True
        return settings
    for key in keys.SETTING_KEYS:  # keep widget values across a page switch
        if key in state:
            state[key] = state[key]
    _keep_own_architecture()
    settings, notices = _from_state().normalised(models, checkpoints)
    _write(settings)
    state[keys.WEIGHTS_BEFORE] = settings.weights
    if settings != state.get(keys.URL_SETTINGS):  # the link's warnings are about the link
        state[keys.URL_NOTICES] = []
    state[keys.NOTICES] = [n for n in notices if n.why in SHOWN_WHEN_CHANGED]
    return settings


def link_query() -> dict[str, str]:
    """The link's query; a class's link (a join link, a student's or the teacher's) that names
    no language gets this browser's last (`kept_language`): a student who chose 中文 and opens
    the join link again — a new tab, the QR code scanned again — is in 中文 at once."""
    query = st.query_params.to_dict()
    if keys.LANG not in query and query.get(CLASS_LINK):
        kept = kept_language()
        if kept in LANGS:
            query[keys.LANG] = kept
    return query


def kept_language() -> str | None:
    """This browser's last language (the layout behaviours keep it: `layout_js.LANG_COOKIE`);
    None without one (or without a browser: AppTest)."""
    value = st.context.cookies.get(LANG_COOKIE)
    return value if isinstance(value, str) else None


def _keep_own_architecture() -> None:
    """Random → a model that fixes the architecture: keep the learner's own (`OWN`); back to
    random: give it back, so random → trained → random ends where it began."""
    state = st.session_state
    before = state.get(keys.WEIGHTS_BEFORE, DEFAULTS.weights)
    now = state.get(keys.WEIGHTS, DEFAULTS.weights)
    if before == "random" and now != "random":
        state[keys.OWN_ARCHITECTURE] = {k: state[k] for k in OWN if k in state}
    elif before != "random" and now == "random":
        for key, value in state.pop(keys.OWN_ARCHITECTURE, {}).items():
            state[key] = value


def _from_state() -> Settings:
    state = st.session_state
    return Settings(**{k: state.get(k, getattr(DEFAULTS, k)) for k in keys.SETTING_KEYS})


def _write(settings: Settings) -> None:
    for key in keys.SETTING_KEYS:
        value = getattr(settings, key)
        if st.session_state.get(key) != value:
            st.session_state[key] = value


def impose(settings: Settings) -> Settings:
    """Settings decided elsewhere (a live class's, for its students), written over the
    session's before any widget is drawn."""
    _write(settings)
    return settings


def take_notices() -> tuple[list[Notice], list[Notice]]:
    """(from the link, from the last change): the link's stay until a setting changes; those
    of a change are shown once."""
    return st.session_state.get(keys.URL_NOTICES, []), st.session_state.pop(keys.NOTICES, [])


def set_settings(**changes: object) -> None:
    """Change settings (a button's callback; the next run normalises them)."""
    st.session_state[keys.URL_NOTICES] = []
    for key, value in changes.items():
        st.session_state[key] = value


def reset_settings() -> None:
    """Every setting back to its default, except the language; forget the upload."""
    set_settings(**{k: getattr(DEFAULTS, k) for k in keys.SETTING_KEYS if k != "lang"})
    st.session_state[keys.IMAGE_BYTES] = None


def sync_url() -> None:
    """Mirror the settings in the link so a copied link restores the view."""
    current = _from_state().to_url()
    changed = {k: v for k, v in current.items() if st.query_params.get(k) != v}
    if changed:
        st.query_params.update(changed)
