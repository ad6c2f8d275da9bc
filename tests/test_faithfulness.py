"""Deletion and insertion curves (issue 53; encoder_core/views/faithfulness.py): the order of a
map (highest first, ties by index); the curve's images (k_s patches at the image's mean
colour); the batched forward equals `predict(encode(image))`; deletion starts at the full
image's probability and ends at the all-mean image's, insertion the other way round, the area
is the trapezoid rule; and a constructed model whose logit depends on one patch only puts that
patch first in its attention and relevance maps, and its deletion curve drops at the first
step and never moves again."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from encoder_core import (
    EncoderConfig,
    EncoderParams,
    HeadParams,
    LayerParams,
    deletion_curve,
    encode,
    insertion_curve,
    patchify,
    predict,
    relevance,
    relevance_order,
    softmax,
)
from encoder_core.views.faithfulness import batch_logits, mean_colour, perturbed_images
from encoder_core.views.relevance import attention_readout
from tests.support.inside_models import image_for, note_model, relative_error, vit_model


@pytest.fixture(scope="module", params=["vit", "note"])
def model(request):
    return vit_model("avg_fc_norm") if request.param == "vit" else note_model()


def probability(image, cfg, params, target) -> float:
    return float(softmax(predict(encode(image, cfg, params), params).astype(np.float64))[target])


def test_the_order_is_highest_first_ties_by_index_nan_last():
    scores = np.array([0.1, 0.5, np.nan, 0.5, -1.0, 0.1])
    order = relevance_order(scores)
    assert order.tolist() == [1, 3, 0, 5, 4, 2]
    naive = sorted(range(5 + 1), key=lambda i: (np.isnan(scores[i]),
                                                -np.nan_to_num(scores[i]), i))
    assert order.tolist() == naive


def test_the_images_have_k_patches_at_the_mean_colour(model):
    cfg, _ = model
    image = image_for(cfg)
    order = np.random.default_rng(0).permutation(cfg.n_tokens)
    images, fractions = perturbed_images(image, cfg, order, 4, insertion=False)
    assert images.shape == (5, *image.shape) and images.dtype == np.float32
    np.testing.assert_allclose(fractions, [0, 0.25, 0.5, 0.75, 1])
    colour = mean_colour(image)
    np.testing.assert_allclose(colour, image.reshape(-1, cfg.channels).mean(axis=0), rtol=1e-6)
    mean_patch = np.tile(colour, cfg.patch_size ** 2)  # one patch at the mean colour, flattened
    original = patchify(image, cfg.patch_size)
    for s, k in enumerate(np.rint(fractions * cfg.n_tokens).astype(int)):
        patches = patchify(images[s], cfg.patch_size)  # [N, P·P·C]
        np.testing.assert_allclose(patches[order[:k]], np.broadcast_to(
            mean_patch, (k, mean_patch.size)), rtol=1e-6)
        np.testing.assert_array_equal(patches[order[k:]], original[order[k:]])
    inserted, _ = perturbed_images(image, cfg, order, 4, insertion=True)
    np.testing.assert_allclose(inserted[0], images[-1])
    np.testing.assert_array_equal(inserted[-1], image)


def test_the_batched_forward_is_predict_image_by_image(model):
    cfg, params = model
    images = np.stack([image_for(cfg, seed) for seed in range(5)])
    ours = batch_logits(images, cfg, params, chunk=2)
    assert ours.shape == (5, params.head.n_classes) and ours.dtype == np.float32
    for image, logits in zip(images, ours, strict=True):
        assert relative_error(logits, predict(encode(image, cfg, params), params)) <= 1e-5


def test_deletion_runs_from_the_full_image_to_the_all_mean_one_and_insertion_back(model):
    cfg, params = model
    image = image_for(cfg)
    target = int(np.argmax(predict(encode(image, cfg, params), params)))
    order = np.random.default_rng(1).permutation(cfg.n_tokens)
    blank = np.broadcast_to(mean_colour(image), image.shape).astype(np.float32)
    full, empty = probability(image, cfg, params, target), probability(blank, cfg, params, target)
    deletion = deletion_curve(image, cfg, params, order, target, steps=5)
    insertion = insertion_curve(image, cfg, params, order, target, steps=5)
    assert deletion.probs.shape == deletion.fractions.shape == (6,)
    assert abs(deletion.probs[0] - full) <= 1e-5 and abs(deletion.probs[-1] - empty) <= 1e-5
    assert abs(insertion.probs[0] - empty) <= 1e-5 and abs(insertion.probs[-1] - full) <= 1e-5
    for curve in (deletion, insertion):
        assert curve.fractions[0] == 0 and curve.fractions[-1] == 1
        assert curve.area == pytest.approx(np.trapezoid(curve.probs, curve.fractions), abs=1e-12)
    assert abs(full - empty) > 1e-3  # the two ends do differ
    with pytest.raises(dataclasses.FrozenInstanceError):
        deletion.area = 0.0  # type: ignore[misc]


def test_an_order_that_is_not_every_patch_once_and_bad_steps_are_refused(model):
    cfg, params = model
    image = image_for(cfg)
    with pytest.raises(ValueError, match="each of the"):
        deletion_curve(image, cfg, params, np.zeros(cfg.n_tokens, int), 0, steps=4)
    with pytest.raises(ValueError, match="steps"):
        deletion_curve(image, cfg, params, np.arange(cfg.n_tokens), 0, steps=0)


# --- a model whose logit depends on one patch -------------------------------------------------

ONE_PATCH = 6  # the patch the constructed model reads
ONE_CFG = EncoderConfig(image_size=16, patch_size=4, channels=1, d_model=8, n_heads=1,
                        n_layers=1, d_ff=8, use_ffn=False, scale="none", cls_token=True,
                        position="learned")  # post-norm, [CLS] with its own position


def one_patch_model() -> EncoderParams:
    """[CLS] attends to patch ONE_PATCH alone (its query, dim 2 of [CLS], meets that patch's key,
    dim 0 of its position, at score 100; every other score is 0) and takes its brightness (dim
    1: the patch's mean pixel) into dim 3; the head reads LayerNorm(row 0)'s dim 3: class 0's
    logit grows with that one patch's brightness, class 1's is 0."""
    d, N = ONE_CFG.d_model, ONE_CFG.n_tokens
    W_E = np.zeros((ONE_CFG.patch_dim, d), np.float32)
    W_E[:, 1] = 1 / ONE_CFG.patch_dim  # dim 1 = the patch's mean brightness
    pos = np.zeros((ONE_CFG.n_pos, d), np.float32)
    pos[1 + ONE_PATCH, 0] = 1.0  # the key marker of the one patch ([CLS] is row 0)
    cls = np.array([[0, 0, 1, 0, 1, -1, 2, -2]], np.float32)  # query marker + a spread for LN
    W_Q, W_K, W_V = (np.zeros((d, d), np.float32) for _ in range(3))
    W_Q[2, 0] = W_K[0, 0] = 10.0  # score([CLS], patch) = 100 for the one patch, else 0
    W_V[1, 3] = 1.0
    ones, zeros = np.ones(d, np.float32), np.zeros(d, np.float32)
    layer = LayerParams(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=np.eye(d, dtype=np.float32),
                        gamma_1=ones, beta_1=zeros, W_1=np.zeros((d, 8), np.float32),
                        b_1=np.zeros(8, np.float32), W_2=np.zeros((8, d), np.float32),
                        b_2=zeros, gamma_2=ones, beta_2=zeros)
    W_head = np.zeros((d, 2), np.float32)
    W_head[3, 0] = 5.0
    assert N == 16
    return EncoderParams(W_E=W_E, layers=(layer,), cls=cls, pos_embed=pos,
                         head=HeadParams(pool="token", W_head=W_head,
                                         b_head=np.zeros(2, np.float32)))


def one_patch_image() -> np.ndarray:
    """Dark patches with some texture, the one patch bright."""
    rng = np.random.default_rng(3)
    image = rng.uniform(0.0, 0.3, (16, 16, 1)).astype(np.float32)
    r, c = divmod(ONE_PATCH, ONE_CFG.grid_size)
    image[4 * r:4 * r + 4, 4 * c:4 * c + 4] = 1.0
    return image


def test_a_model_reading_one_patch_puts_it_first_and_its_deletion_drops_at_once():
    params, image = one_patch_model(), one_patch_image()
    trace = encode(image, ONE_CFG, params)
    last, _ = attention_readout(trace)
    maps = {"attention": last, "chefer": relevance(trace, params, 0, "chefer"),
            "gradient_rollout": relevance(trace, params, 0, "gradient_rollout")}
    for name, scores in maps.items():
        assert relevance_order(scores)[0] == ONE_PATCH, name
    order = relevance_order(maps["chefer"])
    curve = deletion_curve(image, ONE_CFG, params, order, 0, steps=ONE_CFG.n_tokens)
    drop = curve.probs[0] - curve.probs[1]
    assert drop > 0.2, curve.probs
    np.testing.assert_allclose(curve.probs[1:], curve.probs[1], atol=1e-6)  # nothing else read
    # the same patch last: the curve holds until the last step, then drops
    late = deletion_curve(image, ONE_CFG, params, order[::-1], 0, steps=ONE_CFG.n_tokens)
    np.testing.assert_allclose(late.probs[:-1], late.probs[0], atol=1e-6)
    assert late.probs[-2] - late.probs[-1] == pytest.approx(drop, abs=1e-6)
    assert curve.area < late.area
    insertion = insertion_curve(image, ONE_CFG, params, order, 0, steps=ONE_CFG.n_tokens)
    assert insertion.probs[1] - insertion.probs[0] == pytest.approx(drop, abs=1e-6)
