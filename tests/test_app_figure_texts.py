"""中文 in every figure: every page is run in 中文 (AppTest) and every text that reaches a
picture — titles, axis and colour-bar labels, legends, tick labels, the explorer's labels — is
checked for English words; so are the words (\text{…}) inside the page's formulas. Code
identifiers and symbols (attn, W_Q, d_model, PE, nats …) stay as they are in both languages
(see lens/i18n.py).

The texts are caught twice: as the arguments of every `figures.<kind>` call the pages make
(the figure functions' own defaults included), and as the texts drawn — in the matplotlib
Figure behind the PNG (`figures.<kind>_figure`: tick labels, legends, words a figure function
writes itself) or in the raster Picture (`figures.<kind>_picture`: titles, axis and colour-bar
labels, tick labels, marks and free texts).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator

import numpy as np
import pytest

from lens import explorer, figures, model_weights, resources, widgets
from lens.models import CHECKPOINTS_ENV
from lens.sections import meaning
from tests.support.apptest_helpers import (
    ALL_PAGES,
    assert_clean,
    new_app,
    page_path,
    png_bytes,
    upload,
)

# Whole words that are names, not English: functions and the paper's names for them, tokens
# named so in both languages, symbols and units. A word that is part of an identifier
# (d_model, head_h, out_k, ln_1.normed) is one WORD with a digit, '_' or '.' and is never
# checked; a plain English word ("patches", "output", "head", "off") is prose to a 中文 reader
# and must be translated.
CODE_WORDS = frozenset({
    "attn",  # the trace's name of the attention weights (attn = softmax(…))
    "softmax", "concat", "cos", "sin", "exp", "tanh", "max", "ReLU", "GELU", "LN",
    "LayerNorm", "MultiHead", "Enc",  # functions, as the paper and the note write them
    "PE", "FFN", "RGB", "pos", "perm",  # symbols: PE(pos, 2i), FFN(x), a permutation
    "CLS", "DIST",  # a ViT's [CLS] and [DIST] tokens, named so in both languages
    "nats",  # the unit of an entropy
    "Chefer",  # an author's name, cited so in both languages (Chefer et al. 2021)
})
# \text{…} of a formula; not one that is a subscript (d_\text{model}, x_{\text{CLS}}) or has one
# (\text{head}_h, \text{out}_{ik}): a part of a name, as d_model, head_h and out_ik are
LATEX_TEXT = re.compile(r"(?<!_)(?<!_\{)\\text\{([^{}]*)\}(?!_)")
# The trace's arrays, written as the variables of a formula by the name they have in the code
# and the trace download (embedded[i, j] = Σ_k patches[i, k] · W_E[k, j]): allowed in formulas,
# which are not pictures; every picture says 嵌入, 图像块, 分数, 输出 and 词元.
FORMULA_NAMES = frozenset({"embedded", "patches", "scores", "output", "tokens"})
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.]*")
NOT_TEXT = frozenset({"fmt"})  # arguments that are not drawn as they are (a number format)


def english_words(text: str) -> list[str]:
    """The words of `text` that are English: 2+ letters, no digit, '_' or '.', not code."""
    return [w for w in WORD.findall(text) if len(w) > 1 and w.isalpha() and w not in CODE_WORDS]


def strings(value) -> Iterator[str]:
    """Every string in a (nested) argument."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from strings(v)
    elif isinstance(value, explorer.Maps):
        for field in ("title", "colorbar", "titles", "row_labels", "col_labels"):
            yield from strings(getattr(value, field))


def figure_texts(fig) -> Iterator[str]:
    """Every text drawn in a matplotlib Figure: suptitle, titles, axis labels, tick labels,
    legends, free texts (colour bars are axes too)."""
    for t in fig.texts:
        yield t.get_text()
    if fig._suptitle is not None:
        yield fig._suptitle.get_text()
    for ax in fig.axes:
        yield ax.get_title()
        yield ax.get_xlabel()
        yield ax.get_ylabel()
        for t in [*ax.get_xticklabels(), *ax.get_yticklabels(), *ax.texts]:
            yield t.get_text()
        legend = ax.get_legend()
        if legend is not None:
            for t in legend.get_texts():
                yield t.get_text()


