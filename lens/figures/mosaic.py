"""One map per patch, each on the patch grid, all in one picture: the ViT paper's figure 7
(centre), the cosine similarity of every patch's learned position embedding with every other.

`position_mosaic_picture` lays out a matrix from `encoder_core.views.vit_steps.similarity_mosaic`
(G × G tiles of G × G cells, NaN between the tiles) without block-averaging it, so every cell
keeps its value at any grid size; `position_mosaic` is its PNG."""

from __future__ import annotations

import numpy as np

from .heatmaps import BAR, GAP, TITLE_ROOM
from .picture import ColourBar, Panel, Picture, Rect, png
from .pixels import colourise, rgb255
from .style import DPI, QUERY_COLOUR, SIGNED_CMAP

GAP_COLOUR = (150, 150, 150)  # the NaN rows and columns between the tiles


def position_mosaic_picture(mosaic: np.ndarray, grid_size: int, title: str, xlabel: str,
                            ylabel: str, *, gap: int = 1, query: int | None = None,
                            colorbar_label: str = "cos", size: float = 6.0) -> Picture:
    """mosaic [G·(G+gap)−gap, same]: tile (r, c) is patch r·G + c's map; ticks name the tiles'
    grid rows and columns; the query's tile is outlined. Colours: −1 … 1 (a cosine)."""
    G, pitch = grid_size, grid_size + gap
    n = mosaic.shape[0]
    W = round(size * DPI)
    left, right = 70, 80
    side = W - left - right - BAR - GAP
    H = TITLE_ROOM + side + 60
    box = (left, TITLE_ROOM, side, side)
    step = max(1, G // 8)
    ticks = tuple((r * pitch + (G - 1) / 2, str(r)) for r in range(0, G, step))
    rects = ()
    if query is not None:
        r, c = divmod(query, G)
        rects = (Rect(c * pitch - 0.5, r * pitch - 0.5, G, G, rgb255(QUERY_COLOUR), width=2),)
    cells = colourise(mosaic, SIGNED_CMAP, -1.0, 1.0, bad=GAP_COLOUR)  # grey between tiles
    panel = Panel(box, cells, (n, n), title=title,
                  xlabel=xlabel, ylabel=ylabel, xticks=ticks, yticks=ticks, rects=rects,
                  frame=False)
    bar = ColourBar((left + side + GAP, TITLE_ROOM, BAR, side), SIGNED_CMAP, -1.0, 1.0,
                    label=colorbar_label)
    return Picture((W, H), (panel,), bar)


def position_mosaic(mosaic: np.ndarray, grid_size: int, title: str, xlabel: str, ylabel: str,
                    *, gap: int = 1, query: int | None = None, colorbar_label: str = "cos",
                    size: float = 6.0) -> bytes:
    """PNG bytes of `position_mosaic_picture`."""
    return png(position_mosaic_picture(mosaic, grid_size, title, xlabel, ylabel, gap=gap,
                                       query=query, colorbar_label=colorbar_label, size=size),
               "position_mosaic")
