"""Resample a learned position embedding to another patch grid, as timm or Hugging Face do.

Both keep the prefix rows (CLS, distillation) and resize the [h, w, d] grid of the other rows
with `F.interpolate(mode="bicubic", align_corners=False)`; they differ in one flag:

* timm's `resample_abs_pos_embed`: `antialias=True`. PyTorch's antialiased bicubic is Pillow's
  separable filter: output i of n_out has its centre at c = (i + ½)·s in input coordinates,
  s = n_in / n_out; its weights are the cubic kernel (a = −½) at (j + ½ − c) / max(s, 1) over
  the inputs j within the support 2·max(s, 1), renormalised to sum 1.
* Hugging Face's `interpolate_pos_encoding` (ViT, DeiT, DINOv2): no antialias. The source
  position is x = (i + ½)·s − ½; the four inputs ⌊x⌋ − 1 … ⌊x⌋ + 2 (clamped to the border)
  are weighted by the cubic kernel with a = −¾ at their distance from x.

Separable: rows, then columns, as one weight matrix per axis.
"""

from __future__ import annotations

import numpy as np


def cubic_kernel(x: np.ndarray, a: float = -0.5) -> np.ndarray:
    """Keys' cubic convolution kernel with parameter a (Pillow and PyTorch-AA use a = −½)."""
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1  # |x| < 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a  # 1 ≤ |x| < 2
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def resample_weights(n_in: int, n_out: int, antialias: bool = True) -> np.ndarray:
    """[n_out, n_in] bicubic interpolation matrix (each row sums to 1), float64.

    antialias=True: timm's (Pillow's filter, a = −½); False: Hugging Face's (a = −¾).
    """
    if not antialias:
        return plain_bicubic_weights(n_in, n_out)
    scale = n_in / n_out
    stretch = max(scale, 1.0)  # downsizing widens the kernel (the antialiasing)
    support = 2.0 * stretch
    W = np.zeros((n_out, n_in))
    for i in range(n_out):
        centre = (i + 0.5) * scale
        lo = max(int(centre - support + 0.5), 0)
        hi = min(int(centre + support + 0.5), n_in)
        j = np.arange(lo, hi)
        w = cubic_kernel((j - centre + 0.5) / stretch)
        W[i, lo:hi] = w / w.sum()
    return W


def plain_bicubic_weights(n_in: int, n_out: int) -> np.ndarray:
    """[n_out, n_in] PyTorch's bicubic without antialias (a = −¾, border clamped), float64."""
    scale = n_in / n_out
    W = np.zeros((n_out, n_in))
    for i in range(n_out):
        x = (i + 0.5) * scale - 0.5
        f = int(np.floor(x))
        for k in range(-1, 3):
            W[i, min(max(f + k, 0), n_in - 1)] += cubic_kernel(np.array(f + k - x), a=-0.75)
    return W


def resample_grid(grid: np.ndarray, new_h: int, new_w: int,
                  antialias: bool = True) -> np.ndarray:
    """[h, w, d] → [new_h, new_w, d]: rows then columns through `resample_weights` (float64)."""
    h, w, _ = grid.shape
    Wy, Wx = resample_weights(h, new_h, antialias), resample_weights(w, new_w, antialias)
    # [new_h, h] · [h, w, d] -> [new_h, w, d];  [new_w, w] · … -> [new_h, new_w, d]
    return np.einsum("ah,bw,hwd->abd", Wy, Wx, grid.astype(np.float64), optimize=True)


def resample_pos_embed(pos_embed: np.ndarray, n_prefix: int, new_grid: int,
                       antialias: bool = True) -> np.ndarray:
    """[n_prefix + g·g, d] → [n_prefix + new_grid², d], prefix rows kept, float32.

    The grid rows are row-major over a square g × g grid (g = √(rows − n_prefix)).
    antialias=True is timm's resampling, False Hugging Face's.
    """
    prefix, rows = pos_embed[:n_prefix], pos_embed[n_prefix:]
    g = int(round(rows.shape[0] ** 0.5))
    if g * g != rows.shape[0]:
        raise ValueError(f"{rows.shape[0]} position rows do not form a square grid.")
    if g == new_grid:
        return np.asarray(pos_embed, dtype=np.float32)
    d = rows.shape[1]
    grid = resample_grid(rows.reshape(g, g, d), new_grid, new_grid, antialias)
    return np.concatenate([prefix, grid.reshape(new_grid * new_grid, d)]).astype(np.float32)
