"""AppTest of "Switch heads off" (lens/sections/heads_off.py, issue 26 item 5) on ★ What a ViT
looks at with the small random timm ViT (2 heads, 2 layers, 10 classes): by default head 1 of the
last layer is off, and the prediction shown after differs from the model's; no head off says so;
another layer and both heads off change the prediction shown again; the per-head chart, the
rows' change and the [CLS] maps are drawn, in English and in 中文."""

from __future__ import annotations

import pytest

from tests.support.apptest_helpers import assert_clean, new_app, page_path

PAGE = page_path("vit")
HEADS, LAYER = "heads_off_heads_vit", "heads_off_layer_vit"
COLUMNS = {"en": ["rank", "class", "probability", "logit"], "zh": ["名次", "类别", "概率", "logit"]}


def vit_page(lang: str):
    at = new_app(weights="vit_tiny_test", lang=lang)
    at.run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    return at


def predictions(at, lang: str) -> tuple[list[list[str]], list[list[str]]]:
    """The section's two tables (the model's, then with the heads off) as rows of text: the
    last two tables with its columns."""
    tables = [t.value for t in at.table if list(t.value.columns) == COLUMNS[lang]]
    assert len(tables) >= 2, [list(t.value.columns) for t in at.table]
    before, after = tables[-2:]
    return before.astype(str).values.tolist(), after.astype(str).values.tolist()


def picture_keys(at) -> set[str]:
    return {b.key.removeprefix("dl_") for b in at.get("download_button")}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_switching_a_head_off_changes_the_prediction_shown(with_checkpoint, lang):
    at = vit_page(lang)
    assert at.multiselect(key=HEADS).value == [0]
    assert at.select_slider(key=LAYER).value == 1  # the last of 2 layers
    before, after = predictions(at, lang)
    assert len(before) == len(after) == 5
    assert after != before  # head 1 of layer 2 off: other probabilities, other logits
    keys = picture_keys(at)
    assert {"heads_off_effects_vit", "heads_off_rows_vit", "heads_off_cls_vit"} <= keys, keys
    text = " ".join(m.value for m in at.markdown)
    assert ("With head 1 of layer 2 off" if lang == "en" else "关闭第 2 层的头 1 之后") in text

    at.multiselect(key=HEADS).set_value([]).run()  # nothing off: nothing to compare
    assert_clean(at)
    assert any(("No head is switched off" if lang == "en" else "没有关闭任何头") in i.value
               for i in at.info)
    assert "heads_off_rows_vit" not in picture_keys(at)
    assert "heads_off_effects_vit" in picture_keys(at)  # the per-head chart needs no choice

    at.select_slider(key=LAYER).set_value(0).run()
    at.multiselect(key=HEADS).set_value([0, 1]).run()  # every head of layer 1
    assert_clean(at)
    before_2, after_2 = predictions(at, lang)
    assert before_2 == before and after_2 not in (before, after)
    caption = [c.value for c in at.caption if ("[CLS] row" in c.value or "[CLS] 行" in c.value)]
    assert caption, [c.value for c in at.caption]


def test_the_stack_switches_the_shapes_models_heads_off_and_random_weights_have_none():
    at = new_app(weights="trained", source="sample", lang="zh")
    at.run()
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    before, after = predictions(at, "zh")
    assert len(before) == len(after) == 4  # circle, square, triangle, cross
    at.multiselect(key="heads_off_heads_stack").set_value([0, 1, 2, 3]).run()
    assert_clean(at)
    assert predictions(at, "zh")[1] not in (before, after)
    keys = picture_keys(at)
    assert {"heads_off_effects_stack", "heads_off_rows_stack"} <= keys, keys
    assert "heads_off_cls_stack" not in keys  # no [CLS] token: no [CLS] map

    at = new_app(weights="random")
    at.run()
    at.switch_page(page_path("stack")).run()
    assert_clean(at)
    assert not [k for k in picture_keys(at) if k.startswith("heads_off")]
