"""Properties of the procedural shapes data set, each test named after one."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core.shapes_model.dataset import (
    CLASS_NAMES,
    IMAGE_SIZE,
    MAX_SIZE,
    MIN_SIZE,
    make_batch,
    make_sample,
)

N_SAMPLES = 200


@pytest.fixture(scope="module")
def batch():
    return make_batch(seed=123, n=N_SAMPLES)


@pytest.fixture(scope="module")
def samples():
    rng = np.random.default_rng(321)
    return [make_sample(rng) for _ in range(N_SAMPLES)]


def test_make_batch_is_deterministic_for_a_seed():
    a, b = make_batch(5, 4), make_batch(5, 4)
    for x, y in zip(a, b, strict=True):
        assert np.array_equal(x, y)


def test_different_seeds_give_different_images():
    assert not np.array_equal(make_batch(5, 2)[0], make_batch(6, 2)[0])


def test_batch_shapes_dtypes_and_ranges(batch):
    images, labels, masks = batch
    assert images.shape == (N_SAMPLES, IMAGE_SIZE, IMAGE_SIZE, 1)
    assert images.dtype == np.float32
    assert images.min() >= 0.0 and images.max() <= 1.0
    assert labels.shape == (N_SAMPLES,) and np.issubdtype(labels.dtype, np.integer)
    assert labels.min() >= 0 and labels.max() < len(CLASS_NAMES)
    assert masks.shape == (N_SAMPLES, IMAGE_SIZE, IMAGE_SIZE) and masks.dtype == bool


def test_every_mask_is_non_empty_and_inside_the_image(batch):
    _, _, masks = batch
    assert masks.any(axis=(1, 2)).all()
    border = masks[:, 0, :].any() or masks[:, -1, :].any() or masks[:, :, 0].any() \
        or masks[:, :, -1].any()
    assert not border, "an object touches the image border"


def test_every_class_appears_in_200_samples(batch):
    counts = np.bincount(batch[1], minlength=len(CLASS_NAMES))
    assert counts.min() >= 30, counts  # ~50 each expected


def test_object_size_is_between_60_and_110_px(batch):
    for mask in batch[2]:
        rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
        side = max(rows[-1] - rows[0] + 1, cols[-1] - cols[0] + 1)
        assert MIN_SIZE - 2 <= side <= MAX_SIZE + 2, side


def test_object_contrasts_with_its_surroundings(batch):
    images, _, masks = batch
    for image, mask in zip(images[..., 0], masks, strict=True):
        rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
        box = np.zeros_like(mask)
        box[max(rows[0] - 8, 0):rows[-1] + 9, max(cols[0] - 8, 0):cols[-1] + 9] = True
        around = box & ~mask  # background next to the object (distractors stay outside)
        assert abs(image[mask].mean() - np.median(image[around])) >= 0.12


def test_three_quarters_of_images_hold_one_or_two_distractors(samples):
    counts = np.array([s.n_distractors for s in samples])
    assert counts.max() <= 2
    assert 0.6 <= np.mean(counts >= 1) <= 0.9
    assert (counts == 2).any() and (counts == 0).any()


def test_distractors_stay_clear_of_the_object_and_are_small(samples):
    for s in samples:
        assert (s.distractor_mask.sum() > 0) == (s.n_distractors > 0)
        rows, cols = np.nonzero(s.mask.any(axis=1))[0], np.nonzero(s.mask.any(axis=0))[0]
        box = s.distractor_mask[max(rows[0] - 4, 0):rows[-1] + 5, max(cols[0] - 4, 0):cols[-1] + 5]
        assert not box.any(), "a distractor touches the object's bounding box"
        # a blob is < 30 px across (< π·12² px), a segment ≤ 60 px long and 3 px wide
        assert s.distractor_mask.sum() <= 2 * 500


def test_distractors_are_visible(samples):
    for s in [s for s in samples if s.n_distractors][:30]:
        image, d = s.image[..., 0], s.distractor_mask
        rows, cols = np.nonzero(d.any(axis=1))[0], np.nonzero(d.any(axis=0))[0]
        box = np.zeros_like(d)
        box[max(rows[0] - 6, 0):rows[-1] + 7, max(cols[0] - 6, 0):cols[-1] + 7] = True
        around = box & ~d & ~s.mask
        assert np.mean(np.abs(image[d] - np.median(image[around])) >= 0.08) >= 0.7


def test_sample_image_label_and_mask_agree(samples):
    for s in samples[:20]:
        assert s.image.shape == (IMAGE_SIZE, IMAGE_SIZE, 1)
        assert s.mask.shape == (IMAGE_SIZE, IMAGE_SIZE)
        assert 0 <= s.label < len(CLASS_NAMES)
