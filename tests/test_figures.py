"""The figures (lens/figures/). Heatmaps and attention maps are raster pictures: `<kind>_picture`
returns the laid-out `Picture` (panels, titles, ticks, colour bar, in pixels), which these tests
inspect together with the decoded PNG's pixels; the PNG function `<kind>(...)` the app calls is
`png` of that picture. Charts and the image pictures are matplotlib: `<kind>_figure` returns the
Figure (titles, labels, ticks, highlight artists), and `<kind>(...)` is `to_png` of it."""

from __future__ import annotations

import inspect
import io

import matplotlib
import matplotlib.text
import numpy as np
import pytest
from matplotlib.colors import Normalize, same_color, to_rgb
from matplotlib.patches import StepPatch
from PIL import Image, ImageDraw

from lens import figures
from lens.figures import lettering
from lens.figures import pixels as pix  # (`pixels` below decodes a PNG)

RNG = np.random.default_rng(0)
RGB = RNG.random((32, 32, 3)).astype(np.float32)  # [S, S, C] in [0, 1]
GREY = RNG.random((32, 32, 1)).astype(np.float32)

# Small arguments for each PNG kind: (args, kwargs); the app calls these by name.
KINDS = {
    "heatmap": ((RNG.standard_normal((6, 9)), "x", "features", "tokens"), {}),
    "row_heatmap": ((RNG.standard_normal((3, 20)), "c", "j", "head", ["1", "2", "3"]), {}),
    "value_grid": ((RNG.random((4, 5)), "v", "col", "row"), {}),
    "image_with_grid": ((RGB, 8, "grid"), dict(highlight=5)),
    "image_pair": ((RNG.random((20, 10, 3)), RGB, ("upload", "model input")), {}),
    "patch_gallery": ((RNG.random((5, 48)), 4, 3, "patches"), {}),
    "attention_grid": ((RGB, RNG.random((3, 4, 4)), ["a", "b", "c"], "attn"), dict(query=2)),
    "attention_table": ((GREY, RNG.random((2, 2, 4, 4)), "table"),
                        dict(row_labels=["L1", "L2"], col_labels=["h1", "h2"])),
    "bars": (([RNG.random(8), RNG.random(8)], ["s", "p"], "key j", ["score", "w"], "row"), {}),
    "bar_panels": ((RNG.random((2, 8)), ["a", "b"], "key j", "weight", "rows"), {}),
    "lines": ((list(range(8)), [RNG.random(8)], ["pe"], "PE", "pos", "value"), {}),
    "pipeline": ((GREY, 8, ["image", "patches", "encoder"], ["x0", "layer × 2", "output"]), {}),
    "answer_counts": ((["196 × 512", "196 × 64", "sharper"], [12, 5, 0], "the class", "students"),
                      dict(right=[True, False, False])),
}


RASTER = {"heatmap", "row_heatmap", "value_grid", "attention_grid", "attention_table",
          "image_with_grid", "patch_gallery", "image_pair"}


def builder(kind: str):
    """`<kind>_picture` for the raster kinds, `<kind>_figure` for the matplotlib ones."""
    return getattr(figures, f"{kind}_picture" if kind in RASTER else f"{kind}_figure")


def pixels(png: bytes) -> np.ndarray:
    """The decoded PNG as [H, W, 3] uint8."""
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def cmap_bytes(name: str, value: float, vmin: float, vmax: float) -> tuple[int, int, int]:
    """matplotlib's own colour of `value` on the scale vmin … vmax (the oracle)."""
    return tuple(matplotlib.colormaps[name](Normalize(vmin, vmax)(value), bytes=True)[:3])


def cell_centre(panel, i: int, j: int) -> tuple[int, int]:
    """The pixel (row, column) at the centre of cell (i, j) of a panel."""
    x, y = panel.to_px(j, i)
    return int(y), int(x)


def colourbars(fig):
    """The colourbars of a figure (matplotlib marks a colourbar's axes with `_colorbar`)."""
    return [ax._colorbar for ax in fig.axes if getattr(ax, "_colorbar", None) is not None]


def panels(fig):
    """The axes of a figure that are not colourbars, in creation order."""
    return [ax for ax in fig.axes if getattr(ax, "_colorbar", None) is None]


def labels(texts) -> list[str]:
    return [t.get_text() for t in texts]


def rgb255(colour: str) -> tuple[int, int, int]:
    """A named colour as the uint8 RGB of a picture array."""
    return tuple(round(255 * c) for c in to_rgb(colour))


# --- every kind -------------------------------------------------------------------------------

def test_the_app_finds_every_picture_kind_and_the_constants_it_reads_in_the_package():
    for kind in KINDS:
        assert callable(getattr(figures, kind))
    assert figures.MAX_SIDE == 256


@pytest.mark.parametrize("kind", KINDS)
def test_each_png_function_takes_exactly_the_arguments_of_its_figure_function(kind):
    png = inspect.signature(getattr(figures, kind)).parameters
    fig = inspect.signature(builder(kind)).parameters
    assert list(png.values()) == list(fig.values())


@pytest.mark.parametrize("kind", KINDS)
def test_each_png_function_returns_the_png_of_its_figure(kind):
    args, kwargs = KINDS[kind]
    png = getattr(figures, kind)(*args, **kwargs)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    made = builder(kind)(*args, **kwargs)
    assert png == (figures.png(made, kind) if kind in RASTER else figures.to_png(made, kind))
    assert figures.png_texts(png)[figures.FIGURE_KEY] == kind  # which figure drew it


@pytest.mark.parametrize("kind", sorted(RASTER))
def test_each_raster_png_decodes_at_the_pictures_size_with_ink_in_it(kind):
    args, kwargs = KINDS[kind]
    picture = builder(kind)(*args, **kwargs)
    img = pixels(getattr(figures, kind)(*args, **kwargs))
    assert img.shape == (picture.size[1], picture.size[0], 3)
    assert (img < 60).all(axis=-1).sum() > 200  # titles, ticks, frames: dark pixels exist
    images = {"image_with_grid", "patch_gallery", "image_pair"}
    assert (picture.colourbar is not None) == (kind not in images)


