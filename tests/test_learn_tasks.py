"""The lesson's tasks on the page "How it learns" (lens/walk/learn.py, issue 41 item 4): each
answer is what the core computes on the page's own example — the shapes model, trained or at random,
on the shape the page names — here computed outside the app from encoder_core alone, for both
weights and two shapes; the judging; every text in en and zh; and in the app (AppTest, lesson
mode): the cards on the page, what they withhold absent until answered, then drawn, in en and
zh, and the lesson's progress still counting the note's steps only."""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

import numpy as np
import pytest

from encoder_core import encode, predict
from encoder_core.params import init_params
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_sample
from encoder_core.views.learning import (
    cross_entropy,
    loss_gradients,
    random_head,
    train_step,
)
from lens import keys
from lens.i18n import translate
from lens.keys import LESSON_RECORDS
from lens.lesson.tasks import Fixed, judge, mistake, task_from_json, task_json, task_texts
from lens.settings import Settings
from lens.steps import STEPS, TASKS, tasks_for
from tests.support.apptest_helpers import assert_clean, new_app, open_page
from tests.test_lesson_tasks import context

SEED = 0  # the sidebar's seed of random weights (Settings' default)
SHAPES = (0, 1)


def model(weights: str):
    """The shapes model trained, or its architecture at random (seed SEED, a random head)."""
    cfg, params, _ = load_trained()
    if weights == "random":
        fresh = init_params(cfg.replace(seed=SEED))
        params = replace(fresh, head=random_head(cfg, len(CLASS_NAMES), SEED))
    return cfg, params


def page_shape(weights: str, start: int) -> int:
    """The shape the page starts on from the sidebar's number `start` (issue 50): trained, that
    one; at random, the first from it the untrained model gets wrong (its own prediction)."""
    cfg, params = model(weights)
    for shape in range(start, start + 20) if weights == "random" else ():
        s = make_sample(np.random.default_rng(shape))
        if int(np.argmax(predict(encode(s.image, cfg, params), params))) != s.label:
            return shape
    return start


def outside(weights: str, shape: int):
    """(cfg, params, image, label, trace, loss gradients) of the page's example when the
    sidebar's shape number is `shape`, from the core."""
    cfg, params = model(weights)
    s = make_sample(np.random.default_rng(page_shape(weights, shape)))
    trace = encode(s.image, cfg, params)
    return cfg, params, s.image, s.label, trace, loss_gradients(trace, params, s.label)


def outside_logit(weights: str, shape: int) -> tuple[str, dict[str, float]]:
    """One SGD step of 0.001 on the image: which way the label's logit went, and the numbers."""
    cfg, params, image, label, trace, lg = outside(weights, shape)
    after = train_step(image, label, cfg, params, "sgd", 0.001).params
    logits = predict(encode(image, cfg, after), after)
    delta = float(logits[label]) - float(lg.logits[label])
    way = "same" if abs(delta) <= 1e-6 else "up" if delta > 0 else "down"
    return way, {"logit_a": float(lg.logits[label]), "logit_b": float(logits[label]),
                 "loss_a": float(lg.loss), "loss_b": cross_entropy(logits, label)[0]}


def outside_value(weights: str, shape: int, l: int, h: int) -> tuple[str, dict[str, float]]:
    """dV = attnᵀ · dL/dheads in NumPy: the least and most attended keys' row norms."""
    _, _, _, _, trace, lg = outside(weights, shape)
    attn = trace.layers[l].attn[h].astype(np.float64)
    dv = attn.T @ lg.grads.layers[l].heads[h].astype(np.float64)
    received = attn.sum(axis=0)
    least, most = int(np.argmin(received)), int(np.argmax(received))
    a, b = float(np.linalg.norm(dv[least])), float(np.linalg.norm(dv[most]))
    way = "about_same" if abs(a - b) <= 0.1 * b else "smaller" if a < b else "larger"
    return way, {"least": least, "most": most, "n_least": a, "n_most": b}


def learn_context(weights: str, shape: int):
    return context("learn", weights=weights, sample_seed=shape)


@pytest.mark.parametrize("weights", ["trained", "random"])
@pytest.mark.parametrize("shape", SHAPES)
def test_the_logit_tasks_answer_is_the_cores_step(weights, shape):
    task = TASKS["learn.logit"].ask(learn_context(weights, shape), Fixed())
    way, numbers = outside_logit(weights, shape)
    assert task.answer == way and task.options == ("up", "down", "same")
    assert task.withholds == ("update",)
    shown = task.revealed()
    for name, value in numbers.items():
        assert shown[name] == pytest.approx(value, rel=1e-4, abs=1e-6), name
    assert shown["delta"] == pytest.approx(numbers["logit_b"] - numbers["logit_a"], abs=1e-5)


@pytest.mark.parametrize("weights", ["trained", "random"])
@pytest.mark.parametrize("shape", SHAPES)
def test_the_value_tasks_answer_is_the_cores_gradient(weights, shape):
    """Asked in the layer and head the page's own choosers hold (their defaults before they
    are drawn: the last layer, head 1), clamped to the model; the sidebar's play no part."""
    cfg = load_trained()[0]
    for state, (l, h) in (({}, (cfg.n_layers - 1, 0)),
                          ({keys.LEARN_LAYER: 0, keys.LEARN_HEAD: 1}, (0, 1)),
                          ({keys.LEARN_LAYER: 9, keys.LEARN_HEAD: 9},
                           (cfg.n_layers - 1, cfg.n_heads - 1))):
        ctx = replace(learn_context(weights, shape), state=MappingProxyType(state))
        task = TASKS["learn.value"].ask(ctx, Fixed(layer=0, head=3))
        assert task.fixed.layer == l and task.fixed.head == h
        assert task.values == {"l": l + 1, "h": h + 1} and task.withholds == ("value_grads",)
        way, numbers = outside_value(weights, shape, l, h)
        assert task.answer == way
        shown = task.revealed()
        for name, value in numbers.items():
            assert shown[name] == pytest.approx(value, rel=1e-5), name


