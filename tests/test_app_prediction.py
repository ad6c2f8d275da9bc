"""AppTest of the model's prediction (issue 26) on the overview and ★ What a ViT looks at: the
top-5 classes of a checkpoint with a head — the same logits as `encoder_core.predict` on the
photo, outside the app — its top logit written out and checked against the trace, DeiT's two
heads averaged, the shapes model's four classes in the learner's language, one line for a
checkpoint without a head, nothing for random weights; and no "head set aside" caption left."""

from __future__ import annotations

import re

import numpy as np
import pytest

from encoder_core import encode, load_image, predict, top_classes
from encoder_core.checkpoints.load import load_checkpoint
from lens import images
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, open_page
from tests.support.vit_dicts import SMALL_VIT, write_timm_checkpoint


def texts(at) -> str:
    return " ".join([m.value for m in at.markdown] + [c.value for c in at.caption]
                    + [h.value for h in at.header] + [h.value for h in at.subheader])


def table_rows(at) -> list[dict]:
    """The prediction's table (the one with a 'probability' / '概率' column), row by row."""
    for table in at.table:
        df = table.value
        if any(col in df.columns for col in ("probability", "概率")):
            return df.to_dict("records")
    raise AssertionError("no prediction table")


def expected_top(path: str, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """The top-k classes and logits of the checkpoint on the built-in photo, outside the app."""
    cfg, params, _ = load_checkpoint(path)
    logits = predict(encode(load_image(images.DEFAULT_IMAGE, cfg), cfg, params), params)
    classes, _ = top_classes(logits, k)
    return classes, logits[classes]


def check_written_out_logit(at) -> None:
    """The worked logit: its float64 sum equals the float32 logit the page lists first."""
    found = [m.value for m in at.markdown if "logits[" in m.value and "float64" in m.value]
    assert found, "no worked logit"
    mine, stored = (float(v) for v in re.findall(r"\*\*([-+0-9.e]+)\*\*", found[0])[:2])
    assert mine == pytest.approx(stored, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("page", ["vit", "overview"])
def test_a_checkpoints_top_5_are_predicts_with_the_top_logit_written_out(with_checkpoint, page):
    at = open_page(new_app(weights="vit_tiny_test"), page)
    assert_clean(at)
    rows = table_rows(at)
    classes, logits = expected_top(with_checkpoint)
    assert [r["class"] for r in rows] == [f"class {c}" for c in classes]  # 10 classes, unnamed
    assert [float(r["logit"]) for r in rows] == pytest.approx(logits.tolist(), abs=1e-4)
    probs = [float(r["probability"].removesuffix(" %")) for r in rows]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 100.01
    check_written_out_logit(at)
    text = texts(at)
    assert "The model's prediction" in text and "the [CLS] row of the output" in text
    assert "set aside" not in text  # the head is used now: no caption says otherwise


def test_deit_distilled_averages_its_two_heads(serve_checkpoints, tmp_path):
    from safetensors.numpy import save_file

    from tests.support.vit_dicts import timm_state_dict

    sd = timm_state_dict(**{**SMALL_VIT, "L": 1}, dist=True)
    rng = np.random.default_rng(8)
    sd |= {"head_dist.weight": rng.standard_normal((10, 128)).astype(np.float32),
           "head_dist.bias": rng.standard_normal(10).astype(np.float32)}
    save_file(sd, str(tmp_path / "deit_test.safetensors"))
    serve_checkpoints(tmp_path / "deit_test.safetensors")
    at = open_page(new_app(weights="deit_test"), "vit")
    assert_clean(at)
    text = texts(at)
    assert "The head on the [CLS] row" in text and "The head on the [DIST] row" in text
    assert "the mean of the two heads" in text
    classes, logits = expected_top(str(tmp_path / "deit_test.safetensors"))
    assert [float(r["logit"]) for r in table_rows(at)] == pytest.approx(logits.tolist(), abs=1e-4)


def test_a_checkpoint_without_a_head_says_it_has_no_prediction(serve_checkpoints, tmp_path):
    path = write_timm_checkpoint(tmp_path / "dino_test.safetensors", **{**SMALL_VIT, "L": 1},
                                 head=False)
    serve_checkpoints(path)
    at = open_page(new_app(weights="dino_test"), "vit")
    assert_clean(at)
    assert "These weights have no classification head" in texts(at)
    assert not any("probability" in t.value.columns for t in at.table)


def test_the_shapes_models_prediction_is_in_chinese_on_the_overview():
    at = open_page(new_app(weights="trained", lang="zh", source="sample"), "overview")
    assert_clean(at)
    rows = table_rows(at)
    assert len(rows) == 4 and {r["类别"] for r in rows} == {"圆", "正方形", "三角形", "十字"}
    assert "模型的预测" in texts(at) and "图像块行的平均" in texts(at)
    check_written_out_logit(at)


def test_random_weights_show_no_prediction():
    at = open_page(new_app(**SMALL), "overview")
    assert_clean(at)
    assert "The model's prediction" not in texts(at)
