"""Arrays -> PNG bytes. Pure functions: no Streamlit, no state, matplotlib's OO API only.

Conventions (issue 3): every heatmap has a title with its name and shape, labelled axes and a
colourbar; signed values use a diverging map centred at 0, probabilities a sequential one;
matrices with a side over 256 are block-averaged (the factor is returned for the caption);
a constant matrix still gets a sensible colour scale. Attention over the image is
nearest-upsampled to the image and alpha-blended on it. Grids are one figure with one scale.

    style.py     fonts, colour maps and colours, colour limits, block averaging, margins, to_png
    heatmaps.py  matrices: heatmap, row_heatmap, value_grid
    images.py    the input image: image_with_grid, image_pair, patch_gallery
    overlays.py  attention over the image: attention_grid, attention_table
    charts.py    vectors: bars, bar_panels, lines
    pipeline.py  the whole pipeline with the live shapes: image → patches → encoder

Every picture `<kind>` is `to_png(<kind>_figure(...))`: the app calls `figures.<kind>(...)` by
name for PNG bytes, tests inspect the matplotlib Figure of `<kind>_figure`. Both are exported
here.
"""

from .charts import bar_panels, bar_panels_figure, bar_row, bars, bars_figure, lines, lines_figure
from .heatmaps import (
    heatmap,
    heatmap_figure,
    row_heatmap,
    row_heatmap_figure,
    value_grid,
    value_grid_figure,
)
from .images import (
    image_pair,
    image_pair_figure,
    image_with_grid,
    image_with_grid_figure,
    patch_gallery,
    patch_gallery_figure,
)
from .overlays import (
    attention_grid,
    attention_grid_figure,
    attention_table,
    attention_table_figure,
    overlay_mappable,
    overlay_rgb,
)
from .pipeline import pipeline, pipeline_figure
from .style import (
    BAR_COLOUR,
    DPI,
    FONTS,
    GRID_COLOUR,
    HAS_CJK_FONT,
    HIGHLIGHT_COLOUR,
    MAX_SIDE,
    OVERLAY_CMAP,
    PROB_CMAP,
    QUERY_COLOUR,
    SIGNED_CMAP,
    WINDOW_COLOUR,
    block_average,
    colour_limits,
    fit_fontsize,
    fixed_axes_with_colorbar,
    fixed_margins,
    grid_margins,
    to_png,
)

__all__ = [
    # the pictures, as PNG bytes and as Figures
    "attention_grid", "attention_grid_figure", "attention_table", "attention_table_figure",
    "bar_panels", "bar_panels_figure", "bars", "bars_figure",
    "heatmap", "heatmap_figure", "image_pair", "image_pair_figure",
    "image_with_grid", "image_with_grid_figure", "lines", "lines_figure",
    "patch_gallery", "patch_gallery_figure", "pipeline", "pipeline_figure", "row_heatmap",
    "row_heatmap_figure",
    "value_grid", "value_grid_figure",
    # the shared look and its helpers
    "BAR_COLOUR", "DPI", "FONTS", "GRID_COLOUR", "HAS_CJK_FONT", "HIGHLIGHT_COLOUR", "MAX_SIDE",
    "OVERLAY_CMAP", "PROB_CMAP", "QUERY_COLOUR", "SIGNED_CMAP", "WINDOW_COLOUR", "bar_row",
    "block_average",
    "colour_limits", "fit_fontsize", "fixed_axes_with_colorbar", "fixed_margins",
    "grid_margins", "overlay_mappable", "overlay_rgb", "to_png",
]
