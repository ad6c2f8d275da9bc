"""Without positional encoding the encoder cannot tell where a patch is (issue 4, ablations)."""

from __future__ import annotations

import numpy as np

from encoder_core import EncoderConfig, encode, init_params, patchify
from encoder_core.pipeline.patches import shuffle_patches

CFG = EncoderConfig(image_size=64, patch_size=8, d_model=32, n_heads=4, n_layers=3, d_ff=64)


def _image(seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).random((64, 64, 1), dtype=np.float32)


def test_shuffle_patches_moves_patch_perm_n_to_place_n():
    image = _image()
    perm = np.random.default_rng(1).permutation(CFG.n_tokens)
    shuffled = shuffle_patches(image, CFG.patch_size, perm)
    assert np.array_equal(patchify(shuffled, 8), patchify(image, 8)[perm])


def test_without_pe_shuffling_the_patches_only_shuffles_the_output():
    cfg = CFG.replace(use_pe=False)
    params = init_params(cfg)
    image = _image()
    perm = np.random.default_rng(2).permutation(cfg.n_tokens)
    out = encode(image, cfg, params).output
    out_shuffled = encode(shuffle_patches(image, 8, perm), cfg, params).output
    np.testing.assert_allclose(out_shuffled, out[perm], rtol=1e-4, atol=1e-5)


def test_with_pe_shuffling_the_patches_changes_the_output_itself():
    params = init_params(CFG)
    image = _image()
    perm = np.random.default_rng(2).permutation(CFG.n_tokens)
    out = encode(image, CFG, params).output
    out_shuffled = encode(shuffle_patches(image, 8, perm), CFG, params).output
    assert np.abs(out_shuffled - out[perm]).max() > 0.1