# --- heatmaps ---------------------------------------------------------------------------------

def test_heatmap_has_the_given_title_axis_labels_and_a_colourbar_of_its_image():
    m = RNG.standard_normal((6, 9))
    pic = figures.heatmap_picture(m, "x  [6 × 9]", "features", "tokens", colorbar_label="value")
    (panel,) = pic.panels
    assert (panel.title, panel.xlabel, panel.ylabel) == ("x  [6 × 9]", "features", "tokens")
    cb = pic.colourbar
    assert cb.label == "value" and cb.cmap == figures.SIGNED_CMAP
    a = float(np.abs(m).max())
    assert (cb.vmin, cb.vmax) == pytest.approx((-a, a))
    np.testing.assert_array_equal(panel.cells, figures.colourise(m, cb.cmap, cb.vmin, cb.vmax))
    assert pic.size == (500, 400)  # 5 × 4 inches at 100 pixels an inch


def test_each_heatmap_cell_in_the_png_has_matplotlibs_colour_for_its_value():
    m = RNG.standard_normal((5, 13))  # not square: rows and columns are scaled apart
    for signed in (True, False):
        pic = figures.heatmap_picture(m, "m", "j", "i", signed=signed)
        (panel,) = pic.panels
        img = pixels(figures.png(pic))
        cb = pic.colourbar
        for (i, j), v in np.ndenumerate(m):
            assert tuple(img[cell_centre(panel, i, j)]) == cmap_bytes(cb.cmap, v, cb.vmin,
                                                                      cb.vmax), (i, j)


