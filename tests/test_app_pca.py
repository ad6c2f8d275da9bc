"""AppTest of the PCA of the patch features (lens/sections/pca.py, issue 26): The stack draws it for
the note's encoder and the shapes model, the ViT page for a checkpoint (the small test ViT), in
English and 中文; the layer chooser changes the pictures; the PCA runs once per trace and layer."""

from __future__ import annotations

import pytest

from lens.sections import pca as pca_view
from tests.support.apptest_helpers import SMALL, assert_clean, opened


def pictures(at) -> dict[str, str]:
    """Each picture's key -> its image's URL (named by its content)."""
    urls = [img.proto.imgs[0].url for img in at.get("image")]
    names = [b.key.removeprefix("dl_") for b in at.get("download_button")]
    assert len(urls) == len(names) and all(urls), (len(urls), names)
    return dict(zip(names, urls, strict=True))


def headings(at) -> list[str]:
    return [h.value for h in (*at.main.header, *at.main.subheader)]




TITLE = {"en": "PCA of the patch features: object and background",
         "zh": "图像块特征的 PCA：物体与背景"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stack_draws_the_pca_of_the_note_encoder(lang):
    at = opened("stack", **SMALL, lang=lang)
    assert TITLE[lang] in headings(at)
    shown = pictures(at)
    assert {"pca_first", "pca_mask"} <= set(shown), sorted(shown)
    # 4 × 4 patches, random weights: the RGB picture, or the line saying why it is not there
    said = " ".join(i.value for i in at.main.info)
    assert ("pca_rgb" in shown) != ("第二次 PCA" in said or "second PCA" in said)
    assert at.select_slider(key="pca_layer_stack").value == 1  # the last layer: the output


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_stack_draws_the_shapes_models_pca_and_its_colours(lang):
    at = opened("stack", weights="trained", source="sample", sample_seed="3", lang=lang)
    shown = pictures(at)
    assert {"pca_first", "pca_mask", "pca_rgb"} <= set(shown), sorted(shown)
    text = " ".join(m.value for m in at.markdown)
    assert ("of the foreground's variance" if lang == "en" else "前景方差") in text
    slider = at.select_slider(key="pca_layer_stack")
    slider.set_value(0).run()
    assert_clean(at)
    assert pictures(at)["pca_first"] != shown["pca_first"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_vit_page_draws_the_pca_of_a_checkpoint(with_checkpoint, lang):
    at = opened("vit", weights="vit_tiny_test", lang=lang)
    assert TITLE[lang] in headings(at)
    shown = pictures(at)
    assert {"pca_first", "pca_mask"} <= set(shown), sorted(shown)
    slider = at.select_slider(key="pca_layer_vit")
    L = len(slider.options) - 1  # the layers, then the output after the final norm
    assert slider.value == L
    assert ("[CLS]" if lang == "en" else "CLS") in " ".join(c.value for c in at.main.caption)
    slider.set_value(L - 1).run()  # the last layer before the final norm: other features
    assert_clean(at)
    assert pictures(at)["pca_first"] != shown["pca_first"]


def test_the_pca_runs_once_per_trace_and_layer(monkeypatch):
    calls = []
    real = pca_view.trace_pca

    def counted(trace, layer=None):
        calls.append(layer)
        return real(trace, layer)

    monkeypatch.setattr(pca_view, "trace_pca", counted)
    small = {**SMALL, "seed": "11"}  # a trace no other test has cached
    at = opened("stack", **small)
    at.run()
    assert_clean(at)
    assert calls == [None]
    at.select_slider(key="pca_layer_stack").set_value(0).run()
    at.select_slider(key="pca_layer_stack").set_value(1).run()
    assert calls == [None, 0]
