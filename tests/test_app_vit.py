"""AppTest of ★ What a ViT looks at (pages/vit_page.py): the info line with the note's
encoder; with a small random timm checkpoint every view draws, and the keep-mass slider, the
rollout options, the grid's scale, the patch and the norm layer change the pictures they should."""

from __future__ import annotations

import pytest

from lens import model_weights
from lens.models import CHECKPOINTS_ENV
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, page_path

PAGE = page_path("vit")



def pictures(at) -> dict[str, str]:
    """Each picture's key -> its image's URL (named by its content): a picture and its
    download button are drawn together, in this order."""
    urls = [img.proto.imgs[0].url for img in at.get("image")]
    names = [b.key.removeprefix("dl_") for b in at.get("download_button")]
    assert len(urls) == len(names) and all(urls), (len(urls), names)
    return dict(zip(names, urls, strict=True))


def vit_page(**query: str):
    at = new_app(weights="vit_tiny_test", **query)
    at.run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    return at


def test_the_note_encoder_gets_one_info_line_and_no_views():
    at = new_app(**SMALL)
    at.run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert len(at.main.info) == 1
    assert "scripts/app --checkpoint FILE" in at.main.info[0].value
    assert not at.main.get("image") and not at.main.get("slider")


def test_with_a_checkpoint_loaded_the_info_line_names_it(with_checkpoint):
    at = new_app(**SMALL)
    at.run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert "vit_tiny_test" in at.main.info[0].value


def test_the_info_line_is_in_chinese_too():
    at = new_app(**SMALL, lang="zh")
    at.run()
    at.switch_page(PAGE).run()
    assert_clean(at)
    assert "检查点" in at.main.info[0].value


def test_every_view_draws_with_a_vit_checkpoint(with_checkpoint):
    at = vit_page()
    shown = pictures(at)
    for key in ("vit_dino", "vit_dino_kept", "vit_rollout", "vit_grid", "vit_norms"):
        assert key in shown, sorted(shown)
    assert at.slider(key="vit_keep").value == 60
    assert at.slider(key="vit_discard").value == pytest.approx(0.9)
    assert at.radio(key="vit_fusion").value == "mean"
    text = " ".join(m.value for m in at.markdown)
    assert "- \\[CLS\\]: " in text  # listed beside the norm map, not a link definition
    assert "197 tokens = [CLS] + 196 patches" in text


def test_the_keep_mass_slider_changes_only_the_kept_picture(with_checkpoint):
    at = vit_page()
    before = pictures(at)
    at.slider(key="vit_keep").set_value(30).run()
    assert_clean(at)
    after = pictures(at)
    assert after["vit_dino_kept"] != before["vit_dino_kept"]
    assert after["vit_dino"] == before["vit_dino"]
    assert after["vit_rollout"] == before["vit_rollout"]


@pytest.mark.parametrize("change", [("vit_discard", 0.5), ("vit_fusion", "max"),
                                    ("vit_fusion", "min"), ("vit_discard", 0.0)])
def test_each_rollout_option_changes_the_rollout_picture(with_checkpoint, change):
    at = vit_page()
    before = pictures(at)
    key, value = change
    (at.radio(key=key) if key == "vit_fusion" else at.slider(key=key)).set_value(value).run()
    assert_clean(at)
    after = pictures(at)
    assert after["vit_rollout"] != before["vit_rollout"]
    assert after["vit_dino_kept"] == before["vit_dino_kept"]


def test_the_grid_scale_and_the_norm_layer_change_their_pictures(with_checkpoint):
    at = vit_page()
    before = pictures(at)
    at.toggle(key="vit_grid_shared").set_value(True).run()
    at.select_slider(key="vit_norm_layer").set_value(0).run()
    assert_clean(at)
    after = pictures(at)
    assert after["vit_grid"] != before["vit_grid"]
    assert after["vit_norms"] != before["vit_norms"]


def test_the_patch_attention_follows_the_query_and_lists_the_prefix_weights(with_checkpoint):
    at = vit_page()
    caption = [c.value for c in at.caption if "weight on the prefix" in c.value]
    assert len(caption) == 1 and caption[0].startswith("Patch 105's")  # the centre: 7 · 14 + 7
    at.number_input(key="query_row").set_value(0).run()
    at.number_input(key="query_col").set_value(3).run()
    assert_clean(at)
    assert any(c.value.startswith("Patch 3's weight") for c in at.caption)


def test_over_the_explorer_cap_the_server_draws_the_patch_maps(with_checkpoint, monkeypatch):
    from lens import explorer

    monkeypatch.setattr(explorer, "MAX_BYTES", 2**10)  # nothing fits: click-and-rerun pictures
    at = vit_page()
    before = pictures(at)["vit_patch"]
    assert any("over the" in c.value for c in at.caption)
    at.number_input(key="query_col").set_value(0).run()
    assert_clean(at)
    assert pictures(at)["vit_patch"] != before


@pytest.mark.parametrize("prefix, listed", [
    (dict(dist=True), ["[CLS]", "[DIST]"]),
    (dict(reg=2, no_embed_class=True), ["[CLS]", "register 1", "register 2"]),
])
def test_a_distillation_token_and_registers_are_listed_and_left_off_the_grid(
        monkeypatch, tmp_path, prefix, listed):
    from tests.support.vit_dicts import SMALL_VIT, write_timm_checkpoint

    path = write_timm_checkpoint(tmp_path / "vit_prefix.safetensors",
                                 **{**SMALL_VIT, "L": 1, **prefix})
    monkeypatch.setenv(CHECKPOINTS_ENV, path)
    model_weights.clear_models()
    try:
        at = new_app(weights="vit_prefix")
        at.run()
        at.switch_page(PAGE).run()
        assert_clean(at)
        n = len(listed)
        text = " ".join(m.value for m in at.markdown)
        assert f"{196 + n} tokens = {', '.join(listed)} + 196 patches" in text
        for name in listed:  # beside the norm map, brackets escaped for Markdown
            assert "- " + name.replace("[", "\\[").replace("]", "\\]") + ": " in text
        assert {"vit_dino", "vit_rollout", "vit_norms"} <= set(pictures(at))  # on_grid refuses
        #   any count of columns but 14 × 14: the prefix columns were left out
    finally:
        model_weights.clear_models()
