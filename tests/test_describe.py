"""The pictures' text alternatives (lens/describe.py, issue 52): made from the very call that
draws each picture, they hold its key numbers — a heatmap's min and max and its largest cells,
each attention map's strongest patches and the weight on the query itself, each bar's value —
computed here from the same arrays, never written down; they use the figure's own title and
labels (what a lesson withholds from them is withheld from the description) and state no shape
the figure does not show; in 中文 they hold no English word beyond the math names below.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from lens import describe as d
from lens import figures
from lens.context import PageContext
from lens.describe import describe, number

# Words a 中文 description may hold: the math and code names the app writes the same in every
# language (symbols of the note, the model's parts), and a number's exponent.
# (the figures' own titles hold them: "resid_1" is read as "resid_", "ln_1.mean" as "ln_" and
# "mean").
MATH_NAMES = {"W_O", "W_Q", "W_K", "W_V", "W_E", "W_", "b_E", "concat", "attn_out", "attn",
              "head_h", "softmax", "CLS", "d_model", "d_k", "d_head", "Q", "K", "V", "Q_", "K_",
              "V_", "X", "a", "b", "c", "e", "i", "j", "k", "p", "q", "s", "x", "y", "z", "h",
              "F", "H", "J", "L", "N", "R", "ReLU", "GELU", "LayerNorm", "cos", "sin", "pos",
              "PE", "PE_a", "PE_b", "PE_pos", "PE_query", "FFN", "ffn_hidden", "ffn_out",
              "resid_", "ln_", "mean", "var", "normed", "out", "beta_", "gamma_", "Enc"}

RNG = np.random.default_rng(52)


def english_words(text: str) -> set[str]:
    """The Latin-letter words of a text that are not math names."""
    return set(re.findall(r"[A-Za-z][A-Za-z_]*", text)) - MATH_NAMES


def test_a_heatmap_states_its_range_and_its_largest_cells():
    m = RNG.normal(size=(12, 20))
    alt = describe(figures.heatmap, (m, "M  [12 × 20]", "feature", "token"),
                   {"signed": True}, "en").alt
    assert number(m.min()) in alt and number(m.max()) in alt
    r, c = np.unravel_index(np.argmax(np.abs(m)), m.shape)
    assert f"{number(m[r, c])} at row {r}, column {c}" in alt
    assert alt.startswith("M  [12 × 20].")  # the figure's own title, shape included


def test_an_unsigned_heatmap_names_its_largest_values_not_its_largest_sizes():
    m = RNG.random((6, 6)) - 0.9  # mostly negative: the largest size is a negative value
    alt = describe(figures.heatmap, (m, "P", "x", "y"), {"signed": False}, "en").alt
    r, c = np.unravel_index(np.argmax(m), m.shape)
    assert f"Largest: {number(m[r, c])} at row {r}, column {c}" in alt


def test_a_prefix_row_is_named_as_the_figure_ticks_it():
    m = np.zeros((5, 3))
    m[0, 1] = 9.0  # the CLS row
    m[3, 2] = 8.0  # patch 2 (row 3 after one prefix row)
    alt = describe(figures.heatmap, (m, "T", "f", "t"), {"prefix": ["CLS"]}, "en").alt
    assert "9 at row CLS, column 1" in alt and "8 at row 2, column 2" in alt


def attention_call(k: int = 3, G: int = 4, query: int | None = 5):
    image = RNG.random((16, 16, 3))
    maps = RNG.dirichlet(np.ones(G * G), size=k).reshape(k, G, G)
    titles = [f"head {i + 1}" for i in range(k)]
    return (image, maps, titles, "Attention of query 5"), {"query": query}, maps


def test_an_attention_map_names_its_three_strongest_patches_and_the_share_on_itself():
    args, kwargs, maps = attention_call()
    alt = describe(figures.attention_grid, args, kwargs, "en").alt
    for i, w in enumerate(maps.reshape(len(maps), -1)):
        top = np.argsort(-w, kind="stable")[:3]
        named = ", ".join(f"patch {p} ({number(w[p])})" for p in top)
        assert f"head {i + 1}: strongest {named}; on the query itself {number(w[5])}" in alt
    assert number(maps.max()) in alt  # the top of the colour scale


def test_more_maps_than_the_alt_holds_go_to_the_table():
    args, kwargs, maps = attention_call(k=d.ALT_PANELS + 3)
    said = describe(figures.attention_grid, args, kwargs, "en")
    assert said.long and len(said.parts) == len(maps)
    assert "head 11" not in said.alt and said.parts[10][0] == "head 11"
    assert number(maps[10].max()) in said.parts[10][1]


def test_an_attention_table_names_each_map_by_its_row_and_column():
    maps = RNG.random((2, 3, 4, 4))
    said = describe(figures.attention_table, (RNG.random((16, 16, 3)), maps, "T"),
                    {"row_labels": ["L1", "L2"], "col_labels": ["h1", "h2", "h3"]}, "en")
    assert [name for name, _ in said.parts] == [f"{r} · {c}" for r in ("L1", "L2")
                                                for c in ("h1", "h2", "h3")]
    assert number(maps[1, 2].max()) in said.parts[5][1]


def test_a_bar_chart_states_each_bars_value():
    v = RNG.normal(size=8)
    alt = describe(figures.bars, ([v], ["scores"], "key j", ["s"], "One row"), {}, "en").alt
    for j, x in enumerate(v):
        assert f"{number(x)} at {j}" in alt
    many = RNG.normal(size=d.ALT_BARS + 1)  # too many to list: range and largest only
    alt = describe(figures.bar_panels, (many[None], ["p"], "x", "y", "S"), {}, "en").alt
    assert number(many.min()) in alt and number(many.max()) in alt
    assert f"{number(many[0])} at 0," not in alt


def test_curves_state_their_ends_and_ranges():
    x = np.arange(10)
    ys = [np.sin(x), np.cos(x)]
    alt = describe(figures.lines, (x, ys, ["sin", "cos"], "PE", "pos", "value"), {}, "en").alt
    for name, y in zip(("sin", "cos"), ys, strict=True):
        assert (f"{name}: from {number(y[0])} to {number(y[-1])}, lowest {number(y.min())}, "
                f"highest {number(y.max())}") in alt


def test_the_description_uses_the_figures_words_and_states_no_shape_it_does_not_show():
    m = RNG.normal(size=(7, 9))
    alt = describe(figures.heatmap, (m, "a title with ?", "cols ?", "rows ?"), {}, "en").alt
    assert "a title with ?" in alt and "cols ?" in alt and "rows ?" in alt
    assert not re.search(r"\b7\s*×\s*9\b|\[7, 9\]", alt)  # the title holds no shape: nor does it


def test_a_figure_without_its_own_describer_gets_its_title_and_range():
    def chart(values: np.ndarray, title: str) -> bytes:
        return b""

    v = RNG.normal(size=5)
    alt = describe(chart, (v, "Something"), {}, "en").alt
    assert alt == f"Something. Values from {number(v.min())} to {number(v.max())}."


def test_every_kind_of_figure_the_app_draws_has_a_describer():
    kinds = {"heatmap", "row_heatmap", "value_grid", "attention_grid", "attention_table",
             "bars", "bar_panels", "lines", "answer_counts", "pipeline", "image_with_grid",
             "image_pair", "patch_gallery", "position_mosaic"}
    assert {f.__name__ for f in d.DESCRIBERS} == kinds
    assert all(d.DESCRIBERS[getattr(figures, k)].__name__ == k for k in kinds)


def test_numbers_are_written_with_a_true_minus_and_no_minus_zero():
    assert number(-1.5) == "−1.5" and number(-0.0001) == "−0.0001"
    assert number(-0.0) == "0" and number(123456) == "123456" and number(0.012345) == "0.0123"


@pytest.fixture(scope="module")
def multihead_pictures():
    """The Multi-head page's pictures at the defaults, from its view-models, in en and zh."""
    from encoder_core import encode  # noqa: PLC0415
    from lens import images, model_weights  # noqa: PLC0415
    from lens.settings import Settings  # noqa: PLC0415
    from lens.walk import multihead as mh  # noqa: PLC0415

    cfg = Settings().normalised()[0].to_config()
    original, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                          cfg.channels)
    trace = encode(image, cfg, model_weights.random_params(cfg))
    out = {}
    for lang in ("en", "zh"):
        ctx = PageContext.for_trace(trace, original, page="multihead", lang=lang)
        q = ctx.settings.query
        pics = [mh.heads_grid(ctx, 0, q)]
        pics += [m.picture(ctx) for m in mh.concat_matrices(ctx, 0, q, 0)]
        pics += list(mh.contribution_pictures(ctx, 0, q, 0, mh.query_contributions(ctx, 0, q)))
        out[lang] = pics
    return out


