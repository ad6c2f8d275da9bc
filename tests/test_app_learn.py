"""AppTest of the page "How it learns" (issue 41, items 1 and 2; issue 50, item 6), in English
and 中文: it draws with no exception and shows its five parts; the loss it states is the core's
on the same shape (computed here outside the app); one update is taken at once, "ten more
steps" adds ten and lowers the loss, and a run never holds more than MAX_STEPS steps. Issue 50:
at random weights the page starts on a shape the untrained model gets wrong and says its
answers are chance; the difference map (after − before) is drawn and the largest changes the
page states are |after − before|'s from the core; the steps of a shape survive a change of
shape and back. (Its figures' texts in 中文 are checked with every page's by
tests/test_app_figure_texts.py.)"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest

from encoder_core import encode, predict
from encoder_core.params import init_params
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_sample
from encoder_core.views.learning import cross_entropy, random_head
from lens import keys, one_image, page_costs
from lens.i18n import translate
from tests.support.apptest_helpers import assert_clean, new_app, open_page

PARTS = {"en": ["1 · The loss", "2 · Back through the head", "3 · Back through a layer",
                "4 · Down to the patch embedding W_E", "5 · One update, seen"],
         "zh": ["1 · 损失", "2 · 反向穿过分类头", "3 · 反向穿过一层", "4 · 一直到图像块嵌入 W_E",
                "5 · 看得见的一次更新"]}


def outside_loss(shape: int) -> float:
    """The trained model's loss on generated shape `shape`, outside the app."""
    cfg, params, _ = load_trained()
    s = make_sample(np.random.default_rng(shape))
    return cross_entropy(predict(encode(s.image, cfg, params), params), s.label)[0]


def untrained(seed: int = 0):
    """The shapes model's architecture with random weights and a random head, from the core
    (what the sidebar's random weights of seed `seed` give the page)."""
    cfg, _, _ = load_trained()
    fresh = init_params(cfg.replace(seed=seed))
    return cfg, replace(fresh, head=random_head(cfg, len(CLASS_NAMES), seed))


def latest(at) -> one_image.Run:
    """The run the page shows: the latest of the session's kept runs."""
    runs = at.session_state[keys.LEARN_RUN]
    return list(runs.values())[-1]


