"""AppTest tests of the Streamlit app: every page, uploads, errors, state, cache bound, URL."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from encoder_core import EncoderConfig, load_image
from lens import state
from lens.state import EXTRA_PAGES, STEPS

APP = str(state.ROOT / "app.py")
ALL_PAGES = [(s[0], s[1]) for s in STEPS + EXTRA_PAGES]
SMALL = {"image_size": "64", "patch_size": "16", "d_model": "32", "n_heads": "2",
         "n_layers": "2"}


def new_app(**query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    return at


def png_bytes(seed: int, size: int = 40, mode: str = "RGB") -> bytes:
    rng = np.random.default_rng(seed)
    arr = (rng.random((size, size + 8, 3)) * 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).convert(mode).save(buf, format="PNG")
    return buf.getvalue()


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)


def upload(at: AppTest, name: str, data: bytes, mime: str = "image/png") -> None:
    if at.session_state["source"] != "upload":
        at.sidebar.radio(key="source").set_value("upload").run()
    at.sidebar.file_uploader[0].set_value((name, data, mime)).run()


@pytest.mark.parametrize("step, path", ALL_PAGES)
def test_every_page_renders_pictures_at_the_default_settings(step, path):
    at = new_app()
    at.run()
    if path != STEPS[0][1]:
        at.switch_page(path).run()
    assert_clean(at)
    assert len(at.image) >= 1, f"{step} shows no picture"


@pytest.mark.parametrize("step, path", ALL_PAGES)
def test_every_page_renders_at_a_small_rgb_configuration_without_ffn(step, path):
    at = new_app(**SMALL, channels="3", use_ffn="0")
    at.run()
    at.switch_page(path).run()
    assert_clean(at)
    assert at.session_state["d_model"] == 32 and at.session_state["channels"] == 3
    assert len(at.image) >= 1 or step == "ffn"


def test_an_uploaded_png_reaches_the_trace():
    at = new_app(**SMALL)
    at.run()
    data = png_bytes(1)
    upload(at, "pattern.png", data)
    assert_clean(at)
    assert at.session_state["image_name"] == "pattern.png"
    cfg = EncoderConfig(image_size=64, patch_size=16, d_model=32, n_heads=2, n_layers=2,
                        d_ff=128)
    expected = load_image(data, cfg)
    traces = [v for k, v in state.caches()["traces"]._items.items() if k[1] == cfg]
    assert any(np.array_equal(t.image, expected) for t in traces)


def test_a_bad_upload_shows_an_error_and_the_next_good_upload_works():
    at = new_app(**SMALL)
    at.run()
    good = png_bytes(2)
    upload(at, "broken.png", good[: len(good) // 2])
    assert not at.exception
    assert any("damaged" in e or "cannot" in e for e in errors(at)), errors(at)
    assert len(at.image) >= 1  # still showing a picture (the built-in photo)
    upload(at, "text.png", b"this is not an image at all")
    assert any("not an image" in e for e in errors(at)), errors(at)
    upload(at, "good.png", good)
    assert_clean(at)
    assert at.session_state["image_name"] == "good.png"


def test_settings_persist_when_switching_pages():
    at = new_app(**SMALL)
    at.run()
    at.sidebar.select_slider(key="d_model").set_value(64).run()
    at.sidebar.slider(key="n_layers").set_value(3).run()
    for _, path, _, _ in STEPS[1:4]:
        at.switch_page(path).run()
        assert_clean(at)
        assert at.session_state["d_model"] == 64
        assert at.session_state["n_layers"] == 3
        assert at.sidebar.select_slider(key="d_model").value == 64


def test_the_trace_cache_stays_bounded_with_more_uploads_than_its_size():
    at = new_app(**SMALL)
    at.run()
    for i in range(state.MAX_IMAGES + 3):
        upload(at, f"img{i}.png", png_bytes(100 + i, size=24 + i))
        assert_clean(at)
    caches = state.caches()
    assert len(caches["images"]) <= state.MAX_IMAGES
    assert len(caches["traces"]) <= state.MAX_TRACES
    assert caches["images"].misses >= state.MAX_IMAGES + 3  # every upload was new


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


def test_previous_and_next_walk_every_page_in_the_note_order():
    at = new_app(**SMALL)
    at.run()
    titles = [at.title[0].value]
    for _ in STEPS[1:]:
        at.button(key="nav_next").click().run()
        assert_clean(at)
        titles.append(at.title[0].value)
    assert titles == [s[2] for s in STEPS]
    for _ in STEPS[1:]:
        at.button(key="nav_prev").click().run()
    assert at.title[0].value == STEPS[0][2]


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


def test_every_text_has_an_english_and_a_chinese_version():
    import ast

    from lens.i18n import COMMON

    for key, (en, zh) in COMMON.items():
        assert en.strip() and zh.strip(), key
    for _, path, _, _ in STEPS + EXTRA_PAGES:
        tree = ast.parse((state.ROOT / path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "TEXT":
                text = ast.literal_eval(node.value)
                for key, (en, zh) in text.items():
                    assert en.strip() and zh.strip(), (path, key)


def test_the_trace_export_is_built_on_demand_and_loads_without_pickle():
    at = new_app(**SMALL)
    at.run()
    assert not [b for b in at.sidebar.get("download_button")]  # nothing built before asked
    at.sidebar.button(key="export_build").click().run()
    assert_clean(at)
    ident, data = at.session_state["_export"]
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        keys = set(npz.files)
        assert {"patches", "embedded", "pe", "x0", "output", "config", "params/W_E"} <= keys
        for l in range(2):
            for f in ("q", "k", "v", "scores", "attn", "heads", "concat", "attn_out",
                      "resid_1", "ln_1/mean", "ln_1/var", "ln_1/normed", "ln_1/out",
                      "ffn_hidden", "ffn_out", "resid_2", "ln_2/out", "out"):
                assert f"layer{l}/{f}" in keys, f"layer{l}/{f}"
        assert npz["layer1/attn"].shape == (2, 16, 16)


def test_trained_weights_lock_the_architecture_and_show_a_prediction():
    from encoder_core.classifier import load_trained

    trained_cfg = load_trained()[0]
    at = new_app(weights="trained", source="sample", d_model="512", n_heads="8")
    at.run()
    at.switch_page("pages/10_stack.py").run()
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


def test_a_simulated_click_on_the_picture_moves_the_query():
    at = new_app(**SMALL)  # 64 px image, 16 px patches: a 4 × 4 grid
    at.run()
    at.switch_page("pages/07_multihead.py").run()
    assert at.session_state["query"] == 0
    # the component reports the click in the displayed picture's pixels
    at.session_state["query_click"] = {"x": 250, "y": 90, "width": 320, "height": 320}
    at.run()
    assert_clean(at)
    assert at.session_state["query"] == 1 * 4 + 3  # row 90/80 = 1, column 250/80 = 3
    assert (at.session_state["query_row"], at.session_state["query_col"]) == (1, 3)
    assert any("i = 7" in m.value for m in at.markdown)
    at.switch_page("pages/06_scores.py").run()  # the query is kept on other pages
    assert at.session_state["query"] == 7
