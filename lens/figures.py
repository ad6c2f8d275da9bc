"""Arrays -> PNG bytes. Pure functions: no Streamlit, no state, matplotlib's OO API only.

Conventions (issue 3): every heatmap has a title with its name and shape, labelled axes and a
colourbar; signed values use a diverging map centred at 0, probabilities a sequential one;
matrices with a side over 256 are block-averaged (the factor is returned for the caption);
a constant matrix still gets a sensible colour scale. Attention over the image is
nearest-upsampled to the image and alpha-blended on it. Grids are one figure with one scale.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import matplotlib
import numpy as np
from matplotlib import font_manager
from matplotlib.figure import Figure

matplotlib.use("Agg")

SIGNED_CMAP = "RdBu_r"  # diverging, centred at 0
PROB_CMAP = "viridis"  # sequential, for probabilities and other non-negative values
OVERLAY_CMAP = "inferno"
MAX_SIDE = 256  # a matrix side above this is block-averaged for display
DPI = 100


def _font_families() -> list[str]:
    """DejaVu Sans, plus a CJK font when one is installed, so 中文 labels render."""
    names = {f.name for f in font_manager.fontManager.ttflist}
    cjk = [n for n in ("Noto Sans CJK SC", "Noto Sans CJK JP", "WenQuanYi Zen Hei",
                       "Droid Sans Fallback") if n in names]
    return ["DejaVu Sans", *cjk[:1]]


FONTS = _font_families()
HAS_CJK_FONT = len(FONTS) > 1
matplotlib.rcParams["font.family"] = FONTS
matplotlib.rcParams["axes.titlesize"] = 10
matplotlib.rcParams["axes.labelsize"] = 9


def block_average(m: np.ndarray, max_side: int = MAX_SIDE) -> tuple[np.ndarray, tuple[int, int]]:
    """Average k×k blocks so that no side exceeds max_side. Returns (matrix, (k_rows, k_cols))."""
    kr = -(-m.shape[0] // max_side)
    kc = -(-m.shape[1] // max_side)
    if kr == 1 and kc == 1:
        return m, (1, 1)
    rows, cols = m.shape[0] // kr * kr, m.shape[1] // kc * kc
    trimmed = m[:rows, :cols]
    return trimmed.reshape(rows // kr, kr, cols // kc, kc).mean(axis=(1, 3)), (kr, kc)


def colour_limits(m: np.ndarray, signed: bool) -> tuple[float, float]:
    """vmin, vmax: symmetric around 0 for signed data; never an empty range."""
    finite = m[np.isfinite(m)]
    if finite.size == 0:
        return (-1.0, 1.0) if signed else (0.0, 1.0)
    if signed:
        a = float(np.abs(finite).max())
        a = a if a > 0 else 1.0
        return -a, a
    lo, hi = float(finite.min()), float(finite.max())
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    return lo, hi


def to_png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)  # layout="constrained" already fits the labels
    return buf.getvalue()


def heatmap(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = True,
            colorbar_label: str = "", size: tuple[float, float] = (5.0, 4.0),
            highlight_row: int | None = None, highlight_col: int | None = None) -> bytes:
    """One matrix as a heatmap with title, axis labels and colourbar. m: [rows, cols] (1-D ok)."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    shown, (kr, kc) = block_average(m)
    vmin, vmax = colour_limits(shown, signed)
    fig = Figure(figsize=size)
    ax, cax = fixed_axes_with_colorbar(fig)
    im = ax.imshow(shown, cmap=SIGNED_CMAP if signed else PROB_CMAP, vmin=vmin, vmax=vmax,
                   aspect="auto", interpolation="nearest",
                   extent=(-0.5, m.shape[1] - 0.5, m.shape[0] - 0.5, -0.5))
    w, h = fig.get_size_inches()
    xlabel += f"  (mean of {kc})" if kc > 1 else ""
    ylabel += f"  (mean of {kr})" if kr > 1 else ""
    ax.set_title(title, fontsize=fit_fontsize(title, w - 0.2, 10))
    ax.set_xlabel(xlabel, fontsize=fit_fontsize(xlabel, w - 1.0, 9))
    ax.set_ylabel(ylabel, fontsize=fit_fontsize(ylabel, h - 0.8, 9))
    if highlight_row is not None:
        ax.axhline(highlight_row - 0.5, color="k", lw=0.8)
        ax.axhline(highlight_row + 0.5, color="k", lw=0.8)
    if highlight_col is not None:
        ax.axvline(highlight_col - 0.5, color="k", lw=0.8)
        ax.axvline(highlight_col + 0.5, color="k", lw=0.8)
    fig.colorbar(im, cax=cax, label=colorbar_label)
    return to_png(fig)


