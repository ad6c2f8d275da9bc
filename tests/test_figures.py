"""The figures (lens/figures/): each picture is drawn by `<kind>_figure(...)`, whose matplotlib
Figure these tests inspect (titles, labels, ticks, colourbars, highlight artists); the PNG
function `<kind>(...)` the app calls is `to_png` of that Figure."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from matplotlib.colors import same_color, to_rgb
from matplotlib.patches import StepPatch

from lens import figures

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
}


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
    assert isinstance(figures.HAS_CJK_FONT, bool)


@pytest.mark.parametrize("kind", KINDS)
def test_each_png_function_takes_exactly_the_arguments_of_its_figure_function(kind):
    png = inspect.signature(getattr(figures, kind)).parameters
    fig = inspect.signature(getattr(figures, f"{kind}_figure")).parameters
    assert list(png.values()) == list(fig.values())


@pytest.mark.parametrize("kind", KINDS)
def test_each_png_function_returns_the_png_of_its_figure(kind):
    args, kwargs = KINDS[kind]
    png = getattr(figures, kind)(*args, **kwargs)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert png == figures.to_png(getattr(figures, f"{kind}_figure")(*args, **kwargs))


# --- heatmaps ---------------------------------------------------------------------------------

def test_heatmap_has_the_given_title_axis_labels_and_a_colourbar_of_its_image():
    m = RNG.standard_normal((6, 9))
    fig = figures.heatmap_figure(m, "x  [6 × 9]", "features", "tokens", colorbar_label="value")
    (ax,) = panels(fig)
    (cb,) = colourbars(fig)
    assert "x  [6 × 9]" in ax.get_title()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("features", "tokens")
    assert cb.mappable is ax.images[0]
    assert cb.ax.get_ylabel() == "value"
    np.testing.assert_allclose(ax.images[0].get_array(), m, rtol=1e-6)


@pytest.mark.parametrize("make", [figures.heatmap_figure, figures.row_heatmap_figure,
                                  figures.value_grid_figure])
def test_signed_data_gets_a_symmetric_diverging_scale_and_unsigned_a_sequential_min_max(make):
    m = np.array([[-0.5, 3.0, 1.0], [0.2, 0.1, 2.0]])
    extra = (["r0", "r1"],) if make is figures.row_heatmap_figure else ()
    signed = panels(make(m, "m", "j", "i", *extra, signed=True))[0].images[0]
    unsigned = panels(make(m, "m", "j", "i", *extra, signed=False))[0].images[0]
    assert signed.get_clim() == pytest.approx((-3.0, 3.0))
    assert signed.get_cmap().name == figures.SIGNED_CMAP
    assert unsigned.get_clim() == pytest.approx((-0.5, 3.0))
    assert unsigned.get_cmap().name == figures.PROB_CMAP


@pytest.mark.parametrize("make", [figures.heatmap_figure, figures.row_heatmap_figure,
                                  figures.value_grid_figure])
@pytest.mark.parametrize("m", [np.full((3, 4), 2.5), np.zeros((3, 4)), np.full((3, 4), np.nan),
                               np.array([[np.nan, np.inf, -np.inf, 1.0]] * 3)],
                         ids=["constant", "zeros", "all_nan", "nan_and_inf"])
@pytest.mark.parametrize("signed", [True, False])
def test_constant_or_non_finite_input_still_gets_a_valid_colour_scale(make, m, signed):
    extra = (["a", "b", "c"],) if make is figures.row_heatmap_figure else ()
    fig = make(m, "m", "j", "i", *extra, signed=signed)
    vmin, vmax = panels(fig)[0].images[0].get_clim()
    assert np.isfinite([vmin, vmax]).all() and vmin < vmax
    if signed:
        assert vmin == -vmax
    (cb,) = colourbars(fig)
    assert (cb.vmin, cb.vmax) == (vmin, vmax)


def test_heatmap_over_256_a_side_is_block_averaged_and_its_axis_labels_say_so():
    m = RNG.standard_normal((600, 300)).astype(np.float32)
    fig = figures.heatmap_figure(m, "big", "j", "i")
    (ax,) = panels(fig)
    shown = ax.images[0].get_array()
    assert shown.shape == (200, 150)  # k = ceil(600 / 256) = 3 rows, ceil(300 / 256) = 2 cols
    np.testing.assert_allclose(shown[0, 0], m[:3, :2].mean(), rtol=1e-5)
    assert ax.images[0].get_extent() == [-0.5, 299.5, 599.5, -0.5]  # axes still in m's indices
    assert ax.get_xlabel() == "j  (mean of 2)" and ax.get_ylabel() == "i  (mean of 3)"


def test_heatmap_outlines_the_highlighted_row_and_column_at_their_edges():
    fig = figures.heatmap_figure(np.ones((5, 5)), "m", "j", "i", highlight_row=1,
                                 highlight_col=3)
    (ax,) = panels(fig)
    horizontal = sorted(ln.get_ydata()[0] for ln in ax.lines if list(ln.get_xdata()) == [0, 1])
    vertical = sorted(ln.get_xdata()[0] for ln in ax.lines if list(ln.get_ydata()) == [0, 1])
    assert horizontal == [0.5, 1.5] and vertical == [2.5, 3.5]


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


def test_value_grid_ticks_count_from_row0_and_col0_and_it_writes_every_value():
    m = np.arange(20, dtype=np.float32).reshape(4, 5) / 10
    fig = figures.value_grid_figure(m, "window", "col", "row", row0=3, col0=2, fmt="{:.1f}")
    (ax,) = panels(fig)
    assert labels(ax.get_yticklabels()) == ["3", "4", "5", "6"]
    assert labels(ax.get_xticklabels()) == ["2", "3", "4", "5", "6"]
    assert sorted(labels(ax.texts)) == sorted(f"{v:.1f}" for v in m.ravel())
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == ("window", "col", "row")
    assert len(colourbars(fig)) == 1


def test_value_grid_over_256_values_writes_no_numbers_and_thins_its_ticks():
    fig = figures.value_grid_figure(np.ones((20, 30)), "big", "col", "row")
    (ax,) = panels(fig)
    assert len(ax.texts) == 0
    assert list(ax.get_yticks()) == list(range(0, 20, 2))
    assert list(ax.get_xticks()) == list(range(0, 30, 3))


# --- the image --------------------------------------------------------------------------------

def test_image_with_grid_draws_the_patch_grid_numbers_and_outlines_the_highlighted_patch():
    fig = figures.image_with_grid_figure(RGB, 8, "16 patches", highlight=6)
    (ax,) = fig.axes
    G, P = 4, 8
    grid = [ln for ln in ax.lines if same_color(ln.get_color(), figures.GRID_COLOUR)]
    assert len(grid) == 2 * (G - 1)
    assert sorted({ln.get_ydata()[0] for ln in grid if ln.get_ydata()[0] == ln.get_ydata()[1]}) \
        == [k * P - 0.5 for k in range(1, G)]
    assert labels(ax.texts) == [str(p) for p in range(G * G)]
    (outline,) = [p for p in ax.patches if same_color(p.get_edgecolor(), figures.QUERY_COLOUR)]
    assert outline.get_xy() == (2 * P - 0.5, 1 * P - 0.5)  # patch 6 = row 1, column 2
    assert (outline.get_width(), outline.get_height()) == (P, P)
    assert ax.get_title() == "16 patches"


def test_image_with_grid_writes_no_numbers_when_asked_or_when_over_16_patches_a_side():
    assert len(figures.image_with_grid_figure(RGB, 8, "t", numbers=False).axes[0].texts) == 0
    assert len(figures.image_with_grid_figure(RGB, 1, "t").axes[0].texts) == 0  # 32 a side


def test_image_pair_shows_both_images_titled_with_their_shapes():
    upload = RNG.random((20, 10, 3))
    fig = figures.image_pair_figure(upload, GREY, ("upload", "model input"))
    left, right = fig.axes
    assert left.get_title() == "upload  [20 × 10 × 3]"
    assert right.get_title() == "model input  [32 × 32 × 1]"
    np.testing.assert_allclose(left.images[0].get_array(), upload)
    np.testing.assert_allclose(right.images[0].get_array(), GREY[..., 0])
    assert right.images[0].get_cmap().name == "gray"


def test_patch_gallery_shows_each_patch_up_to_max_patches_titled_with_its_index():
    patches = RNG.random((12, 4 * 4 * 3))
    fig = figures.patch_gallery_figure(patches, 4, 3, "patches", max_patches=7)
    shown = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in shown] == [str(i) for i in range(7)]
    for i, ax in enumerate(shown):
        np.testing.assert_allclose(ax.images[0].get_array(), patches[i].reshape(4, 4, 3))
    assert len(fig.axes) == 9 and fig.get_suptitle() == "patches"  # a 3 × 3 grid, 2 empty


# --- attention over the image -----------------------------------------------------------------

def test_attention_grid_has_one_titled_panel_per_map_and_one_shared_colourbar():
    maps = RNG.random((5, 4, 4))
    maps[3, 0, 0] = 2.0  # the maximum of one map sets the scale of all
    fig = figures.attention_grid_figure(RGB, maps, [f"head {i}" for i in range(5)], "attn",
                                        ncols=3, query=6, colorbar_label="weight")
    shown = [ax for ax in panels(fig) if ax.images]
    assert [ax.get_title() for ax in shown] == [f"head {i}" for i in range(5)]
    assert len(panels(fig)) == 6 and not panels(fig)[5].axison  # the unused sixth cell is off
    (cb,) = colourbars(fig)
    assert (cb.vmin, cb.vmax) == (0.0, 2.0) and cb.ax.get_ylabel() == "weight"
    grey = RGB.mean(axis=-1)
    for ax, w in zip(shown, maps, strict=True):  # every panel on the shared scale
        np.testing.assert_allclose(ax.images[0].get_array(), figures.overlay_rgb(grey, w, 2.0))
        (outline,) = [p for p in ax.patches if same_color(p.get_edgecolor(),
                                                          figures.QUERY_COLOUR)]
        assert outline.get_xy() == (2 * 8 - 0.5, 1 * 8 - 0.5)  # query 6 = row 1, column 2


def test_attention_grid_labels_the_first_panel_of_each_row_with_its_row_label():
    fig = figures.attention_grid_figure(GREY, RNG.random((4, 4, 4)), list("abcd"), "t",
                                        ncols=2, row_labels=["layer 1", "layer 2"])
    assert [ax.get_ylabel() for ax in panels(fig)] == ["layer 1", "", "layer 2", ""]


def test_attention_maps_of_zeros_still_get_a_valid_colour_scale():
    fig = figures.attention_grid_figure(RGB, np.zeros((2, 4, 4)), ["a", "b"], "zeros")
    (cb,) = colourbars(fig)
    assert (cb.vmin, cb.vmax) == (0.0, 1.0)


def test_attention_table_labels_columns_on_top_rows_on_the_left_with_one_shared_colourbar():
    maps = RNG.random((2, 3, 4, 4))
    fig = figures.attention_table_figure(GREY, maps, "layer × head", row_labels=["L1", "L2"],
                                         col_labels=["h1", "h2", "h3"], query=0,
                                         colorbar_label="R")
    grid = np.array(panels(fig)).reshape(2, 3)
    assert [ax.get_title() for ax in grid[0]] == ["h1", "h2", "h3"]
    assert [ax.get_title() for ax in grid[1]] == ["", "", ""]
    assert [ax.get_ylabel() for ax in grid[:, 0]] == ["L1", "L2"]
    assert [ax.get_ylabel() for ax in grid[:, 1:].ravel()] == [""] * 4
    (cb,) = colourbars(fig)
    assert (cb.vmin, cb.vmax) == (0.0, pytest.approx(maps.max()))
    assert cb.ax.get_ylabel() == "R"
    for (r, c), ax in np.ndenumerate(grid):
        np.testing.assert_allclose(ax.images[0].get_array(),
                                   figures.overlay_rgb(GREY[..., 0], maps[r, c], maps.max()))
    assert fig.get_suptitle() == "layer × head"


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
    from matplotlib.patches import Rectangle

    m = RNG.standard_normal((300, 600))
    fig = figures.heatmap_figure(m, "x", "feature", "token", window=(40, 100, 32, 32),
                                 mean_of="{k} 个的平均")
    ax = panels(fig)[0]
    boxes = [p for p in ax.patches if isinstance(p, Rectangle) and p.get_linestyle() == "--"]
    assert len(boxes) == 1
    assert boxes[0].get_xy() == (99.5, 39.5)
    assert (boxes[0].get_width(), boxes[0].get_height()) == (32, 32)
    assert ax.get_xlabel() == "feature  (3 个的平均)" and ax.get_ylabel() == "token  (2 个的平均)"


@pytest.mark.parametrize("kind", ["attention_grid", "attention_table"])
def test_attention_maps_mark_the_uniform_weight_on_their_colour_bar(kind):
    args, kwargs = KINDS[kind]
    fig = getattr(figures, f"{kind}_figure")(*args, **kwargs, vmax=0.5, uniform=1 / 16)
    (cb,) = colourbars(fig)
    marks = [ln for ln in cb.ax.get_lines() if np.allclose(ln.get_ydata(), 1 / 16)]
    assert len(marks) == 1 and "1/N" in labels(cb.ax.texts)
    plain = getattr(figures, f"{kind}_figure")(*args, **kwargs, vmax=0.5)
    assert not colourbars(plain)[0].ax.get_lines()


def test_the_overlay_lets_the_photo_show_where_attention_is_low():
    grey = np.full((8, 8), 0.2)  # a dark photo: a dark shape must not vanish
    weights = np.array([[0.0, 1.0], [0.0, 0.0]])
    rgb = figures.overlay_rgb(grey, weights, vmax=1.0, alpha=0.6)
    low, high = rgb[0, 0], rgb[0, 4]  # a patch with weight 0, one at the top of the scale
    assert np.abs(low - 0.2).max() < 0.05  # the photo barely tinted
    assert np.abs(high - 0.2).max() > 0.3  # the colour covers it
