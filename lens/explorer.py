"""The attention explorer: the image as a query picker that, with attention maps, repaints every
map of the hovered patch in the browser (no rerun); a click, a tap or the arrow keys commit the
query to the server.

This module is the explorer's data, with no Streamlit: what it sends (`payload`), and whether
maps or rows fit (`fits`, `rows_fit`: what `lens.page_costs` prices). The component that shows a
payload in the page is `lens.explorer_component`. Nothing in the browser side is built from
data: every number, label and pixel reaches the browser through the component's data channel,
and every label is written with `textContent`, never as HTML.

Everything it shows travels as one `bytes` blob (`payload`): a small JSON header (sizes and our
own labels, never user text), the colour map, the picture as RGB pixels and the attention rows
as float16 (3 significant digits of the trace). A blob over `MAX_BYTES` is not sent: the page
then keeps its static pictures (`fits` tells which).

The blob: uint32 (little-endian) header length, the JSON header, then at the offsets the header
gives: the colour map (256 × RGB, uint8), the picture ([side, side, 3] uint8) and, when there are
maps, the attention rows ([rows, cols, N, N] float16, scaled by `header.scale`) and, for a
model with prefix tokens (CLS), each row's weight on them ([rows, cols, N], the same way).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np

from .figures.style import OVERLAY_CMAP

MAX_BYTES = 4 * 2**20  # the most one page sends: above it, click-and-rerun pictures
FIXED = 2**18  # the allowance for a blob's picture and header beside its maps or rows
SCALE = 2.0**15  # weights ≤ 1 are sent × 2¹⁵, so that small ones stay normal float16 numbers
MAX_PICTURE = 256  # side of the picture sent, at most (pixels)
ALPHA = 0.6  # the maps' top opacity: alpha · (0.15 + 0.85 · weight / vmax), as in
#              `figures.overlay_rgb`, so the photo stays visible where attention is low

@dataclass(frozen=True)
class Maps:
    """Attention rows for every query, one panel per (row, column), e.g. layer × head.

    attn: [rows, cols, N, N] softmax weights; titles: one per column when there is one row of
    panels (then row_labels is empty), else row_labels / col_labels label a table.
    With prefix tokens (a ViT's CLS) attn is the patch-to-patch block, whose rows no longer sum
    to 1: `prefix` [rows, cols, N] holds the weight each patch's row puts on the prefix tokens
    (left out of the maps), shown in the tooltip as `prefix_tip` ("CLS (left out): {s}"), and
    `seq_len` (all tokens) places the uniform mark at 1/seq_len.
    Each map is drawn on its own colour scale (0 to its largest weight) until the learner
    presses the scale button under the maps, which puts all on one scale (with the 1/N mark).
    """

    attn: np.ndarray  # [rows, cols, N, N]
    title: str  # "{i}" is replaced by the query patch shown
    colorbar: str  # the colour bar's label
    titles: Sequence[str] = ()
    row_labels: Sequence[str] = ()
    col_labels: Sequence[str] = ()
    prefix: np.ndarray | None = None  # [rows, cols, N] the rows' weight on the prefix tokens
    prefix_tip: str = ""  # the tooltip's words for it, "{s}" replaced by the weight
    seq_len: int = 0  # tokens in a row, prefix included (0: N, no prefix)


def map_bytes(n_panels: int, n_tokens: int) -> int:
    """Bytes of `n_panels` panels of every query's attention row, as float16."""
    return 2 * n_panels * n_tokens * n_tokens


def fits(n_panels: int, n_tokens: int) -> bool:
    """Whether the explorer may carry these maps (picture and header take < FIXED)."""
    return map_bytes(n_panels, n_tokens) + FIXED <= MAX_BYTES


def rows_bytes(n_tokens: int, d_model: int) -> int:
    """Bytes of the patches' unit rows [N, d] as float16 (the similarity explorer's data)."""
    return 2 * n_tokens * d_model


def rows_fit(n_tokens: int, d_model: int) -> bool:
    """Whether the similarity explorer may carry these rows (beside a picture and header of
    < FIXED) within MAX_BYTES."""
    return rows_bytes(n_tokens, d_model) + FIXED <= MAX_BYTES


def picture_pixels(image: np.ndarray, grid: int) -> np.ndarray:
    """The image as RGB uint8, nearest-resampled to a side that is a multiple of the grid.

    Args:
        image: [S, S, C] in [0, 1]
    Returns:
        [G·k, G·k, 3] uint8 with k = max(1, min(S, MAX_PICTURE) // G)
    """
    side = grid * max(1, min(image.shape[0], MAX_PICTURE) // grid)
    rgb = np.repeat(image, 3, axis=-1) if image.shape[-1] == 1 else image
    idx = (np.arange(side) * image.shape[0]) // side  # nearest resampling
    return np.round(np.clip(rgb[idx][:, idx], 0, 1) * 255).astype(np.uint8)


def _lut() -> np.ndarray:
    """The overlay colour map as 256 × RGB uint8."""
    return matplotlib.colormaps[OVERLAY_CMAP](np.linspace(0, 1, 256), bytes=True)[:, :3]


def _pad4(b: bytes, fill: bytes = b"\0") -> bytes:
    return b + fill * (-len(b) % 4)


def payload(image: np.ndarray, grid: int, query: int, text: dict[str, str],
            maps: Maps | None = None, mark: int = -1) -> bytes:
    """The blob the component reads: uint32 header length, JSON header, then the sections.
    `mark`: a patch framed in its own colour (the patch a lesson's question names), or -1."""
    pixels = picture_pixels(image, grid)
    lut = _pad4(_lut().tobytes())
    pic = _pad4(pixels.tobytes())
    head: dict[str, object] = {"G": grid, "N": grid * grid, "side": pixels.shape[0],
                               "query": int(query), "scale": SCALE, "alpha": ALPHA,
                               "lut_at": 0, "image_at": len(lut), "rows": 0, "cols": 0,
                               "text": text, "mark": int(mark)}
    body = [lut, pic]
    if maps is not None:
        rows, cols, n, _ = maps.attn.shape
        head.update(rows=rows, cols=cols, maps_at=len(lut) + len(pic),
                    titles=list(maps.titles), row_labels=list(maps.row_labels),
                    col_labels=list(maps.col_labels))
        head["text"] = {**text, "title": maps.title, "colorbar": maps.colorbar}
        head["uniform"] = 1 / (maps.seq_len or n)
        data = _pad4((np.asarray(maps.attn, np.float32) * SCALE).astype("<f2").tobytes())
        body.append(data)
        if maps.prefix is not None:
            head["prefix_at"] = len(lut) + len(pic) + len(data)
            head["text"]["prefix"] = maps.prefix_tip
            body.append((np.asarray(maps.prefix, np.float32) * SCALE).astype("<f2").tobytes())
    header = _pad4(json.dumps(head, ensure_ascii=False).encode(), b" ")  # JSON allows spaces
    return struct.pack("<I", len(header)) + header + b"".join(body)


def similarity_payload(image: np.ndarray, grid: int, patch: int, text: dict[str, str],
                       unit: np.ndarray) -> bytes:
    """The similarity explorer's blob: as `payload` without maps, plus the patches' unit rows
    `unit` [N, d] (`encoder_core.views.similarity.unit_rows`) as float16 at `unit_at`, and
    `mode` "similarity". `text` holds, besides the picker's words, the map's title ("{i}": the
    pointed patch), `colorbar` / `colorbar_row` (the legend on the −1 … 1 scale / on the
    pointed row's min … max), `to_fixed` / `to_row` (the scale button) and `weight` ("cos")."""
    pixels = picture_pixels(image, grid)
    lut = _pad4(_lut().tobytes())
    pic = _pad4(pixels.tobytes())
    n, d = unit.shape
    if n != grid * grid:
        raise ValueError(f"unit rows [{n}, {d}] for a {grid} × {grid} grid")
    head: dict[str, object] = {"G": grid, "N": n, "side": pixels.shape[0], "query": int(patch),
                               "scale": 1.0, "alpha": ALPHA, "lut_at": 0,
                               "image_at": len(lut), "rows": 1, "cols": 1, "mode": "similarity",
                               "d": d, "unit_at": len(lut) + len(pic), "titles": [""],
                               "row_labels": [], "col_labels": [], "text": text, "mark": -1}
    rows = np.asarray(unit, np.float32).astype("<f2").tobytes()  # [N, d] float16
    header = _pad4(json.dumps(head, ensure_ascii=False).encode(), b" ")
    return struct.pack("<I", len(header)) + header + lut + pic + rows
