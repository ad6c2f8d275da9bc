"""AppTest: meaning up front — one click from random weights to the trained model on a shape,
and the training-step slider moves the attention, the rollout and the prediction with it."""

from __future__ import annotations

import numpy as np
import pytest

from lens import model_weights, resources
from lens.sections.meaning import SHOW_TRAINED
from lens.settings import FINAL_STEP
from lens.steps import PAGES
from tests.support.apptest_helpers import assert_clean, new_app

ATTENTION_PAGES = [PAGES[i].path for i in ("scores", "multihead", "stack")]


def prediction(at) -> str:
    return next(m.value for m in at.markdown if "Prediction" in m.value)


def trained_trace(weights: str):
    """The cached trace of the trained model's weights id `weights` (e.g. "trained@0")."""
    found = [v for k, v in resources.caches()["traces"]._items.items() if k[2] == weights]
    assert found, (weights, [k[2] for k in resources.caches()["traces"]._items])
    return found[-1]


@pytest.mark.parametrize("path", ATTENTION_PAGES)
def test_one_click_on_an_attention_page_shows_the_trained_model_on_a_shape(path):
    at = new_app()
    at.run()
    at.switch_page(path).run()
    assert at.session_state["weights"] == "random"
    at.button(key=SHOW_TRAINED).click().run()
    assert_clean(at)
    s = at.session_state
    assert (s["weights"], s["source"], s["train_step"]) == ("trained", "sample", FINAL_STEP)
    assert at.title[0].value == [p for p in PAGES.values() if p.path == path][0].title_in("en")
    assert "Prediction" in prediction(at)
    assert at.select_slider(key="train_step").value == FINAL_STEP  # in the page …
    assert not [e for e in at.sidebar.select_slider if e.key == "train_step"]  # … not the sidebar


def test_the_training_step_changes_the_attention_and_the_prediction():
    at = new_app(weights="trained", source="sample", sample_seed="3")
    at.run()
    at.switch_page(PAGES["multihead"].path).run()
    assert_clean(at)
    final_prediction = prediction(at)
    final = trained_trace("trained")
    slider = at.select_slider(key="train_step")
    steps = slider.options
    assert len(steps) >= 6
    slider.set_value(0).run()
    assert_clean(at)
    assert at.session_state["train_step"] == 0
    start = trained_trace("trained@0")
    assert np.array_equal(start.image, final.image)  # the same shape …
    assert not np.allclose(start.layers[0].attn, final.layers[0].attn, atol=1e-3)  # … other maps
    # step 0 attention is close to an even wash; the trained model's is far from it
    N = start.config.n_tokens
    assert np.abs(start.layers[0].attn - 1 / N).max() < np.abs(final.layers[0].attn - 1 / N).max()
    assert prediction(at) != final_prediction
    accuracy = " ".join(m.value for m in at.markdown if "held-out" in m.value)
    assert "After 0 training steps" in accuracy, accuracy
    assert at.query_params["train_step"] in (["0"], "0")


def rollout(weights: str) -> np.ndarray:
    """The stack page's cached rollout R [N, N] of the trained model's weights id `weights`."""
    found = [v for k, v in resources.caches()["derived"]._items.items()
             if k[2] == weights and k[3] == "rollout"]
    assert found, weights
    return found[-1]


def test_the_stack_page_rollout_follows_the_training_step():
    at = new_app(weights="trained", source="sample", train_step="0", sample_seed="5")
    at.run()
    at.switch_page(PAGES["stack"].path).run()
    assert_clean(at)
    at.select_slider(key="train_step").set_value(FINAL_STEP).run()
    assert_clean(at)
    start, final = rollout("trained@0"), rollout("trained")
    N = start.shape[0]
    # step 0: every query's rollout row is nearly even; trained: it is concentrated
    assert np.abs(start - 1 / N).max() < np.abs(final - 1 / N).max()
    assert not np.allclose(start, final, atol=1e-3)


def test_a_link_to_a_step_that_is_not_shipped_warns_and_uses_the_nearest():
    steps = model_weights.checkpoint_steps()
    at = new_app(weights="trained", source="sample", train_step=str(steps[1] + 1))
    at.run()
    assert not at.exception
    assert at.session_state["train_step"] == steps[1]
    assert any("train_step" in w.value for w in at.warning)


@pytest.mark.parametrize("path", [p.path for p in PAGES.values()])
def test_every_page_renders_at_training_step_0(path):
    at = new_app(weights="trained", source="sample", train_step="0")
    at.run()
    at.switch_page(path).run()
    assert_clean(at)
    assert at.session_state["train_step"] == 0