def metrics(at) -> list[float]:
    """The losses the page states (before, after), and the run's: the same to 4 digits."""
    shown = [float(m.value) for m in at.metric]
    run = latest(at)
    assert shown == [float(f"{run.losses[0]:.4g}"), float(f"{run.losses[-1]:.4g}")]
    return [run.losses[0], run.losses[-1]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_its_five_parts_and_the_cores_loss(lang):
    at = open_page(new_app(lang=lang, weights="trained"), "learn")
    assert_clean(at)
    heads = [s.value for s in at.subheader]
    assert heads[:5] == PARTS[lang]
    assert len(at.image) >= 12  # the image, the loss, the gradients, the maps, the curve
    before, after = metrics(at)  # the loss before the step and after it
    assert before == pytest.approx(outside_loss(0), rel=1e-4)
    assert after < before  # one small step on this image lowers its loss
    run = latest(at)
    assert len(run.losses) == 2 and run.settings[2:] == ("sgd", one_image.DEFAULT_SIZE["sgd"])
    # the label's logit before and after, as the core computes them after the same step
    cfg, params, _ = load_trained()
    s = make_sample(np.random.default_rng(0))
    before = predict(encode(s.image, cfg, params), params)[s.label]
    after = predict(encode(s.image, cfg, run.params), run.params)[s.label]
    said = {"en": f"{before:.4f} → {after:.4f}", "zh": f"{before:.4f} → {after:.4f}"}[lang]
    assert any(said in c.value for c in at.caption), [c.value for c in at.caption]


def test_ten_more_steps_add_ten_and_lower_the_loss_on_random_weights():
    at = open_page(new_app(weights="random"), "learn")
    assert_clean(at)
    first_before, first_after = metrics(at)
    at.button(key="learn_more").click().run()
    assert_clean(at)
    run = latest(at)
    assert len(run.losses) == 12  # before step 1, …, before step 11, after step 11
    before, after = metrics(at)
    assert before == first_before and after < first_after


def test_adam_starts_a_new_run():
    at = open_page(new_app(weights="random"), "learn")
    at.radio(key="learn_optimiser").set_value("adam").run()
    assert_clean(at)
    run = latest(at)
    assert run.settings[2:] == ("adam", one_image.DEFAULT_SIZE["adam"]) and run.adam.t == 1
    assert len(run.losses) == 2 and run.losses[1] < run.losses[0]


def test_a_run_never_holds_more_than_max_steps(monkeypatch):
    monkeypatch.setattr(one_image, "MAX_STEPS", 15)
    at = open_page(new_app(weights="random"), "learn")
    for _ in range(3):
        at.button(key="learn_more").click().run()
    assert_clean(at)
    assert len(latest(at).losses) == 15 + 1


def test_the_cost_model_names_the_shapes_models_architecture():
    cfg, _, _ = load_trained()
    assert page_costs.SHAPES_ARCHITECTURE == cfg


CHECK = re.compile(r"Recomputed here in float64: \*\*(\S+)\*\*\..*\*\*(\S+)\*\*\.", re.S)


def stored_checks(at) -> list[tuple[float, float]]:
    """Each entry the page writes out: (recomputed in float64, the value the backward holds)."""
    found = [CHECK.search(m.value) for m in at.markdown]
    return [(float(m[1]), float(m[2])) for m in found if m]


def test_every_entry_written_out_is_the_backwards_own_at_another_layer_head_and_row():
    """Layer 1, head 3, row 5 chosen: the page's entries (dL/dpooled_j, one row's LayerNorm
    dx_j, dL/dscores_ij by the Jacobian, dL/dattn_ij, dL/dW_E[k, j]), recomputed from their
    formulas, equal what `backward` stored; the expanders are opened so all are drawn."""
    at = open_page(new_app(weights="random"), "learn")
    at.selectbox(key="learn_layer").set_value(0)
    at.selectbox(key="learn_head").set_value(2)
    at.number_input(key="learn_row").set_value(5).run()
    assert_clean(at)
    assert "Layer 1, head 3, query 5" in " ".join(m.value for m in at.markdown)
    checks = stored_checks(at)
    assert len(checks) == 5, checks
    for mine, stored in checks:
        assert mine == pytest.approx(stored, rel=1e-4, abs=1e-9)


def test_untrained_the_page_starts_on_a_shape_the_model_gets_wrong_and_says_chance():
    """The untrained model's own prediction, from the core: the shape the page starts on is the
    first from the sidebar's number (0) that it gets wrong, and the page says its answers are
    chance, with how often it gives its commonest answer."""
    cfg, params = untrained()
    at = open_page(new_app(weights="random"), "learn")
    assert_clean(at)
    shape = int(at.number_input(key=keys.LEARN_SHAPE).value)
    answers, labels = [], []
    for k in range(one_image.SURVEYED):
        s = make_sample(np.random.default_rng(k))
        answers.append(int(np.argmax(predict(encode(s.image, cfg, params), params))))
        labels.append(s.label)
    wrong = [k for k in range(len(labels)) if answers[k] != labels[k]]
    assert wrong and shape == wrong[0]  # wrong there, right on every shape before it
    top = max(set(answers), key=answers.count)
    said = translate("chance_start", "en", "learn", n=len(labels), a=0, b=len(labels) - 1,
                     top=translate(f"class_{CLASS_NAMES[top]}", "en", "learn"),
                     k=answers.count(top), s=wrong[0])
    assert any(said in c.value for c in at.caption), [c.value for c in at.caption]
    assert latest(at).settings[1] == shape


MOVED = re.compile(r"\*\*([+-][0-9.]+e[+-]\d+)\*\*, at key (\d+).*\*\*([+-][0-9.]+e[+-]\d+)\*\*: "
                   r"layer (\d+), head (\d+), query (\d+), key (\d+)", re.S)


@pytest.mark.parametrize("more", [0, 10])
def test_the_difference_map_is_drawn_and_its_largest_change_is_the_cores(more):
    """After one step (and after eleven): the difference picture is sent, and the largest
    change the page states — in the map of the chosen layer, head and query, and anywhere in
    the attention — is max |after − before| of the core's traces before and after the run."""
    cfg, params = untrained()
    at = open_page(new_app(weights="random"), "learn")
    if more:
        at.button(key="learn_more").click().run()
    assert_clean(at)
    assert "dl_learn_change" in {b.key for b in at.get("download_button")}
    found = [MOVED.search(m.value) for m in at.markdown]
    found = [m for m in found if m]
    assert len(found) == 1, [m.value for m in at.markdown]
    v, j, V, L, H, I, J = found[0].groups()  # noqa: E741
    run = latest(at)
    assert len(run.losses) - 1 == 1 + more
    s = make_sample(np.random.default_rng(int(at.number_input(key=keys.LEARN_SHAPE).value)))
    before, after = encode(s.image, cfg, params), encode(s.image, cfg, run.params)
    delta = np.stack([b.attn.astype(np.float64) - a.attn.astype(np.float64)
                      for a, b in zip(before.layers, after.layers, strict=True)])
    layer, head, row = cfg.n_layers - 1, 0, cfg.n_tokens // 2  # the page's defaults
    here = delta[layer, head, row]
    assert int(j) == int(np.argmax(np.abs(here)))
    assert abs(float(v)) == pytest.approx(np.abs(here).max(), rel=1e-2)
    where = np.unravel_index(int(np.argmax(np.abs(delta))), delta.shape)
    assert (int(L) - 1, int(H) - 1, int(I), int(J)) == tuple(int(x) for x in where)
    assert abs(float(V)) == pytest.approx(np.abs(delta).max(), rel=1e-2)
    assert np.abs(delta).max() > 0  # one step moves the attention: the map has something


def test_the_extra_steps_survive_a_change_of_shape_and_back():
    at = open_page(new_app(weights="random"), "learn")
    first = int(at.number_input(key=keys.LEARN_SHAPE).value)
    at.button(key="learn_more").click().run()
    eleven = latest(at)
    assert len(eleven.losses) == 12
    at.number_input(key=keys.LEARN_SHAPE).set_value(first + 1).run()
    assert_clean(at)
    assert latest(at).settings[1] == first + 1 and len(latest(at).losses) == 2
    at.number_input(key=keys.LEARN_SHAPE).set_value(first).run()
    assert_clean(at)
    back = latest(at)
    assert back.settings == eleven.settings and back.losses == eleven.losses
    assert [m.label for m in at.metric][1] == translate("loss_after", "en", "learn", n=11)


def test_the_session_keeps_the_latest_runs_one_per_setting():
    """`one_image.kept`: a run filed again replaces its setting's and becomes the latest; beyond
    KEPT the oldest goes; the dict given is left as it was."""
    base = one_image.Run(("random0", 0, "sgd", 0.001), None, None, (1.0, 0.5))
    runs = None
    for shape in range(one_image.KEPT + 2):
        runs = one_image.kept(runs, replace(base, settings=("random0", shape, "sgd", 0.001)))
    assert [k[1] for k in runs] == list(range(2, one_image.KEPT + 2))
    again = replace(base, settings=("random0", 3, "sgd", 0.001), losses=(1.0, 0.5, 0.2))
    before = dict(runs)
    after = one_image.kept(runs, again)
    assert runs == before and list(after)[-1][1] == 3 and after[again.settings] is again
    assert len(after) == one_image.KEPT
