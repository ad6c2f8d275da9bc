"""Meaning up front: trained attention one click away on the attention pages, and a slider that
walks the trained model through its training.

`trained_attention_control(ctx)` is drawn in the page (the sidebar stays the same everywhere)
by the scores, multi-head and stack pages. With random weights it offers one button that shows
the trained model on a generated shape; with trained weights it offers the training step
(`Settings.train_step`, one of the shipped checkpoints) and that step's held-out accuracy.
The trace, and with it the maps, the rollout and the prediction, follow the setting
(`lens.model_weights.weights_for`).

The trained model itself, for a demo that shows nothing on random weights, is
`PageContext.trained_beside()`.
"""

from __future__ import annotations

import streamlit as st

from ..context import PageContext
from ..i18n import Texts
from ..session import set_settings
from ..settings import FINAL_STEP, train_steps

SHOW_TRAINED = "meaning_show_trained"  # button: trained weights on a generated shape

OWNER = "meaning"  # lens/texts/<lang>/meaning.toml



def trained_attention_control(ctx: PageContext) -> None:
    """Random weights: a button to the trained model on a shape. Trained weights: the training
    step slider and the accuracy at that step. Nothing when no trained model is installed, nor
    for a loaded checkpoint (its weights are trained, and its own: no shapes, no steps), nor
    for a student of a live class (the class's model is imposed: the button would do nothing)."""
    t = Texts(ctx.lang, OWNER)
    if not ctx.has_trained_model or ctx.student is not None:  # a student: the class's model
        return
    if ctx.weights != "trained":  # one bordered row: the button, then what it does
        row = st.container(border=True, horizontal=True, vertical_alignment="center")
        row.button(t("meaning_show"), key=SHOW_TRAINED, type="primary", wrap=True,
                   on_click=set_settings, kwargs={"weights": "trained", "source": "sample",
                                                  "train_step": FINAL_STEP})
        row.caption(t("meaning_show_help"))
        return
    box = st.container(border=True)
    shipped = ctx.services.checkpoint_steps()
    if len(shipped) < 2:  # only the final weights: nothing to slide through
        return
    final = shipped[-1]
    box.select_slider(t("meaning_step"), list(train_steps(shipped)), key="train_step",
                      format_func=lambda step: f"{final if step == FINAL_STEP else step:,}",
                      help=t("meaning_step_help"))
    checkpoint = ctx.services.checkpoint_at(ctx.settings.train_step)
    box.markdown(t("meaning_accuracy", step=checkpoint.step, acc=100 * checkpoint.accuracy))
    box.caption(t("meaning_hint"))
