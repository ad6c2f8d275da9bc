"""The frame around every page: notices, title with previous / next, the caption about the
weights (and the trained model's prediction), and the trace export. The app's navigation is
`lens.router`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from encoder_core import EncoderTrace
from encoder_core.export import trace_npz_bytes

from . import keys, session
from .settings import Notice
from .steps import PAGES, STEPS, neighbours, step_number

if TYPE_CHECKING:
    from .context import PageContext

# Link key -> how the learner sees it in a sentence.
SYMBOLS = {"n_heads": "h", "patch_size": "P", "image_size": "S", "d_model": "d_model"}


def notice_text(n: Notice, t: Callable[..., str], from_link: bool) -> str:
    """One sentence: the key, the value given, the value used, and why."""
    if n.why == "upload_lost":
        return t("url_upload")
    name = SYMBOLS.get(n.key, n.key) if not from_link else n.key
    why = t(f"why_{n.why}", **n.detail)
    return t("notice_link" if from_link else "notice_change", name=name, given=n.given,
             used=n.used, why=why)


def notices(t: Callable[..., str]) -> None:
    """What the link asked for that could not be used (a warning each), and what the last
    change adjusted (a notice each)."""
    from_link, from_change = session.take_notices()
    for n in from_link:
        st.warning(notice_text(n, t, from_link=True))
    for n in from_change:
        st.info(notice_text(n, t, from_link=False))


def header(ctx: PageContext, caption: Callable[[], None] | None = None, *,
           asks_first: bool = False) -> None:
    """The app's name, the title, 'step k of n' with previous / next, the `caption` the
    runner's role gives (a student's class, the lesson's progress), the step in one line —
    unless the role `asks_first`: in the lesson and in a class the takeaway would answer the
    step's questions (it states what the step does), so the runner draws it after the cards,
    once none is open — and the caption about the weights."""
    info = PAGES[ctx.id]
    st.caption(ctx.t("app_title"))
    st.title(info.title_in(ctx.lang))
    _step_navigation(ctx, keys.NAV_PREV, keys.NAV_NEXT)
    if caption is not None:
        caption()
    if not asks_first:
        takeaway(ctx)
    weights_caption(ctx)


def takeaway(ctx: PageContext) -> None:
    """The step in one line, in bold."""
    st.markdown(f"**{PAGES[ctx.id].takeaway_in(ctx.lang)}**")


def footer(ctx: PageContext) -> None:
    """Previous / next again at the end of a long page."""
    st.divider()
    _step_navigation(ctx, keys.NAV_PREV_BOTTOM, keys.NAV_NEXT_BOTTOM)


def _step_navigation(ctx: PageContext, prev_key: str, next_key: str) -> None:
    k = step_number(ctx.id)
    if k is None:
        return
    previous, following = neighbours(ctx.id)
    # One row kept on one line on a phone too (a flex container, not columns that stack):
    # previous in a slot at the left, the step in the middle, next in a slot at the right. The
    # two slots stretch alike, so the step stays centred when one of them is empty (step 1, 10).
    row = st.container(horizontal=True, vertical_alignment="center", wrap=False)
    left = row.container(horizontal=True, horizontal_alignment="left")
    # st.html, not st.markdown: a markdown block's negative bottom margin would hang the text
    # 8 px below the buttons' middle.
    row.html(f"<div style='text-align:center'>{ctx.t('step_of', k=k, n=len(STEPS))}</div>",
             width="content")
    right = row.container(horizontal=True, horizontal_alignment="right")
    for slot, target, label, key in ((left, previous, "prev", prev_key),
                                     (right, following, "next", next_key)):
        if target is None:
            slot.html("<span></span>")  # an empty slot is not drawn at all: it must hold one
        elif slot.button(ctx.t(label), key=key, wrap=True):
            st.switch_page(target.path)


def weights_caption(ctx: PageContext) -> None:
    """Random weights: say so. A trained model: its prediction, with what it was trained on.
    A checkpoint: which, and what of its file no page uses."""
    if ctx.weights == "trained":
        from encoder_core import predict, softmax

        probs = softmax(predict(ctx.trace, ctx.trace.params))  # the head is in the weights
        names = [ctx.t(f"class_{c}") for c in ctx.head_model.class_names]
        ranked = sorted(zip(names, probs, strict=True), key=lambda cp: -cp[1])
        listed = " · ".join(f"{c} {100 * p:.1f} %" for c, p in ranked)
        if ctx.settings.source == "sample":  # the model's own kind of image: a real answer
            st.markdown(ctx.t("prediction", best=ranked[0][0], p=100 * ranked[0][1], all=listed))
        else:  # a photo or an upload: never a bold, confident claim
            st.caption(ctx.t("prediction_off_domain", all=listed))
        steps = ctx.services.checkpoint_steps()
        checkpoint = ctx.services.checkpoint_at(ctx.settings.train_step)
        if checkpoint is not None and steps and checkpoint.step < steps[-1]:
            st.caption(ctx.t("trained_caption_step", step=checkpoint.step, final=steps[-1]))
        else:
            st.caption(ctx.t("trained_caption"))
    elif ctx.model is not None:
        aside = ctx.model.info.set_aside  # a DINO projection head, HF's pooler, a mask token
        st.caption(ctx.t("checkpoint_caption", name=ctx.model.name)
                   + (" " + ctx.t("checkpoint_set_aside", keys=", ".join(aside)) if aside else ""))
    else:
        st.caption(ctx.t("random_caption", seed=ctx.cfg.seed))


def export(t: Callable[..., str], trace: EncoderTrace, image_key: str, weights: str) -> None:
    """Sidebar: build the trace's .npz only when asked (a large trace must not slow reruns)."""
    sb = st.sidebar
    sb.subheader(t("export"))
    ident = (image_key, trace.config, weights)
    ready = st.session_state.get(keys.EXPORT)
    if ready is not None and ready[0] != ident:
        st.session_state[keys.EXPORT] = ready = None  # settings changed: the old file is stale
    if ready is None and sb.button(t("export_build"), key=keys.EXPORT_BUILD):
        with sb.status(t("export_build")):
            st.session_state[keys.EXPORT] = ready = (ident, trace_npz_bytes(trace))
    if ready is not None:
        sb.download_button(t("export_download", mb=len(ready[1]) / 2**20), ready[1],
                           file_name="trace.npz", mime="application/octet-stream",
                           key=keys.EXPORT_DOWNLOAD, on_click="ignore")
