"""The walk as a handout PDF (issue 27): built for the defaults, the trained shapes model and a
test ViT, in English and 中文, then read back with poppler (pdftotext, pdffonts, pdftoppm): a
title page and each step from a page of its own with its title and the live shapes, numbers
that are the trace's, every glyph drawn and every font embedded as TrueType (Type 42)."""

from __future__ import annotations

import logging
import subprocess
import warnings
from dataclasses import dataclass, field, replace
from types import SimpleNamespace

import numpy as np
import pytest
from PIL import Image

from encoder_core import encode, load_checkpoint, predict, top_classes
from lens import images, model_weights
from lens.context import PageContext
from lens.handout.book import handout, sheets_for
from lens.handout.pdf import Flow, TitlePage, handout_pdf, tokens
from lens.handout.sheets import Answer, said
from lens.handout.ui import image_name
from lens.i18n import Texts, translate
from lens.note import note_plain, plain_math
from lens.page_costs import handout_cost
from lens.settings import Settings
from lens.steps import PAGES, STEPS
from lens.widgets import png_name

# poppler-utils reads the PDFs back (scripts/test installs it): a machine without it fails
# these tests, it does not skip them
reads_back = pytest.mark.slow  # they build PDFs: the slow lane
QUERY = 105


@dataclass(frozen=True)
class Asked:
    """What a handout is made of: the sheets' context (the trace, the language, the layer, head
    and query chosen, as shown) and what the PDF holds beyond the pages."""

    ctx: PageContext
    labels: tuple[str, ...] = ()  # the head's class names
    answers: dict[str, tuple[Answer, ...]] = field(default_factory=dict)  # page id -> answers

    @property
    def t(self) -> Texts:
        return said(self.ctx)


def default_handout(lang: str, **kw: object) -> Asked:
    cfg = Settings().normalised()[0].to_config()
    original, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                           cfg.channels)
    trace = encode(image, cfg, model_weights.random_params(cfg))
    return Asked(PageContext.for_trace(trace, original, lang=lang, layer=1, head=1,
                                       query=QUERY), **kw)


def trained_handout(lang: str) -> Asked:
    cfg, params, head = model_weights.trained_model()
    original, image = images.decode_image(images.sample_png(3), cfg.image_size, cfg.channels)
    names = tuple(translate(f"class_{c}", lang) for c in head.class_names)
    return Asked(PageContext.for_trace(encode(image, cfg, params), original, lang=lang, layer=1,
                                       head=1, query=cfg.n_tokens // 2), labels=names)


def vit_handout(lang: str, path: str) -> Asked:
    cfg, params, _ = load_checkpoint(path)
    original, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                           cfg.channels)
    return Asked(PageContext.for_trace(encode(image, cfg, params), original, lang=lang, layer=2,
                                       head=2, query=QUERY))


class Glyphs(logging.Handler):
    """matplotlib's log of a glyph drawn as a dummy (mathtext's "substituting …")."""

    def __init__(self) -> None:
        super().__init__()
        self.missing: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "glyph" in record.getMessage().lower():
            self.missing.append(record.getMessage())


def build(asked: Asked) -> tuple[bytes, list[str]]:
    """The PDF and every complaint of a missing glyph while it was made."""
    ctx = asked.ctx
    title = TitlePage(title=asked.t("doc_title"), image=ctx.original, image_name="default.jpg",
                      lines=(asked.t("doc_chosen", l=ctx.layer + 1, hd=ctx.head + 1,
                                     i=ctx.query),), footer="Encoder Lens · test")
    glyphs = Glyphs()
    log = logging.getLogger("matplotlib")
    log.addHandler(glyphs)
    shares: list[float] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pdf = handout(ctx, title, shares.append, answers=asked.answers,
                          labels=asked.labels)
    finally:
        log.removeHandler(glyphs)
    assert shares and shares[-1] == pytest.approx(1.0) and shares == sorted(shares)
    return pdf, glyphs.missing + [str(w.message) for w in caught if "Glyph" in str(w.message)]


def pages_text(pdf: bytes, tmp_path) -> list[str]:
    path = tmp_path / "walk.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True,
                         text=True, check=True).stdout
    return out.split("\f")[:-1]  # a form feed ends every page


def step_pages(asked: Asked, texts: list[str]) -> dict[str, str]:
    """Each step's text: from the page its title starts on up to the next step's."""
    starts = {}
    for step in STEPS:
        title = asked.t("step_title", k=STEPS.index(step) + 1, n=len(STEPS),
                        title=step.title_in(asked.ctx.lang))
        found = [n for n, t in enumerate(texts) if title in " ".join(t.split())]
        assert len(found) == 1, (title, found)
        starts[step.id] = found[0]
    order = list(starts.values())
    assert order == sorted(order) and order[0] == 1  # the title page first, then in order
    ends = order[1:] + [len(texts)]
    return {s: "\n".join(texts[a:b]) for (s, a), b in zip(starts.items(), ends, strict=True)}