def fit_fontsize(text: str, inches: float, base: float) -> float:
    """The base font size, reduced so that `text` fits in `inches` (about 0.55 em a glyph,
    CJK glyphs counting double)."""
    ems = sum(1.0 if ord(ch) > 0x2E80 else 0.55 for ch in text)
    return max(5.0, min(base, 72 * inches / max(ems, 1)))


def fixed_margins(fig: Figure, hspace: float = 0.6, wspace: float = 0.3) -> None:
    """Subplot margins fixed in inches (room for labels, a suptitle and subplot titles),
    instead of a layout engine that draws the figure twice."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=0.85 / w, right=1 - 0.2 / w, bottom=0.55 / h, top=1 - 0.65 / h,
                        hspace=hspace, wspace=wspace)


def overlay_rgb(grey: np.ndarray, weights: np.ndarray, vmax: float,
                alpha: float = 0.6) -> np.ndarray:
    """A map over the patch grid, nearest-upsampled to the image and alpha-blended on it.

    Args:
        grey: [S, S] in [0, 1]; weights: [G, G] ≥ 0; vmax: the top of the shared colour scale.
    Returns:
        [S, S, 3] RGB in [0, 1] (one image per panel: half the drawing of two layers).
    """
    P = grey.shape[0] // weights.shape[0]
    up = np.kron(weights, np.ones((P, P)))  # nearest upsampling to the image
    colour = matplotlib.colormaps[OVERLAY_CMAP](np.clip(up / vmax, 0, 1))[..., :3]
    return (1 - alpha) * grey[..., None] + alpha * colour


def overlay_mappable(vmax: float) -> matplotlib.cm.ScalarMappable:
    """The colour scale of `overlay_rgb` panels, for their shared colourbar."""
    norm = matplotlib.colors.Normalize(0, vmax)
    return matplotlib.cm.ScalarMappable(norm=norm, cmap=OVERLAY_CMAP)


def grid_margins(fig: Figure, top: float = 0.55):
    """Fixed margins (inches) for a grid of image panels with one colourbar on the right;
    returns the colourbar's axes."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(left=0.35 / w, right=1 - 1.3 / w, bottom=0.1 / h, top=1 - top / h,
                        wspace=0.06, hspace=0.22)
    return fig.add_axes((1 - 1.15 / w, 0.15 / h, 0.13 / w, 1 - (top + 0.2) / h))


def fixed_axes_with_colorbar(fig: Figure):
    """Axes and a colourbar axis at fixed margins (in inches): 2–3× faster than a layout engine,
    which matters for the most drawn figure."""
    w, h = fig.get_size_inches()
    left, right, bottom, top, bar, gap = 0.8, 0.95, 0.6, 0.35, 0.14, 0.12
    ax = fig.add_axes((left / w, bottom / h, 1 - (left + right + bar + gap) / w,
                       1 - (bottom + top) / h))
    cax = fig.add_axes((1 - (right + bar) / w, bottom / h, bar / w, 1 - (bottom + top) / h))
    return ax, cax


