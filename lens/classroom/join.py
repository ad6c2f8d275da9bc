"""Starting and joining a live class: the class page's first view, the join link and its QR
code. A class starts with the teacher's image and settings; an upload cannot travel (every
student's server would need the file), so a class runs on the built-in photo, a generated
shape or a loaded model.
"""

from __future__ import annotations

import functools
import io
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np
import qrcode
import streamlit as st
from PIL import Image
from sqlalchemy.exc import SQLAlchemyError

from ..i18n import Texts
from ..keys import CLASS_CODE_INPUT, CLASS_JOIN_ERROR, CLASS_NICK_INPUT
from ..settings import Settings
from .asking import class_settings
from .member import (
    CLASS_PARAM,
    Member,
    become,
    brief,
    class_state,
    client_key,
    shared_store,
    store_error,
)
from .rules import MAX_NICKNAME, RefusedError, normal_code

if TYPE_CHECKING:
    from ..context import PageContext

OWNER = "class"
QR_MODULE_PX = 8  # one module of the QR code, in pixels
QR_BORDER = 4  # modules of white around it (the standard's quiet zone)


def join_link(code: str) -> str:
    """The link students open: this app's /class with the code (the address the teacher's
    browser used, so it works from the students' browsers on the same network)."""
    parts = urlsplit(st.context.url or "http://localhost:8501/")
    return f"{parts.scheme}://{parts.netloc}/class?{CLASS_PARAM}={code}"


@functools.lru_cache(maxsize=64)
def qr_png(text: str) -> bytes:
    """A QR code of `text` as PNG: black modules on white, `QR_MODULE_PX` each."""
    qr = qrcode.QRCode(border=QR_BORDER, error_correction=qrcode.constants.ERROR_CORRECT_M)
    qr.add_data(text)
    qr.make(fit=True)
    dark = np.asarray(qr.get_matrix(), dtype=bool)
    pixels = np.where(dark, 0, 255).astype(np.uint8)
    pixels = np.repeat(np.repeat(pixels, QR_MODULE_PX, axis=0), QR_MODULE_PX, axis=1)
    out = io.BytesIO()
    Image.fromarray(pixels, mode="L").save(out, format="PNG")
    return out.getvalue()


def start_or_join(ctx: PageContext) -> None:
    """Start a class (the teacher) or join one (a student): the class page for nobody yet."""
    t = Texts(ctx.lang, OWNER)
    if store_error():
        st.error(t("store_down", why=store_error()))
    left, right = st.columns(2, gap="large")
    with left.container(border=True, key="class_start"):
        st.subheader(t("start_title"))
        st.markdown(t("start_text"))
        upload = ctx.settings.source == "upload"
        if upload:
            st.warning(t("no_upload"))
        st.button(t("start_button"), type="primary", key="class_start_button",
                  disabled=upload, on_click=start, args=(ctx.settings,))
    with right.container(border=True, key="class_join"):
        st.subheader(t("join_title"))
        st.markdown(t("join_text"))
        if CLASS_CODE_INPUT not in st.session_state:
            st.session_state[CLASS_CODE_INPUT] = st.query_params.get(CLASS_PARAM, "")
        st.text_input(t("code_label"), key=CLASS_CODE_INPUT, max_chars=16)
        st.text_input(t("nickname_label"), key=CLASS_NICK_INPUT, max_chars=MAX_NICKNAME,
                      help=t("nickname_help"))
        st.button(t("join_button"), type="primary", key="class_join_button", on_click=join_class,
                  args=(ctx.lang,))
    error = st.session_state.get(CLASS_JOIN_ERROR)
    if error:
        st.error(error)


def start(settings: Settings) -> None:
    """Start a class on these settings (a callback): this session becomes its teacher."""
    try:
        code, key = shared_store().create_class(class_settings(settings), step="overview")
    except SQLAlchemyError as err:
        t = Texts(settings.lang, OWNER)
        st.session_state[CLASS_JOIN_ERROR] = t("store_down", why=brief(err))
        return
    st.session_state.pop(CLASS_JOIN_ERROR, None)
    become(Member(code, "teacher", key))


def join_class(lang: str) -> None:
    """Join the class of the typed code (a callback): this session becomes its student."""
    state, t = st.session_state, Texts(lang, OWNER)
    code = str(state.get(CLASS_CODE_INPUT) or "")
    if not code.strip():
        state[CLASS_JOIN_ERROR] = t("join_empty")
        return
    try:
        token = shared_store().join(code, client_key(), str(state.get(CLASS_NICK_INPUT) or ""))
    except RefusedError as err:
        state[CLASS_JOIN_ERROR] = t(f"join_{err.reason}")
        return
    except SQLAlchemyError as err:
        state[CLASS_JOIN_ERROR] = t("store_down", why=brief(err))
        return
    state.pop(CLASS_JOIN_ERROR, None)
    become(Member(normal_code(code), "student", token))


def class_step() -> str:
    """The step the class is on, as this run read it (the first step when out of reach)."""
    seen = class_state()
    return seen["step"] if seen else "overview"
