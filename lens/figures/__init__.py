"""Arrays -> PNG bytes. Pure functions: no Streamlit, no state.

Conventions: every heatmap has a title with its name and shape, labelled axes and a
colourbar; signed values use a diverging map centred at 0, probabilities a sequential one;
matrices with a side over 256 are block-averaged (the factor is returned for the caption);
a constant matrix still gets a sensible colour scale. Attention over the image is
nearest-upsampled to the image and alpha-blended on it. Grids are one figure with one scale.

    style.py     fonts, colour maps and colours, colour limits, block averaging, margins, to_png,
                 the smallest text of every PNG (a tEXt chunk, `min_text_px`)
    picture.py   pictures without a layout engine: panels at fixed pixel positions, ticks,
                 colour bars (`Picture`, `render`, `png`)
    lettering.py their text, with Pillow: font fallback glyph by glyph, fitting, wrapping
    pixels.py    colour table, nearest-neighbour scaling, PNG at zlib level 1 (`encode_png`)
    heatmaps.py  matrices: heatmap, row_heatmap, value_grid                      (raster)
    overlays.py  attention over the image: attention_grid, attention_table       (raster)
    images.py    the input image: image_with_grid, image_pair, patch_gallery, thumbnail
    grids.py     a small table of colours with words: label_grid (named rows and columns,
                 a text in every cell: the logit lens, the logit's shares)      (raster)
    charts.py    vectors: bars, bar_panels, lines                                (matplotlib)
    pipeline.py  the whole pipeline with the live shapes: image → patches → encoder (matplotlib)
    mosaic.py    one map per patch on the patch grid (learned positions' similarity)  (raster)

The app calls `figures.<kind>(...)` by name for PNG bytes. Heatmaps and attention maps need no
layout engine: `<kind>` is `png(<kind>_picture(...))`, and tests inspect the `Picture` (its
panels, texts and colour bar, in pixels) and the decoded PNG. Charts with curves, bars and
free text keep matplotlib: `<kind>` is `to_png(<kind>_figure(...))` and tests inspect the
Figure. Both are exported here.
"""

from .charts import (
    answer_counts,
    answer_counts_figure,
    bar_panels,
    bar_panels_figure,
    bar_row,
    bars,
    bars_figure,
    lines,
    lines_figure,
)
from .grids import label_grid, label_grid_picture
from .heatmaps import (
    heatmap,
    heatmap_picture,
    matrix_title,
    row_heatmap,
    row_heatmap_picture,
    value_grid,
    value_grid_picture,
)
from .images import (
    image_cells,
    image_pair,
    image_pair_picture,
    image_with_grid,
    image_with_grid_picture,
    patch_gallery,
    patch_gallery_picture,
    thumbnail,
)
from .mosaic import position_mosaic, position_mosaic_picture
from .overlays import (
    attention_grid,
    attention_grid_picture,
    attention_table,
    attention_table_picture,
    overlay_rgb,
)
from .picture import ColourBar, Panel, Picture, png, render
from .pipeline import pipeline, pipeline_figure
from .pixels import colourise, lut
from .style import (
    BAR_COLOUR,
    CUT_KEY,
    DPI,
    FIGURE_KEY,
    FONTS,
    GRID_COLOUR,
    HIGHLIGHT_COLOUR,
    MARK_COLOUR,
    MAX_SIDE,
    MIN_TEXT_KEY,
    OVERLAY_CMAP,
    PROB_CMAP,
    QUERY_COLOUR,
    SIGNED_CMAP,
    WINDOW_COLOUR,
    block_average,
    colour_limits,
    fit_fontsize,
    fixed_margins,
    min_text_px,
    png_texts,
    to_png,
)

__all__ = [
    # the pictures, as PNG bytes and as Figures
    "attention_grid", "attention_grid_picture", "attention_table", "attention_table_picture",
    "answer_counts", "answer_counts_figure", "bar_panels", "bar_panels_figure", "bars",
    "bars_figure",
    "heatmap", "heatmap_picture", "image_pair", "image_pair_picture", "label_grid",
    "label_grid_picture", "matrix_title",
    "image_with_grid", "image_with_grid_picture", "lines", "lines_figure",
    "patch_gallery", "patch_gallery_picture", "pipeline", "pipeline_figure",
    "position_mosaic", "position_mosaic_picture", "row_heatmap",
    "row_heatmap_picture", "thumbnail",
    "value_grid", "value_grid_picture",
    # the raster pictures' parts
    "ColourBar", "Panel", "Picture", "colourise", "image_cells", "lut", "png", "render",
    # the shared look and its helpers
    "BAR_COLOUR", "CUT_KEY", "DPI", "FIGURE_KEY", "FONTS", "GRID_COLOUR", "HIGHLIGHT_COLOUR",
    "MARK_COLOUR", "MAX_SIDE", "MIN_TEXT_KEY",
    "OVERLAY_CMAP", "PROB_CMAP", "QUERY_COLOUR", "SIGNED_CMAP", "WINDOW_COLOUR", "bar_row",
    "block_average",
    "colour_limits", "fit_fontsize", "fixed_margins", "min_text_px", "overlay_rgb", "png_texts",
    "to_png",
]
