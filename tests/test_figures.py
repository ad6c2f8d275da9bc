"""The figures (lens/figures.py): pure functions from arrays to PNG images."""

from __future__ import annotations

import numpy as np
import pytest

from lens import figures


def test_bar_panels_renders_a_png_with_tick_labels_and_highlight():
    png = figures.bar_panels(np.random.default_rng(0).random((3, 20)), ["a", "b", "c"],
                             "key j", "weight", "three rows", highlight=4,
                             tick_labels=[str(i + 1) for i in range(20)])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("rows", [1, 2, 8, 40])
def test_row_heatmap_renders_a_png_for_few_or_many_rows_and_wide_matrices(rows):
    m = np.random.default_rng(1).standard_normal((rows, 600))
    png = figures.row_heatmap(m, "contributions", "output feature j", "head",
                              [str(r + 1) for r in range(rows)], highlight_col=3)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
