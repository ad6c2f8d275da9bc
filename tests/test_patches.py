"""Cutting the image into patches and back (encoder_core/pipeline/patches.py)."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import EncoderConfig, patchify, unpatchify
from encoder_core.pipeline.patches import normalise_pixels
from tests.support.configs import SMALL


@pytest.mark.parametrize("channels", [1, 3], ids=["grey", "rgb"])
def test_patchify_then_unpatchify_restores_the_image(channels, make_image):
    cfg = EncoderConfig(**{**SMALL, "channels": channels, "image_size": 48, "patch_size": 12})
    image = make_image(cfg.image_size, channels, seed=21)
    patches = patchify(image, cfg.patch_size)
    assert patches.shape == (cfg.n_tokens, cfg.patch_dim)
    restored = unpatchify(patches, cfg.patch_size, cfg.channels)
    assert restored.shape == image.shape
    np.testing.assert_array_equal(restored, image)


def test_patch_1_is_the_top_rows_second_patch():
    p, grid, c = 4, 3, 3
    image = np.arange((p * grid) ** 2 * c, dtype=np.float32).reshape(p * grid, p * grid, c)
    image /= image.max()
    patches = patchify(image, p)
    # Patch 1: rows 0..3, columns 4..7; its first value is pixel (0, 4) channel 0.
    assert patches[1, 0] == image[0, 4, 0]
    # Inside a patch: row-major pixels, channels last -> index (p1 * P + p2) * C + c.
    assert patches[1, (2 * p + 3) * c + 1] == image[2, 4 + 3, 1]
    # Patch `grid` starts the second row of patches: pixel (4, 0).
    assert patches[grid, 0] == image[p, 0, 0]
    np.testing.assert_array_equal(patches[1], image[0:p, p : 2 * p, :].reshape(-1))


def test_patchify_on_a_batch_patchifies_each_image_and_unpatchify_inverts_it(make_image):
    images = np.stack([make_image(24, 3, seed=s) for s in range(4)]).reshape(2, 2, 24, 24, 3)
    patches = patchify(images, 6)  # two leading axes: [2, 2, S, S, C] -> [2, 2, N, P·P·C]
    assert patches.shape == (2, 2, 16, 6 * 6 * 3)
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(patches[i, j], patchify(images[i, j], 6))
    np.testing.assert_array_equal(unpatchify(patches, 6, 3), images)


def test_normalise_pixels_subtracts_the_mean_and_divides_by_the_std_per_channel():
    image = np.random.default_rng(0).random((8, 8, 3), dtype=np.float32)
    before = image.copy()
    out = normalise_pixels(image, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))
    assert out.dtype == np.float32 and out.shape == image.shape
    for c, (m, s) in enumerate(zip((0.485, 0.456, 0.406), (0.229, 0.224, 0.225), strict=True)):
        np.testing.assert_allclose(out[..., c], (before[..., c].astype(np.float64) - m) / s,
                                   rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(image, before)