def test_the_shape_follows_the_pages_and_so_does_the_binding():
    """Another shape is another image: another trace, so a task asked on the old one is asked
    afresh (its binding, `lens.lesson.progress.trace_binding`, names the task's trace)."""
    a = TASKS["learn.logit"].ask(learn_context("random", 0), Fixed())
    later = page_shape("random", page_shape("random", 0) + 1)  # the next it gets wrong
    b = TASKS["learn.logit"].ask(learn_context("random", later), Fixed())
    c = TASKS["learn.logit"].ask(learn_context("trained", 1), Fixed())
    assert not np.array_equal(a.trace.image, b.trace.image)
    assert np.array_equal(b.trace.image, make_sample(np.random.default_rng(later)).image)
    assert b.source == "random0" and c.source == ""  # the weights, in the binding


@pytest.mark.parametrize("task_id", ["learn.logit", "learn.value"])
def test_judged_right_only_with_the_computed_answer(task_id):
    task = TASKS[task_id].ask(learn_context("random", 0), Fixed())
    assert judge(task, task.answer).right and mistake(task, task.answer) is None
    for other in (o for o in task.options if o != task.answer):
        assert not judge(task, other).right and mistake(task, other) == other
    back = task_from_json(task_json(task))
    assert back == task.light() and judge(back, task.answer).right


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_is_there_with_its_values(lang):
    for task_id in ("learn.logit", "learn.value"):
        task = TASKS[task_id].ask(learn_context("trained", 0), Fixed())
        words, values = task_texts(lang, task), task.revealed()
        assert words(task.text("q"), **task.values) and words(task.text("why"), **values)
        assert words(f"{task.text_id}_concept") and words(f"{task.text_id}_short")
        assert words(f"{task.text_id}_label")
        for option in task.options:  # any may be the wrong one given
            assert words(f"{task.text_id}_{option}")
            assert words(f"{task.text_id}_if_{option}", **values), (task_id, option)


# --- in the app -----------------------------------------------------------------------------

LESSON = {"lesson": "1", "lc": "------."}  # the concept check before the lesson: skipped
N_TASKS = sum(len(tasks_for(p.id, Settings().to_config())) for p in STEPS)


def shown_sections(at) -> set[str]:
    """The withholdable parts drawn: containers keyed shown_<key>."""
    from tests.test_app_lesson import keyed  # noqa: PLC0415

    return {k.removeprefix("shown_") for k in keyed(at) if k.startswith("shown_")}


def open_tasks(at) -> list[str]:
    return [b.key.removeprefix("lesson_check_") for b in at.button
            if b.key and b.key.startswith("lesson_check_")]


def answer(at, text_id: str, given: str) -> None:
    radio = next(r for r in at.radio if r.key and r.key.startswith(f"lesson_in_{text_id}_"))
    radio.set_value(given)
    at.button(key=f"lesson_check_{text_id}").click().run()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_learn_page_asks_withholds_and_reveals_in_lesson_mode(lang):
    at = open_page(new_app(lang=lang, **LESSON), "learn")
    assert_clean(at)
    assert open_tasks(at) == ["learn_logit"]  # one at a time, in order
    q = translate("learn_logit_q", lang, "learn", lr=0.001, label="")
    assert any(q.split("**")[0][:20] in m.value for m in at.markdown)  # the question, in lang
    assert not shown_sections(at) & {"update", "value_grads"}
    keys = {b.key for b in at.get("download_button")}
    assert "dl_learn_loss" in keys and "dl_learn_prediction" not in keys  # update: not sent
    assert not at.metric  # the losses before / after the update: not drawn

    right_logit, _ = outside_logit("random", 0)  # the sidebar's weights: random, shape 0
    answer(at, "learn_logit", right_logit)
    assert_clean(at)
    assert "update" in shown_sections(at) and "value_grads" not in shown_sections(at)
    assert "dl_learn_prediction" in {b.key for b in at.get("download_button")}
    assert open_tasks(at) == ["learn_value"]

    wrong = next(o for o in ("smaller", "about_same", "larger")
                 if o != outside_value("random", 0, 1, 0)[0])  # the page's layer 2, head 1
    answer(at, "learn_value", wrong)
    assert_clean(at)
    assert {"update", "value_grads"} <= shown_sections(at) and open_tasks(at) == []
    records = at.session_state[LESSON_RECORDS]
    assert records["learn.logit"].right and not records["learn.value"].right
    assert records["learn.value"].given == wrong
    shown = translate("reveal_label", lang, "lesson", verdict=translate("wrong", lang, "lesson"),
                      task=translate("learn_value_short", lang, "learn"))
    assert shown in [e.label for e in at.expander]
    # the walk's progress: the note's steps only, the page's answers not counted
    progress = translate("progress", lang, "lesson", done=0, steps=len(STEPS), right=0,
                         answered=0, tasks=N_TASKS)
    assert progress in [c.value for c in at.caption]


def test_the_value_answers_bounds():
    """Every option can be the answer (the live examples checked above all give "smaller"): within
    10 % of the most-attended key's norm is about the same."""
    from lens.walk.learn import value_answer  # noqa: PLC0415

    assert value_answer(0.5, 1.0) == "smaller" and value_answer(1.5, 1.0) == "larger"
    assert value_answer(0.91, 1.0) == value_answer(1.09, 1.0) == "about_same"
    assert value_answer(0.89, 1.0) == "smaller" and value_answer(1.11, 1.0) == "larger"
