"""The input image itself: with its patch grid and numbers (`image_with_grid`), beside the upload
(`image_pair`) and cut into patch tiles (`patch_gallery`).

All three are raster pictures: `<kind>_picture` returns the picture as data (tests inspect it),
`<kind>` is its PNG. `_show_image` draws an image on a matplotlib axis (for the pipeline)."""

from __future__ import annotations

import io
import math

import numpy as np
from matplotlib.axes import Axes

from .lettering import PX, text_width, title_lines
from .picture import Panel, Picture, index_ticks, patch_outline, png
from .pixels import colourise, rgb255
from .style import DPI, GRID_COLOUR, MARK_COLOUR, MIN_PT, QUERY_COLOUR


def _show_image(ax: Axes, image: np.ndarray) -> None:
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


def _number_size(cell: float, largest: int) -> tuple[float, int]:
    """The size (points) of the patch numbers in cells `cell` px wide, and which are written:
    every patch (1) when the largest number fits its cell at MIN_PT or more, else every other
    one (2, a chequerboard: each number has its row neighbours' room). Never under MIN_PT."""
    width = text_width(str(largest), MIN_PT) / MIN_PT  # px a point
    pt = min(16.0, (cell - 2) / width, cell * 0.5 / PX)
    if pt >= MIN_PT:
        return math.floor(pt * 2) / 2, 1
    return MIN_PT, 2


def image_with_grid_picture(image: np.ndarray, patch_size: int, title: str, *,
                            numbers: bool = True, highlight: int | None = None,
                            size: float = 5.0,
                            axis_labels: tuple[str, str] = ("", ""),
                            mark: int | None = None) -> Picture:
    """The model's image with the patch grid, patch numbers (row-major, up to 16 patches a
    side), one patch outlined (`highlight`, the query: QUERY_COLOUR) and one framed (`mark`,
    the patch a lesson's question names: MARK_COLOUR); axes in pixels, labelled axis_labels
    (x, y) in the page's language. image: [S, S, C] in [0, 1]."""
    S = image.shape[0]
    G = S // patch_size
    W = H = round(size * DPI)
    left, right, top, bottom = 62, 14, 35, 52
    lines = title_lines(title, 11, W - 20)  # a long title on two lines
    top += (lines - 1) * round(11 * PX * 1.2)
    side = min(W - left - right, H - top - bottom)
    x0 = left + (W - left - right - side) // 2
    edges = tuple(k * patch_size - 0.5 for k in range(1, G))
    texts, number_pt = (), MIN_PT
    if numbers and G <= 16:
        number_pt, every = _number_size(side / G, G * G - 1)
        texts = tuple(((c + 0.5) * patch_size - 0.5, (r + 0.5) * patch_size - 0.5, str(pos),
                       rgb255(GRID_COLOUR))
                      for pos in range(G * G) for r, c in [divmod(pos, G)]
                      if every == 1 or (r + c) % 2 == 0)
    rects = (patch_outline(highlight, G, patch_size, QUERY_COLOUR, 3)
             + patch_outline(mark, G, patch_size, MARK_COLOUR, 3))
    ticks = tuple((t, str(t)) for t in index_ticks(S, side, spacing=3.0))
    panel = Panel((x0, top, side, side), image_cells(image), (S, S), title=title,
                  title_lines=lines,
                  xlabel=axis_labels[0], ylabel=axis_labels[1], xticks=ticks, yticks=ticks,
                  hlines=edges, vlines=edges, line_colour=rgb255(GRID_COLOUR), rects=rects,
                  texts=texts, text_pt=number_pt, text_stroke=(40, 40, 40))
    return Picture((W, H), (panel,), row_filter="up")


def image_with_grid(image: np.ndarray, patch_size: int, title: str, *, numbers: bool = True,
                    highlight: int | None = None, size: float = 5.0,
                    axis_labels: tuple[str, str] = ("", ""), mark: int | None = None) -> bytes:
    """PNG bytes of `image_with_grid_picture`."""
    return png(image_with_grid_picture(image, patch_size, title, numbers=numbers,
                                       highlight=highlight, size=size, axis_labels=axis_labels,
                                       mark=mark),
               "image_with_grid")


