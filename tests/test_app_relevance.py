"""AppTest of a class's relevance (issue 40, item 3) on ★ What a ViT looks at and The stack:
the predicted class and the runner-up by default, any of the top 5 by a click, Chefer's map or
the gradient rollout's — the numbers the page states are `encoder_core.relevance` on the photo,
computed here outside the app —, in English and 中文; nothing of it for weights without a
head; its cost declared with a head only."""

from __future__ import annotations

import re

import numpy as np
import pytest

from encoder_core import encode, load_image, predict, relevance, top_classes
from encoder_core.checkpoints.load import load_checkpoint
from lens import images, model_weights
from tests.support.apptest_helpers import assert_clean, new_app, open_page

TITLES = {"en": "relevance per patch", "zh": "每个图像块的相关性"}


def section_caption(at, lang: str) -> str:
    start = {"en": "Left: ", "zh": "左："}[lang]
    found = [c.value for c in at.caption if c.value.startswith(start) and
             ("relevance" in c.value or "相关性" in c.value)]
    assert len(found) == 1, [c.value for c in at.caption]
    return found[0]


def outside(path: str):
    """The checkpoint's trace of the built-in photo, its params and its top 5, outside the app."""
    cfg, params, _ = load_checkpoint(path)
    tr = encode(load_image(images.DEFAULT_IMAGE, cfg), cfg, params)
    classes, _ = top_classes(predict(tr, params), 5)
    return tr, params, [int(c) for c in classes]


@pytest.mark.parametrize("page", ["vit", "stack"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_two_classes_relevance_is_the_cores_and_follows_a_click(with_checkpoint, page, lang):
    at = open_page(new_app(weights="vit_tiny_test", lang=lang), page)
    assert_clean(at)
    heads = [h.value for h in (at.header if page == "vit" else at.subheader)]
    assert any(TITLES[lang] in h for h in heads), heads
    tr, params, top = outside(with_checkpoint)
    chosen = at.button_group(key=f"{page}_rel_class")
    other = at.button_group(key=f"{page}_rel_other")
    assert (chosen.value, other.value) == (top[0], top[1])  # the prediction, the runner-up
    assert len(chosen.options) == 5

    def expect(a: int, b: int, method: str) -> None:
        caption = section_caption(at, lang)
        want = [float(relevance(tr, params, c, method).max()) for c in (a, b)]
        shown = [float(v) for v in re.findall(r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)[)）]", caption)]
        assert shown == [float(f"{w:.3g}") for w in want], (caption, want)  # as stated
        word = {"en": "class", "zh": "类别"}[lang]  # the file names no class: numbered
        assert f"{word} {a}" in caption and f"{word} {b}" in caption

    expect(top[0], top[1], "chefer")
    other.set_value(top[4]).run()  # "why not the fifth": a click on another pill
    assert_clean(at)
    expect(top[0], top[4], "chefer")
    at.radio(key=f"{page}_rel_method").set_value("gradient_rollout").run()
    assert_clean(at)
    expect(top[0], top[4], "gradient_rollout")
    at.button_group(key=f"{page}_rel_class").set_value(top[4]).run()
    assert any(("same class" in i.value or "同一个类别" in i.value) for i in at.info)


def test_the_shapes_model_on_the_stack_has_it_and_random_weights_do_not():
    at = open_page(new_app(weights="trained"), "stack")
    assert_clean(at)
    assert any(TITLES["en"] in h.value for h in at.subheader)
    chosen = at.button_group(key="stack_rel_class")
    assert len(chosen.options) == 4  # the four shapes, the predicted one first
    first = section_caption(at, "en")
    at.button_group(key="stack_rel_other").set_value(chosen.value).run()
    at.button_group(key="stack_rel_class").set_value(
        next(i for i in range(4) if i != chosen.value)).run()
    assert_clean(at)
    assert section_caption(at, "en") != first
    plain = open_page(new_app(weights="random"), "stack")
    assert_clean(plain)
    assert not any(TITLES["en"] in h.value for h in plain.subheader)
    assert not plain.get("button_group")


def test_its_cost_is_declared_with_a_head_only():
    from encoder_core import EncoderConfig
    from encoder_core.cost import relevance as relevance_cost
    from encoder_core.cost import trace_bytes
    from lens import page_costs
    from lens.models import has_head
    from tests.support.configs import VIT

    cfg = EncoderConfig(**VIT)
    for terms in (page_costs.stack, page_costs.vit):
        plain, headed = page_costs.page_cost(cfg, terms), page_costs.page_cost(cfg, terms, True)
        assert headed.bytes >= plain.bytes and headed.seconds > plain.seconds
        assert headed.bytes >= trace_bytes(cfg)  # one class's gradients at a time
        assert terms(cfg, True).count(relevance_cost(cfg)) == 2  # two classes
        assert relevance_cost(cfg) not in terms(cfg)
    models = model_weights.checkpoint_models()
    assert has_head("trained", models) and not has_head("random", models)
    assert np.isfinite(relevance_cost(cfg).seconds)
