"""Step 1a — cut the image into patches (and put them back, for display).

Patches are numbered row-major over the grid: left to right, then top to bottom, so patch
`pos` sits at grid row `pos // grid_size`, column `pos % grid_size`; that number is the
position `pos` of the positional encoding. Inside a patch the pixels are row-major with the
channels last, as in vit-pytorch's `(h p1) (w p2) c -> (h w) (p1 p2 c)`.
"""

from __future__ import annotations

import numpy as np


def normalise_pixels(image: np.ndarray, mean: tuple[float, ...], std: tuple[float, ...],
                     dtype: type[np.floating] = np.float32) -> np.ndarray:
    """(image − mean) / std per channel: the pixel statistics a ViT checkpoint was trained on.

    Args:
        image: [..., S, S, C] in [0, 1]; mean, std: C values each (std > 0); dtype: the
            result's (float32; float64 for the batched forward of a gradient check).
    Returns:
        [..., S, S, C] of dtype, a new array.
    """
    mean_c = np.asarray(mean, dtype=dtype)  # [C]
    std_c = np.asarray(std, dtype=dtype)  # [C]
    out = np.subtract(image, mean_c, dtype=dtype)
    out /= std_c
    return out


def patchify(image: np.ndarray, patch_size: int) -> np.ndarray:
    """Flatten each P × P patch of a square image into one row.

    Args:
        image: [..., S, S, C] with S a multiple of patch_size (leading batch axes allowed).
        patch_size: P.
    Returns:
        [..., N, P·P·C] with N = (S / P)², row n = patch n in row-major order.
    """
    *lead, S, _, C = image.shape
    P, G = patch_size, S // patch_size
    swap = _patch_transpose(len(lead))
    # ... (h p1) (w p2) c -> ... h w p1 p2 c -> ... (h w) (p1 p2 c)
    grid = image.reshape(*lead, G, P, G, P, C).transpose(swap)  # [..., G, G, P, P, C]
    return grid.reshape(*lead, G * G, P * P * C)  # [..., N, P·P·C]


def unpatchify(patches: np.ndarray, patch_size: int, channels: int) -> np.ndarray:
    """The inverse of `patchify`: [..., N, P·P·C] -> [..., S, S, C]."""
    *lead, N, _ = patches.shape
    P, C, G = patch_size, channels, int(round(np.sqrt(N)))
    swap = _patch_transpose(len(lead))
    # ... (h w) (p1 p2 c) -> ... h w p1 p2 c -> ... (h p1) (w p2) c
    grid = patches.reshape(*lead, G, G, P, P, C).transpose(swap)  # [..., G, P, G, P, C]
    return grid.reshape(*lead, G * P, G * P, C)  # [..., S, S, C]


def _patch_transpose(n_lead: int) -> tuple[int, ...]:
    """The transpose of the five patch axes (a, b, c, d, C) -> (a, c, b, d, C) after n_lead
    leading axes: swaps the 2nd and 3rd, so (h, p1, w, p2) <-> (h, w, p1, p2)."""
    n = n_lead
    return (*range(n), n, n + 2, n + 1, n + 3, n + 4)


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
