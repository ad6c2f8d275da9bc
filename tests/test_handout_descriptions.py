"""Each picture of the handout PDF followed by its description (issue 52, WCAG 1.1.1): the
walk's PDF at the defaults in English and 中文, read back with pdftotext in its reading order —
every picture's description (the page's `alt`, every part of a long one) is there as text,
under the label that says it is a picture's, after the step's title and the previous picture's
description, before the next picture's and the next step's; and it holds the picture's key
numbers, computed here from the trace (a heatmap's range, each head's strongest patch and its
weight, the largest bar). In the lesson the description says no more than the picture: the
overview's, with the shapes still to be predicted, names them without giving them."""

from __future__ import annotations

import re
import subprocess
from dataclasses import replace

import numpy as np
import pytest

from encoder_core import patch_rows
from lens.describe import number
from lens.handout.book import sheets_for
from lens.handout.pdf import TitlePage, handout_pdf
from lens.handout.sheets import Sheet, said
from lens.i18n import Texts
from lens.lesson.ahead import closed
from lens.steps import STEPS
from lens.walk.stack import MAX_LAYERS, spread
from tests.test_handout import default_handout

FOOT = r"^Encoder Lens · test · \d+$"  # every page's foot (`pdf_of`)
pytestmark = pytest.mark.slow  # each builds the walk's PDF and reads it back with poppler


def pdf_of(ctx, sheets: list[Sheet]) -> bytes:
    t = said(ctx)
    title = TitlePage(title=t("doc_title"), image=ctx.original, image_name="default.jpg",
                      lines=(), footer="Encoder Lens · test")
    return handout_pdf(title, sheets, t)


def read_back(pdf: bytes, tmp_path) -> str:
    """The PDF's text in pdftotext's reading order (no -layout), without the pages' feet (a
    paragraph may go on over the next page) and with no white space at all: a line broken
    anywhere (中文 between any two characters) reads as one."""
    path = tmp_path / "walk.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True,
                         check=True).stdout
    assert re.search(FOOT, out, flags=re.M)
    return "".join(re.sub(FOOT, "", out, flags=re.M).split())


def squeezed(text: str) -> str:
    return "".join(text.split())


def key_numbers(ctx) -> dict[str, list[list[str]]]:
    """Per step, per picture (in the sheet's order), what its description must say, computed
    from the trace: the values' range, or each map's strongest patch with its weight."""
    cfg, tr = ctx.cfg, ctx.trace
    i, layer, hd = ctx.row(ctx.query), tr.layers[ctx.layer], ctx.head
    patch = Texts(ctx.lang, "describe")

    def span(m) -> list[str]:
        return [number(np.min(m)), number(np.max(m))]

    def strongest(maps) -> list[str]:  # maps [k, N]: each one's strongest patch and weight
        return [patch("alt_patch_value", i=int(np.argmax(w)), v=number(np.max(w)))
                for w in maps]

    heads = min(cfg.n_heads, 8)
    return {
        "overview": [[str(cfg.n_layers), f"{cfg.n_tokens} × {cfg.d_model}"]],
        "patches": [[f"{cfg.patch_size} × {cfg.patch_size}", str(ctx.query)],
                    span(tr.patches)],
        "embedding": [span(tr.embedded)],
        "positional": [span(tr.pe), span(tr.x0)],
        "qkv": [span(layer.q[hd]), span(layer.k[hd])],
        "scores": [span(layer.scores[hd]), span(layer.attn[hd])],
        "multihead": [strongest(patch_rows(layer.attn[:heads, i, :], cfg))],
        "addnorm": [[number(np.max(layer.ln_1.mean)), number(np.max(layer.ln_1.var))],
                    span(layer.ln_1.out)],
        "ffn": [span(layer.ffn_hidden), span(layer.ffn_out)],
        "stack": [strongest(np.concatenate(
            [patch_rows(tr.layers[l].attn[:heads, i, :], cfg)
             for l in spread(cfg.n_layers, MAX_LAYERS)]))],
    }


@pytest.fixture(scope="module", params=["en", "zh"])
def walk(request, tmp_path_factory):
    ctx = default_handout(request.param).ctx
    sheets = sheets_for(ctx)
    text = read_back(pdf_of(ctx, sheets), tmp_path_factory.mktemp(request.param))
    return ctx, sheets, text


def test_each_picture_is_followed_by_its_description_in_reading_order(walk):
    ctx, sheets, text = walk
    t = said(ctx)
    assert [s.step for s in sheets] == [info.id for info in STEPS]
    pictures = 0
    at = 0
    for s in sheets:
        at = text.index(squeezed(s.title), at)  # the step's title, then its pictures' words
        for p in s.pictures:
            assert p.text, s.step
            said_it = squeezed(t("picture_words", text=p.text))
            found = text.find(said_it, at)
            assert found >= 0, (s.step, p.text[:80])
            at = found + len(said_it)
            pictures += 1
    assert pictures == sum(len(s.pictures) for s in sheets) >= 15
    assert at <= len(text)


def test_each_description_holds_the_pictures_key_numbers(walk):
    ctx, sheets, text = walk
    expected = key_numbers(ctx)
    by_step = {s.step: s for s in sheets}
    assert set(expected) == {s.id for s in STEPS}
    for step, pictures in expected.items():
        drawn = by_step[step].pictures
        assert len(drawn) == len(pictures), step
        for p, numbers in zip(drawn, pictures, strict=True):
            for n in numbers:
                assert n in p.text, (step, n, p.text[:200])
            assert squeezed(p.text) in text  # as printed
    # a long description (the stack's 48 maps) is printed whole, no "table below" in a PDF
    [stack] = by_step["stack"].pictures
    assert Texts(ctx.lang, "describe")("alt_panels_more", n=1)[:6] not in stack.text


def test_a_lessons_pdf_describes_only_what_its_pictures_show(tmp_path):
    """With every step after the overview still ahead, the PDF holds the overview alone, and
    its picture's description names the patches' count and the rows' width as the picture
    does (N, d_model) without giving them (196, 512): the answers still to be predicted."""
    ctx = default_handout("en").ctx
    cfg = ctx.cfg
    lesson = replace(ctx, ahead=closed(STEPS[1:]))  # as lens.lesson.ahead closes them
    sheets = sheets_for(lesson)
    assert [s.step for s in sheets] == ["overview"]
    [picture] = sheets[0].pictures
    text = read_back(pdf_of(lesson, sheets), tmp_path)
    assert squeezed(picture.text) in text and "N × d_model" in picture.text
    assert str(cfg.n_tokens) not in picture.text and str(cfg.d_model) not in picture.text
    assert str(cfg.n_tokens) not in text  # nowhere in the PDF
    [free] = sheets_for(ctx)[0].pictures  # outside the lesson: the shapes given
    assert f"{cfg.n_tokens} × {cfg.d_model}" in free.text
