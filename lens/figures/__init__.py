"""Arrays -> PNG bytes. Pure functions: no Streamlit, no state, matplotlib's OO API only.

Conventions (issue 3): every heatmap has a title with its name and shape, labelled axes and a
colourbar; signed values use a diverging map centred at 0, probabilities a sequential one;
matrices with a side over 256 are block-averaged (the factor is returned for the caption);
a constant matrix still gets a sensible colour scale. Attention over the image is
nearest-upsampled to the image and alpha-blended on it. Grids are one figure with one scale.

    style.py     fonts, colour maps, colour limits, block averaging, fixed margins, to_png
    heatmaps.py  matrices: heatmap, row_heatmap, value_grid
    images.py    the input image: image_with_grid, image_pair, patch_gallery, clickable_grid
    overlays.py  attention over the image: attention_grid, attention_table
    charts.py    vectors: bars, bar_panels, lines

The app calls `figures.<kind>(...)` by name, so every picture function is re-exported here.
"""

from .charts import bar_panels, bar_row, bars, lines
from .heatmaps import heatmap, row_heatmap, value_grid
from .images import clickable_grid, image_pair, image_with_grid, patch_gallery
from .overlays import attention_grid, attention_table, overlay_mappable, overlay_rgb
from .style import (
    DPI,
    FONTS,
    HAS_CJK_FONT,
    MAX_SIDE,
    OVERLAY_CMAP,
    PROB_CMAP,
    SIGNED_CMAP,
    block_average,
    colour_limits,
    fit_fontsize,
    fixed_axes_with_colorbar,
    fixed_margins,
    grid_margins,
    to_png,
)

__all__ = [
    "DPI", "FONTS", "HAS_CJK_FONT", "MAX_SIDE", "OVERLAY_CMAP", "PROB_CMAP", "SIGNED_CMAP",
    "attention_grid", "attention_table", "bar_panels", "bar_row", "bars", "block_average",
    "clickable_grid", "colour_limits", "fit_fontsize", "fixed_axes_with_colorbar",
    "fixed_margins", "grid_margins", "heatmap", "image_pair", "image_with_grid", "lines",
    "overlay_mappable", "overlay_rgb", "patch_gallery", "row_heatmap", "to_png", "value_grid",
]
