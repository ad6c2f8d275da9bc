"""The page runner: what runs a page — settings, sidebar, image, the memory its run needs,
trace, header — then the page's `render(ctx)`. A page module ends with
`run_page(__file__, render)`. Pages only lay things out; their words are in their text file
(`lens.i18n`), their numbers in the trace.

One run is one straight path: the runner picks the run's role once (`lens.roles`: a learner, a
class's student, its teacher or its projector — which has no frame: no sidebar, no header),
sets the page up as that role sees it, lets the role draw its
cards, hands the page a frozen context that says what they withhold, and ends the run itself —
the walk's PDF is built after every page, whatever it drew. The runner is the top of the app's
layer: it imports the frame (`chrome`, `sidebar`), the roles and the handout's section; none of
them imports it, and nothing below a role imports a role.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from types import MappingProxyType

import numpy as np
import streamlit as st

from encoder_core import ConfigError, ImageError
from encoder_core.cost import Cost

from . import (
    chrome,
    images,
    keys,
    model_weights,
    resources,
    roles,
    router,
    scroll_js,
    session,
    sidebar,
    traces,
)
from .admission import TooHeavyError
from .classroom.ui import member as classroom
from .classroom.ui import projector
from .connection_js import watch_connection
from .context import PageContext, Plan
from .fair_queue import Queue
from .handout import ui as handout
from .i18n import Texts
from .layout_js import hold_tablet_sidebar, html_lang, layout_behaviours, mark_focus
from .lesson.ui import cards, check
from .services import SERVICES
from .settings import Settings
from .steps import PAGES, page_for_script


def run_page(script: str, render: Callable[[PageContext], None], plan: Plan | None = None,
             ) -> None:
    """Run the page of `script` (a page module's `__file__`): its context, then `render(ctx)`.
    The run holds the memory it reserved (for its trace and the variants `plan` names) until
    it ends; a handout asked for in the run is built after that, under its own reservation.

    Run without the entry script — Streamlit's pages-folder mode runs the page's file alone
    (`lens.steps`): a fresh server's first visit (/multihead), and every AppTest run — it runs
    the app's router in its place (`router.route`, as app.py does), which runs this page again
    through the app's navigation, in this same script run."""
    info = page_for_script(script)
    if info is None:
        raise LookupError(f"{script} is not a page of lens.steps")
    if not st.session_state.get(keys.ENTRY):
        router.route()
        return
    st.session_state[keys.ENTRY] = False  # the router sets it again on each run
    screen = projector.current()  # a class's projector link: the projector, whoever's browser
    role = roles.pick(classroom.current() if screen is None else None, screen)
    with ExitStack() as hold:
        ctx = page(info.id, hold, role, plan)
        withheld = role.cards(ctx)  # the role's cards, then the page without what they withhold
        ctx = replace(ctx, withheld=withheld, withheld_text=role.withheld_note(withheld))
        if role.asks_first(ctx) and not ctx.withheld:  # every question answered
            chrome.takeaway(ctx)
        slot = handout.offer(ctx) if role.framed else None  # the walk as a PDF: built below
        if ctx.shows("page"):
            render(ctx)
        else:  # an open task withholds the whole page: its navigation only
            st.caption(ctx.t(ctx.withheld_text))
            chrome.footer(ctx)
    handout.build_asked(ctx, slot)  # after the run's reservation is released
    scroll_js.carry_out()  # what a callback asked to show next (a verdict), now drawn


def document_title(page_id: str, lang: str) -> str:
    """The browser tab's title of a page: "Scores · Encoder Lens", in the page's language."""
    return f"{PAGES[page_id].title_in(lang)} · Encoder Lens"


def page(page_id: str, hold: ExitStack, role: roles.Role, plan: Plan | None = None,
         ) -> PageContext:
    """Set up a page: settings (as the role sees them), sidebar, image, the memory its run
    needs (held by `hold` until the run ends), trace; the header with the step's navigation
    and the role's caption."""
    if page_id not in PAGES:
        raise LookupError(f"no page {page_id!r} in lens.steps")
    st.set_page_config(page_title="Encoder Lens", page_icon="🔍", layout="wide")
    hold_tablet_sidebar()  # out of the page until layout_behaviours below decides its start
    mark_focus()  # the keyboard's focus drawn plainly (WCAG 2.4.7)
    if not role.framed:  # a class's projector: no sidebar, header nor control of the app
        role.unframe()  # type: ignore[attr-defined]
    models = model_weights.model_architectures()
    member = role.member
    own = session.current_settings(models, model_weights.checkpoint_steps())
    settings = role.settings(own, models, model_weights.checkpoint_steps())
    if settings is not own:  # the class's image and model, locked
        settings = session.impose(settings)
    t = Texts(settings.lang)  # common texts only: the same on every page
    st.set_page_config(page_title=document_title(page_id, settings.lang))  # its own, translated
    watch_connection(settings.lang, html_lang(settings.lang), role.framed)  # no server: said
    ahead = role.ahead(page_id, settings, st.session_state)
    upload_slot = sidebar.controls(settings, t, models, class_code=role.class_code,
                                   ahead=ahead) if role.framed else None
    if role.framed:
        chrome.notices(t)
    cfg = settings.to_config()
    image_key, model_input, original, name = current_image(settings, t)
    if upload_slot is not None and settings.source == "upload" and st.session_state.get(
            keys.IMAGE_BYTES):
        sidebar.show_upload(upload_slot, t, name, images.thumbnail_png(image_key, original))
    planned = [("", settings), *(plan(settings) if plan is not None else [])]
    admit(hold, t, page_id, image_key, planned)
    params, head = model_weights.weights_for(settings.weights, cfg, settings.train_step)
    weights = model_weights.weights_id(settings.weights, settings.train_step)
    with st.spinner(t("computing")):
        trace = traces.trace_for(image_key, model_input, cfg, params, weights)
    session.sync_url()
    cards.sync_url(settings.lesson and member is None)
    check.sync_url(settings.lesson and member is None)
    classroom.sync_url(member)
    classroom.keep_teacher(member)
    if role.framed:
        chrome.export(t, trace, image_key, weights)
        layout_behaviours(settings.lang)  # formulas fitted, a new page at its top, <html lang>…
    ctx = PageContext(id=page_id, settings=settings, trace=trace, original=original,
                      image_name=name, image_key=image_key, head_model=head, member=member,
                      ahead=ahead,
                      state=MappingProxyType(st.session_state.to_dict()), services=SERVICES)
    if role.framed:
        chrome.header(ctx, role.caption(ctx), asks_first=role.asks_first(ctx))
    return ctx


def admit(hold: ExitStack, t: Callable[..., str], page_id: str, image_key: str,
          planned: list[tuple[str, Settings]]) -> None:
    """Reserve the memory of what this run will compute that nobody holds yet (nothing to
    reserve: no wait). While it waits its turn, a notice says how many runs are ahead and for
    how long; what could never fit stops the page with what to lower."""
    settings = planned[0][1]
    need = planned_cost(image_key, planned, page_id)
    if need.bytes == 0:
        return
    notice = st.empty()

    def waiting(q: Queue) -> None:
        notice.info(t("queue_wait", ahead=q.ahead, s=max(1.0, q.seconds_ahead),
                      waited=q.waited_s, gb=need.bytes / 1e9))

    try:
        hold.enter_context(resources.budget().reserve(need.bytes, need.seconds, on_wait=waiting))
    except TooHeavyError as err:
        notice.error(t("too_heavy", gb=need.bytes / 1e9, limit=err.limit / 1e9,
                       lower=lighter(settings, image_key, planned, page_id, err.limit, t)))
        st.stop()
    notice.empty()


def planned_cost(image_key: str, planned: list[tuple[str, Settings]], page_id: str) -> Cost:
    """The predicted cost of the planned traces (impossible combinations left out)."""
    settings = planned[0][1]
    cfgs = []
    for tag, s in planned:
        try:
            cfgs.append((tag, s.to_config()))
        except ConfigError:
            continue  # the page says so itself
    return traces.run_cost(image_key, cfgs, settings.weights, settings.train_step,
                            PAGES[page_id].costs)


def lighter(settings: Settings, image_key: str, planned: list[tuple[str, Settings]],
            page_id: str, limit: int, t: Callable[..., str]) -> str:
    """What to lower, one change at a time, with what each would need: the changes that fit."""
    fits = []
    for key, value in settings.lighter_options():
        changed = [(tag, s.replace(**{key: value})) for tag, s in planned]
        need = planned_cost(image_key, changed, page_id)
        if need.bytes <= limit:
            fits.append(t("lower_to", name=key, value=value, gb=need.bytes / 1e9))
    return t("or_join").join(fits) if fits else t("lower_none")


def current_image(settings: Settings, t: Callable[..., str],
                  ) -> tuple[str, np.ndarray, np.ndarray, str]:
    """(cache key, model input [S, S, C], original, name) of the image to show. A new upload
    is decoded here; an unusable one is reported and the previous image stays."""
    state = st.session_state
    if settings.source == "upload":
        upload = state.get(keys.UPLOAD)
        if upload is not None and state.get(keys.UPLOAD_ID) != upload.file_id:
            data = upload.getvalue()
            try:
                images.decode_image(data, settings.image_size, settings.channels)
                state[keys.IMAGE_BYTES], state[keys.IMAGE_NAME] = data, upload.name
                state.pop(keys.UPLOAD_ERROR, None)
            except ImageError as err:
                state[keys.UPLOAD_ERROR] = (str(err), upload.name)
            # marked as handled only now: a rerun that interrupted the decoding (a slider
            # moved meanwhile) handles the upload again instead of losing it
            state[keys.UPLOAD_ID] = upload.file_id
        if state.get(keys.UPLOAD_ERROR):
            msg, _ = state[keys.UPLOAD_ERROR]
            st.error(t("bad_upload", msg=msg,
                       name=state.get(keys.IMAGE_NAME) or t("name_builtin")))
        if not state.get(keys.IMAGE_BYTES):
            st.info(t("upload_hint"))
    data, name = None, None
    if settings.source == "upload" and state.get(keys.IMAGE_BYTES):
        data, name = state[keys.IMAGE_BYTES], state.get(keys.IMAGE_NAME) or t("name_upload")
    elif settings.source == "sample":
        data = images.sample_png(settings.sample_seed)
        name = t("name_sample", seed=settings.sample_seed)
    if data is None:
        data, name = images.DEFAULT_IMAGE.read_bytes(), t("name_builtin")
    original, model_input = images.decode_image(data, settings.image_size, settings.channels)
    return images.content_key(data), model_input, original, name
