"""lens.hub.ui.download_controls in a tiny Streamlit script (AppTest), offline: the cache in
tmp_path, HF_HUB_OFFLINE, or the small hub on loopback of hub_helpers."""

from __future__ import annotations

import huggingface_hub
import pytest
from streamlit.delta_generator import DeltaGenerator
from streamlit.testing.v1 import AppTest

from encoder_core.checkpoints.load import IMAGENET_MEAN, IMAGENET_STD
from lens import hub, keys, model_weights
from lens.hub import ui as hub_ui
from tests.support.hub_helpers import LocalHub, put_in_cache, timm_config, vit_bytes

# The sidebar as far as the download needs it: the settings (from the link, then the state),
# the weights radio over every model, the download expander, and the weights in use.
SCRIPT = """
import streamlit as st
from lens import model_weights
from lens.hub.ui import download_controls
from lens.i18n import translate
from lens.session import current_settings

models = model_weights.model_architectures()
s = current_settings(models)
st.sidebar.radio("weights", ["random", *models], key="weights")
download_controls(lambda key, **v: translate(key, s.lang, **v), s.lang)
st.write(f"weights={s.weights}")
"""


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty download cache (HF_HUB_CACHE), no checkpoints given, the registry forgotten."""
    folder = tmp_path / "hub"
    folder.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    monkeypatch.delenv("ENCODER_LENS_CHECKPOINTS", raising=False)
    model_weights.clear_models()
    yield folder
    model_weights.clear_models()


@pytest.fixture(scope="module")
def weights_bytes(tmp_path_factory) -> bytes:
    return vit_bytes(tmp_path_factory.mktemp("vit"))


def run(lang: str = "en", *, open_: bool = True) -> AppTest:
    """The script, with the download expander opened by the learner (or left folded)."""
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    at.query_params["lang"] = lang
    if open_:
        at.session_state[keys.HUB_OPEN] = True
    return at.run()


def test_folded_the_expander_sends_nothing_inside(cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run(open_=False)
    assert not at.exception
    assert at.sidebar.expander[0].label == "Download a model"
    assert not at.sidebar.button and not at.sidebar.caption
    at.session_state[keys.HUB_OPEN] = True  # the learner opens it
    at.run()
    assert [b.key for b in at.sidebar.button] == [hub_ui.button_key(m) for m in hub.MODELS]


def weights_shown(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("weights="))


def test_a_cached_model_is_marked_downloaded_and_offered_as_weights(cache, monkeypatch,
                                                                      weights_bytes):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    deit = hub.MODELS["deit-tiny"]
    put_in_cache(cache, deit.repo_id, {"config.json": timm_config(deit, IMAGENET_MEAN,
                                                                   IMAGENET_STD),
                                       "model.safetensors": weights_bytes})
    at = run()
    assert not at.exception
    buttons = {b.key: b for b in at.sidebar.button}
    assert buttons[hub_ui.button_key("deit-tiny")].disabled
    assert buttons[hub_ui.button_key("deit-tiny")].label == "DeiT-Ti/16: downloaded"
    assert not buttons[hub_ui.button_key("dino-vits16")].disabled
    assert buttons[hub_ui.button_key("dino-vits16")].label == "Download DINO ViT-S/16"
    assert "deit-tiny" in at.sidebar.radio(key="weights").options
    assert any("86.7" in m.value or "87 MB" in m.value for m in at.sidebar.markdown)


def test_the_controls_speak_chinese(cache, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run("zh")
    assert not at.exception
    assert at.sidebar.expander[0].label == "下载模型"
    assert at.sidebar.button(key=hub_ui.button_key("vit-small")).label == "下载 ViT-S/16 (AugReg)"
    assert any("ImageNet-21k 上预训练" in c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("lang, words", [("en", "Downloads are switched off"),
                                         ("zh", "下载已关闭")])
def test_offline_the_app_says_so_in_one_line_and_keeps_working(cache, monkeypatch, lang, words):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    at = run(lang)
    at.sidebar.button(key=hub_ui.button_key("dino-vits16")).click().run()
    assert not at.exception
    [warning] = at.sidebar.warning
    assert warning.value.startswith(words) and "\n" not in warning.value
    assert "scripts/app --checkpoint FILE" in warning.value
    assert weights_shown(at) == "weights=random"
    assert [n.value for n in at.toast][-1] == warning.value  # in view wherever the sidebar is
    at.run()  # shown once
    assert not at.sidebar.warning and not at.exception


def test_a_download_registers_the_model_and_selects_it(cache, monkeypatch, weights_bytes):
    shown = []  # every value and text the progress bar is given (it is emptied at the end)
    progress = DeltaGenerator.progress

    def recorded(self, value, text=None, **kwargs):
        shown.append((value, text))
        return progress(self, value, text=text, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "progress", recorded)
    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 64 * 1024)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    dino = hub.MODELS["dino-vits16"]
    files = {(dino.repo_id, "config.json"): timm_config(dino, IMAGENET_MEAN, IMAGENET_STD),
             (dino.repo_id, "model.safetensors"): weights_bytes}
    with LocalHub(files) as local:
        monkeypatch.setenv("HF_ENDPOINT", local.url)
        at = run()
        assert "dino-vits16" not in at.sidebar.radio(key="weights").options
        at.sidebar.button(key=hub_ui.button_key("dino-vits16")).click().run()
    assert not at.exception
    assert weights_shown(at) == "weights=dino-vits16"
    assert at.sidebar.radio(key="weights").value == "dino-vits16"
    assert [s.value for s in at.sidebar.success] == [
        "DINO ViT-S/16 is downloaded and now the weights."]
    assert at.sidebar.button(key=hub_ui.button_key("dino-vits16")).disabled
    assert "DINO ViT-S/16 is downloaded and now the weights." in [n.value for n in at.toast]
    values = [v for v, _ in shown]
    assert values == sorted(values) and values[0] == 0 and values[-1] == 1 and len(values) > 5
    total = (len(weights_bytes) + len(files[dino.repo_id, "config.json"])) / 1e6
    assert shown[-1][1] == f"Downloading DINO ViT-S/16: {total:.1f} of {total:.1f} MB"
    model = model_weights.checkpoint_models()["dino-vits16"]
    assert model.cfg.seq_len == 197 and model.cfg.pixel_mean == IMAGENET_MEAN