def picture_texts(picture) -> Iterator[str]:
    """Every text drawn in a raster Picture: its title and texts, each panel's title, axis
    labels, tick labels and cell texts, the colour bar's label and marks."""
    yield picture.title
    yield from (t.text for t in picture.texts)
    for panel in picture.panels:
        yield from (panel.title, panel.xlabel, panel.ylabel)
        yield from (label for _, label in (*panel.xticks, *panel.yticks))
        yield from (text for _, _, text, _ in panel.texts)
    if picture.colourbar is not None:
        yield picture.colourbar.label
        yield from (label for _, label in picture.colourbar.marks)


@pytest.fixture
def drawn(monkeypatch) -> list[tuple[str, tuple, dict]]:
    """Every picture the pages ask for, as (kind, args, kwargs); the explorer as 'explorer'."""
    calls: list[tuple[str, tuple, dict]] = []
    real_render, real_payload = widgets.render, explorer.payload

    def spy_render(draw, *args, **kwargs):
        calls.append((draw.__name__, args, kwargs))
        return real_render(draw, *args, **kwargs)

    def spy_payload(image, grid, query, text, maps=None):
        calls.append(("explorer", (text, maps), {}))
        return real_payload(image, grid, query, text, maps)

    resources.caches()["payloads"].clear()  # every payload built (and seen) here
    monkeypatch.setattr(widgets, "render", spy_render)
    monkeypatch.setattr(explorer, "payload", spy_payload)
    return calls


def leaks(calls: list[tuple[str, tuple, dict]]) -> list[tuple[str, str, list[str]]]:
    """(kind, text, its English words) for every text of these calls with English in it."""
    found = []
    for kind, args, kwargs in calls:
        texts: list[str] = []
        if kind == "explorer":
            texts += strings(args)
        else:
            bound = inspect.signature(getattr(figures, kind)).bind(*args, **kwargs)
            bound.apply_defaults()  # a default label is drawn too
            texts += strings([v for k, v in bound.arguments.items() if k not in NOT_TEXT])
            if hasattr(figures, f"{kind}_figure"):
                texts += figure_texts(getattr(figures, f"{kind}_figure")(*args, **kwargs))
            elif hasattr(figures, f"{kind}_picture"):
                texts += picture_texts(getattr(figures, f"{kind}_picture")(*args, **kwargs))
        found += [(kind, t, english_words(t)) for t in texts if english_words(t)]
    return found


def run_zh(**link: str):
    at = new_app(lang="zh", **link)
    at.run()
    return at


@pytest.mark.parametrize("step, path", ALL_PAGES)
def test_every_figure_of_every_page_is_in_chinese(drawn, step, path, request):
    link = {}
    if step == "vit":  # its views need a ViT: the registry's small random timm checkpoint
        monkeypatch = request.getfixturevalue("monkeypatch")
        monkeypatch.setenv(CHECKPOINTS_ENV, request.getfixturevalue("vit_checkpoint"))
        model_weights.clear_models()
        request.addfinalizer(model_weights.clear_models)
        link = {"weights": "vit_tiny_test"}
    at = run_zh(**link)
    if path != ALL_PAGES[0][1]:
        at.switch_page(path).run()
    assert_clean(at)
    assert drawn, f"{step} drew no picture"
    assert not leaks(drawn), leaks(drawn)
    assert not formula_leaks(at), formula_leaks(at)


def formula_leaks(at) -> list[tuple[str, list[str]]]:
    """(text, its English words) of every \\text{…} of the page's formulas with English in it."""
    words = [(t, [w for w in english_words(t.replace("\\_", "_")) if w not in FORMULA_NAMES])
             for f in at.latex for t in LATEX_TEXT.findall(f.value)]
    return [w for w in words if w[1]]


