"""Starting and joining a live class: the class page's first view, the join link and its QR
code. A class starts with the teacher's image and settings; an upload cannot travel (every
student's server would need the file), so a class runs on the built-in photo, a generated
shape or a loaded model.

The join link is made from the address the students reach (`public_base`), not the one the
teacher's own browser happened to use: `ENCODER_LENS_PUBLIC_URL` when it is set and valid;
else, behind the balancer only (`PROXY_ENV`, as `member.client_from` trusts X-Forwarded-For),
the X-Forwarded-Host and X-Forwarded-Proto a proxy in front sets; else the request's Host
header; else the browser's URL. A loopback address (localhost) no student device can open is
said to the teacher (`link_problems`); before a class starts on such an address the start form
says so with this machine's network address (`lan_address`), and after, a teacher who moves
there keeps the class by the teacher link on that address (`loopback_move`).
"""

from __future__ import annotations

import functools
import io
import ipaddress
import math
import os
import socket
from collections.abc import Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np
import qrcode
import streamlit as st
from PIL import Image
from sqlalchemy.exc import SQLAlchemyError
from streamlit.delta_generator import DeltaGenerator

from ...i18n import LANG_NAMES, Texts
from ...keys import (
    CLASS_CODE_INPUT,
    CLASS_JOIN_ERROR,
    CLASS_JOIN_PENDING,
    CLASS_LANG_SWITCH,
    CLASS_NICK_INPUT,
    LANG,
)
from ...settings import Settings
from ..asking import class_settings
from ..rules import MAX_NICKNAME, RefusedError, normal_code
from .member import (
    CLASS_PARAM,
    PROXY_ENV,
    TEACHER_PARAM,
    Member,
    become,
    brief,
    browser_key,
    class_state,
    client_key,
    shared_store,
    store_error,
)

if TYPE_CHECKING:
    from ...context import PageContext

OWNER = "class"
QR_MODULE_PX = 8  # one module of the QR code, in pixels
QR_BORDER = 4  # modules of white around it (the standard's quiet zone)


PUBLIC_URL_ENV = "ENCODER_LENS_PUBLIC_URL"  # the address students open: https://lens.example
FALLBACK_URL = "http://localhost:8501/"  # no request in sight (scripts, some tests)
LOOPBACK_NAMES = ("localhost", "localhost.localdomain")


def join_link(code: str, base: str | None = None) -> str:
    """The link students open: this app's /class with the code, on `base` (`link_base()`)."""
    return f"{base or link_base()}/class?{CLASS_PARAM}={code}"


def link_base() -> str:
    """The address students reach this app at, for this run (`public_base`)."""
    return public_base(os.environ.get(PUBLIC_URL_ENV), os.environ.get(PROXY_ENV) == "1",
                       st.context.headers, st.context.url)


def public_base(env_url: str | None, behind_proxy: bool, headers: Mapping[str, str],
                url: str | None) -> str:
    """The app's address as students reach it, "scheme://host[:port][/path]" without a
    trailing slash, from the first that gives a valid one:

    1. `env_url` (ENCODER_LENS_PUBLIC_URL), path kept (an app served under a prefix);
    2. behind the balancer only, X-Forwarded-Host and X-Forwarded-Proto — each header's last
       entry, the one the proxy nearest the app wrote (`member.client_from`'s rule); without
       the balancer a header is the browser's to forge;
    3. the request's Host header, with the scheme of `url`;
    4. `url` (st.context.url: what the teacher's browser shows), scheme and host only.
    """
    if env_url and valid_base(env_url.strip()):
        return env_url.strip().rstrip("/")
    seen = {k.lower(): v for k, v in headers.items()}
    scheme = urlsplit(url or FALLBACK_URL).scheme or "http"
    if behind_proxy:
        host = last_entry(seen.get("x-forwarded-host"))
        proto = last_entry(seen.get("x-forwarded-proto")) or scheme
        if host and valid_base(f"{proto}://{host}"):
            return f"{proto}://{host}"
    host = (seen.get("host") or "").strip()
    if host and valid_base(f"{scheme}://{host}"):
        return f"{scheme}://{host}"
    parts = urlsplit(url if url and valid_base(url) else FALLBACK_URL)
    return f"{parts.scheme}://{parts.netloc}"


