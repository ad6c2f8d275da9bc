"""The sidebar's "Download the walk as PDF": the handout of the current image and settings,
built only when asked, under the server's work budget, with its progress shown.

`offer(ctx)` draws the button (in a sidebar slot of its own) during the page's run and notes a
press; `build_asked(ctx, slot)` builds the PDF after the run has released the memory it reserved, so
that the PDF's own reservation never waits on the run that asked for it
(`lens.runner.run_page`). The PDF is kept in the session until the settings, the image, the
language, the layer, head or query, or the lesson's answers change.

The sheets receive the page's own context (`shown(ctx)`: its layer, head and query as the pages
show them, in `chosen`), the lesson's answers and the head's class names beside it.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import TYPE_CHECKING

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from encoder_core.views.analysis import score_divisor

from .. import keys
from ..admission import TooHeavyError
from ..context import PageContext
from ..fair_queue import Queue
from ..i18n import Texts
from ..lesson.tasks import task_texts
from ..lesson.ui import cards, course
from ..page_costs import handout_cost
from ..steps import STEPS

if TYPE_CHECKING:
    from .book import Answers
    from .pdf import TitlePage

OWNER = "handout"  # lens/texts/<lang>/handout.toml
Slot = DeltaGenerator  # the sidebar's place of the button, its progress and the download


def selection(ctx: PageContext) -> tuple[int, int, int]:
    """The layer, head (0-based) and query patch the pages show now."""
    cfg, s = ctx.cfg, ctx.settings
    query = int(st.session_state.get(keys.QUERY, s.query))
    return (min(max(s.layer, 0), cfg.n_layers - 1), min(max(s.head, 0), cfg.n_heads - 1),
            min(max(query, 0), cfg.n_tokens - 1))


def shown(ctx: PageContext) -> PageContext:
    """The page's context with the layer, head and query the pages show now chosen (as shown:
    layer and head 1-based): what every sheet of the PDF reads (`ctx.layer`, …)."""
    layer, head, query = selection(ctx)
    return ctx.choose(layer=layer + 1, head=head + 1, query=query)


def answers(ctx: PageContext) -> dict[str, tuple[tuple[str, str, str, str], ...]]:
    """The lesson's records, per step: (task, the learner's answer, the right one, result)."""
    if not ctx.settings.lesson or ctx.member is not None:
        return {}
    rec, lang, out = cards.records(), ctx.lang, {}
    t = Texts(lang, cards.OWNER)
    for spec in course.lesson_specs(ctx):
        r = rec.get(spec.id)
        if r is None:
            continue
        row = (task_texts(lang, spec)(f"{spec.id.replace('.', '_')}_short"),
               cards.shown_answer(lang, spec.id, r.given),
               cards.shown_answer(lang, spec.id, r.answer), t(course.result(r)))
        out[spec.page] = (*out.get(spec.page, ()), row)
    return out


def labels(ctx: PageContext) -> tuple[str, ...]:
    """The classification head's class names in logit order, as the pages show them; () without
    a head."""
    # imported when a PDF is asked for, not with the sidebar: the prediction's blocks would add
    # to a page's first run on a fresh server
    from ..sections.prediction import class_names

    return tuple(class_names(ctx)) if ctx.trace.params.head is not None else ()


def image_name(ctx: PageContext, t: Callable[..., str]) -> str:
    """The image's name as the PDF prints it: an upload named in a script its fonts lack
    (猫咪.jpg) is "your upload", not "??.jpg"."""
    from .pdf import can_draw

    return ctx.image_name if all(map(can_draw, ctx.image_name)) else t("name_upload")


def title_page(ctx: PageContext, answered: Answers, day: date) -> TitlePage:
    """The PDF's first page; `ctx` is the sheets' (`shown`)."""
    from .pdf import TitlePage

    t, cfg = Texts(ctx.lang, OWNER), ctx.cfg
    name = image_name(ctx, t)
    divisor = t(f"word_divisor_{cfg.scale}", **score_divisor(cfg))
    # in the lesson the derived sizes (N, d_k, the divisor's value) are answers: the
    # settings alone, the sizes on the sheets of the steps answered
    lines = [t("doc_settings_set" if ctx.ahead else "doc_settings", S=cfg.image_size,
               colour=t("doc_grey" if cfg.channels == 1 else "doc_rgb"),
               P=cfg.patch_size, N=cfg.n_tokens, d=cfg.d_model, h=cfg.n_heads, dk=cfg.d_head,
               L=cfg.n_layers, ffn=t("doc_on" if cfg.use_ffn else "doc_off"), divisor=divisor,
               pe=t("doc_on" if cfg.use_pe else "doc_off"))]
    if ctx.model is not None:
        lines.append(t("doc_model_checkpoint", name=ctx.model.name))
    elif ctx.weights == "trained":
        lines.append(t("doc_model_trained"))
    else:
        lines.append(t("doc_model_random", seed=cfg.seed))
    lines.append(t("doc_chosen", l=ctx.layer + 1, hd=ctx.head + 1, i=ctx.query))
    if answered:
        specs = course.lesson_specs(ctx)
        lines.append(t("doc_lesson", right=course.right_count(specs, cards.records()),
                       n=len(specs)))
    lines.append(t("doc_made", day=day.isoformat()))
    return TitlePage(title=t("doc_title"), image=ctx.original, image_name=name,
                     lines=tuple(lines), footer=t("doc_footer", name=name, day=day.isoformat()))


def identity(ctx: PageContext, answered: Answers) -> tuple:
    """What the PDF shows (`ctx`: the sheets', `shown`): a kept PDF of another identity is
    stale."""
    return (ctx.image_key, ctx.cfg, ctx.weights_id, ctx.lang, ctx.layer, ctx.head, ctx.query,
            repr(sorted(answered.items())), tuple(sorted(ctx.ahead)))


def file_name(ctx: PageContext) -> str:
    """encoder_lens_walk_en_d512_h8_L6.pdf: ASCII, named by what it holds."""
    cfg = ctx.cfg
    return f"encoder_lens_walk_{ctx.lang}_d{cfg.d_model}_h{cfg.n_heads}_L{cfg.n_layers}.pdf"


def offer(ctx: PageContext) -> Slot | None:
    """The sidebar's button (and, once built, the download), in a slot that `build_asked`
    fills after the run. In the lesson, or for a class's student, the PDF holds the steps
    whose questions are all answered, shown or revealed (`lens.handout.book.sheets_for`):
    offered once there is one, and said so."""
    state = st.session_state
    state.pop(keys.HANDOUT_ASKED, None)
    if all(not ctx.knows(info.id) for info in STEPS):
        return None
    t = Texts(ctx.lang, OWNER)
    box = st.sidebar.container(key="handout")
    box.subheader(t("handout"))
    if ctx.ahead:
        box.caption(t("handout_answered"))
    slot = box.empty()
    ready = state.get(keys.HANDOUT)
    if ready is not None and ready[0] != identity(shown(ctx), answers(ctx)):
        state.pop(keys.HANDOUT)  # the walk changed: the old PDF is stale
        ready = None
    if ready is not None:
        download(ctx, slot, ready[1])
    elif slot.button(t("handout_build"), key=keys.HANDOUT_BUILD, help=t("handout_help")):
        state[keys.HANDOUT_ASKED] = True  # a run with no PDF kept builds nothing else
    return slot


def download(ctx: PageContext, slot: Slot, pdf: bytes) -> None:
    """The PDF's download button; its bytes are handed over only when it is pressed."""
    t = Texts(ctx.lang, OWNER)
    slot.download_button(t("handout_download", mb=len(pdf) / 2**20), lambda: pdf,
                         file_name=file_name(ctx), mime="application/pdf",
                         key=keys.HANDOUT_DOWNLOAD, on_click="ignore")


def build_asked(ctx: PageContext, slot: Slot | None) -> None:
    """Build the PDF asked for in this run (after the run released its reservation), with
    its progress in the sidebar's slot, then offer it for download."""
    state = st.session_state
    if not state.pop(keys.HANDOUT_ASKED, False) or slot is None:
        return
    from .book import handout

    t = Texts(ctx.lang, OWNER)
    sheets_ctx, answered = shown(ctx), answers(ctx)
    need = handout_cost(ctx.cfg)
    with slot.container():
        bar = st.progress(0.0, text=t("handout_building", done=0))
        notice = st.empty()

    def waiting(q: Queue) -> None:
        notice.info(t("handout_wait", ahead=q.ahead, s=max(1.0, q.seconds_ahead)))

    def told(share: float) -> None:
        bar.progress(min(1.0, share), text=t("handout_building", done=100 * share))

    try:
        with ctx.services.budget().reserve(need.bytes, need.seconds, on_wait=waiting):
            notice.empty()
            pdf = handout(sheets_ctx, title_page(sheets_ctx, answered, date.today()), told,
                          answers=answered, labels=labels(ctx))
    except TooHeavyError as err:
        slot.error(t("handout_failed", msg=str(err)))
        return
    state[keys.HANDOUT] = (identity(sheets_ctx, answered), pdf)
    download(ctx, slot, pdf)