def test_the_multihead_grid_states_each_heads_top_weight(multihead_pictures):
    grid = multihead_pictures["en"][0]
    maps = np.asarray(grid.args[1])
    alt = describe(grid.draw, grid.args, grid.kwargs, "en").alt
    for w in maps.reshape(len(maps), -1):
        assert number(w.max()) in alt and number(w[grid.kwargs["query"]]) in alt


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_multihead_picture_is_described(multihead_pictures, lang):
    for pic in multihead_pictures[lang]:
        alt = describe(pic.draw, pic.args, pic.kwargs, lang).alt
        assert len(alt) > 40, (pic.key, alt)
        title = next(a for a in pic.args if isinstance(a, str))
        assert title in alt, (pic.key, title)


def zh_calls():
    """Calls of every kind of figure with 中文 words, as the pages make them."""
    m = RNG.normal(size=(6, 8))
    args, kwargs, _ = attention_call()
    image = RNG.random((16, 16, 3))
    return [
        (figures.heatmap, (m, "注意力分数  [6 × 8]", "键 j", "查询 i"), {"highlight_row": 1,
                                                                     "highlight_col": 2}),
        (figures.row_heatmap, (m, "每个头", "输出特征 j", "头", ["1", "2", "3", "4", "5", "6"]),
         {}),
        (figures.value_grid, (m, "像素值", "列", "行"), {}),
        (figures.attention_grid, (args[0], args[1], ["头 1", "头 2", "头 3"], "注意力"),
         {"query": 5, "mark": 3}),
        (figures.attention_table, (image, RNG.random((1, 2, 4, 4)), "表"),
         {"row_labels": ["第 1 层"], "col_labels": ["头 1", "头 2"]}),
        (figures.bars, ([m[0], m[1]], ["分数", "权重"], "键 j", ["s", "a"], "一行"),
         {"highlight": 2}),
        (figures.bar_panels, (m[:2], ["甲", "乙"], "头", "范数", "贡献"), {}),
        (figures.lines, (np.arange(8), [m[0]], ["第 0 列"], "位置编码", "位置", "值"), {}),
        (figures.answer_counts, (["甲", "乙"], [3, 4], "答案", "人数"), {"right": [True, False]}),
        (figures.pipeline, (image, 4, ["图像", "图像块", "编码器"], ["x0", "x1"]), {}),
        (figures.image_with_grid, (image, 4, "图像块网格"), {"highlight": 5, "mark": 2}),
        (figures.image_pair, (image, image, ("原图", "模型输入")), {}),
        (figures.patch_gallery, (RNG.random((9, 48)), 4, 3, "图像块"), {}),
        (figures.position_mosaic, (RNG.uniform(-1, 1, (15, 15)), 4, "位置相似度", "列", "行"),
         {"query": 5}),
    ]


def test_the_chinese_descriptions_hold_no_english_words(multihead_pictures):
    alts = [describe(f, a, k, "zh").alt for f, a, k in zh_calls()]
    alts += [describe(p.draw, p.args, p.kwargs, "zh").alt for p in multihead_pictures["zh"]]
    for alt in alts:
        assert english_words(alt) == set(), alt
    assert english_words("patch 3 of W_O") == {"patch", "of"}  # the check sees English


def test_the_english_descriptions_of_every_kind_are_english():
    for f, a, k in zh_calls():
        alt = describe(f, a, k, "en").alt
        assert alt and "为" not in alt and "。" not in alt, alt


def test_an_empty_or_odd_call_is_still_described():
    """A description never fails a page: empty arrays, an outlined row out of range."""
    empty = np.zeros((0, 3))
    assert describe(figures.heatmap, (empty, "E", "x", "y"), {}, "en").alt.startswith("E.")
    assert describe(figures.heatmap, (np.ones((2, 2)), "H", "x", "y"), {"highlight_row": 5},
                    "en").alt.startswith("H.")
    assert "none" in describe(figures.bars, ([np.zeros(0)], ["none"], "x", ["y"], "B"), {},
                              "en").alt
