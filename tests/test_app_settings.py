"""AppTest: settings in the running app — kept across pages, fitted with a notice, read from
and written to the link, locked by trained weights, the same sidebar on every page."""

from __future__ import annotations

import pytest

from lens.steps import STEPS
from tests.support.apptest_helpers import (
    ALL_PAGES,
    SMALL,
    assert_clean,
    new_app,
    page_path,
    sidebar_labels,
)


def test_settings_persist_when_switching_pages():
    at = new_app(**SMALL)
    at.run()
    at.sidebar.select_slider(key="d_model").set_value(64).run()
    at.sidebar.slider(key="n_layers").set_value(3).run()
    for p in STEPS[1:4]:
        at.switch_page(p.path).run()
        assert_clean(at)
        assert at.session_state["d_model"] == 64
        assert at.session_state["n_layers"] == 3
        assert at.sidebar.select_slider(key="d_model").value == 64


def test_folded_architecture_controls_are_not_built_and_their_settings_hold():
    """A first visit sends the expander alone; the link's settings and changes made while it
    was open survive folding it, reruns and page switches."""
    at = new_app(advanced=False, **{**SMALL, "d_model": "64"})
    at.run()
    assert_clean(at)
    assert not at.sidebar.select_slider and not at.sidebar.slider and not at.sidebar.toggle
    assert at.session_state["d_model"] == 64
    at.session_state["sidebar_advanced"] = True  # the learner opens it
    at.run()
    assert at.sidebar.select_slider(key="d_model").value == 64
    at.sidebar.slider(key="n_layers").set_value(3).run()
    at.session_state["sidebar_advanced"] = False  # and folds it again
    at.run()
    assert not at.sidebar.slider
    for p in (STEPS[2], STEPS[5]):
        at.switch_page(p.path).run()
        assert_clean(at)
        assert (at.session_state["d_model"], at.session_state["n_layers"]) == (64, 3)
        assert at.query_params["n_layers"] in (["3"], "3")


def test_changing_d_model_snaps_h_to_a_valid_divisor_with_a_notice():
    at = new_app(**{**SMALL, "n_heads": "32", "d_model": "32"})
    at.run()
    at.sidebar.select_slider(key="d_model").set_value(8).run()
    assert_clean(at)
    assert 8 % at.session_state["n_heads"] == 0
    assert any("h = 32" in i.value for i in at.info)


def test_a_url_with_settings_restores_them():
    at = new_app(**SMALL, scale="d_model", use_ffn="0", seed="7", lang="zh")
    at.run()
    assert_clean(at)
    s = at.session_state
    assert (s["d_model"], s["n_heads"], s["n_layers"], s["scale"], s["use_ffn"], s["seed"]) == (
        32, 2, 2, "d_model", False, 7)
    assert s["lang"] == "zh"
    assert at.query_params["d_model"] == ["32"] or at.query_params["d_model"] == "32"


def test_a_malformed_url_falls_back_to_defaults_with_a_warning():
    at = new_app(d_model="banana", n_heads="7", scale="sqrt")
    at.run()
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "scale" in warnings and "d_model" in warnings
    assert at.session_state["d_model"] == 512 and at.session_state["scale"] == "d_k"


def test_a_url_made_with_an_upload_says_the_image_cannot_be_restored():
    at = new_app(**SMALL, source="upload")
    at.run()
    assert not at.exception
    assert any("upload" in w.value.lower() for w in at.warning)


def test_trained_weights_lock_the_architecture_and_show_a_prediction():
    from encoder_core.shapes_model.classifier import load_trained

    trained_cfg = load_trained()[0]
    at = new_app(weights="trained", source="sample", d_model="512", n_heads="8")
    at.run()
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    s = at.session_state
    assert (s["d_model"], s["n_heads"], s["n_layers"]) == (
        trained_cfg.d_model, trained_cfg.n_heads, trained_cfg.n_layers)
    assert at.sidebar.select_slider(key="d_model").disabled
    assert any("locked" in i.value for i in at.sidebar.info)
    prediction = [m.value for m in at.markdown if m.value.startswith("**Prediction")]
    assert prediction and "%" in prediction[0]
    at.sidebar.button(key="new_sample").click().run()
    assert_clean(at)
    assert at.session_state["sample_seed"] == 1



def test_random_trained_random_gives_back_the_learners_own_architecture():
    """Trained weights lock the architecture; returning to random weights restores the
    settings the learner had chosen (issue 36), not the trained model's."""
    from encoder_core.shapes_model.classifier import load_trained

    trained_cfg = load_trained()[0]
    own = {"d_model": 32, "n_heads": 2, "n_layers": 3, "query": 7}
    at = new_app(**{**SMALL, **{k: str(v) for k, v in own.items()}})
    at.run()
    assert_clean(at)
    assert {k: at.session_state[k] for k in own} == own
    at.sidebar.radio(key="weights").set_value("trained").run()
    assert_clean(at)
    assert at.session_state["d_model"] == trained_cfg.d_model != own["d_model"]
    at.sidebar.radio(key="weights").set_value("random").run()
    assert_clean(at)
    assert {k: at.session_state[k] for k in own} == own
    assert at.sidebar.select_slider(key="d_model").value == own["d_model"]
    assert at.query_params["d_model"] in ([str(own["d_model"])], str(own["d_model"]))


@pytest.mark.parametrize("query, key, given, used", [
    ({"n_layers": "13"}, "n_layers", "13", "12"),
    ({"d_model": "200"}, "d_model", "200", "192"),
    ({"image_size": "100"}, "image_size", "100", "96"),
    ({"query": "999999"}, "query", "999999", "195"),
    pytest.param({"image_size": "512", "n_heads": "16", "n_layers": "12"}, "n_heads", "16", "8",
                 marks=pytest.mark.slow),  # 1,024 tokens, 12 layers: ~7-12 s
    ({"seed": "-1"}, "seed", "-1", "0"),
    ({"weights": "gold"}, "weights", "gold", "random"),
])
def test_a_link_outside_the_controls_works_and_says_what_it_changed(query, key, given, used):
    at = new_app(**query)
    at.run()
    assert_clean(at)
    assert str(at.session_state[key]).lower() == used.lower() or (key, used) == ("seed", "0")
    warnings = [w.value for w in at.warning]
    assert any(f"{key} = {given}" in w and f"Using {used}" in w for w in warnings), warnings
    if key == "n_heads":
        assert any("GiB" in w for w in warnings), warnings  # over the memory limit, said so
    at.switch_page(page_path("multihead")).run()  # and every page works with it
    assert_clean(at)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sidebar_is_the_same_on_every_page(lang):
    at = new_app(**SMALL, lang=lang)
    at.run()
    seen = {}
    for step, path in ALL_PAGES:
        at.switch_page(path).run()
        assert_clean(at)
        seen[step] = sidebar_labels(at)
    first = seen[ALL_PAGES[0][0]]
    assert len(first) > 15
    for step, labels in seen.items():
        assert labels == first, (step, set(labels) ^ set(first))


def test_on_a_photo_the_trained_prediction_is_framed_as_a_four_shape_model_not_a_claim():
    at = new_app(weights="trained")  # the built-in photo
    at.run()
    at.switch_page(page_path("multihead")).run()
    assert_clean(at)
    assert not [m.value for m in at.markdown if "Prediction" in m.value]
    framed = [c.value for c in at.caption if "only knows four generated shapes" in c.value]
    assert framed and "%" in framed[0] and "**" not in framed[0]