# --- the PDF of three models in two languages -------------------------------------------------

MODELS = ("defaults", "trained", "vit")


@pytest.fixture(scope="module", params=[(m, lang) for m in MODELS for lang in ("en", "zh")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def made(request, vit_checkpoint):
    model, lang = request.param
    asked = {"defaults": lambda: default_handout(lang),
             "trained": lambda: trained_handout(lang),
             "vit": lambda: vit_handout(lang, vit_checkpoint)}[model]()
    pdf, missing = build(asked)
    return SimpleNamespace(model=model, lang=lang, asked=asked, pdf=pdf, missing=missing)



@reads_back
def test_the_pdf_has_a_title_page_then_every_step_in_order(made, tmp_path):
    texts = pages_text(made.pdf, tmp_path)
    assert made.pdf.startswith(b"%PDF")
    assert made.asked.t("doc_title") in " ".join(texts[0].split())
    pages = step_pages(made.asked, texts)
    assert len(texts) >= 1 + len(STEPS)
    if made.model == "defaults":
        assert len(made.pdf) < 5 * 2**20  # the bound at the defaults
    for step, text in pages.items():  # the takeaway under the title, the note's heading
        assert made.asked.t("h_note") in text, step
        assert (made.asked.t("h_formulas") in text
                or step == "ffn" and not made.asked.ctx.cfg.use_ffn)


@reads_back
def test_every_step_holds_its_live_shapes(made, tmp_path):
    cfg = made.asked.ctx.cfg
    pages = step_pages(made.asked, pages_text(made.pdf, tmp_path))
    T, N = cfg.seq_len, cfg.n_tokens
    assert f"[{N} × {cfg.patch_dim}]" in pages["patches"]
    for step in ("embedding", "positional", "qkv", "scores", "multihead", "addnorm", "stack"):
        assert f"{T} × " in pages[step], step  # [T × d] or, as the page writes it, T × d
    assert f"[{T} × {cfg.d_head}] ⋅ [{cfg.d_head} × {T}] = [{T} × {T}]" in pages["scores"]
    if made.model == "defaults":
        assert "196 × 512" in pages["stack"]
    if made.model == "vit":  # CLS before the patches: 197 rows
        assert T == 197 and "197 × 128" in pages["stack"]
        assert "LN" in pages["qkv"] and "x̃" in pages["qkv"].replace("x ̃", "x̃")  # pre-norm


@reads_back
def test_the_worked_entries_are_the_traces_numbers(made, tmp_path):
    ctx, tr = made.asked.ctx, made.asked.ctx.trace
    pages = step_pages(made.asked, pages_text(made.pdf, tmp_path))
    i, layer, hd = ctx.row(ctx.query), tr.layers[ctx.layer], ctx.head
    j = int(np.argmax(layer.attn[hd, i]))
    assert f"scores[{i}, {j}]" in pages["scores"]
    assert f"{layer.scores[hd, i, j]:+.4f}" in pages["scores"]
    assert f"{layer.attn[hd, i, j]:.4f}" in pages["scores"]
    assert f"{tr.embedded[ctx.query, 0]:+.4f}" in pages["embedding"]
    assert f"{layer.q[hd, i, 0]:+.4f}" in pages["qkv"]
    assert f"{layer.ln_1.out[i, 0]:+.4f}" in pages["addnorm"]
    assert f"{layer.attn_out[i, 0]:+.4f}" in pages["multihead"]


@pytest.mark.slow
def test_no_glyph_is_missing(made):
    assert made.missing == []


@reads_back
def test_every_font_is_embedded_as_truetype(made, tmp_path):
    path = tmp_path / "walk.pdf"
    path.write_bytes(made.pdf)
    rows = subprocess.run(["pdffonts", str(path)], capture_output=True, text=True,
                          check=True).stdout.splitlines()[2:]
    assert rows
    for row in rows:
        assert "CID TrueType" in row and " yes yes yes " in row, row  # Type 42, embedded
    if made.lang == "zh":
        assert any("EncoderLensCJK" in row for row in rows)


@reads_back
def test_weights_with_a_head_add_their_prediction(made, tmp_path):
    texts = pages_text(made.pdf, tmp_path)
    last = " ".join(texts[-1].split())
    params = made.asked.ctx.trace.params
    if params.head is None:
        assert made.asked.t("prediction_title") not in last
        return
    assert made.asked.t("prediction_title") in last
    classes, probs = top_classes(predict(made.asked.ctx.trace, params), 1)
    names = made.asked.labels or tuple(f"class {c}" for c in range(params.head.n_classes))
    assert f"{names[classes[0]]} {100 * probs[0]:.2f} %" in last


@reads_back
def test_one_page_of_each_renders(made, tmp_path):
    """pdftoppm draws the scores' page: A4, with ink on it (the page itself is looked at)."""
    path = tmp_path / "walk.pdf"
    path.write_bytes(made.pdf)
    subprocess.run(["pdftoppm", "-r", "40", "-png", "-f", "7", "-l", "7", str(path),
                    str(tmp_path / "p")], check=True)
    [png] = list(tmp_path.glob("p*.png"))
    img = np.asarray(Image.open(png).convert("L"), dtype=np.float64)
    assert img.shape[0] / img.shape[1] == pytest.approx(297 / 210, rel=0.02)
    assert (img < 128).mean() > 0.01  # text and pictures, not a blank page


# --- the parts, without a PDF -----------------------------------------------------------------

def test_a_lessons_answers_go_with_their_step():
    row = ("the shape of scores", "196 × 196", "196 × 196", "right")
    sheets = {s.step: s for s in sheets_for(default_handout("en").ctx,
                                            answers={"scores": (row,)})}
    assert sheets["scores"].answers == (row,)
    assert all(not s.answers for k, s in sheets.items() if k != "scores")


@reads_back
def test_a_lessons_answers_are_printed(tmp_path):
    row = ("the shape of scores", "196 × 190", "196 × 196", "not right")
    asked = default_handout("en", answers={"scores": (row,)})
    pdf, _ = build(asked)
    pages = step_pages(asked, pages_text(pdf, tmp_path))
    text = " ".join(pages["scores"].split())
    assert "Your predictions" in text and "the shape of scores" in text
    assert "yours 196 × 190 · right 196 × 196 · not right" in text


@reads_back
def test_a_character_no_pdf_font_has_is_printed_as_a_question_mark(tmp_path):
    # 猫 and 咪 are in no shipped font (the subset holds the texts' characters), 霍 is
    title = TitlePage(title="Walk 霍", image=np.zeros((8, 8, 3), np.uint8),
                      image_name="猫咪 cat.jpg", lines=("label 咪 · 1.0",),
                      footer="Encoder Lens · 猫.jpg")
    glyphs, log = Glyphs(), logging.getLogger("matplotlib")
    log.addHandler(glyphs)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            pdf = handout_pdf(title, [], str)
    finally:
        log.removeHandler(glyphs)
    assert glyphs.missing == [] and not [w for w in caught if "Glyph" in str(w.message)]
    text = " ".join(pages_text(pdf, tmp_path)[0].split())
    assert "Walk 霍" in text and "?? cat.jpg" in text and "label ? · 1.0" in text
    assert "Encoder Lens · ?.jpg · 1" in text


def test_an_image_named_in_a_script_the_pdf_lacks_is_your_upload():
    t = Texts("zh", "handout")
    assert image_name(SimpleNamespace(image_name="猫咪.png"), t) == t("name_upload")
    assert image_name(SimpleNamespace(image_name="cat 霍珀.png"), t) == "cat 霍珀.png"


def test_the_note_is_printed_as_written_with_its_math_as_text():
    assert plain_math(r"\frac{d_{model}}{2}-1") == "d_model/2-1"
    assert plain_math(r"Scores = (Q · K^T) / \sqrt{d_{model}}") == "Scores = (Q · K^T) / √d_model"
    assert (plain_math(r"\hat{x_i} = \frac{(x_i - μ)}{\sqrt(σ² + ε)}")
            == "x\u0302_i = (x_i - μ)/√(σ² + ε)")
    lines = note_plain(PAGES["scores"].note)
    assert lines and not any("\\(" in line or "$" in line for line in lines)
    assert any("√d_model" in line for line in lines)


def test_lines_break_at_spaces_or_between_chinese_characters_and_fit_the_width():
    assert tokens("a bc 中文d") == ["a ", "bc ", "中", "文", "d"]
    flow = Flow.__new__(Flow)
    from matplotlib.backends.backend_agg import RendererAgg
    flow.measure = RendererAgg(10, 10, 72)
    text = "对每一个位置独立进行的。例如，对于序列中第 pos 个位置（pos = 0, 1, ..., 195）" * 3
    lines = flow.wrap(text, 10, 3.0)
    assert len(lines) > 2 and "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert all(flow.width_pt(line, 10) <= 3.0 * 72 for line in lines)


def test_the_handouts_cost_counts_its_trace_and_grows_with_the_settings():
    small = Settings().normalised()[0].to_config()
    heavy = replace(small, patch_size=7, d_model=1024, d_ff=4096, n_layers=12)
    from encoder_core import trace_bytes
    assert handout_cost(small).bytes > trace_bytes(small)
    assert handout_cost(heavy).bytes > handout_cost(small).bytes > 0


def test_a_png_is_named_by_its_page_what_it_shows_and_the_selectors_ascii_only():
    ctx = SimpleNamespace(id="multihead", chosen=(("layer", 1), ("head", 3), ("query", 105)),
                          cfg=SimpleNamespace(d_model=512))
    assert png_name(ctx, "grid") == "multihead_grid_layer1_head3_query105_d512.png"
    ctx = SimpleNamespace(id="positional", chosen=(), cfg=SimpleNamespace(d_model=512))
    assert png_name(ctx, "sines") == "positional_sines_d512.png"
    assert png_name(ctx, "x̃ = LN₁(x)").isascii()