@pytest.mark.slow
def test_the_figures_of_an_upload_the_trained_model_and_the_fallback_grids_are_in_chinese(
        drawn):
    at = run_zh()
    upload(at, "photo.png", png_bytes(3, size=64))  # the upload beside what the model gets
    assert_clean(at)
    assert any(kind == "image_pair" for kind, _, _ in drawn)
    for path in (page_path("scores"), page_path("stack")):  # the trained model on a shape
        at.switch_page(path).run()
        if any(b.key == meaning.SHOW_TRAINED for b in at.button):
            at.button(key=meaning.SHOW_TRAINED).click().run()
        assert_clean(at)
    assert not leaks(drawn), leaks(drawn)
    drawn.clear()
    at = run_zh(image_size="512", patch_size="16", d_model="64", n_heads="16", n_layers="1")
    at.switch_page(page_path("multihead")).run()  # over the explorer's cap: server pictures
    assert_clean(at)
    assert any(kind == "attention_grid" for kind, _, _ in drawn)
    assert not leaks(drawn), leaks(drawn)


def test_the_check_finds_an_english_label(monkeypatch):
    """The check can fail: one label put back to English is found, as an argument, as drawn
    and as a figure function's default; names and symbols are not."""
    calls = [("heatmap", (np.ones((2, 300)), "attn，第 1 层", "特征", "词元"),
              {"mean_of": "mean of {k}"}),
             ("bars", ([np.ones(3)], ["x̂ = ln_1.normed[3]"], "特征 k", ["x"], "W_Q · x0"), {}),
             ("pipeline", (np.zeros((4, 4, 1)), 2, ["图像", "图像块", "编码器"],
                           ["x0 = patches · W_E + PE", "output"]), {})]
    found = leaks(calls)
    assert ("heatmap", "mean of {k}", ["mean", "of"]) in found  # the argument
    assert any(kind == "heatmap" and "(mean of 2)" in t for kind, t, _ in found)  # as drawn
    assert ("pipeline", "x0 = patches · W_E + PE", ["patches"]) in found
    assert ("pipeline", "output", ["output"]) in found
    assert all(kind != "bars" for kind, _, _ in found)

    def english_default(m, label="attention weight"):  # noqa: ANN001, ANN202
        return b""

    monkeypatch.setattr(figures, "english_default", english_default, raising=False)
    assert leaks([("english_default", (1,), {})]) == [
        ("english_default", "attention weight", ["attention", "weight"])]
    at = type("At", (), {"latex": [type("L", (), {"value": r"\text{head}_h = \text{softmax "
                                                            r"of the scores}, d_\text{model}"})]})
    assert formula_leaks(at) == [("softmax of the scores", ["of", "the"])]


@pytest.mark.parametrize("kind", [k for k in figures.__all__ if callable(getattr(figures, k))
                                  and inspect.signature(getattr(figures, k)).return_annotation
                                  in (bytes, "bytes")])
def test_no_figure_function_has_a_default_label_in_english(kind):
    """What a figure function draws when the page passes nothing is no English prose: the
    page passes its words in its language ("attention weight", "x (pixels)", "mean of {k}")."""
    params = inspect.signature(getattr(figures, kind)).parameters.values()
    defaults = [p.default for p in params if p.default is not inspect.Parameter.empty
                and p.name not in NOT_TEXT]
    assert [(t, english_words(t)) for t in strings(defaults) if english_words(t)] == []


@pytest.mark.parametrize("what", ["n_heads", "scale", "d_model"])
def test_both_sides_of_compare_are_titled_in_chinese_for_every_setting_compared(drawn, what):
    at = run_zh()
    at.switch_page(page_path("compare")).run()
    at.radio(key="cmp_what").set_value(what).run()
    assert_clean(at)
    titles = [args[3] for kind, args, _ in drawn if kind == "attention_grid"]
    assert len(titles) >= 4, titles  # PE on, PE off, A, B
    assert not leaks(drawn), leaks(drawn)
