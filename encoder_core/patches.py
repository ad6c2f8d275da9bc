"""Step 1a — cut the image into patches (and put them back, for display).

Patches are numbered row-major over the grid: left to right, then top to bottom, so patch
`pos` sits at grid row `pos // grid_size`, column `pos % grid_size`; that number is the
position `pos` of the positional encoding. Inside a patch the pixels are row-major with the
channels last, as in vit-pytorch's `(h p1) (w p2) c -> (h w) (p1 p2 c)`.
"""

from __future__ import annotations

import numpy as np


def patchify(image: np.ndarray, patch_size: int) -> np.ndarray:
    """Flatten each P × P patch of a square image into one row.

    Args:
        image: [S, S, C] with S a multiple of patch_size.
        patch_size: P.
    Returns:
        [N, P·P·C] with N = (S / P)², row n = patch n in row-major order.
    """
    S, _, C = image.shape
    P, G = patch_size, image.shape[0] // patch_size
    # (h p1) (w p2) c -> h w p1 p2 c -> (h w) (p1 p2 c)
    grid = image.reshape(G, P, G, P, C).transpose(0, 2, 1, 3, 4)
    return grid.reshape(G * G, P * P * C)


def unpatchify(patches: np.ndarray, patch_size: int, channels: int) -> np.ndarray:
    """The inverse of `patchify`: [N, P·P·C] -> [S, S, C]."""
    N = patches.shape[0]
    P, C, G = patch_size, channels, int(round(np.sqrt(N)))
    # (h w) (p1 p2 c) -> h w p1 p2 c -> (h p1) (w p2) c
    grid = patches.reshape(G, G, P, P, C).transpose(0, 2, 1, 3, 4)
    return grid.reshape(G * P, G * P, C)


def patch_centres(grid_size: int, patch_size: int) -> np.ndarray:
    """Centre of every patch in pixels, (row, column), row-major order. Returns [N, 2]."""
    idx = np.arange(grid_size * grid_size)
    rows, cols = np.divmod(idx, grid_size)
    return (np.stack([rows, cols], axis=1) + 0.5) * patch_size


def shuffle_patches(image: np.ndarray, patch_size: int, perm: np.ndarray) -> np.ndarray:
    """The image with its patches rearranged: patch n of the result is patch perm[n] of image.

    Args:
        image: [S, S, C]; perm: [N] a permutation of 0 … N−1.
    Returns:
        [S, S, C]; patchify(result) == patchify(image)[perm].
    """
    patches = patchify(image, patch_size)  # [N, P·P·C]
    return unpatchify(patches[perm], patch_size, image.shape[-1])
