"""Meaning up front: trained attention one click away on the attention pages, and a slider that
walks the trained model through its training.

`trained_attention_control(ctx)` is drawn in the page (the sidebar stays the same everywhere)
by the scores, multi-head and stack pages. With random weights it offers one button that shows
the trained model on a generated shape; with trained weights it offers the training step
(`Settings.train_step`, one of the shipped checkpoints) and that step's held-out accuracy.
The trace, and with it the maps, the rollout and the prediction, follow the setting
(`lens.compute.weights_for`).

`trained_beside(ctx)` is the trained model itself, for a demo that shows nothing on random
weights (Add & Norm's γ = 1, β = 0; the scores' divisors): the page draws it beside its own
trace, computed live from the shipped weights.
"""

from __future__ import annotations

import streamlit as st

from encoder_core import EncoderTrace

from . import compute
from .context import PageContext
from .i18n import translate
from .session import set_settings
from .settings import FINAL_STEP, train_steps

SHOW_TRAINED = "meaning_show_trained"  # button: trained weights on a generated shape

OWNER = "meaning"  # lens/texts/<lang>/meaning.toml


def say(ctx: PageContext, key: str, **values: object) -> str:
    """This module's text in the page's language."""
    return translate(key, ctx.lang, OWNER, **values)


def trained_attention_control(ctx: PageContext) -> None:
    """Random weights: a button to the trained model on a shape. Trained weights: the training
    step slider and the accuracy at that step. Nothing when no trained model is installed, nor
    for a loaded checkpoint (its weights are trained, and its own: no shapes, no steps), nor
    for a student of a live class (the class's model is imposed: the button would do nothing)."""
    if ("trained" not in compute.model_architectures() or ctx.model is not None
            or ctx.student is not None):  # a class's student: the model is the class's
        return
    if ctx.weights != "trained":  # one bordered row: the button, then what it does
        row = st.container(border=True, horizontal=True, vertical_alignment="center")
        row.button(say(ctx, "meaning_show"), key=SHOW_TRAINED, type="primary", wrap=True,
                   on_click=set_settings, kwargs={"weights": "trained", "source": "sample",
                                                  "train_step": FINAL_STEP})
        row.caption(say(ctx, "meaning_show_help"))
        return
    box = st.container(border=True)
    shipped = compute.checkpoint_steps()
    if len(shipped) < 2:  # only the final weights: nothing to slide through
        return
    final = shipped[-1]
    box.select_slider(say(ctx, "meaning_step"), list(train_steps(shipped)), key="train_step",
                      format_func=lambda step: f"{final if step == FINAL_STEP else step:,}",
                      help=say(ctx, "meaning_step_help"))
    checkpoint = compute.checkpoint_at(ctx.settings.train_step)
    box.markdown(say(ctx, "meaning_accuracy", step=checkpoint.step, acc=100 * checkpoint.accuracy))
    box.caption(say(ctx, "meaning_hint"))


def trained_beside(ctx: PageContext) -> EncoderTrace | None:
    """The trace (its weights: `.params`) of the shipped trained model, final weights, on the
    generated shape its button shows (`Settings.sample_seed`), with the page's score scaling
    and PE switch: the trace that button would show, cached as every trace (a click reuses
    it). None when no trained model is installed or a loaded checkpoint is shown (its own
    weights are trained)."""
    arch = compute.model_architectures().get("trained")
    if arch is None or ctx.model is not None:
        return None
    cfg = arch.replace(scale=ctx.settings.scale, use_pe=ctx.settings.use_pe)
    data = compute.sample_png(ctx.settings.sample_seed)
    _, model_input = compute.decode_image(data, cfg.image_size, cfg.channels)
    params, _ = compute.weights_for("trained", cfg, FINAL_STEP)
    return compute.trace_for(compute.content_key(data), model_input, cfg, params,
                             compute.weights_id("trained"))
