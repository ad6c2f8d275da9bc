"""The pictures of the sections inside the model (issue 53, item 2): the new raster figure
`figures.label_grid` (named rows and columns, a text in every cell, a colour bar), and the
pictures the sections' pure parts make from a small pre-norm ViT's trace — the lens grid, the
patch lens, the shares grid, the patching maps, the two sets of curves — each with its colour
bar (or, a chart, its labelled axes), and in 中文 without an English word."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from encoder_core import (
    deletion_curve,
    insertion_curve,
    logit_attribution,
    logit_lens,
    patching_map,
    relevance_order,
)
from lens import figures
from lens.i18n import Texts
from lens.sections import faithfulness, logit_shares, patching
from lens.sections import logit_lens as lens_section
from tests.support.inside_models import traced, vit_model
from tests.test_app_figure_texts import english_words, figure_texts, picture_texts

RNG = np.random.default_rng(7)


def grid(signed: bool = False, **kw):
    m = RNG.standard_normal((3, 4)) if signed else RNG.random((3, 4))
    cells = [[f"{v:+.2f}" for v in row] for row in m]
    return m, figures.label_grid_picture(m, cells, "t", "head", "layer", ["a", "b", "c"],
                                         ["1", "2", "3", "FFN"], signed=signed,
                                         colorbar_label="share", **kw)


def test_label_grid_names_rows_and_columns_writes_every_cell_and_has_a_colour_bar():
    m, pic = grid(outline_col=3)
    (panel,) = pic.panels
    assert [s for _, s in panel.xticks] == ["1", "2", "3", "FFN"]
    assert [s for _, s in panel.yticks] == ["a", "b", "c"]
    assert (panel.xlabel, panel.ylabel) == ("head", "layer")
    assert pic.colourbar is not None and pic.colourbar.label == "share"
    assert [(x, y, s) for x, y, s, _ in panel.texts] == [
        (j, i, f"{m[i, j]:+.2f}") for i in range(3) for j in range(4)]
    assert len(panel.rects) == 1 and panel.rects[0].x == 2.5  # the FFN column framed
    png = figures.label_grid(m, [[f"{v:+.2f}" for v in row] for row in m], "t", "head",
                             "layer", ["a", "b", "c"], ["1", "2", "3", "FFN"],
                             colorbar_label="share", outline_col=3)
    img = Image.open(io.BytesIO(png))
    assert img.size == pic.size
    assert figures.min_text_px(png) >= 10 * 100 / 72 - 0.05


def test_label_grid_writes_white_on_dark_cells_at_both_ends_of_a_signed_scale():
    m = np.array([[-1.0, 0.0, 1.0]])
    pic = figures.label_grid_picture(m, [["-1", "0", "+1"]], "t", "x", "y", ["r"],
                                     ["a", "b", "c"], signed=True)
    colours = [c for _, _, _, c in pic.panels[0].texts]
    assert colours == [(255, 255, 255), (0, 0, 0), (255, 255, 255)]
    plain = figures.label_grid_picture(np.array([[0.0, 1.0]]), [["0", "1"]], "t", "x", "y",
                                       ["r"], ["a", "b"], vmin=0.0, vmax=1.0)
    assert [c for _, _, _, c in plain.panels[0].texts] == [(255, 255, 255), (0, 0, 0)]


def test_a_long_x_label_is_never_cut_short_under_a_few_columns():
    m = RNG.random((2, 2))
    label = "depth (0 = the embedding, then after each layer)"
    pic = figures.label_grid_picture(m, [["1", "2"]] * 2, "t", label, "y", ["a", "b"],
                                     ["0", "1"])
    box_w = pic.panels[0].box[2]
    room = figures.picture.xlabel_fit(box_w, pic.size[0]) * pic.panels[0].label_lines
    assert figures.lettering.text_width(label, 10) <= room


@pytest.fixture(scope="module")
def vit():
    cfg, params = vit_model("token")
    return traced(cfg, params), traced(cfg, params, seed=77), params


def sections_pictures(lang: str, vit) -> dict[str, object]:
    """Every picture the sections' pure parts make from the small ViT, in `lang`."""
    tr, tr_b, params = vit
    cfg, G, n = tr.config, tr.config.grid_size, tr.config.n_prefix
    names = [f"c{k}" for k in range(params.head.n_classes)]
    lens = logit_lens(tr, params)
    tokens = logit_lens(tr, params, tokens=True)
    t_lens, t_shares = Texts(lang, "logit_lens"), Texts(lang, "logit_shares")
    t_patch, t_faith = Texts(lang, "patching"), Texts(lang, "faithfulness")
    order = relevance_order(np.arange(cfg.n_tokens, dtype=float))
    curves = {m: deletion_curve(tr.image, cfg, params, order, 0, 4) for m in faithfulness.MAPS}
    return {
        "lens": lens_section.lens_grid(t_lens, lens, [0, 1, 2], names, "k"),
        "patch_lens": lens_section.patch_lens_picture(t_lens, tr.image, tokens[-1], n, G,
                                                      cfg.n_layers, 0, names[0], "k")[0],
        "shares": logit_shares.shares_grid(t_shares, logit_attribution(tr, params, 0),
                                           names[0], "k"),
        "patching": patching.patching_picture(t_patch, tr.image,
                                              patching_map(tr, tr_b, params, 1), n, G,
                                              names[1], "k"),
        "curves": faithfulness.curves_picture(t_faith, "deletion", curves, names[0], "k"),
        "insertion": faithfulness.curves_picture(
            t_faith, "insertion",
            {m: insertion_curve(tr.image, cfg, params, order, 0, 4) for m in faithfulness.MAPS},
            names[0], "k"),
    }


RASTER = {"lens": "label_grid", "patch_lens": "attention_grid", "shares": "label_grid",
          "patching": "attention_grid"}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_sections_pictures_have_colour_bars_labelled_axes_and_in_chinese_no_english(
        vit, lang):
    for name, pic in sections_pictures(lang, vit).items():
        if name in RASTER:
            assert pic.draw is getattr(figures, RASTER[name])
            laid = getattr(figures, f"{RASTER[name]}_picture")(*pic.args, **pic.kwargs)
            assert laid.colourbar is not None and laid.colourbar.label, name
            if RASTER[name] == "label_grid":
                assert laid.panels[0].xlabel and laid.panels[0].ylabel, name
            texts = list(picture_texts(laid))
        else:
            fig = figures.lines_figure(*pic.args, **pic.kwargs)
            (ax,) = fig.axes
            assert ax.get_xlabel() and ax.get_ylabel(), name
            assert len(ax.get_legend().get_texts()) == len(faithfulness.MAPS)
            texts = list(figure_texts(fig))
        if lang == "zh":
            english = [(s, english_words(s)) for s in texts if english_words(s)]
            assert not english, (name, english)
        png = pic.png()
        assert figures.min_text_px(png) >= 10 * 100 / 72 - 0.05, name
