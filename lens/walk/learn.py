"""How it learns: its lesson tasks (`TASKS`, in the order asked); page `pages/learn.py`, words
`lens/texts/<lang>/learn.toml`. A page beyond the note: no handout sheet, and its tasks stay out
of the lesson's summary and progress (`lens.lesson.ui.course` counts the note's steps).

Both tasks are asked on the page's own example (`lens.one_image.example`): the shapes model, trained
or at random as the page shows it, on the generated shape the page's number names — not on the
sidebar's model. The task keeps that example's trace, so that its binding follows the shape and
the weights (`lens.lesson.progress.trace_binding`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from encoder_core.views.learning import logit_move, train_step, value_gradients

from .. import keys, one_image
from ..lesson.tasks import Fixed, Question, Spec

if TYPE_CHECKING:
    from ..context import PageContext
    from ..services import Services

OPTIMISER = "sgd"  # the page's default update and its default size
LOGIT = ("up", "down", "same")
VALUE = ("smaller", "about_same", "larger")
ABOUT_SAME = 0.10  # |‖dV_least‖ − ‖dV_most‖| within 10 % of ‖dV_most‖


def possible(ctx: PageContext) -> bool:
    return one_image.available(ctx.services)


def page_weights(ctx: PageContext) -> str:
    """The page's weights: the shapes model trained, unless the sidebar's are random."""
    return "random" if ctx.weights == "random" else "trained"


def page_shape(ctx: PageContext) -> int:
    """The shape the page's number input starts on (`one_image.start_shape`: at random weights
    the first the model gets wrong from the sidebar's sample number)."""
    return one_image.start_shape(ctx.services, page_weights(ctx), ctx.settings.seed,
                                 ctx.settings.sample_seed)


def page_example(ctx: PageContext) -> one_image.Example:
    """The example the page shows (`pages/learn.py` `image_and_label`): the shape its input holds
    (`page_shape` before it is drawn), trained weights unless the sidebar's are random."""
    shape = int(ctx.state.get(keys.LEARN_SHAPE, page_shape(ctx)))
    return one_image.example(ctx.services, page_weights(ctx), ctx.settings.seed, shape)


def source(w: one_image.Example) -> str:
    """The task's source: what its binding names beside the image ("" the trained weights)."""
    return "" if w.of[0] == "trained" else w.of[0]


def one_step(services: Services, w: one_image.Example) -> tuple[float, np.ndarray, float]:
    """One SGD step of the page's default size on the example's image: (the loss before, the
    logits after, the loss after), cached per example."""
    lr = one_image.DEFAULT_SIZE[OPTIMISER]

    def compute_it() -> tuple[float, np.ndarray, float]:
        step = train_step(w.image, w.label, w.cfg, w.params, OPTIMISER, lr)
        _, logits, _ = one_image.after(w, step.params)
        return step.loss_before, logits, one_image.image_loss(w, step.params)

    return services.derived(("learn_task_step", *w.of, OPTIMISER, lr), compute_it)


def learn_logit(ctx: PageContext, fixed: Fixed) -> Question:
    """After one SGD step against the loss's gradient, which way does the label's logit move?
    Computed: the step taken on the page's example (`logit_move`)."""
    w = page_example(ctx)
    loss_before, logits, loss_after = one_step(ctx.services, w)
    direction, _ = logit_move(w.lg.logits, logits, w.label)

    def evidence() -> dict[str, object]:
        _, delta = logit_move(w.lg.logits, logits, w.label)
        return {"loss_a": float(loss_before), "loss_b": float(loss_after),
                "logit_a": float(w.lg.logits[w.label]), "logit_b": float(logits[w.label]),
                "delta": delta}

    return Question(direction, {"label": int(w.label), "lr": one_image.DEFAULT_SIZE[OPTIMISER]},
                    ("update",), fixed, trace=w.trace, source=source(w), evidence=evidence)


def value_answer(dv_least: float, dv_most: float) -> str:
    if abs(dv_least - dv_most) <= ABOUT_SAME * dv_most:
        return "about_same"
    return "smaller" if dv_least < dv_most else "larger"


def page_layer_head(state: Mapping[str, object], n_layers: int, n_heads: int,
                    ) -> tuple[int, int]:
    """The layer and head the page's own choosers hold in `state` (the session's values as the
    run started; their defaults, the last layer and head 1, before they are drawn): the
    question names what its reveal's caption shows."""
    return (min(int(state.get(keys.LEARN_LAYER, n_layers - 1)), n_layers - 1),
            min(int(state.get(keys.LEARN_HEAD, 0)), n_heads - 1))


def learn_value(ctx: PageContext, fixed: Fixed) -> Question:
    """In one head: the least-attended key's row of V gets a gradient smaller than, about as
    large as or larger than the most-attended key's? Computed from `value_gradients`."""
    w = page_example(ctx)
    cfg = w.cfg
    l, h = page_layer_head(ctx.state, cfg.n_layers, cfg.n_heads)
    vg = value_gradients(w.trace.layers[l].attn[h], w.lg.grads.layers[l].heads[h])
    least, most = int(np.argmin(vg.received)), int(np.argmax(vg.received))
    answer = value_answer(float(vg.dv_norm[least]), float(vg.dv_norm[most]))

    def evidence() -> dict[str, object]:
        return {"least": least, "most": most, "r_least": float(vg.received[least]),
                "r_most": float(vg.received[most]), "n_least": float(vg.dv_norm[least]),
                "n_most": float(vg.dv_norm[most]), "N": cfg.n_tokens}

    return Question(answer, {"l": l + 1, "h": h + 1}, ("value_grads",),
                    Fixed(layer=l, head=h, query=fixed.query), trace=w.trace,
                    source=source(w), evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("logit", "choice", learn_logit, possible=possible, options=LOGIT),
    Spec("value", "choice", learn_value, possible=possible, options=VALUE),
)
