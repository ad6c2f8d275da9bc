"""Meaning up front: trained attention one click away on the attention pages, and a slider that
walks the trained model through its training.

`trained_attention_control(ctx)` is drawn in the page (the sidebar stays the same everywhere)
by the scores, multi-head and stack pages. With random weights it offers one button that shows
the trained model on a generated shape; with trained weights it offers the training step
(`Settings.train_step`, one of the shipped checkpoints) and that step's held-out accuracy.
The trace, and with it the maps, the rollout and the prediction, follow the setting
(`lens.compute.weights_for`).
"""

from __future__ import annotations

import streamlit as st

from . import compute
from .context import PageContext
from .i18n import Texts, check_page_texts, translate
from .session import set_settings
from .settings import FINAL_STEP, train_steps

SHOW_TRAINED = "meaning_show_trained"  # button: trained weights on a generated shape

TEXT: Texts = check_page_texts("meaning", {
    "meaning_show": ("Show a trained model on a shape", "查看训练好的模型（形状图像）"),
    "meaning_show_help": (
        "These weights are random, so the maps show the mechanism, not meaning. One click "
        "loads the small encoder trained on generated shapes and shows it a shape.",
        "当前权重是随机的，注意力图只展示计算机制，没有含义。点击一次即可载入在生成形状上训练的"
        "小型编码器，并给它看一个形状。"),
    "meaning_step": ("Training step — watch attention learn", "训练步数——看注意力如何学会"),
    "meaning_step_help": (
        "The same model saved at several points of its training. Step 0 is the random start; "
        "the last step is the shipped weights.",
        "同一个模型在训练过程中几个时刻保存的权重。第 0 步是随机初始化；"
        "最后一步就是随应用提供的权重。"),
    "meaning_accuracy": (
        "After {step:,} training steps: **{acc:.1f} %** of held-out shapes classified right "
        "(chance: 25 %).",
        "训练 {step:,} 步后：留出集中的形状有 **{acc:.1f} %** 分类正确（随机猜测为 25 %）。"),
    "meaning_hint": (
        "Slide from step 0 to the end: the attention goes from an even wash to the shape, "
        "and the prediction from a guess to the right class.",
        "从第 0 步拖到最后：注意力从均匀分布变为集中在形状上，预测也从瞎猜变为正确的类别。"),
})


def say(ctx: PageContext, key: str, **values: object) -> str:
    """This module's text in the page's language."""
    return translate(key, ctx.lang, TEXT, **values)


def trained_attention_control(ctx: PageContext) -> None:
    """Random weights: a button to the trained model on a shape. Trained weights: the training
    step slider and the accuracy at that step. Nothing when no trained model is installed, nor
    for a loaded checkpoint (its weights are trained, and its own: no shapes, no steps)."""
    if "trained" not in compute.model_architectures() or ctx.model is not None:
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