def test_a_non_square_matrix_keeps_its_orientation_and_fills_its_box():
    m = np.zeros((3, 40))
    m[0, :] = 1.0  # the first row light, a tall picture would show a column instead
    pic = figures.heatmap_picture(m, "wide", "j", "i", signed=False)
    (panel,) = pic.panels
    x, y, w, h = panel.box
    img = pixels(figures.png(pic))[y:y + h, x:x + w]
    top, bottom = pix.lut(figures.PROB_CMAP)[255], pix.lut(figures.PROB_CMAP)[0]
    assert (img[: h // 3 - 1] == top).all()  # the whole first third of the box is row 0
    assert (img[h // 3 + 1:] == bottom).all()
    assert panel.extent == (40, 3)


def test_the_colour_scale_ends_map_to_the_colour_maps_ends_on_the_cells_and_the_bar():
    m = np.array([[0.0, 0.25, 1.0]])
    pic = figures.heatmap_picture(m, "m", "j", "i", signed=False)
    (panel,) = pic.panels
    table = pix.lut(figures.PROB_CMAP)
    assert (pic.colourbar.vmin, pic.colourbar.vmax) == (0.0, 1.0)
    assert (panel.cells[0, 0] == table[0]).all() and (panel.cells[0, 2] == table[255]).all()
    img = pixels(figures.png(pic))
    bx, by, bw, bh = pic.colourbar.box
    assert (img[by, bx:bx + bw] == table[255]).all()  # the bar's top is the map's top
    assert (img[by + bh - 1, bx:bx + bw] == table[0]).all()


def test_a_given_vmax_sets_the_scale_and_values_beyond_it_take_the_end_colours():
    m = np.array([[-30.0, -5.0, 0.0, 5.0, 30.0]])
    pic = figures.heatmap_picture(m, "m", "j", "i", vmax=10.0)
    assert (pic.colourbar.vmin, pic.colourbar.vmax) == (-10.0, 10.0)
    cells = pic.panels[0].cells[0]
    table = pix.lut(figures.SIGNED_CMAP)
    assert (cells[0] == table[0]).all() and (cells[4] == table[255]).all()
    assert tuple(cells[1]) == cmap_bytes(figures.SIGNED_CMAP, -5.0, -10.0, 10.0)
    unsigned = figures.heatmap_picture(np.abs(m), "m", "j", "i", signed=False, vmax=10.0)
    assert (unsigned.colourbar.vmin, unsigned.colourbar.vmax) == (0.0, 10.0)


@pytest.mark.parametrize("make", [figures.heatmap_picture, figures.row_heatmap_picture,
                                  figures.value_grid_picture])
def test_signed_data_gets_a_symmetric_diverging_scale_and_unsigned_a_sequential_min_max(make):
    m = np.array([[-0.5, 3.0, 1.0], [0.2, 0.1, 2.0]])
    extra = (["r0", "r1"],) if make is figures.row_heatmap_picture else ()
    signed = make(m, "m", "j", "i", *extra, signed=True).colourbar
    unsigned = make(m, "m", "j", "i", *extra, signed=False).colourbar
    assert (signed.vmin, signed.vmax) == pytest.approx((-3.0, 3.0))
    assert signed.cmap == figures.SIGNED_CMAP
    assert (unsigned.vmin, unsigned.vmax) == pytest.approx((-0.5, 3.0))
    assert unsigned.cmap == figures.PROB_CMAP


@pytest.mark.parametrize("kind", ["heatmap", "row_heatmap", "value_grid"])
@pytest.mark.parametrize("m", [np.full((3, 4), 2.5), np.zeros((3, 4)), np.full((3, 4), np.nan),
                               np.array([[np.nan, np.inf, -np.inf, 1.0]] * 3)],
                         ids=["constant", "zeros", "all_nan", "nan_and_inf"])
@pytest.mark.parametrize("signed", [True, False])
def test_constant_or_non_finite_input_still_gets_a_valid_colour_scale_and_a_png(kind, m, signed):
    extra = (["a", "b", "c"],) if kind == "row_heatmap" else ()
    pic = builder(kind)(m, "m", "j", "i", *extra, signed=signed)
    cb = pic.colourbar
    assert np.isfinite([cb.vmin, cb.vmax]).all() and cb.vmin < cb.vmax
    if signed:
        assert cb.vmin == -cb.vmax
    img = pixels(getattr(figures, kind)(m, "m", "j", "i", *extra, signed=signed))
    assert img.shape == (pic.size[1], pic.size[0], 3)
    panel = pic.panels[0]
    table = pix.lut(cb.cmap)
    for (i, j), v in np.ndenumerate(m):  # NaN white (as matplotlib's "bad"), ±inf the ends
        want = {True: (255, 255, 255)}.get(bool(np.isnan(v)))
        if v == np.inf:
            want = tuple(table[255])
        elif v == -np.inf:
            want = tuple(table[0])
        if want is not None:
            assert tuple(panel.cells[i, j]) == want


def test_heatmap_over_256_a_side_is_block_averaged_and_its_axis_labels_say_so():
    m = RNG.standard_normal((600, 300)).astype(np.float32)
    pic = figures.heatmap_picture(m, "big", "j", "i", mean_of="mean of {k}")
    (panel,) = pic.panels
    assert panel.cells.shape == (200, 150, 3)  # k = ceil(600 / 256) = 3 rows, 2 cols
    cb = pic.colourbar
    assert tuple(panel.cells[0, 0]) == cmap_bytes(cb.cmap, m[:3, :2].mean(), cb.vmin, cb.vmax)
    assert panel.extent == (300, 600)  # axes still in m's indices
    assert all(0 <= t <= 299 for t, _ in panel.xticks) and (0, "0") in panel.xticks
    assert panel.xlabel == "j  (mean of 2)" and panel.ylabel == "i  (mean of 3)"
    unworded = figures.heatmap_picture(m, "big", "j", "i").panels[0]  # no words of its own
    assert (unworded.xlabel, unworded.ylabel) == ("j", "i")


def test_heatmap_outlines_the_highlighted_row_and_column_at_their_edges():
    pic = figures.heatmap_picture(np.ones((5, 5)), "m", "j", "i", highlight_row=1,
                                  highlight_col=3)
    (panel,) = pic.panels
    assert panel.hlines == (0.5, 1.5) and panel.vlines == (2.5, 3.5)
    img = pixels(figures.png(pic))
    x, y, w, h = panel.box
    for edge in panel.hlines:  # a black line across the matrix at each edge of row 1
        row = round(panel.to_px(0, edge)[1])
        assert (img[row, x + 2:x + w - 2] == 0).all()
    for edge in panel.vlines:
        col = round(panel.to_px(edge, 0)[0])
        assert (img[y + 2:y + h - 2, col] == 0).all()


@pytest.mark.parametrize("rows", [1, 2, 8, 40])
def test_row_heatmap_labels_few_rows_each_thins_many_and_block_averages_wide_matrices(rows):
    m = np.random.default_rng(1).standard_normal((rows, 600))
    names = [f"h{r + 1}" for r in range(rows)]
    pic = figures.row_heatmap_picture(m, "contributions", "output feature j", "head", names,
                                      highlight_col=3, mean_of="mean of {k}")
    (panel,) = pic.panels
    ticks = [t for t, _ in panel.yticks]
    if rows <= 16:
        assert ticks == list(range(rows))
        assert [label for _, label in panel.yticks] == names
    else:  # at most 16 labels, evenly spaced, each the given label of its row
        assert len(ticks) <= 16 and ticks == list(range(0, rows, ticks[1] - ticks[0]))
        assert [label for _, label in panel.yticks] == [names[t] for t in ticks]
    assert panel.cells.shape == (rows, 200, 3)  # columns averaged 3 by 3, rows never
    cb = pic.colourbar
    for r in range(rows):
        assert tuple(panel.cells[r, 0]) == cmap_bytes(cb.cmap, m[r, :3].mean(), cb.vmin,
                                                      cb.vmax)
    assert panel.xlabel == "output feature j  (mean of 3)" and panel.ylabel == "head"
    assert panel.title == f"contributions  [{rows} × 600]"
    assert panel.vlines == (2.5, 3.5)  # highlight_col = 3


def test_value_grid_ticks_count_from_row0_and_col0_and_it_writes_every_value():
    m = np.arange(20, dtype=np.float32).reshape(4, 5) / 10
    pic = figures.value_grid_picture(m, "window", "col", "row", row0=3, col0=2, fmt="{:.1f}")
    (panel,) = pic.panels
    assert [label for _, label in panel.yticks] == ["3", "4", "5", "6"]
    assert [label for _, label in panel.xticks] == ["2", "3", "4", "5", "6"]
    assert sorted(t[2] for t in panel.texts) == sorted(f"{v:.1f}" for v in m.ravel())
    for x, y, text, colour in panel.texts:  # each number in its own cell, legible on it
        assert text == f"{m[y, x]:.1f}"
        dark = (m[y, x] - m.min()) / (m.max() - m.min()) < 0.5
        assert colour == ((255, 255, 255) if dark else (0, 0, 0))
    assert (panel.title, panel.xlabel, panel.ylabel) == ("window", "col", "row")
    assert pic.colourbar is not None


def test_value_grid_over_256_values_writes_no_numbers_and_thins_its_ticks():
    pic = figures.value_grid_picture(np.ones((20, 30)), "big", "col", "row")
    (panel,) = pic.panels
    assert panel.texts == ()
    assert [t for t, _ in panel.yticks] == list(range(0, 20, 2))
    assert [t for t, _ in panel.xticks] == list(range(0, 30, 3))


@pytest.mark.parametrize("row_filter", ["none", "up"])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (40, 61)])
def test_the_png_writer_round_trips_every_pixel(shape, row_filter):
    rgb = np.random.default_rng(2).integers(0, 256, (*shape, 3), dtype=np.uint8)
    png = pix.encode_png(rgb, row_filter)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(png))
    img.load()  # checks every chunk's CRC and the zlib stream
    assert img.mode == "RGB" and img.size == (shape[1], shape[0])
    np.testing.assert_array_equal(np.asarray(img), rgb)


def test_text_is_drawn_glyph_by_glyph_in_the_first_font_that_has_it():
    (latin,) = lettering.text_runs("key j", 10)
    chinese, i = lettering.text_runs("查询 i", 10)  # the space stays with the run before it
    assert (chinese[1], i[1]) == ("查询 ", "i")
    assert latin[0].path == i[0].path != chinese[0].path
    pic = figures.heatmap_picture(np.ones((3, 3)), "注意力  [3 × 3]", "键 j", "查询 i")
    img = pixels(figures.png(pic))
    x, y, w, _ = pic.panels[0].box
    assert (img[:y - 2, x:x + w] < 100).any()  # the title is drawn above the matrix


# --- the image --------------------------------------------------------------------------------

def test_image_with_grid_draws_the_patch_grid_numbers_and_outlines_the_highlighted_patch():
    pic = figures.image_with_grid_picture(RGB, 8, "16 patches", highlight=6,
                                          axis_labels=("x (pixels)", "y (pixels)"))
    (panel,) = pic.panels
    G, P = 4, 8
    grid = pix.rgb255(figures.GRID_COLOUR)
    assert panel.hlines == panel.vlines == tuple(k * P - 0.5 for k in range(1, G))
    assert panel.line_colour == grid
    assert [t[2] for t in panel.texts] == [str(p) for p in range(G * G)]
    assert all(t[3] == grid for t in panel.texts)
    (outline,) = [r for r in panel.rects if r.colour == pix.rgb255(figures.QUERY_COLOUR)]
    assert (outline.x, outline.y) == (2 * P - 0.5, 1 * P - 0.5)  # patch 6 = row 1, column 2
    assert (outline.w, outline.h) == (P, P)
    assert (panel.title, panel.xlabel, panel.ylabel) == ("16 patches", "x (pixels)",
                                                         "y (pixels)")
    img = pixels(figures.png(pic))
    x, y, w, h = panel.box
    assert w == h  # the image stays square
    row = round(panel.to_px(0, 3 * P - 0.5)[1])  # the last grid line, across the image
    assert (img[row, x + 2:x + w - 2] == grid).all()
    y0, x0 = cell_centre(panel, 3 * P + 1, 1)  # a pixel of the image itself
    assert tuple(img[y0, x0]) == tuple(np.round(255 * RGB[3 * P + 1, 1]).astype(np.uint8))


@pytest.mark.parametrize("kind", ["image_with_grid", "attention_grid"])
def test_the_patch_a_question_names_is_framed_in_the_mark_colour_apart_from_the_query(kind):
    """`mark` (a lesson's question's patch, "framed in magenta") in MARK_COLOUR, `query` (the
    chosen patch) in QUERY_COLOUR: each at its own patch, as the picker draws them."""
    args, kwargs = KINDS[kind]
    query = "highlight" if kind == "image_with_grid" else "query"
    pic = builder(kind)(*args, **{**kwargs, query: 5, "mark": 10})
    img = pixels(figures.png(pic))
    panel = pic.panels[0]
    P = args[0].shape[0] // 4
    for colour, patch in ((figures.MARK_COLOUR, 10), (figures.QUERY_COLOUR, 5)):
        (rect,) = [r for r in panel.rects if r.colour == pix.rgb255(colour)]
        r, c = divmod(patch, 4)
        assert (rect.x, rect.y, rect.w, rect.h) == (c * P - 0.5, r * P - 0.5, P, P)
        x, y = (round(v) for v in panel.to_px(rect.x + P / 2, rect.y))  # its top edge
        assert tuple(img[y, x]) == pix.rgb255(colour)


def test_the_picker_frames_and_outlines_in_the_figures_colours():
    """The explorer's picker (JavaScript) draws the question's patch and the chosen one in the
    colours of figures/style.py, which the pictures of the same task use."""
    from lens.explorer_component import JS  # noqa: PLC0415

    script = JS.lower()
    assert f'"{figures.MARK_COLOUR}"' in script and f'"{figures.QUERY_COLOUR}"' in script


def test_a_grey_image_shows_through_the_grey_colour_map():
    cells = figures.image_cells(GREY)
    np.testing.assert_array_equal(cells, figures.colourise(GREY[..., 0], "gray", 0.0, 1.0))
    assert (cells[..., 0] == cells[..., 1]).all() and (cells[..., 1] == cells[..., 2]).all()


def test_image_with_grid_writes_no_numbers_when_asked_or_when_over_16_patches_a_side():
    assert figures.image_with_grid_picture(RGB, 8, "t", numbers=False).panels[0].texts == ()
    assert figures.image_with_grid_picture(RGB, 1, "t").panels[0].texts == ()  # 32 a side


def test_image_pair_shows_both_images_titled_with_their_shapes_at_their_aspect():
    upload = RNG.random((20, 10, 3))
    pic = figures.image_pair_picture(upload, GREY, ("upload", "model input"),
                                     ("x (pixels)", "y (pixels)"))
    left, right = pic.panels
    assert left.title == "upload  [20 × 10 × 3]"
    assert right.title == "model input  [32 × 32 × 1]"
    np.testing.assert_array_equal(left.cells, figures.image_cells(upload))
    np.testing.assert_array_equal(right.cells, figures.colourise(GREY[..., 0], "gray", 0, 1))
    assert abs(left.box[3] - 2 * left.box[2]) <= 1 and right.box[2] == right.box[3]  # aspect
    assert left.box[0] + left.box[2] < right.box[0]  # side by side
    assert (left.xlabel, left.ylabel) == ("x (pixels)", "y (pixels)")


def test_patch_gallery_shows_each_patch_up_to_max_patches_titled_with_its_index():
    patches = RNG.random((12, 4 * 4 * 3))
    pic = figures.patch_gallery_picture(patches, 4, 3, "patches", max_patches=7)
    assert [p.title for p in pic.panels] == [str(i) for i in range(7)]
    for i, panel in enumerate(pic.panels):
        np.testing.assert_array_equal(panel.cells,
                                      figures.image_cells(patches[i].reshape(4, 4, 3)))
    xs = sorted({p.box[0] for p in pic.panels})
    ys = sorted({p.box[1] for p in pic.panels})
    assert len(xs) == 3 and len(ys) == 3 and pic.title == "patches"  # a 3 × 3 grid, 2 empty
    assert [p.box[:2] for p in pic.panels[:4]] == [(xs[0], ys[0]), (xs[1], ys[0]),
                                                    (xs[2], ys[0]), (xs[0], ys[1])]
    img = pixels(figures.png(pic))
    panel = pic.panels[5]  # each tile's pixels are its patch's, scaled up
    y, x = cell_centre(panel, 2, 1)
    assert tuple(img[y, x]) == tuple(panel.cells[2, 1])


# --- attention over the image -----------------------------------------------------------------

def test_attention_grid_has_one_titled_panel_per_map_and_one_shared_colourbar():
    maps = RNG.random((5, 4, 4))
    maps[3, 0, 0] = 2.0  # the maximum of one map sets the scale of all
    pic = figures.attention_grid_picture(RGB, maps, [f"head {i}" for i in range(5)], "attn",
                                         ncols=3, query=6, colorbar_label="weight")
    assert [p.title for p in pic.panels] == [f"head {i}" for i in range(5)]  # no sixth panel
    boxes = [p.box for p in pic.panels]
    assert boxes[3][0] == boxes[0][0] and boxes[3][1] > boxes[0][1]  # 3 a row: the 4th below
    cb = pic.colourbar
    assert (cb.vmin, cb.vmax) == (0.0, 2.0) and cb.label == "weight"
    assert cb.cmap == figures.OVERLAY_CMAP
    grey = RGB.mean(axis=-1)
    for panel, w in zip(pic.panels, maps, strict=True):  # every panel on the shared scale
        want = np.round(255 * figures.overlay_rgb(grey, w, 2.0)).astype(np.uint8)
        np.testing.assert_array_equal(panel.cells, want)
        (outline,) = [r for r in panel.rects if r.colour == pix.rgb255(figures.QUERY_COLOUR)]
        assert (outline.x, outline.y) == (2 * 8 - 0.5, 1 * 8 - 0.5)  # query 6 = row 1, col 2
        assert (outline.w, outline.h) == (8, 8)
    assert pic.title == "attn"


def test_attention_grid_labels_the_first_panel_of_each_row_with_its_row_label():
    pic = figures.attention_grid_picture(GREY, RNG.random((4, 4, 4)), list("abcd"), "t",
                                         ncols=2, row_labels=["layer 1", "layer 2"])
    assert [p.ylabel for p in pic.panels] == ["layer 1", "", "layer 2", ""]


def test_attention_maps_of_zeros_or_nan_still_get_a_valid_colour_scale_and_a_png():
    pic = figures.attention_grid_picture(RGB, np.zeros((2, 4, 4)), ["a", "b"], "zeros")
    assert (pic.colourbar.vmin, pic.colourbar.vmax) == (0.0, 1.0)
    nan = np.full((2, 4, 4), np.nan)
    pic = figures.attention_grid_picture(RGB, nan, ["a", "b"], "nan")
    assert (pic.colourbar.vmin, pic.colourbar.vmax) == (0.0, 1.0)
    assert pixels(figures.attention_grid(RGB, nan, ["a", "b"], "nan")).shape[:2] \
        == pic.size[::-1]


def test_the_overlay_panel_in_the_png_shows_the_overlay_of_its_patch():
    maps = np.zeros((1, 1, 4, 4))
    maps[0, 0, 1, 2] = 1.0  # one patch at the top of the scale
    pic = figures.attention_table_picture(GREY, maps, "one", row_labels=[""], col_labels=[""],
                                          panel=2.0)
    (panel,) = pic.panels
    img = pixels(figures.png(pic))
    want = np.round(255 * figures.overlay_rgb(GREY[..., 0], maps[0, 0], 1.0)).astype(np.uint8)
    for (r, c) in [(1, 2), (0, 0), (3, 3)]:  # the centre pixel of a patch's centre pixel
        y, x = cell_centre(panel, r * 8 + 4, c * 8 + 4)
        assert tuple(img[y, x]) == tuple(want[r * 8 + 4, c * 8 + 4])


def test_attention_table_labels_columns_on_top_rows_on_the_left_with_one_shared_colourbar():
    maps = RNG.random((2, 3, 4, 4))
    pic = figures.attention_table_picture(GREY, maps, "layer × head", row_labels=["L1", "L2"],
                                          col_labels=["h1", "h2", "h3"], query=0,
                                          colorbar_label="R")
    grid = np.array(pic.panels, dtype=object).reshape(2, 3)
    assert [p.title for p in grid[0]] == ["h1", "h2", "h3"]
    assert [p.title for p in grid[1]] == ["", "", ""]
    assert [p.ylabel for p in grid[:, 0]] == ["L1", "L2"]
    assert [p.ylabel for p in grid[:, 1:].ravel()] == [""] * 4
    cb = pic.colourbar
    assert (cb.vmin, cb.vmax) == (0.0, pytest.approx(maps.max())) and cb.label == "R"
    for (r, c), panel in np.ndenumerate(grid):
        want = figures.overlay_rgb(GREY[..., 0], maps[r, c], maps.max())
        np.testing.assert_array_equal(panel.cells, np.round(255 * want).astype(np.uint8))
        assert panel.box[1] == grid[r, 0].box[1] and panel.box[0] == grid[0, c].box[0]
    assert pic.title == "layer × head"


# --- charts -----------------------------------------------------------------------------------

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


def test_bar_panels_of_many_bars_thins_tick_labels_and_still_highlights_one_bar():
    values = RNG.random((2, 100))
    ticks = [f"t{i}" for i in range(100)]
    fig = figures.bar_panels_figure(values, ["a", "b"], "j", "w", "many", highlight=7,
                                    sharey=False, tick_labels=ticks, uniform_line=True)
    for ax in panels(fig):
        assert labels(ax.get_xticklabels()) == ticks[::6]  # step = 100 // 16
        (top,) = ax.containers[0].patches  # the bars are one step artist, the highlight a bar
        assert top.get_x() + top.get_width() / 2 == 7
        assert same_color(top.get_facecolor(), figures.HIGHLIGHT_COLOUR)
        (uniform,) = ax.lines
        assert uniform.get_ydata()[0] == pytest.approx(1 / 100)
        assert ax.get_ylabel() == "w"  # each panel its own scale and label


def test_bars_stacks_one_titled_panel_per_vector_and_highlights_the_same_bar_in_each():
    values = [RNG.standard_normal(10), RNG.random(10)]
    fig = figures.bars_figure(values, ["scores", "weights"], "key j", ["s", "w"],
                              "one row", highlight=3)
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["scores", "weights"]
    assert [ax.get_ylabel() for ax in axes] == ["s", "w"]
    assert [ax.get_xlabel() for ax in axes] == ["key j", "key j"]
    for ax, v in zip(axes, values, strict=True):
        (steps,) = [p for p in ax.patches if isinstance(p, StepPatch)]
        np.testing.assert_allclose(steps.get_data().values, v)
        (top,) = ax.containers[0].patches
        assert top.get_height() == v[3] and same_color(top.get_facecolor(),
                                                       figures.HIGHLIGHT_COLOUR)
    assert fig.get_suptitle() == "one row"


def test_lines_draws_one_labelled_curve_per_series_with_a_legend():
    ys = [RNG.random(8), RNG.random(8)]
    fig = figures.lines_figure(list(range(8)), ys, ["PE[:, 0]", "PE[:, 1]"], "PE", "pos", "v")
    (ax,) = fig.axes
    for line, y in zip(ax.lines, ys, strict=True):
        np.testing.assert_allclose(line.get_ydata(), y)
    assert labels(ax.get_legend().get_texts()) == ["PE[:, 0]", "PE[:, 1]"]
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("PE", "pos", "v")


@pytest.mark.parametrize("steps", [1, 2, 5])
def test_lines_over_whole_steps_is_ticked_at_whole_steps_only(steps):
    """A loss curve after one step is ticked 0 and 1, not 0.0, 0.2, … 1.0."""
    fig = figures.lines_figure(np.arange(steps + 1), [RNG.random(steps + 1)], ["loss"], "t",
                               "step", "loss")
    fig.canvas.draw()  # the locator picks the ticks when the figure is drawn
    (ax,) = fig.axes
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks
    assert ticks[0] <= 0 and ticks[-1] >= steps - 1


# --- the pipeline -----------------------------------------------------------------------------

@pytest.mark.parametrize("image", [GREY, RGB], ids=["grey", "rgb"])
def test_the_pipeline_shows_the_image_its_first_patches_and_one_box_per_encoder_stage(image):
    stages = ["x0 = patches·W_E + PE  [16 × 64]", "encoder layer × 2", "output  [16 × 64]"]
    fig = figures.pipeline_figure(image, 8, ["the image", "16 patches", "the encoder"], stages,
                                  shown_patches=4)
    ax_img, ax_seq, ax_enc = fig.axes
    assert [ax.get_xlabel() for ax in fig.axes] == ["the image", "16 patches", "the encoder"]
    assert len(ax_img.get_images()) == 1 and len(ax_img.get_lines()) == 2 * (32 // 8 - 1)
    assert len(ax_seq.get_images()) == 2 * 4  # each patch: its tile and its flattened row
    assert labels(ax_enc.texts) == stages
    assert len(ax_enc.patches) == len(stages)


def test_a_heatmap_outlines_its_number_window_and_words_block_averaging_as_told():
    m = RNG.standard_normal((300, 600))
    pic = figures.heatmap_picture(m, "x", "feature", "token", window=(40, 100, 32, 32),
                                  mean_of="{k} 个的平均")
    (panel,) = pic.panels
    (box,) = [r for r in panel.rects if r.dashed]
    assert (box.x, box.y, box.w, box.h) == (99.5, 39.5, 32, 32)
    assert box.colour == pix.rgb255(figures.WINDOW_COLOUR)
    assert panel.xlabel == "feature  (3 个的平均)" and panel.ylabel == "token  (2 个的平均)"
    img = pixels(figures.png(pic))
    x0, y0 = (round(v) for v in panel.to_px(box.x, box.y))
    assert (img[y0, x0:x0 + 4] == box.colour).all()  # the dash starts at the window's corner


@pytest.mark.parametrize("kind", ["attention_grid", "attention_table"])
def test_attention_maps_mark_the_uniform_weight_on_their_colour_bar(kind):
    args, kwargs = KINDS[kind]
    pic = builder(kind)(*args, **kwargs, vmax=0.5, uniform=1 / 16)
    cb = pic.colourbar
    assert cb.marks == ((1 / 16, "1/16"),)  # N = 16 keys
    img = pixels(figures.png(pic))
    bx, by, bw, bh = cb.box
    row = round(by + (cb.vmax - 1 / 16) / (cb.vmax - cb.vmin) * bh)
    assert (img[row, bx:bx + bw] == pix.rgb255(figures.QUERY_COLOUR)).all()
    assert (img[row - 3:row + 4, bx - 25:bx - 3] < 120).any()  # "1/16" written left of it
    plain = builder(kind)(*args, **kwargs, vmax=0.5)
    assert plain.colourbar.marks == ()
    assert not (pixels(figures.png(plain))[row, bx:bx + bw]
                == pix.rgb255(figures.QUERY_COLOUR)).all()


def test_the_overlay_lets_the_photo_show_where_attention_is_low():
    grey = np.full((8, 8), 0.2)  # a dark photo: a dark shape must not vanish
    weights = np.array([[0.0, 1.0], [0.0, 0.0]])
    rgb = figures.overlay_rgb(grey, weights, vmax=1.0, alpha=0.6)
    low, high = rgb[0, 0], rgb[0, 4]  # a patch with weight 0, one at the top of the scale
    assert np.abs(low - 0.2).max() < 0.05  # the photo barely tinted
    assert np.abs(high - 0.2).max() > 0.3  # the colour covers it


def test_a_vit_matrix_names_its_prefix_rows_and_numbers_the_patches_from_zero():
    from lens.figures.heatmaps import heatmap_picture

    m = np.random.default_rng(0).random((197, 197))
    panel = heatmap_picture(m, "attn", "key", "query", signed=False, prefix=["CLS"],
                            prefix_cols=True).panels[0]
    assert panel.yticks[0] == (0.0, "CLS") and panel.xticks[0] == (0.0, "CLS")
    assert all(pos == int(text) + 1 for pos, text in panel.yticks[1:])  # row 1 + i: patch i
    assert len(panel.rects) == 2  # the CLS row and column outlined
    plain = heatmap_picture(m, "attn", "key", "query", signed=False).panels[0]
    assert plain.yticks[0] == (0, "0") and not plain.rects


def test_a_block_averaged_feature_axis_still_names_the_cls_row_but_not_a_mixed_one():
    from lens.figures.heatmaps import heatmap_picture

    wide = heatmap_picture(np.ones((197, 384)), "pos", "feature", "token", prefix=["CLS"])
    assert wide.panels[0].yticks[0] == (0.0, "CLS")  # rows kept whole: CLS named
    tall = heatmap_picture(np.ones((600, 8)), "x", "feature", "token", prefix=["CLS"])
    assert all(text != "CLS" for _, text in tall.panels[0].yticks)  # rows averaged in pairs


def test_a_panel_title_wider_than_its_panel_stays_inside_the_picture():
    from lens.figures.picture import Panel, Picture, render

    cells = np.zeros((4, 4, 3), np.uint8)
    panel = Panel((20, 40, 100, 100), cells, (4, 4), title="a title much wider than its panel")
    rgb = render(Picture((400, 160), (panel,)))  # the panel at the left: centred, it would
    ink = (rgb[:34] < 128).all(axis=2)  # start left of the picture; the title's band
    assert ink.any() and not ink[:, :4].any() and not ink[:, -4:].any()


# --- the smallest text, written into every PNG -----------------------------------------------

def drawn_text_sizes(monkeypatch) -> list[float]:
    """The em size, in pixels, of every non-blank text Pillow draws from now on (the oracle of
    the raster pictures: each `ImageDraw.text` call, straight or into a run's mask)."""
    sizes: list[float] = []
    real = ImageDraw.ImageDraw.text

    def text(self, xy, text, fill=None, font=None, *args, **kwargs):
        if str(text).strip():
            sizes.append(float(font.size))
        return real(self, xy, text, fill, font, *args, **kwargs)

    monkeypatch.setattr(ImageDraw.ImageDraw, "text", text)
    return sizes


def figure_text_sizes(fig) -> list[float]:
    """The em size, in pixels, of every visible non-blank Text artist of a drawn Figure (the
    oracle of the matplotlib figures: titles, labels, tick labels, legends, free texts)."""
    fig.canvas.draw()
    return [t.get_fontsize() * fig.dpi / 72 for t in fig.findobj(matplotlib.text.Text)
            if t.get_visible() and t.get_text().strip()
            and (t.axes is None or _tick_label_in_view(t))]


def _tick_label_in_view(t) -> bool:
    """A tick label is drawn only when its tick is inside the axis' view; other texts always."""
    for axis in (t.axes.xaxis, t.axes.yaxis):
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            if t in (tick.label1, tick.label2):
                lo, hi = sorted(axis.get_view_interval())
                return lo - 1e-9 <= tick.get_loc() <= hi + 1e-9
    return True


@pytest.mark.parametrize("kind", KINDS)
def test_every_png_records_its_smallest_text_as_drawn_in_its_own_pixels(kind, monkeypatch):
    args, kwargs = KINDS[kind]
    if kind in RASTER:
        sizes = drawn_text_sizes(monkeypatch)
        png = getattr(figures, kind)(*args, **kwargs)
    else:
        png = getattr(figures, kind)(*args, **kwargs)
        sizes = figure_text_sizes(builder(kind)(*args, **kwargs))
    assert sizes, f"{kind} drew no text"
    assert figures.min_text_px(png) == pytest.approx(min(sizes), abs=0.051)
    assert Image.open(io.BytesIO(png)).text[figures.MIN_TEXT_KEY] == f"{min(sizes):.1f}"


def test_the_smallest_text_is_the_size_drawn_after_shrinking_to_fit_and_none_without_text(
        monkeypatch):
    cells = np.zeros((4, 4, 3), np.uint8)
    title = "a title far too long to be drawn at its size in so small a picture"
    panel = figures.Panel((10, 40, 100, 100), cells, (4, 4), title=title, title_pt=12)
    sizes = drawn_text_sizes(monkeypatch)
    png = figures.png(figures.Picture((200, 160), (panel,)))
    assert sizes and min(sizes) < round(12 * lettering.PX)  # shrunk to fit 180 px
    assert figures.min_text_px(png) == min(sizes)
    assert figures.min_text_px(figures.png(figures.Picture((20, 20), ()))) is None
    fig = figures.lines_figure([0, 1], [np.ones(2)], ["a"], "t", "x", "y")
    for t in fig.findobj(matplotlib.text.Text):
        t.set_fontsize(20)
    fig.axes[0].set_title("small", fontsize=4.5)
    assert figures.min_text_px(figures.to_png(fig)) == pytest.approx(4.5 * 100 / 72, abs=0.051)


@pytest.mark.parametrize("kind", KINDS)
def test_no_picture_draws_a_text_under_10_pt(kind):
    """10 pt (13.9 px) is the floor of every text: a picture shown at 3/4 of its width or
    more reads at 10 px or more (tests/browser/test_figure_text_size.py measures the pages)."""
    args, kwargs = KINDS[kind]
    assert figures.min_text_px(getattr(figures, kind)(*args, **kwargs)) >= 10 * 100 / 72 - 0.05


def test_long_titles_wrap_or_are_cut_short_but_never_shrink_under_10_pt(monkeypatch):
    sizes = drawn_text_sizes(monkeypatch)
    maps = RNG.random((3, 4, 4))
    long = "a panel title far longer than the panel it stands over"
    pic = figures.attention_grid_picture(RGB, maps, [long, "b", "c"], "t", ncols=3)
    assert all(p.title_lines == 2 for p in pic.panels)  # the grid makes room for two lines
    figures.png(pic)
    assert min(sizes) >= round(10 * lettering.PX)
    cut, pt = lettering.fitted(long, 12, 60)  # one line in 60 px: 10 pt, then cut short
    assert pt == 10.0 and cut.endswith("…") and lettering.text_width(cut, pt) <= 60
    lines = lettering.wrap_px("查询图像块的注意力权重 of every head", 10, 60, 4)
    assert 1 < len(lines) <= 4 and all(lettering.text_width(t, 10) <= 60 for t in lines[:-1])
    assert "".join(lines).replace(" ", "") == "查询图像块的注意力权重ofeveryhead"


def test_a_text_a_little_too_long_is_drawn_smaller_whole_not_cut():
    """11 and 10.5 pt are both drawn 15 px high: a title 0.2 px too long at 11 pt is drawn at
    10 pt whole, not cut short at 10.5 (the PCA colour picture's 中文 title was, on every
    page: "…（110 个图像…")."""
    title = "前景的第 1、2、3 主成分画成红、绿、蓝（110 个图像块）"
    fit = lettering.text_width(title, 11) - 0.1
    assert lettering.text_width(title, 10) <= fit
    text, pt = lettering.fitted(title, 11, fit)
    assert text == title and 10 <= pt < 11 and lettering.text_width(text, pt) <= fit


@pytest.mark.parametrize("patch_size, every", [(16, 1), (14, 2), (56, 1)])
def test_patch_numbers_are_10_pt_or_more_every_one_or_a_chequerboard(patch_size, every):
    image = RNG.random((224, 224, 1)).astype(np.float32)
    (panel,) = figures.image_with_grid_picture(image, patch_size, "grid").panels
    G = 224 // patch_size
    numbered = [int(t[2]) for t in panel.texts]
    assert panel.text_pt >= 10
    assert numbered == [p for p in range(G * G) if every == 1 or sum(divmod(p, G)) % 2 == 0]


def test_an_attention_grid_from_minus_1_to_1_draws_cosines_on_their_own_scale():
    """vmin −1 (the patch similarity's fallback): −1 is the bottom colour, 1 the top, and the
    colour bar runs −1 … 1; vmin 0 (every other map) is the scale it always was."""
    from lens.figures.overlays import attention_grid_picture, overlay_rgb

    grey = np.full((8, 8), 0.5, np.float32)
    cos = np.array([[-1.0, 0.0], [0.5, 1.0]], np.float32)
    low, high = overlay_rgb(grey, cos, 1.0, vmin=-1.0), overlay_rgb(grey, (cos + 1) / 2, 1.0)
    np.testing.assert_allclose(low, high, atol=1e-6)  # (cos − vmin) / (vmax − vmin)
    w = np.array([[0.0, 0.2], [0.4, 0.8]], np.float32)
    assert np.array_equal(overlay_rgb(grey, w, 0.8), overlay_rgb(grey, w, 0.8, vmin=0.0))
    image = np.zeros((8, 8, 1), np.float32)
    pic = attention_grid_picture(image, cos[None], ["a"], "t", vmin=-1.0, vmax=1.0)
    assert (pic.colourbar.vmin, pic.colourbar.vmax) == (-1.0, 1.0)
    assert min(pic.colourbar.ticks()) < 0 < max(pic.colourbar.ticks())


def test_a_class_map_counts_in_whole_students_and_its_histogram_marks_the_right_answer():
    counts = np.array([[[0, 1], [1, 0]]], dtype=np.float32)  # one student per chosen patch
    counted = figures.attention_grid_picture(GREY, counts, ["chosen"], "class", vmax=1.0,
                                             counts=True)
    assert counted.colourbar.ticks() == [0.0, 1.0]  # not 0.2, 0.4, …: students are whole
    weights = figures.attention_grid_picture(GREY, counts, ["chosen"], "class", vmax=1.0)
    assert len(weights.colourbar.ticks()) > 2
    fig = figures.answer_counts_figure(["a", "b"], [3, 1], "t", "students", [False, True])
    bars = fig.axes[0].patches
    assert [round(b.get_width()) for b in bars] == [3, 1]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()  # the right one highlighted

    # and not by colour alone (WCAG 1.4.1): a ✓ before the right answer's label, only there
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["a", f"{figures.charts.RIGHT_MARK} b"]
    plain = figures.answer_counts_figure(["a", "b"], [3, 1], "t", "students")
    assert [t.get_text() for t in plain.axes[0].get_yticklabels()] == ["a", "b"]


def test_the_right_mark_is_drawn_from_a_font_that_has_it():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib warns of a glyph missing from every font
        figures.answer_counts(["a", "答对"], [3, 1], "t", "students", [False, True])
