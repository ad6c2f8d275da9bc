"""The input image itself: with its patch grid and numbers (`image_with_grid`), beside the upload
(`image_pair`) and cut into patch tiles (`patch_gallery`).

Each `<kind>_figure` draws and returns the Figure (tests inspect it); `<kind>` is its PNG."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from .style import GRID_COLOUR, QUERY_COLOUR, to_png


def _show_image(ax, image: np.ndarray) -> None:
    """image [S, S, C] in [0, 1]: grey with the grey map, RGB as is."""
    if image.shape[-1] == 1:
        ax.imshow(image[..., 0], cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    else:
        ax.imshow(np.clip(image, 0, 1), interpolation="nearest")


def image_with_grid_figure(image: np.ndarray, patch_size: int, title: str, *,
                           numbers: bool = True, highlight: int | None = None,
                           size: float = 5.0,
                           axis_labels: tuple[str, str] = ("x (pixels)", "y (pixels)")) -> Figure:
    """The model's image with the patch grid, patch numbers (row-major) and one patch outlined;
    axis_labels: (x, y), in the page's language."""
    S = image.shape[0]
    G = S // patch_size
    fig = Figure(figsize=(size, size), layout="constrained")
    ax = fig.add_subplot()
    _show_image(ax, image)
    for k in range(1, G):
        ax.axhline(k * patch_size - 0.5, color=GRID_COLOUR, lw=0.6)
        ax.axvline(k * patch_size - 0.5, color=GRID_COLOUR, lw=0.6)
    if numbers and G <= 16:
        for pos in range(G * G):
            r, c = divmod(pos, G)
            ax.text((c + 0.5) * patch_size - 0.5, (r + 0.5) * patch_size - 0.5, str(pos),
                    ha="center", va="center", fontsize=max(4, 90 // G), color=GRID_COLOUR)
    if highlight is not None:
        r, c = divmod(highlight, G)
        ax.add_patch(Rectangle(
            (c * patch_size - 0.5, r * patch_size - 0.5), patch_size, patch_size,
            fill=False, ec=QUERY_COLOUR, lw=2.0))
    ax.set_title(title)
    ax.set_xlabel(axis_labels[0])
    ax.set_ylabel(axis_labels[1])
    return fig


def image_with_grid(image: np.ndarray, patch_size: int, title: str, *, numbers: bool = True,
                    highlight: int | None = None, size: float = 5.0,
                    axis_labels: tuple[str, str] = ("x (pixels)", "y (pixels)")) -> bytes:
    """PNG bytes of `image_with_grid_figure`."""
    return to_png(image_with_grid_figure(image, patch_size, title, numbers=numbers,
                                         highlight=highlight, size=size,
                                         axis_labels=axis_labels))


def image_pair_figure(original: np.ndarray, model_input: np.ndarray, titles: tuple[str, str],
                      axis_labels: tuple[str, str] = ("x (pixels)", "y (pixels)")) -> Figure:
    """The upload as it is beside the image the model receives; axis_labels: (x, y)."""
    fig = Figure(figsize=(8, 4), layout="constrained")
    for i, (img, title) in enumerate(zip((original, model_input), titles, strict=True)):
        ax = fig.add_subplot(1, 2, i + 1)
        _show_image(ax, img)
        ax.set_title(f"{title}  [{img.shape[0]} × {img.shape[1]} × {img.shape[2]}]")
        ax.set_xlabel(axis_labels[0])
        ax.set_ylabel(axis_labels[1])
    return fig


def image_pair(original: np.ndarray, model_input: np.ndarray, titles: tuple[str, str],
               axis_labels: tuple[str, str] = ("x (pixels)", "y (pixels)")) -> bytes:
    """PNG bytes of `image_pair_figure`."""
    return to_png(image_pair_figure(original, model_input, titles, axis_labels))


def patch_gallery_figure(patches: np.ndarray, patch_size: int, channels: int, title: str,
                         max_patches: int = 64) -> Figure:
    """The first patches as small tiles, numbered. patches: [N, P·P·C] in [0, 1]."""
    n = min(len(patches), max_patches)
    cols = int(np.ceil(np.sqrt(n)))
    rows = int(np.ceil(n / cols))
    fig = Figure(figsize=(cols * 0.75 + 0.5, rows * 0.8 + 0.6), layout="constrained")
    fig.suptitle(title)
    for i in range(rows * cols):
        ax = fig.add_subplot(rows, cols, i + 1)
        ax.set_axis_off()
        if i < n:
            _show_image(ax, patches[i].reshape(patch_size, patch_size, channels))
            ax.set_title(str(i), fontsize=7, pad=1)
    return fig


def patch_gallery(patches: np.ndarray, patch_size: int, channels: int, title: str,
                  max_patches: int = 64) -> bytes:
    """PNG bytes of `patch_gallery_figure`."""
    return to_png(patch_gallery_figure(patches, patch_size, channels, title, max_patches))
