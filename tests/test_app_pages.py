"""AppTest: every page renders, in both languages, walked in the note's order; a click moves
the query; the trace export."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

from lens import keys
from lens.steps import STEPS
from tests.support.apptest_helpers import (
    ALL_PAGES,
    SMALL,
    assert_clean,
    new_app,
    open_page,
    page_path,
)


@pytest.mark.parametrize("step, path", ALL_PAGES)
def test_every_page_renders_pictures_at_the_default_settings(step, path):
    at = new_app()
    at.run()
    if path != STEPS[0].path:
        at.switch_page(path).run()
    assert_clean(at)
    if step == "vit":  # the note's encoder has no [CLS]: one line says how to load a ViT
        assert len(at.main.info) == 1 and not at.main.get("image")
    elif step == "class":  # no class yet: start one or join one (tests/test_app_class.py)
        assert at.button(key="class_start_button") and at.button(key="class_join_button")
    else:
        assert len(at.image) >= 1, f"{step} shows no picture"


@pytest.mark.parametrize("step, path", ALL_PAGES)
def test_every_page_renders_at_a_small_rgb_configuration_without_ffn(step, path):
    at = new_app(**SMALL, channels="3", use_ffn="0")
    at.run()
    at.switch_page(path).run()
    assert_clean(at)
    assert at.session_state["d_model"] == 32 and at.session_state["channels"] == 3
    assert len(at.image) >= 1 or step in ("ffn", "vit", "class")


@pytest.mark.slow
def test_every_page_runs_twice_in_one_session():
    """A second visit runs each page on the state the first one left: every widget's value and
    format function are serialised again. (The FFN page's unit-slice format_func closed over a
    name the page later rebound to a bool; from then on every run raised "Could not serialize
    value 0".) At the default settings d_ff = 2048 > 256, so the FFN page has that slider."""
    at = new_app()
    for visit in (1, 2):
        for step, _ in ALL_PAGES:
            open_page(at, step)
            assert not at.exception, (visit, step, [e.value for e in at.exception])
            assert_clean(at)
            if step == "ffn":
                assert at.select_slider(key="ffn_unit_slice").value == 0


@pytest.mark.slow
def test_previous_and_next_walk_every_page_in_the_note_order():
    at = new_app(**SMALL)
    at.run()
    titles = [at.title[0].value]
    for _ in STEPS[1:]:
        at.button(key="nav_next").click().run()
        assert_clean(at)
        titles.append(at.title[0].value)
    assert titles == [p.title_in("en") for p in STEPS]
    for _ in STEPS[1:]:
        at.button(key="nav_prev").click().run()
    assert at.title[0].value == STEPS[0].title_in("en")


CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("step, path", ALL_PAGES)
def test_the_language_switch_translates_every_page(step, path):
    at = new_app(**SMALL)
    at.run()
    at.switch_page(path).run()
    at.sidebar.radio(key="lang").set_value("zh").run()
    assert_clean(at)
    assert CJK.search(at.title[0].value), at.title[0].value
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    texts = [t for t in texts if t.strip() and not t.strip().startswith(("$", "<div"))]
    assert texts
    sentence = re.compile(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}")
    latin_only = [t for t in texts if not CJK.search(t) and sentence.search(t)]
    assert not latin_only, f"untranslated on {step}: {latin_only[:3]}"


def test_the_trace_export_is_built_on_demand_and_loads_without_pickle():
    at = new_app(**SMALL)
    at.run()
    assert not [b for b in at.sidebar.get("download_button")]  # nothing built before asked
    at.sidebar.button(key="export_build").click().run()
    assert_clean(at)
    ident, data = at.session_state[keys.EXPORT]
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        names = set(npz.files)
        assert {"patches", "embedded", "pe", "x0", "output", "config", "params/W_E"} <= names
        for l in range(2):
            for f in ("q", "k", "v", "scores", "attn", "heads", "concat", "attn_out",
                      "resid_1", "ln_1/mean", "ln_1/var", "ln_1/normed", "ln_1/out",
                      "ffn_hidden", "ffn_out", "resid_2", "ln_2/out", "out"):
                assert f"layer{l}/{f}" in names, f"layer{l}/{f}"
        assert npz["layer1/attn"].shape == (2, 16, 16)


def test_a_simulated_click_on_the_picture_moves_the_query():
    at = new_app(**SMALL)  # 64 px image, 16 px patches: a 4 × 4 grid
    at.run()
    at.switch_page(page_path("multihead")).run()
    assert at.session_state["query"] == 2 * 4 + 2  # the default: the centre patch
    # the explorer reports a commit (click, tap or arrow keys) as its "commit" state value
    at.session_state[keys.QUERY_CLICK] = {"commit": {"query": 7, "nonce": "1"}}
    at.run()
    assert_clean(at)
    assert at.session_state["query"] == 7
    assert (at.session_state["query_row"], at.session_state["query_col"]) == (1, 3)
    assert any("i = 7" in m.value for m in at.markdown)
    at.number_input(key="query_row").set_value(0).run()  # the old commit is not re-applied
    assert at.session_state["query"] == 3
    at.number_input(key="query_row").set_value(1).run()
    at.switch_page(page_path("scores")).run()  # the query is kept on other pages
    assert at.session_state["query"] == 7



def test_compare_names_permutation_equivariance_and_shows_it_holds_only_without_pe():
    at = new_app(**SMALL)
    at.run()
    at.switch_page(page_path("compare")).run()
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "permutation-equivariant" in text and "置换等变" in text
    off = re.search(r"Without PE: ([0-9.e+-]+)", text)
    on = re.search(r"With PE: ([0-9.]+)", text)
    assert off and on, text[:500]
    assert float(off.group(1)) < 1e-4 < 1e-2 < float(on.group(1))


@pytest.mark.parametrize("link, centre, multihead_live, stack_live", [
    ({"image_size": "320", "patch_size": "16", "d_model": "64", "n_heads": "8",
      "n_layers": "2"}, 10 * 20 + 10, True, "one"),  # 400 tokens: one layer of maps fits
    pytest.param({"image_size": "512", "patch_size": "16", "d_model": "64", "n_heads": "16",
                  "n_layers": "1"}, 16 * 32 + 16, False, "none",  # 1,024 tokens × 16 heads:
                 marks=pytest.mark.slow),  # over the cap (3-5 s)
])
def test_over_the_explorer_cap_the_pages_fall_back_and_say_so(link, centre, multihead_live,
                                                              stack_live):
    at = new_app(**link)
    at.run()
    at.switch_page(page_path("multihead")).run()
    assert_clean(at)
    said = " ".join(c.value for c in at.caption)
    assert ("over the 4 MB a page sends" in said) != multihead_live
    assert len(at.image) >= 1 and at.session_state["query"] == centre
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    said = " ".join(c.value for c in at.caption)
    assert ("the pointer are those of layer 1" in said) == (stack_live == "one")
    assert ("over the 4 MB a page sends" in said) == (stack_live == "none")


def trace_attn(**link: str) -> np.ndarray:
    """Every layer's attn at these link settings on the built-in photo, [L, h, N, N], computed
    here as the app does."""
    from encoder_core import encode
    from lens import images, model_weights
    from lens.settings import Settings

    cfg = Settings.from_url(link)[0].to_config()
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    params = model_weights.random_params(cfg)
    return np.stack([layer.attn for layer in encode(image, cfg, params).layers])


def test_above_8_heads_the_learner_chooses_which_heads_the_grids_show(monkeypatch):
    """The stack's live grid and Compare's grids show the first 8 of 16 heads by default and
    then the heads chosen, with a caption saying how many there are."""
    from lens import explorer, resources, widgets

    sent, drawn = [], []
    real_payload, real_render = explorer.payload, widgets.render

    def spy_payload(image, grid, query, text, maps=None):
        sent.append(maps)
        return real_payload(image, grid, query, text, maps)

    def spy_render(draw, *args, **kwargs):
        drawn.append((draw.__name__, args))
        return real_render(draw, *args, **kwargs)

    resources.caches()["payloads"].clear()  # every payload is built (and seen) here
    monkeypatch.setattr(explorer, "payload", spy_payload)
    monkeypatch.setattr(widgets, "render", spy_render)
    at = new_app(d_model="64", n_heads="16", n_layers="2")
    at.run()
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    grid = [m for m in sent if m is not None][-1]
    assert list(grid.col_labels) == [f"head {n}" for n in range(1, 9)]
    assert at.multiselect(key="stack_heads").value == list(range(8))
    assert "There are h = 16 heads" in " ".join(c.value for c in at.caption)
    sent.clear()
    at.multiselect(key="stack_heads").set_value([15, 3, 9]).run()
    assert_clean(at)
    grid = [m for m in sent if m is not None][-1]
    assert list(grid.col_labels) == ["head 4", "head 10", "head 16"]
    assert np.array_equal(grid.attn, trace_attn(d_model="64", n_heads="16",
                                                n_layers="2")[:, [3, 9, 15]])
    at.switch_page(page_path("compare")).run()
    assert_clean(at)
    drawn.clear()
    at.multiselect(key="compare_heads").set_value([12, 13]).run()
    assert_clean(at)
    titles = [args[2] for kind, args in drawn if kind == "attention_grid"]
    assert titles[:2] == [["head 13", "head 14"]] * 2, titles  # PE on and off


def test_the_explorer_payload_is_built_once_for_every_session_at_the_same_settings(monkeypatch):
    """Two learners on Multi-head at the same link share one payload (built once, neither
    rebuilt nor hashed on a rerun); another layer or query is another payload, and each equals
    the payload built straight from the trace."""
    from lens import explorer, resources

    built = []
    real_payload = explorer.payload

    def spy_payload(image, grid, query, text, maps=None):
        built.append((query, maps))
        return real_payload(image, grid, query, text, maps)

    resources.caches()["payloads"].clear()
    monkeypatch.setattr(explorer, "payload", spy_payload)
    link = dict(d_model="64", n_heads="4", n_layers="2", query="7")
    for _ in range(2):  # two sessions
        at = new_app(**link)
        at.run()
        at.switch_page(page_path("multihead")).run()
        assert_clean(at)
        at.run()  # a rerun
        assert_clean(at)
    assert len(built) == 1, [q for q, _ in built]
    query, maps = built[0]
    attn = trace_attn(**link)
    assert query == 7 and np.array_equal(maps.attn, attn[0][None])
    at.select_slider(key="layer").set_value(1).run()  # another layer: another payload
    assert_clean(at)
    assert len(built) == 2 and np.array_equal(built[1][1].attn, attn[1][None])



def test_above_6_layers_the_stack_spreads_its_layers_and_the_learner_chooses(monkeypatch):
    """12 layers: the grid shows layers 1, 3, 5, 8, 10, 12 by default (first to last), then
    the layers chosen; the maps sent are those layers' attention."""
    from lens import explorer, resources

    sent = []
    real_payload = explorer.payload

    def spy_payload(image, grid, query, text, maps=None):
        sent.append(maps)
        return real_payload(image, grid, query, text, maps)

    resources.caches()["payloads"].clear()
    monkeypatch.setattr(explorer, "payload", spy_payload)
    link = dict(image_size="64", patch_size="16", d_model="32", n_heads="2", n_layers="12")
    at = new_app(**link)
    at.run()
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    assert at.multiselect(key="stack_layers").value == [0, 2, 4, 7, 9, 11]
    grid = [m for m in sent if m is not None][-1]
    assert list(grid.row_labels) == [f"layer {n}" for n in (1, 3, 5, 8, 10, 12)]
    assert "There are 12 layers" in " ".join(c.value for c in at.caption)
    sent.clear()
    at.multiselect(key="stack_layers").set_value([11, 6]).run()
    assert_clean(at)
    grid = [m for m in sent if m is not None][-1]
    assert np.array_equal(grid.attn, trace_attn(**link)[[6, 11]])
