"""Vectors as charts: bar charts stacked (`bars`) or side by side on one scale (`bar_panels`),
and a few curves on one axis (`lines`).

Each `<kind>_figure` draws and returns the Figure (tests inspect it); `<kind>` is its PNG."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from .style import (
    BAR_COLOUR,
    HIGHLIGHT_COLOUR,
    MIN_PT,
    fit_title,
    fixed_margins,
    to_png,
    wrap_to,
)

# The stacked bar charts' width in inches: their text (10 pt and more) reads at 10 px or more
# from 350 px wide, the half of a tablet's column with a large gap.
BARS_WIDTH = 4.8
# Side-by-side panels one under the other in a phone's column (358 px of CSS): 10 pt at 4.6 in
# reads at ~11 px there; each panel TALL_PANEL inches high.
TALL_WIDTH, TALL_PANEL = 4.6, 1.9
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def y_power(values: np.ndarray) -> int:
    """The power of ten a y axis of `values` is written in (0: as they are). Below 1e-4 or from
    1e6 on, matplotlib writes it above the axis ("1e−6"), where it runs into the panel's
    title: the bars are drawn divided by it instead, and the axis label says "× 10⁻⁶"."""
    finite = np.abs(values[np.isfinite(values)])
    top = float(finite.max()) if finite.size else 0.0
    if top == 0 or 1e-4 <= top < 1e6:
        return 0
    return math.floor(math.log10(top))


def with_power(label: str, power: int) -> str:
    """An axis label with the power of ten its values are written in: "value (× 10⁻⁶)"."""
    return f"{label} (× 10{str(power).translate(SUPERSCRIPT)})" if power else label


def bar_row(ax: Axes, v: np.ndarray, highlight: int | None = None,
            colour: str = BAR_COLOUR) -> None:
    """Bars of width 1 at 0 … n−1 as one filled step artist (hundreds of bars stay fast),
    with bar `highlight` drawn on top in orange."""
    ax.stairs(v, np.arange(len(v) + 1) - 0.5, baseline=0, fill=True, color=colour)
    if highlight is not None and 0 <= highlight < len(v):
        ax.bar([highlight], [v[highlight]], width=1.0, color=HIGHLIGHT_COLOUR)


def bars_figure(values: Sequence[np.ndarray], titles: Sequence[str], xlabel: str,
                ylabels: Sequence[str], suptitle: str, highlight: int | None = None,
                width: float = BARS_WIDTH) -> Figure:
    """Bar charts stacked vertically (e.g. one score row before and after softmax), `width`
    inches wide (narrower for a narrower column: the text keeps its size)."""
    k = len(values)
    suptitle, pt = fit_title(suptitle, width - 0.2, 12)
    titles = [wrap_to(t, width - 0.7, MIN_PT) for t in titles]  # over the axes and margins
    extra = max(t.count("\n") for t in titles) if titles else 0  # a title's second line
    lines = suptitle.count("\n") + 1 + extra
    fig = Figure(figsize=(width, (2.1 + 0.2 * extra) * k + 0.5 + 0.2 * (lines - 1)))
    fig.suptitle(suptitle, fontsize=pt)
    axes = fig.subplots(k, 1, squeeze=False)[:, 0]
    fixed_margins(fig, hspace=1.0 + 0.2 * extra, title_lines=lines)
    for ax, v, t, yl in zip(axes, values, titles, ylabels, strict=True):
        bar_row(ax, np.asarray(v, dtype=np.float64), highlight)
        ax.set_title(t, fontsize=MIN_PT)
        ax.set_ylabel(yl)
        ax.set_xlabel(xlabel)
        ax.set_xlim(-0.5, len(v) - 0.5)
    return fig


def bars(values: Sequence[np.ndarray], titles: Sequence[str], xlabel: str,
         ylabels: Sequence[str], suptitle: str, highlight: int | None = None,
         width: float = BARS_WIDTH) -> bytes:
    """PNG bytes of `bars_figure`."""
    return to_png(bars_figure(values, titles, xlabel, ylabels, suptitle, highlight, width),
                  "bars")


def bar_panels_figure(values: np.ndarray, titles: Sequence[str], xlabel: str, ylabel: str,
                      suptitle: str, *, highlight: int | None = None, sharey: bool = True,
                      tick_labels: Sequence[str] | None = None,
                      size: tuple[float, float] | None = None,
                      uniform_line: bool = False, tall: bool = False) -> Figure:
    """Bar charts side by side, one per row of `values`, on one shared y scale by default
    (e.g. one softmax row at three scalings, or one value per head).

    Args:
        values: [k, n] one bar chart per row; titles: k panel titles
        highlight: a bar index drawn in a second colour in every panel (e.g. the query)
        tick_labels: n labels for the x ticks (e.g. "1" … "h"); default the index 0 … n−1
        uniform_line: draw a dashed line at 1/n, the weight of a uniform distribution
        tall: the panels one under the other, TALL_WIDTH inches wide (a phone's column),
            instead of side by side (`size` is then ignored)
    """
    values = np.atleast_2d(np.asarray(values, dtype=np.float64))
    k, n = values.shape
    w, h = (TALL_WIDTH, 0.0) if tall else size or (min(4.2 * k, 13.0), 3.2)
    suptitle, pt = fit_title(suptitle, w - 0.2, 12)
    panel_inches = (w - 1.1) if tall else (w - 1.1) / k - 0.2
    titles = [wrap_to(t, panel_inches, MIN_PT) for t in titles]
    # the panels' titles may take several lines (a case and its entropy): room for them under
    # the suptitle, or the two overlap
    title_lines = max((t.count("\n") for t in titles), default=0) + 1
    lines = suptitle.count("\n") + title_lines
    if tall:  # k panels of TALL_PANEL inches, each gap holding an x label and the next title
        gap = 0.55 + 0.2 * title_lines
        fig = Figure(figsize=(w, 0.7 + 0.2 * (lines - 1) + k * TALL_PANEL + (k - 1) * gap + 0.6))
        axes = fig.subplots(k, 1, squeeze=False, sharey=sharey)[:, 0]
        fixed_margins(fig, hspace=gap / TALL_PANEL, title_lines=lines)
    else:
        fig = Figure(figsize=(w, h + 0.2 * (lines - 1)))
        axes = fig.subplots(1, k, squeeze=False, sharey=sharey)[0]
        fixed_margins(fig, wspace=0.25 if sharey else 0.45, title_lines=lines)
    fig.suptitle(suptitle, fontsize=pt)
    shared = y_power(values)
    for p, (ax, v, t) in enumerate(zip(axes, values, titles, strict=True)):
        power = shared if sharey else y_power(v)
        v = v / 10.0 ** power
        if n > 32:
            bar_row(ax, v, highlight)
        else:
            colours = [BAR_COLOUR] * n
            if highlight is not None and 0 <= highlight < n:
                colours[highlight] = HIGHLIGHT_COLOUR
            ax.bar(np.arange(n), v, color=colours, width=0.8)
        ax.set_title(t, fontsize=MIN_PT)
        ax.set_xlabel(xlabel)
        if p == 0 or not sharey or tall:
            ax.set_ylabel(with_power(ylabel, power))
        ax.set_xlim(-0.5, n - 0.5)
        if tick_labels is not None:
            step = max(1, n // 16)
            ax.set_xticks(np.arange(0, n, step), [tick_labels[i] for i in range(0, n, step)])
        if uniform_line:
            ax.axhline(1.0 / n / 10.0 ** power, color="#555555", lw=0.8, ls="--", label=f"1/{n}")
            ax.legend(loc="upper left")
        ax.grid(axis="y", alpha=0.3)
    return fig


def bar_panels(values: np.ndarray, titles: Sequence[str], xlabel: str, ylabel: str,
               suptitle: str, *, highlight: int | None = None, sharey: bool = True,
               tick_labels: Sequence[str] | None = None, size: tuple[float, float] | None = None,
               uniform_line: bool = False, tall: bool = False) -> bytes:
    """PNG bytes of `bar_panels_figure`."""
    return to_png(bar_panels_figure(values, titles, xlabel, ylabel, suptitle,
                                    highlight=highlight, sharey=sharey,
                                    tick_labels=tick_labels, size=size,
                                    uniform_line=uniform_line, tall=tall), "bar_panels")


def lines_figure(x: np.ndarray, ys: Sequence[np.ndarray], labels: Sequence[str], title: str,
                 xlabel: str, ylabel: str, size: tuple[float, float] = (5.6, 3.0),
                 legend_below: bool = False) -> Figure:
    """A few curves on one axis with a legend (e.g. PE columns against pos); `size` in inches
    (the default reads at 10 px from about 400 px wide). Integer x (positions, steps) gets
    whole-number ticks only (a curve of two steps is not ticked at 0.2, 0.4, …).
    `legend_below`: the legend under the axes, one label a line (curves that cross everywhere,
    labels that carry numbers), not over the curves."""
    fig = Figure(figsize=size, layout="constrained")
    ax = fig.add_subplot()
    for y, label in zip(ys, labels, strict=True):
        ax.plot(x, y, label=label, lw=1.2)
    if np.issubdtype(np.asarray(x).dtype, np.integer):
        ax.xaxis.get_major_locator().set_params(integer=True)
    ax.set_title(wrap_to(title, size[0] - 0.3, 11))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if legend_below:
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1, frameon=False)
    else:
        ax.legend(loc="upper right")
    ax.grid(alpha=0.3)
    return fig


def lines(x: np.ndarray, ys: Sequence[np.ndarray], labels: Sequence[str], title: str,
          xlabel: str, ylabel: str, size: tuple[float, float] = (5.6, 3.0),
          legend_below: bool = False) -> bytes:
    """PNG bytes of `lines_figure`."""
    return to_png(lines_figure(x, ys, labels, title, xlabel, ylabel, size, legend_below),
                  "lines")


RIGHT_MARK = "\u2713"  # ✓ before a right answer's label (DejaVu Sans has it)


def answer_counts_figure(labels: Sequence[str], counts: Sequence[int], title: str,
                         xlabel: str, right: Sequence[bool] = (), width: float = BARS_WIDTH,
                         text_pt: float = MIN_PT) -> Figure:
    """A class's answers as a histogram: one horizontal bar per answer given (its label at
    the left, its count at the bar's end), the right ones in the highlight colour and with a
    ✓ before their label once they may be shown (`right`, one flag per label; empty: none
    marked). Its labels, counts and axis in `text_pt` points (a projector's, larger)."""
    n = max(len(labels), 1)
    title, pt = fit_title(title, width - 0.2, 12)
    lines = title.count("\n") + 1
    below = 0.55 + 0.05 * (text_pt - MIN_PT)  # the counts' axis and its label, in inches
    fig = Figure(figsize=(width, 0.35 + below + 0.38 * n + 0.2 * (lines - 1)))
    fig.suptitle(title, fontsize=pt)
    ax = fig.subplots()
    marks = list(right) or [False] * len(labels)
    # a right answer is said by a mark before its label, not by the bar's colour alone
    # (WCAG 1.4.1: a reader who does not see the highlight colour still reads it)
    names = [wrap_to(f"{RIGHT_MARK} {s}" if r else str(s), 1.6, text_pt)
             for s, r in zip(labels, marks, strict=False)]
    fig.subplots_adjust(left=0.36, right=0.94, top=1 - (0.25 + 0.2 * lines) / fig.get_figheight(),
                        bottom=below / fig.get_figheight())
    y = np.arange(len(labels))
    colours = [HIGHLIGHT_COLOUR if r else BAR_COLOUR for r in marks]
    ax.barh(y, counts, color=colours, height=0.7)
    ax.set_yticks(y, names, fontsize=text_pt)
    ax.invert_yaxis()  # the first answer on top
    top = max([int(c) for c in counts] + [1])
    ax.set_xlim(0, top * 1.15 + 0.5)
    for yi, c in zip(y, counts, strict=True):
        ax.text(c + top * 0.02, yi, str(int(c)), va="center", fontsize=text_pt)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.tick_params(axis="x", labelsize=text_pt)
    ax.set_xlabel(xlabel, fontsize=text_pt)
    return fig


def answer_counts(labels: Sequence[str], counts: Sequence[int], title: str, xlabel: str,
                  right: Sequence[bool] = (), width: float = BARS_WIDTH,
                  text_pt: float = MIN_PT) -> bytes:
    """PNG bytes of `answer_counts_figure`."""
    return to_png(answer_counts_figure(labels, counts, title, xlabel, right, width, text_pt),
                  "answer_counts")