def image_pair_picture(original: np.ndarray, model_input: np.ndarray,
                       titles: tuple[str, str],
                       axis_labels: tuple[str, str] = ("", "")) -> Picture:
    """The upload as it is beside the image the model receives, each in its own half with its
    aspect ratio, its shape in the title and axes in pixels (labelled axis_labels (x, y) in the
    page's language). 6 × 3.4 inches: its text reads at 10 px or more from 430 px wide.
    original: [h, w, 3], model_input: [S, S, C], both in [0, 1]."""
    W, H = 6 * DPI, round(3.4 * DPI)
    left, right, top, bottom = 58, 14, 35, 52
    room_w, room_h = W // 2 - left - right, H - top - bottom
    panels = []
    for k, (img, title) in enumerate(zip((original, model_input), titles, strict=True)):
        h, w = img.shape[:2]
        scale = min(room_w / w, room_h / h)
        bw, bh = max(1, round(w * scale)), max(1, round(h * scale))
        x0 = k * W // 2 + left + (room_w - bw) // 2
        y0 = top + (room_h - bh) // 2
        panels.append(Panel((x0, y0, bw, bh), image_cells(img), (w, h),
                            title=f"{title}  [{h} × {w} × {img.shape[2]}]",
                            xlabel=axis_labels[0], ylabel=axis_labels[1],
                            xticks=tuple((t, str(t)) for t in index_ticks(w, bw)),
                            yticks=tuple((t, str(t)) for t in index_ticks(h, bh, spacing=2.0))))
    return Picture((W, H), tuple(panels), row_filter="up")


def image_pair(original: np.ndarray, model_input: np.ndarray, titles: tuple[str, str],
               axis_labels: tuple[str, str] = ("", "")) -> bytes:
    """PNG bytes of `image_pair_picture`."""
    return png(image_pair_picture(original, model_input, titles, axis_labels), "image_pair")


def patch_gallery_picture(patches: np.ndarray, patch_size: int, channels: int, title: str,
                          max_patches: int = 64) -> Picture:
    """The first patches as small tiles in a square-ish grid, each numbered above.
    patches: [N, P·P·C] in [0, 1]."""
    n = min(len(patches), max_patches)
    cols = max(1, int(np.ceil(np.sqrt(n))))
    rows = max(1, int(np.ceil(n / cols)))
    # 48 px tiles, numbered at MIN_PT: 8 a row make 504 px, which reads at 10 px from 360 px
    tile, pitch_x, pitch_y, top = 48, 58, 70, 56
    W = max(260, cols * pitch_x + 40)
    H = top + rows * pitch_y
    left = (W - (cols * pitch_x - (pitch_x - tile))) // 2
    panels = tuple(
        Panel((left + (i % cols) * pitch_x, top + (i // cols) * pitch_y, tile, tile),
              image_cells(patches[i].reshape(patch_size, patch_size, channels)),
              (patch_size, patch_size), title=str(i), title_pt=MIN_PT, frame=False)
        for i in range(n))
    return Picture((W, H), panels, title=title, title_pt=12, row_filter="up")


def patch_gallery(patches: np.ndarray, patch_size: int, channels: int, title: str,
                  max_patches: int = 64) -> bytes:
    """PNG bytes of `patch_gallery_picture`."""
    return png(patch_gallery_picture(patches, patch_size, channels, title, max_patches),
               "patch_gallery")


def thumbnail(image: np.ndarray, side: int) -> bytes:
    """A small PNG of `image` ([h, w, 3] floats in [0, 1]), at most `side` px a side (Pillow's
    thumbnail: aspect kept)."""
    from PIL import Image

    rgb = np.clip(np.asarray(image) * 255 + 0.5, 0, 255).astype(np.uint8)
    img = Image.fromarray(rgb)
    img.thumbnail((side, side))
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()
