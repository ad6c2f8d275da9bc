"""AppTest of the four sections inside the model (issue 53, item 2) on ★ What a ViT looks at and
The stack: the logit lens, the logit's shares, patching a second image in and the faithfulness
curves draw their pictures, in English and 中文, with the small random timm ViT (pre-norm, [CLS],
10 classes) and the shipped shapes model (post-norm: the shares say why not). What the pages
state is checked against the core's functions called here, outside the app: the depth from
which the class stays the top-1, the shares' sum, and the faithful map named from the areas."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import (
    deletion_curve,
    encode,
    insertion_curve,
    load_image,
    logit_attribution,
    logit_lens,
    predict,
    relevance,
    relevance_order,
    top_classes,
)
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.views.logit_lens import lens_ranks
from encoder_core.views.relevance import attention_readout
from lens import images
from lens.i18n import Texts
from lens.page_costs import FAITH_STEPS
from lens.sections import faithfulness
from tests.support.apptest_helpers import assert_clean, new_app, open_page, png_bytes

TITLES = {"en": ("The logit lens", "Each head's and each FFN's share",
                 "Patching in a second image", "Which map to trust?"),
          "zh": ("逻辑透镜", "每个头和每个前馈网络的份额", "把第二张图像修补进来", "该相信哪张图")}


def headings(at, page: str) -> list[str]:
    return [h.value for h in (at.header if page == "vit" else at.subheader)]


def picture_keys(at) -> set[str]:
    return {b.key.removeprefix("dl_") for b in at.get("download_button")}


def outside(path: str):
    """The checkpoint's trace of the built-in photo, its params and its top class, computed
    here as the app computes them."""
    cfg, params, _ = load_checkpoint(path)
    tr = encode(load_image(images.DEFAULT_IMAGE, cfg), cfg, params)
    return tr, params, int(top_classes(predict(tr, params), 1)[0][0])


def areas(tr, params, target: int) -> dict[str, dict[str, float]]:
    """Each map's deletion and insertion area, by the core's functions."""
    last, rolled = attention_readout(tr)
    scores = {"attention": last, "rollout": rolled,
              "chefer": relevance(tr, params, target, "chefer"),
              "gradient_rollout": relevance(tr, params, target, "gradient_rollout"),
              "random": np.random.default_rng(faithfulness.RANDOM_SEED).random(
                  tr.config.n_tokens)}
    return {kind: {m: run(tr.image, tr.config, params, relevance_order(s), target,
                          FAITH_STEPS).area for m, s in scores.items()}
            for kind, run in (("deletion", deletion_curve), ("insertion", insertion_curve))}


def press_if_offered(at, key: str) -> None:
    """Press a section's "run" button when its cost put the computation behind one."""
    if any(b.key == key for b in at.button):
        at.button(key=key).click().run()
        assert_clean(at)


@pytest.mark.parametrize("page", ["vit", "stack"])
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_four_sections_draw_and_state_the_cores_numbers(with_checkpoint, page, lang):
    at = open_page(new_app(weights="vit_tiny_test", lang=lang), page)
    assert_clean(at)
    shown = headings(at, page)
    for title in TITLES[lang]:
        assert any(title in h for h in shown), (title, shown)
    press_if_offered(at, f"{page}_patching_run")
    press_if_offered(at, f"{page}_faith_run")
    keys = picture_keys(at)
    want = {f"{k}_{page}" for k in ("logit_lens", "logit_lens_patches", "logit_shares",
                                    "patching", "faith_deletion", "faith_insertion")}
    assert want <= keys, want - keys
    tr, params, top = outside(with_checkpoint)
    t = Texts(lang, "logit_lens")
    name = Texts(lang, "vit")("class_numbered", k=top)
    ranks = lens_ranks(logit_lens(tr, params), top)  # 0 = the top class, at every depth
    above = np.flatnonzero(ranks != 0)
    formed = int(above[-1]) + 1 if above.size else 0
    assert t("lens_formed", name=name, l=formed) in [c.value for c in at.caption]
    shares = logit_attribution(tr, params, top)
    table = [tb.value for tb in at.table
             if list(tb.value.columns) == [Texts(lang, "logit_shares")(k)
                                           for k in ("shares_part", "shares_value")]]
    assert len(table) == 1
    assert table[0].iloc[-1, 1] == f"{shares.logit:+.4f}"  # the logit, the trace's
    assert table[0].iloc[-2, 1] == f"{shares.logit:+.4f}"  # what the parts sum to
    found = areas(tr, params, top)
    by_del = min(faithfulness.EXPLAINED, key=lambda m: found["deletion"][m])
    by_ins = max(faithfulness.EXPLAINED, key=lambda m: found["insertion"][m])
    f = Texts(lang, "faithfulness")
    verdict = " ".join(s.value for s in at.success)
    if by_del == by_ins:
        assert f("faith_verdict_one", map=f(f"faith_map_{by_del}"), name=name) in verdict
    else:
        assert f("faith_verdict_two", d=f(f"faith_map_{by_del}"),
                 i=f(f"faith_map_{by_ins}"), name=name) in verdict


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_notes_post_norm_encoder_says_why_it_has_no_shares(lang):
    at = open_page(new_app(weights="trained", lang=lang), "stack")
    assert_clean(at)
    info = [i.value for i in at.info]
    assert Texts(lang, "logit_shares")("shares_post_norm") in info
    keys = picture_keys(at)
    assert "logit_shares_stack" not in keys
    assert not [g for g in at.button_group if g.key == "stack_shares_class"]  # nothing to split
    assert {"logit_lens_stack", "patching_stack", "faith_deletion_stack"} <= keys, keys
    if lang == "zh":  # the core's reason is English: the page says its own, translated
        assert not any("post-norm" in i for i in info)


def test_a_bad_upload_as_image_b_is_said_and_nothing_breaks():
    at = open_page(new_app(weights="trained"), "stack")
    at.radio(key="stack_patching_source").set_value("upload").run()
    assert_clean(at)
    assert any("Upload an image" in i.value for i in at.info)
    def uploader():
        return next(u for u in at.get("file_uploader") if u.key == "stack_patching_upload")

    uploader().set_value(("notes.png", b"not an image at all", "image/png")).run()
    assert not at.exception
    assert any(e.value.startswith("“notes.png” cannot be used as image B") for e in at.error)
    assert "patching_stack" not in picture_keys(at)
    uploader().set_value(("b.png", png_bytes(3, size=64), "image/png")).run()
    assert_clean(at)
    assert "patching_stack" in picture_keys(at)


def test_their_cost_is_declared_with_a_head_only():
    from encoder_core import EncoderConfig
    from lens import page_costs
    from tests.support.configs import VIT

    cfg = EncoderConfig(**VIT)
    inside = page_costs.inside_terms(cfg)
    for terms in (page_costs.stack, page_costs.vit):
        headed = terms(cfg, True)
        assert all(term in headed for term in inside)
        assert not any(term in terms(cfg) for term in inside[:4])
    assert page_costs.patching(cfg).seconds > page_costs.faithfulness(cfg).seconds > 0