def _show_image(ax, image: np.ndarray) -> None:
    """image [S, S, C] in [0, 1]: grey with the grey map, RGB as is."""
    if image.shape[-1] == 1:
        ax.imshow(image[..., 0], cmap="gray", vmin=0, vmax=1, interpolation="nearest")
    else:
        ax.imshow(np.clip(image, 0, 1), interpolation="nearest")


def image_with_grid(image: np.ndarray, patch_size: int, title: str, *, numbers: bool = True,
                    highlight: int | None = None, size: float = 5.0) -> bytes:
    """The model's image with the patch grid, patch numbers (row-major) and one patch outlined."""
    S = image.shape[0]
    G = S // patch_size
    fig = Figure(figsize=(size, size), layout="constrained")
    ax = fig.add_subplot()
    _show_image(ax, image)
    for k in range(1, G):
        ax.axhline(k * patch_size - 0.5, color="#ffcc00", lw=0.6)
        ax.axvline(k * patch_size - 0.5, color="#ffcc00", lw=0.6)
    if numbers and G <= 16:
        for pos in range(G * G):
            r, c = divmod(pos, G)
            ax.text((c + 0.5) * patch_size - 0.5, (r + 0.5) * patch_size - 0.5, str(pos),
                    ha="center", va="center", fontsize=max(4, 90 // G), color="#ffcc00")
    if highlight is not None:
        r, c = divmod(highlight, G)
        ax.add_patch(matplotlib.patches.Rectangle(
            (c * patch_size - 0.5, r * patch_size - 0.5), patch_size, patch_size,
            fill=False, ec="#00e5ff", lw=2.0))
    ax.set_title(title)
    ax.set_xlabel("x (pixels)")
    ax.set_ylabel("y (pixels)")
    return to_png(fig)


def image_pair(original: np.ndarray, model_input: np.ndarray, titles: tuple[str, str]) -> bytes:
    """The upload as it is beside the image the model receives."""
    fig = Figure(figsize=(8, 4), layout="constrained")
    for i, (img, title) in enumerate(zip((original, model_input), titles, strict=True)):
        ax = fig.add_subplot(1, 2, i + 1)
        _show_image(ax, img)
        ax.set_title(f"{title}  [{img.shape[0]} × {img.shape[1]} × {img.shape[2]}]")
        ax.set_xlabel("x (pixels)")
        ax.set_ylabel("y (pixels)")
    return to_png(fig)


def patch_gallery(patches: np.ndarray, patch_size: int, channels: int, title: str,
                  max_patches: int = 64) -> bytes:
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
    return to_png(fig)


def attention_grid(image: np.ndarray, maps: np.ndarray, titles: Sequence[str], title: str,
                   *, ncols: int = 4, query: int | None = None, alpha: float = 0.6,
                   row_labels: Sequence[str] | None = None,
                   colorbar_label: str = "attention weight") -> bytes:
    """Attention maps over the image, one figure with one shared colour scale.

    Args:
        image: [S, S, C] in [0, 1]
        maps: [k, G, G] weights per patch (e.g. one query's row of each head, reshaped)
        titles: k subplot titles; query: the query patch to outline (row-major index)
        row_labels: when given, ncols is the row length and each row gets this label
    """
    k, G, _ = maps.shape
    S = image.shape[0]
    P = S // G
    ncols = min(ncols, k)
    nrows = int(np.ceil(k / ncols))
    vmax = float(maps.max()) if maps.size and maps.max() > 0 else 1.0
    grey = image.mean(axis=-1) if image.shape[-1] > 1 else image[..., 0]
    fig = Figure(figsize=(2.3 * ncols + 1.2, 2.3 * nrows + 0.6))
    fig.suptitle(title, fontsize=fit_fontsize(title, fig.get_size_inches()[0] - 0.3, 11))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    cax = grid_margins(fig)
    for i, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if i >= k:
            ax.set_axis_off()
            continue
        ax.imshow(overlay_rgb(grey, maps[i], vmax, alpha), interpolation="nearest")
        ax.set_title(titles[i], fontsize=8)
        if row_labels is not None and i % ncols == 0:
            ax.set_ylabel(row_labels[i // ncols], fontsize=8)
        if query is not None:
            r, c = divmod(query, G)
            ax.add_patch(matplotlib.patches.Rectangle((c * P - 0.5, r * P - 0.5), P, P,
                                                      fill=False, ec="#00e5ff", lw=1.5))
    if k:
        fig.colorbar(overlay_mappable(vmax), cax=cax, label=colorbar_label)
    return to_png(fig)


def bar_row(ax, v: np.ndarray, highlight: int | None = None, colour: str = "#4c72b0") -> None:
    """Bars of width 1 at 0 … n−1 as one filled step artist (hundreds of bars stay fast),
    with bar `highlight` drawn on top in orange."""
    ax.stairs(v, np.arange(len(v) + 1) - 0.5, baseline=0, fill=True, color=colour)
    if highlight is not None and 0 <= highlight < len(v):
        ax.bar([highlight], [v[highlight]], width=1.0, color="#dd8452")


def bars(values: Sequence[np.ndarray], titles: Sequence[str], xlabel: str,
         ylabels: Sequence[str], suptitle: str, highlight: int | None = None) -> bytes:
    """Bar charts stacked vertically (e.g. one score row before and after softmax)."""
    k = len(values)
    fig = Figure(figsize=(7, 2.0 * k + 0.5))
    fig.suptitle(suptitle, fontsize=fit_fontsize(suptitle, 6.8, 11))
    axes = fig.subplots(k, 1, squeeze=False)[:, 0]
    fixed_margins(fig, hspace=0.95)
    for ax, v, t, yl in zip(axes, values, titles, ylabels, strict=True):
        bar_row(ax, np.asarray(v, dtype=np.float64), highlight)
        ax.set_title(t, fontsize=9)
        ax.set_ylabel(yl)
        ax.set_xlabel(xlabel)
        ax.set_xlim(-0.5, len(v) - 0.5)
    return to_png(fig)


def lines(x: np.ndarray, ys: Sequence[np.ndarray], labels: Sequence[str], title: str,
          xlabel: str, ylabel: str) -> bytes:
    """A few curves on one axis with a legend (e.g. PE columns against pos)."""
    fig = Figure(figsize=(7, 3), layout="constrained")
    ax = fig.add_subplot()
    for y, label in zip(ys, labels, strict=True):
        ax.plot(x, y, label=label, lw=1.2)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    return to_png(fig)


def value_grid(m: np.ndarray, title: str, xlabel: str, ylabel: str, *, signed: bool = False,
               fmt: str = "{:.2f}", row0: int = 0, col0: int = 0) -> bytes:
    """A small matrix (≤ 32 × 32) as a heatmap with tick labels starting at row0/col0."""
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    vmin, vmax = colour_limits(m, signed)
    fig = Figure(figsize=(max(3.0, 0.28 * m.shape[1] + 1.5), max(2.5, 0.28 * m.shape[0] + 1)),
                 layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(m, cmap=SIGNED_CMAP if signed else PROB_CMAP, vmin=vmin, vmax=vmax,
                   interpolation="nearest", aspect="auto")
    step_r = max(1, m.shape[0] // 8)
    step_c = max(1, m.shape[1] // 8)
    rows, cols = range(0, m.shape[0], step_r), range(0, m.shape[1], step_c)
    ax.set_yticks(rows, [str(row0 + i) for i in rows])
    ax.set_xticks(cols, [str(col0 + i) for i in cols])
    if m.size <= 256:
        for (i, j), v in np.ndenumerate(m):
            ax.text(j, i, fmt.format(v), ha="center", va="center", fontsize=6,
                    color="white" if (v - vmin) / (vmax - vmin + 1e-12) < 0.5 else "black")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    fig.colorbar(im, ax=ax, shrink=0.9)
    return to_png(fig)


def bar_panels(values: np.ndarray, titles: Sequence[str], xlabel: str, ylabel: str,
               suptitle: str, *, highlight: int | None = None, sharey: bool = True,
               tick_labels: Sequence[str] | None = None, size: tuple[float, float] | None = None,
               uniform_line: bool = False) -> bytes:
    """Bar charts side by side, one per row of `values`, on one shared y scale by default
    (e.g. one softmax row at three scalings, or one value per head).

    Args:
        values: [k, n] one bar chart per row; titles: k panel titles
        highlight: a bar index drawn in a second colour in every panel (e.g. the query)
        tick_labels: n labels for the x ticks (e.g. "1" … "h"); default the index 0 … n−1
        uniform_line: draw a dashed line at 1/n, the weight of a uniform distribution
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    k, n = values.shape
    fig = Figure(figsize=size or (min(4.2 * k, 13.0), 3.2))
    fig.suptitle(suptitle, fontsize=fit_fontsize(suptitle, fig.get_size_inches()[0] - 0.2, 11))
    axes = fig.subplots(1, k, squeeze=False, sharey=sharey)[0]
    fixed_margins(fig, wspace=0.25 if sharey else 0.45)
    for p, (ax, v, t) in enumerate(zip(axes, values, titles, strict=True)):
        if n > 32:
            bar_row(ax, v, highlight)
        else:
            colours = ["#4c72b0"] * n
            if highlight is not None and 0 <= highlight < n:
                colours[highlight] = "#dd8452"
            ax.bar(np.arange(n), v, color=colours, width=0.8)
        ax.set_title(t, fontsize=9)
        ax.set_xlabel(xlabel)
        if p == 0 or not sharey:
            ax.set_ylabel(ylabel)
        ax.set_xlim(-0.5, n - 0.5)
        if tick_labels is not None:
            step = max(1, n // 16)
            ax.set_xticks(np.arange(0, n, step), [tick_labels[i] for i in range(0, n, step)])
        if uniform_line:
            ax.axhline(1.0 / n, color="#555555", lw=0.8, ls="--", label=f"1/{n}")
            ax.legend(fontsize=7, loc="upper left")
        ax.grid(axis="y", alpha=0.3)
    return to_png(fig)


def attention_table(image: np.ndarray, maps: np.ndarray, title: str, *,
                    row_labels: Sequence[str], col_labels: Sequence[str],
                    query: int | None = None, alpha: float = 0.6, panel: float = 1.25,
                    colorbar_label: str = "attention weight") -> bytes:
    """A rows × columns table of attention maps over the image (e.g. layer × head), one figure,
    one shared colour scale, labels only on the outer edge so the text stays large.

    Args:
        image: [S, S, C] in [0, 1]
        maps: [rows, cols, G, G] weights per patch (e.g. one query's attn row, reshaped)
        row_labels: rows labels (left edge); col_labels: cols labels (top edge)
        query: the query patch to outline (row-major index); panel: side of one map in inches
    """
    nrows, ncols, G, _ = maps.shape
    S = image.shape[0]
    P = S // G
    vmax = float(maps.max()) if maps.size and maps.max() > 0 else 1.0
    grey = image.mean(axis=-1) if image.shape[-1] > 1 else image[..., 0]
    fig = Figure(figsize=(panel * ncols + 1.6, panel * nrows + 0.9))
    fig.suptitle(title, fontsize=12)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    cax = grid_margins(fig, top=0.75)
    for (r, c), ax in np.ndenumerate(axes):
        ax.set_xticks([])
        ax.set_yticks([])
        ax.imshow(overlay_rgb(grey, maps[r, c], vmax, alpha), interpolation="nearest")
        if r == 0:
            ax.set_title(col_labels[c], fontsize=11)
        if c == 0:
            ax.set_ylabel(row_labels[r], fontsize=11)
        if query is not None:
            qr, qc = divmod(query, G)
            ax.add_patch(matplotlib.patches.Rectangle((qc * P - 0.5, qr * P - 0.5), P, P,
                                                      fill=False, ec="#00e5ff", lw=1.2))
    cb = fig.colorbar(overlay_mappable(vmax), cax=cax)
    cb.set_label(colorbar_label, fontsize=11)
    cb.ax.tick_params(labelsize=10)
    return to_png(fig)


def row_heatmap(m: np.ndarray, title: str, xlabel: str, ylabel: str, row_labels: Sequence[str],
                *, signed: bool = True, colorbar_label: str = "",
                highlight_col: int | None = None, size: tuple[float, float] = (5.0, 3.4)) -> bytes:
    """A matrix with a few named rows (e.g. one row per head) as a heatmap: integer row ticks
    with labels, columns block-averaged over 256, title, axis labels and a colourbar.

    Args:
        m: [rows, cols]; row_labels: rows labels (at most 16 are written, evenly spaced)
    """
    m = np.atleast_2d(np.asarray(m, dtype=np.float32))
    rows, cols = m.shape
    shown, (_, kc) = block_average(m, max_side=max(MAX_SIDE, rows))  # rows are never averaged
    vmin, vmax = colour_limits(shown, signed)
    fig = Figure(figsize=size, layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(shown, cmap=SIGNED_CMAP if signed else PROB_CMAP, vmin=vmin, vmax=vmax,
                   aspect="auto", interpolation="nearest",
                   extent=(-0.5, cols - 0.5, rows - 0.5, -0.5))
    step = max(1, -(-rows // 16))
    ticks = list(range(0, rows, step))
    ax.set_yticks(ticks, [row_labels[r] for r in ticks])
    ax.set_title(f"{title}  [{rows} × {cols}]")
    ax.set_xlabel(xlabel + (f"  (mean of {kc})" if kc > 1 else ""))
    ax.set_ylabel(ylabel)
    if highlight_col is not None:
        ax.axvline(highlight_col - 0.5, color="k", lw=0.8)
        ax.axvline(highlight_col + 0.5, color="k", lw=0.8)
    fig.colorbar(im, ax=ax, label=colorbar_label, shrink=0.9)
    return to_png(fig)


def clickable_grid(image: np.ndarray, patch_size: int, highlight: int | None = None,
                   side: int = 320) -> np.ndarray:
    """The model's image as a bare picture (no axes or margins) with the patch grid, the chosen
    patch outlined and a thin dark frame — so a click's pixel maps exactly to a patch.

    Args:
        image: [S, S, C] in [0, 1]
    Returns:
        [G·k, G·k, 3] uint8 with k = max(2, side // G) pixels a patch.
    """
    G = image.shape[0] // patch_size
    k = max(2, side // G)
    rgb = np.repeat(image, 3, axis=-1) if image.shape[-1] == 1 else image
    idx = (np.arange(G * k) * image.shape[0]) // (G * k)  # nearest resampling
    out = (np.clip(rgb[idx][:, idx], 0, 1) * 255).astype(np.uint8)
    lines = np.arange(1, G) * k
    out[lines, :] = out[:, lines] = (255, 204, 0)  # grid, between patches
    if highlight is not None:
        r, c = divmod(highlight, G)
        y0, x0 = r * k, c * k
        for t in range(2):  # a 2-pixel cyan outline inside the patch
            out[y0 + t, x0:x0 + k] = out[y0 + k - 1 - t, x0:x0 + k] = (0, 229, 255)
            out[y0:y0 + k, x0 + t] = out[y0:y0 + k, x0 + k - 1 - t] = (0, 229, 255)
    out[[0, -1], :] = out[:, [0, -1]] = (34, 34, 34)  # frame
    return out
