"""encoder_core.checkpoints.resample: the position grid resampled exactly as timm's
resample_abs_pos_embed (bicubic, align_corners=False, antialias=True), up and down, prefix rows
kept."""

import numpy as np
import pytest

from encoder_core.checkpoints.resample import resample_pos_embed, resample_weights
from tests.support.torch_shim import timm, torch

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane


@pytest.mark.parametrize("grid, new_grid, n_prefix", [
    (14, 24, 1), (4, 6, 2), (14, 7, 1), (16, 10, 0), (14, 13, 1), (37, 16, 1),
])  # fmt: skip
def test_equals_timm_resample_abs_pos_embed(grid, new_grid, n_prefix):
    pe = np.random.default_rng(grid + new_grid).standard_normal((n_prefix + grid**2, 24))
    pe = pe.astype(np.float32)
    theirs = timm.layers.resample_abs_pos_embed(torch.from_numpy(pe)[None], [new_grid, new_grid],
                                                num_prefix_tokens=n_prefix)[0].numpy()
    ours = resample_pos_embed(pe, n_prefix, new_grid)
    assert ours.shape == theirs.shape == (n_prefix + new_grid**2, 24)
    assert np.abs(ours - theirs).max() / np.abs(theirs).max() <= 1e-5
    np.testing.assert_array_equal(ours[:n_prefix], pe[:n_prefix])


@pytest.mark.parametrize("grid, new_grid", [(4, 6), (14, 24), (14, 7), (37, 16)])
def test_without_antialias_equals_hugging_faces_interpolation(grid, new_grid):
    """HF's interpolate_pos_encoding: F.interpolate(bicubic, align_corners=False), no AA."""
    pe = np.random.default_rng(grid).standard_normal((1 + grid**2, 8)).astype(np.float32)
    t = torch.from_numpy(pe[1:]).reshape(1, grid, grid, 8).permute(0, 3, 1, 2)
    theirs = torch.nn.functional.interpolate(t, size=(new_grid, new_grid), mode="bicubic",
                                             align_corners=False)
    theirs = theirs.permute(0, 2, 3, 1).reshape(-1, 8).numpy()
    ours = resample_pos_embed(pe, 1, new_grid, antialias=False)
    assert np.abs(ours[1:] - theirs).max() / np.abs(theirs).max() <= 1e-5
    np.testing.assert_array_equal(ours[0], pe[0])


def test_same_grid_is_unchanged_and_rows_sum_to_one():
    pe = np.random.default_rng(0).standard_normal((1 + 9, 4)).astype(np.float32)
    np.testing.assert_array_equal(resample_pos_embed(pe, 1, 3), pe)
    for n_in, n_out in ((5, 9), (9, 5), (7, 7)):
        for antialias in (True, False):
            W = resample_weights(n_in, n_out, antialias)
            np.testing.assert_allclose(W.sum(axis=1), 1.0)
    np.testing.assert_allclose(resample_weights(6, 6), np.eye(6), atol=1e-12)
    np.testing.assert_allclose(resample_weights(6, 6, antialias=False), np.eye(6), atol=1e-12)


def test_a_grid_that_is_not_square_is_refused():
    with pytest.raises(ValueError, match="square"):
        resample_pos_embed(np.zeros((1 + 10, 4), np.float32), 1, 4)


def test_the_input_is_not_written():
    pe = np.random.default_rng(1).standard_normal((1 + 16, 8)).astype(np.float32)
    before = pe.copy()
    pe.flags.writeable = False  # a write would raise
    resample_pos_embed(pe, 1, 6)
    np.testing.assert_array_equal(pe, before)
