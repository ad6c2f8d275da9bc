"""The input image itself: with its patch grid and numbers (`image_with_grid`), beside the upload
(`image_pair`) and cut into patch tiles (`patch_gallery`).

`image_with_grid` and `patch_gallery` are raster pictures (`<kind>_picture` returns the picture
as data); `image_pair` is matplotlib (`image_pair_figure` returns the Figure). Tests inspect
either; `<kind>` is its PNG."""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .raster import Panel, Picture, Rect, colourise, index_ticks, png, rgb255
from .style import DPI, GRID_COLOUR, QUERY_COLOUR, to_png


def _show_image(ax, image: np.ndarray) -> None:
    """image [S, S, C] in [0, 1]: grey with the grey map, RGB as is."""
    if image.shape[-1] == 1:
        ax.imshow(image[..., 0], cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    else:
        ax.imshow(np.clip(image, 0, 1), interpolation="nearest")


def image_cells(image: np.ndarray) -> np.ndarray:
    """image [S, S, C] in [0, 1] → [S, S, 3] uint8: grey through the grey map, RGB as is."""
    if image.shape[-1] == 1:
        return colourise(image[..., 0], "gray", 0.0, 1.0)
    return np.round(255 * np.clip(image[..., :3], 0, 1)).astype(np.uint8)


def image_with_grid_picture(image: np.ndarray, patch_size: int, title: str, *,
                            numbers: bool = True, highlight: int | None = None,
                            size: float = 5.0) -> Picture:
    """The model's image with the patch grid, patch numbers (row-major, up to 16 patches a
    side) and one patch outlined; axes in pixels. image: [S, S, C] in [0, 1]."""
    S = image.shape[0]
    G = S // patch_size
    W = H = round(size * DPI)
    left, right, top, bottom = 62, 14, 35, 52
    side = min(W - left - right, H - top - bottom)
    x0 = left + (W - left - right - side) // 2
    edges = tuple(k * patch_size - 0.5 for k in range(1, G))
    texts = ()
    if numbers and G <= 16:
        texts = tuple(((c + 0.5) * patch_size - 0.5, (r + 0.5) * patch_size - 0.5, str(pos),
                       rgb255(GRID_COLOUR))
                      for pos in range(G * G) for r, c in [divmod(pos, G)])
    rects = ()
    if highlight is not None:
        r, c = divmod(highlight, G)
        rects = (Rect(c * patch_size - 0.5, r * patch_size - 0.5, patch_size, patch_size,
                      rgb255(QUERY_COLOUR), width=3),)
    ticks = tuple((t, str(t)) for t in index_ticks(S, side, spacing=3.0))
    panel = Panel((x0, top, side, side), image_cells(image), (S, S), title=title,
                  xlabel="x (pixels)", ylabel="y (pixels)", xticks=ticks, yticks=ticks,
                  hlines=edges, vlines=edges, line_colour=rgb255(GRID_COLOUR), rects=rects,
                  texts=texts,
                  text_pt=max(4, 90 // G))
    return Picture((W, H), (panel,))


def image_with_grid(image: np.ndarray, patch_size: int, title: str, *, numbers: bool = True,
                    highlight: int | None = None, size: float = 5.0) -> bytes:
    """PNG bytes of `image_with_grid_picture`."""
    return png(image_with_grid_picture(image, patch_size, title, numbers=numbers,
                                       highlight=highlight, size=size))


def image_pair_figure(original: np.ndarray, model_input: np.ndarray,
                      titles: tuple[str, str]) -> Figure:
    """The upload as it is beside the image the model receives."""
    fig = Figure(figsize=(8, 4), layout="constrained")
    for i, (img, title) in enumerate(zip((original, model_input), titles, strict=True)):
        ax = fig.add_subplot(1, 2, i + 1)
        _show_image(ax, img)
        ax.set_title(f"{title}  [{img.shape[0]} × {img.shape[1]} × {img.shape[2]}]")
        ax.set_xlabel("x (pixels)")
        ax.set_ylabel("y (pixels)")
    return fig


def image_pair(original: np.ndarray, model_input: np.ndarray, titles: tuple[str, str]) -> bytes:
    """PNG bytes of `image_pair_figure`."""
    return to_png(image_pair_figure(original, model_input, titles))


def patch_gallery_picture(patches: np.ndarray, patch_size: int, channels: int, title: str,
                          max_patches: int = 64) -> Picture:
    """The first patches as small tiles in a square-ish grid, each numbered above.
    patches: [N, P·P·C] in [0, 1]."""
    n = min(len(patches), max_patches)
    cols = max(1, int(np.ceil(np.sqrt(n))))
    rows = max(1, int(np.ceil(n / cols)))
    W, H = round((cols * 0.75 + 0.5) * DPI), round((rows * 0.8 + 0.6) * DPI)
    tile, pitch_x, pitch_y, left, top = 60, 75, 80, 32, 52
    panels = tuple(
        Panel((left + (i % cols) * pitch_x, top + (i // cols) * pitch_y, tile, tile),
              image_cells(patches[i].reshape(patch_size, patch_size, channels)),
              (patch_size, patch_size), title=str(i), title_pt=7, frame=False)
        for i in range(n))
    return Picture((W, H), panels, title=title, title_pt=12)


def patch_gallery(patches: np.ndarray, patch_size: int, channels: int, title: str,
                  max_patches: int = 64) -> bytes:
    """PNG bytes of `patch_gallery_picture`."""
    return png(patch_gallery_picture(patches, patch_size, channels, title, max_patches))
