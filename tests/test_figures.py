"""The figures (lens/figures/): each picture is drawn by `<kind>_figure(...)`, whose matplotlib
Figure these tests inspect (titles, labels, ticks, colourbars, highlight artists); the PNG
function `<kind>(...)` the app calls is `to_png` of that Figure."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.colors import same_color

from lens import figures


def colourbars(fig):
    """The colourbars of a figure (matplotlib marks a colourbar's axes with `_colorbar`)."""
    return [ax._colorbar for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]


def panels(fig):
    """The axes of a figure that are not colourbars, in creation order."""
    return [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is None]


def labels(texts) -> list[str]:
    return [t.get_text() for t in texts]


def bar_colours(ax) -> list:
    """The face colours of an axis's bar rectangles, left to right."""
    bars = sorted(ax.containers[0].patches, key=lambda p: p.get_x())
    return [p.get_facecolor() for p in bars]


def test_bar_panels_writes_the_given_tick_labels_and_colours_only_the_highlighted_bar():
    values = np.random.default_rng(0).random((3, 20))
    ticks = [str(i + 1) for i in range(20)]
    fig = figures.bar_panels_figure(values, ["a", "b", "c"], "key j", "weight", "three rows",
                                    highlight=4, tick_labels=ticks)
    axes = panels(fig)
    assert [ax.get_title() for ax in axes] == ["a", "b", "c"]
    assert [ax.get_ylabel() for ax in axes] == ["weight", "", ""]  # one shared y scale
    assert all(axes[0].get_shared_y_axes().joined(axes[0], ax) for ax in axes)
    for ax, v in zip(axes, values, strict=True):
        assert labels(ax.get_xticklabels()) == ticks
        assert list(ax.get_xticks()) == list(range(20))
        heights = [p.get_height() for p in ax.containers[0].patches]
        np.testing.assert_allclose(heights, v)
        colours = bar_colours(ax)
        assert same_color(colours[4], figures.HIGHLIGHT_COLOUR)
        others = colours[:4] + colours[5:]
        assert all(same_color(c, figures.BAR_COLOUR) for c in others)
    assert fig.get_suptitle() == "three rows"


@pytest.mark.parametrize("rows", [1, 2, 8, 40])
def test_row_heatmap_labels_few_rows_each_thins_many_and_block_averages_wide_matrices(rows):
    m = np.random.default_rng(1).standard_normal((rows, 600))
    names = [f"h{r + 1}" for r in range(rows)]
    fig = figures.row_heatmap_figure(m, "contributions", "output feature j", "head", names,
                                     highlight_col=3)
    (ax,) = panels(fig)
    ticks = list(ax.get_yticks())
    if rows <= 16:
        assert ticks == list(range(rows))
        assert labels(ax.get_yticklabels()) == names
    else:  # at most 16 labels, evenly spaced, each the given label of its row
        assert len(ticks) <= 16 and ticks == list(range(0, rows, ticks[1] - ticks[0]))
        assert labels(ax.get_yticklabels()) == [names[int(t)] for t in ticks]
    shown = ax.images[0].get_array()
    assert shown.shape == (rows, 200)  # columns averaged 3 by 3, rows never
    np.testing.assert_allclose(shown[:, 0], m[:, :3].mean(axis=1), rtol=1e-5)
    assert ax.get_xlabel() == "output feature j  (mean of 3)" and ax.get_ylabel() == "head"
    assert ax.get_title() == f"contributions  [{rows} × 600]"
    assert sorted(ln.get_xdata()[0] for ln in ax.lines) == [2.5, 3.5]  # highlight_col = 3
    assert len(colourbars(fig)) == 1