def last_entry(value: str | None) -> str:
    """The last of a header's comma-separated entries ("" when none)."""
    return value.split(",")[-1].strip() if value else ""


def valid_base(url: str) -> bool:
    """An http or https address with a host (and a port, if any, that is a number), nothing
    after a query or fragment mark."""
    try:
        parts = urlsplit(url)
        port_ok = parts.port is None or parts.port > 0  # a port that is no number: ValueError
    except ValueError:
        return False
    return (parts.scheme in ("http", "https") and bool(parts.hostname) and port_ok
            and not parts.query and not parts.fragment and " " not in url)


def is_loopback(base: str) -> bool:
    """Whether `base` names this machine only (localhost, 127.0.0.0/8, ::1, 0.0.0.0, ::): an
    address no student's device can open."""
    host = (urlsplit(base).hostname or "").rstrip(".").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:127.0.0.1
    return ip.is_loopback or ip.is_unspecified or bool(mapped and mapped.is_loopback)


def lan_address() -> str | None:
    """This machine's address on its network (the source of its default route), or None when
    it has none but loopback. A UDP socket's connect sends no packet: it only picks a route."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.254.254.254", 9))
            ip = probe.getsockname()[0]
    except OSError:
        return None
    return None if is_loopback(f"http://{ip}") else ip


def lan_suggestion(base: str, lan: str | None) -> str:
    """The address to open the app by instead of a loopback `base`: this machine's network
    address `lan` on `base`'s scheme and port; a made-up example when there is none."""
    if not lan:
        return "http://192.168.1.20:8501"
    parts = urlsplit(base)
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{lan}{port}"


def teacher_link(base: str, member: Member) -> str:
    """The teacher link on `base`: it opens this class's controls in another browser (the
    class and the key it carries: `member._from_link`)."""
    return f"{base}/class?{CLASS_PARAM}={member.code}&{TEACHER_PARAM}={member.secret}"


def loopback_move(t: Texts, base: str, member: Member, presenting: bool) -> None:
    """On a loopback address, for the class's teacher: the teacher link on this machine's
    network address, which moves the teacher there with the class (only when not
    `presenting`: it holds the key)."""
    lan = lan_address()
    if not is_loopback(base) or lan is None:
        return
    if presenting:
        st.caption(t("move_presenting"))
        return
    st.markdown(t("move_with_class"))
    st.code(teacher_link(lan_suggestion(base, lan), member), language=None, wrap_lines=True)


def link_problems(env_url: str | None, base: str) -> tuple[str, ...]:
    """What the teacher should know about the join link, as text keys: a configured
    ENCODER_LENS_PUBLIC_URL that was invalid and ignored; a link on a loopback address."""
    problems = []
    if env_url and env_url.strip() and not valid_base(env_url.strip()):
        problems.append("public_url_ignored")
    if is_loopback(base):
        problems.append("link_loopback")
    return tuple(problems)


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
    """Start a class (the teacher) or join one (a student): the class page for nobody yet.
    Opened from a join link, the join form comes first: on a phone the columns stack, and a
    student would otherwise find "Start a class" on top and the form below the fold."""
    t = Texts(ctx.lang, OWNER)
    if store_error():
        st.error(t("store_down", why=store_error()))
    language_switch(ctx.lang)  # a phone's sidebar is folded away: the language in sight
    pending = st.session_state.pop(CLASS_JOIN_PENDING, None)
    if pending is not None:  # a try past its allowance: said, then waited in this run
        code, nickname, wait = pending
        st.info(t("join_wait", s=math.ceil(wait)))
        finish_join(ctx.lang, code, nickname)
        st.rerun()
    first, second = st.columns(2, gap="large")
    if join_first(st.query_params):
        join_form(ctx, t, first)
        start_form(ctx, t, second)
    else:
        start_form(ctx, t, first)
        join_form(ctx, t, second)
    error = st.session_state.get(CLASS_JOIN_ERROR)
    if error:
        st.error(error)


def language_switch(lang: str, where: DeltaGenerator | None = None) -> None:
    """English / 中文 in the page itself (in `where`, else here), not only in the sidebar, which
    a phone keeps folded: on the join page and a student's pages. A radio (arrow keys move it,
    as the sidebar's): a choice sets the session's language (`keys.LANG`) and the page runs
    again in it; it always shows the page's language."""
    st.session_state[CLASS_LANG_SWITCH] = lang  # follows the sidebar's radio too
    (where or st).radio(Texts(lang)("language"), options=list(LANG_NAMES),
                        format_func=LANG_NAMES.get, horizontal=True, key=CLASS_LANG_SWITCH,
                        on_change=_switch_language)


def _switch_language() -> None:
    """The main area's language switch was moved (a callback): the session's language."""
    chosen = st.session_state.get(CLASS_LANG_SWITCH)
    if chosen in LANG_NAMES:
        st.session_state[LANG] = chosen


def join_first(params: Mapping[str, str]) -> bool:
    """Whether the page was opened from a join link (`?class=CODE`): the join form first."""
    return bool(str(params.get(CLASS_PARAM, "")).strip())


def start_form(ctx: PageContext, t: Texts, where: DeltaGenerator) -> None:
    """The "Start a class" form, in `where`: this session becomes the teacher of a class on
    its settings."""
    with where.container(border=True, key="class_start"):
        st.subheader(t("start_title"))
        st.markdown(t("start_text"))
        upload = ctx.settings.source == "upload"
        if upload:
            st.warning(t("no_upload"))
        base = link_base()
        if is_loopback(base):  # before the class
            st.warning(t("start_loopback", base=base))  # starts on an address no phone opens
            st.code(f"{lan_suggestion(base, lan_address())}/class", language=None)
        st.button(t("start_button"), type="primary", key="class_start_button",
                  disabled=upload, on_click=start, args=(ctx.settings,))


def join_form(ctx: PageContext, t: Texts, where: DeltaGenerator) -> None:
    """The "Join a class" form, in `where`: the code (the join link's, when opened from
    one) and a nickname."""
    with where.container(border=True, key="class_join"):
        st.subheader(t("join_title"))
        st.markdown(t("join_text"))
        if CLASS_CODE_INPUT not in st.session_state:
            st.session_state[CLASS_CODE_INPUT] = st.query_params.get(CLASS_PARAM, "")
        st.text_input(t("code_label"), key=CLASS_CODE_INPUT, max_chars=16)
        st.text_input(t("nickname_label"), key=CLASS_NICK_INPUT, help=t("nickname_help"))
        st.button(t("join_button"), type="primary", key="class_join_button", on_click=join_class,
                  args=(ctx.lang,))


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
    """Join the class of the typed code (a callback): this session becomes its student. A try
    that must wait (`Store.join_wait`: wrong codes typed from this browser or address) is left
    to the page's run (`start_or_join`), which says so, then waits in this session's own
    script thread — no other session waits with it."""
    state, t = st.session_state, Texts(lang, OWNER)
    code = str(state.get(CLASS_CODE_INPUT) or "")
    nickname = str(state.get(CLASS_NICK_INPUT) or "").strip()
    if not code.strip():
        state[CLASS_JOIN_ERROR] = t("join_empty")
        return
    if len(nickname) > MAX_NICKNAME:  # refused with a word, never cut
        state[CLASS_JOIN_ERROR] = t("join_too_long", n=MAX_NICKNAME)
        return
    try:
        wait = shared_store().join_wait(client_key(), browser_key())
    except SQLAlchemyError as err:
        state[CLASS_JOIN_ERROR] = t("store_down", why=brief(err))
        return
    if wait > 0:
        state.pop(CLASS_JOIN_ERROR, None)
        state[CLASS_JOIN_PENDING] = (code, nickname, wait)
        return
    finish_join(lang, code, nickname)


def finish_join(lang: str, code: str, nickname: str) -> None:
    """Ask the store to join (it waits first when this browser or address must): this
    session becomes the class's student, or the refusal is kept for the page to say."""
    state, t = st.session_state, Texts(lang, OWNER)
    try:
        token = shared_store().join(code, client_key(), nickname, browser=browser_key(),
                                    lang=lang)
    except RefusedError as err:
        state[CLASS_JOIN_ERROR] = t("join_too_long", n=MAX_NICKNAME) if (
            err.reason == "too_long") else t(f"join_{err.reason}")
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
