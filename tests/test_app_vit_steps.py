"""AppTest: pages 1–4, 8 and 9 walk a real-shaped ViT honestly (issue 12 item 3).

With the conftest's 197-token timm model (224 px, P 16, CLS, d 128, 2 layers, pre-norm, learned
positions, GELU, biases, pixel statistics 0.5 / 0.5, a final LayerNorm) each page shows the
ViT's own steps, in its order, with numbers that match an independent `encode` of the same
image; the note's encoder shows none of them."""

from __future__ import annotations

import re

import numpy as np
import pytest

from encoder_core import encode, load_checkpoint
from encoder_core.__main__ import english
from encoder_core.views.analysis import cosine_similarity, pipeline_steps
from lens import images
from tests.support.apptest_helpers import assert_clean, new_app, page_path

QUERY = 30  # patch 30: row 31 of the ViT's sequence, after CLS
ROW = QUERY + 1
PATHS = {"overview": page_path("overview"), "patches": page_path("patches"),
         "embedding": page_path("embedding"), "positional": page_path("positional"),
         "addnorm": page_path("addnorm"), "ffn": page_path("ffn")}



@pytest.fixture(scope="module")
def vit_trace(vit_checkpoint):
    """The trace the app should show: the built-in photo through the checkpoint, computed
    here without the app."""
    cfg, params, _ = load_checkpoint(vit_checkpoint)
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return encode(image, cfg, params)


def open_page(page: str, **query: str):
    at = new_app(**query)
    at.run()
    at.switch_page(PATHS[page]).run()
    assert_clean(at)
    return at


def vit_page(page: str, **query: str):
    return open_page(page, weights="vit_tiny_test", query=str(QUERY), **query)


def texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption]
                     + [s.value for s in at.subheader])


def latex(at) -> str:
    return "\n".join(e.value for e in at.latex)


def stored_checks(at) -> dict[str, tuple[float, float]]:
    """{trace field: (recomputed, stored)} of every float64-against-the-trace check shown."""
    pattern = re.compile(r"float64: \*\*(\S+)\*\*\. .*? in `([^`]+)`: \*\*(\S+)\*\*")
    found = {}
    for m in at.markdown:
        hit = pattern.search(m.value)
        if hit:
            found[hit.group(2)] = (float(hit.group(1)), float(hit.group(3)))
    return found


def comparison(at, field: str) -> tuple[float, float]:
    """(written out, in the trace) of a layer-norm row's table, for `field`."""
    for frame in at.dataframe:
        df = frame.value
        if "trace field" in df.columns and field in set(df["trace field"]):
            row = df[df["trace field"] == field].iloc[0]
            return float(row["written out"]), float(row["in the trace"])
    raise AssertionError(f"no row for {field}")


@pytest.mark.parametrize("page", PATHS)
def test_each_page_walks_the_vit_and_shows_pictures(with_checkpoint, page):
    at = vit_page(page)
    assert at.session_state["weights"] == "vit_tiny_test"
    assert at.session_state["query"] == QUERY
    assert len(at.image) >= 1


@pytest.mark.usefixtures("with_checkpoint")
def test_the_overview_lists_the_vits_steps_in_the_order_it_runs_them(vit_trace):
    at = vit_page("overview")
    steps = list(at.table[0].value["step"])
    assert steps == ["pixel normalisation", "patches", "input embedding", "[CLS] prepended",
                     "positional encoding", "LayerNorm 1 (before attention)", "Q, K, V",
                     "scores", "softmax", "heads", "concat · W_O", "residual add 1",
                     "LayerNorm 2 (before the FFN)", "feed-forward", "residual add 2",
                     "final LayerNorm", "encoder output"]
    shapes = list(at.table[0].value["shapes"])
    assert [english(s.shape) for s in pipeline_steps(vit_trace.config)] == shapes
    assert "197 × 128" in shapes[3]
    tex = latex(at)
    assert r"\mathrm{LN}_1(x)" in tex and r"\mathrm{LN}_2(x)" in tex
    assert r"\text{output}[\text{CLS}]\;[1 \times 128]" in tex
    assert r"x_{\text{CLS}}" in tex and "b_E" in tex and r"\text{output}[\text{CLS}]" in tex
    assert r"\mathrm{LayerNorm}(x + \mathrm{MultiHead}(x))" not in tex  # no post-norm
    text = texts(at)
    assert "Pre-norm" in text and "mean = (0.5, 0.5, 0.5)" in text and "GELU" in text
    assert "not in the checkpoint: they are the rule for its family (0.5/0.5" in text
    assert "No [CLS] token" not in text


def test_the_overview_of_the_notes_encoder_keeps_its_post_norm_picture():
    at = open_page("overview")
    steps = list(at.table[0].value["step"])
    assert "[CLS] prepended" not in steps and "Add & Norm 1" in steps
    tex = latex(at)
    assert r"\mathrm{LayerNorm}(x + \mathrm{MultiHead}(x))" in tex
    assert r"\mathrm{LN}_1" not in tex
    assert "This Vision Transformer" not in texts(at) and "No [CLS] token" in texts(at)


@pytest.mark.usefixtures("with_checkpoint")
def test_patches_show_the_pixel_normalisation_with_the_models_statistics(vit_trace):
    at = vit_page("patches", patch_pick="0")
    at.number_input(key="patch_pick").set_value(QUERY).run()
    assert_clean(at)
    table = next(f.value for f in at.dataframe if "trace.pixels (float32)" in f.value.columns)
    r0, c0 = divmod(QUERY, 14)
    r0, c0 = r0 * 16, c0 * 16  # the patch's first pixel
    assert list(table["mean"]) == ["0.5"] * 3 and list(table["std"]) == ["0.5"] * 3
    x = table["image x"].astype(float).to_numpy()
    np.testing.assert_allclose(x, vit_trace.image[r0, c0], atol=1e-6)
    written = table["(x − mean) / std, float64"].astype(float).to_numpy()
    np.testing.assert_allclose(written, (x - 0.5) / 0.5, atol=2e-6)
    stored = table["trace.pixels (float32)"].astype(float).to_numpy()
    np.testing.assert_allclose(stored, vit_trace.pixels[r0, c0], atol=1e-6)
    assert r"\text{pixels}_c" in latex(at)
    assert any("does not say which mean and std" in c.value for c in at.caption)


def test_the_notes_patches_have_no_normalisation():
    at = open_page("patches")
    assert "normalised" not in texts(at) and r"\text{pixels}_c" not in latex(at)


@pytest.mark.usefixtures("with_checkpoint")
def test_embedding_adds_b_E_and_shows_the_cls_row_before_the_patches(vit_trace):
    at = vit_page("embedding")
    j = 0
    tex = latex(at)
    assert rf"+ b_E[{j}]" in tex and r"{b_E}" in tex and r"\underset" in tex
    checks = stored_checks(at)
    mine, stored = checks[f"embedded[{QUERY}, {j}]"]
    assert stored == pytest.approx(float(vit_trace.embedded[QUERY, j]), rel=1e-6)
    assert mine == pytest.approx(stored, abs=1e-5)
    b = float(vit_trace.params.b_E[j])
    assert abs(b) > 1e-3  # the bias matters: without it the sum would miss by b
    sub = [s.value for s in at.subheader]
    assert "The [CLS] token, put before the patches" in sub
    assert "**The bias b_E**" in [m.value for m in at.markdown]
    assert any(f"is row {ROW}" in c.value for c in at.caption)


def test_the_notes_embedding_has_no_bias_and_no_cls():
    at = open_page("embedding")
    assert "b_E" not in latex(at)
    assert not any("[CLS]" in s.value for s in at.subheader)


@pytest.mark.usefixtures("with_checkpoint")
def test_positional_shows_the_learned_table_and_its_similarity_on_the_grid(vit_trace):
    at = vit_page("positional")
    text = texts(at)
    assert "learned" in text and "not computed from a formula" in text
    assert "The CLS row of pos_embed has no place on the grid" in text
    tex = latex(at)
    assert r"\sin" not in tex and "10000" not in tex  # no sinusoid for a learned table
    sim = cosine_similarity(vit_trace.params.pos_embed[1:])  # the patches' rows
    fact = next(m.value for m in at.markdown if m.value.startswith(f"Query patch {QUERY}:"))
    assert f"cos = {sim[QUERY, QUERY + 1]:.3f}" in fact
    assert f"cos = {sim[QUERY, QUERY + 14]:.3f}" in fact
    assert len(at.image) >= 5  # the query picker, pos_embed, the mosaic, its tile, the sum


def test_the_notes_positional_page_keeps_its_sines_and_cosines():
    at = open_page("positional")
    tex = latex(at)
    assert r"\sin" in tex and "10000" in tex
    assert "pos_embed" not in texts(at)


@pytest.mark.usefixtures("with_checkpoint")
def test_addnorm_walks_pre_norm_ln_first_then_add_then_the_final_norm(vit_trace):
    at = vit_page("addnorm")
    sub = [s.value for s in at.subheader]
    order = [next(i for i, s in enumerate(sub) if s.startswith(p)) for p in
             ("1 · Norm first", "2 · The sub-layer", "3 · Add", "4 · LN_1 of one row",
              "5 · After the last layer")]
    assert order == sorted(order)
    layer = vit_trace.layers[0]
    x = vit_trace.x0[ROW].astype(np.float64)  # LN_1 reads the layer's input: not normalised
    written, stored = comparison(at, f"layers[0].ln_1.mean[{ROW}]")
    assert written == pytest.approx(x.mean(), rel=1e-6)
    assert stored == pytest.approx(float(layer.ln_1.mean[ROW]), rel=1e-6)
    written, stored = comparison(at, f"layers[0].ln_1.var[{ROW}]")
    assert written == pytest.approx(x.var(), rel=1e-5)
    mine, stored = stored_checks(at)[f"layers[0].resid_1[{ROW}, 0]"]
    assert stored == pytest.approx(float(layer.resid_1[ROW, 0]), rel=1e-6, abs=1e-7)
    assert mine == pytest.approx(float(vit_trace.x0[ROW, 0] + layer.attn_out[ROW, 0]),
                                 rel=1e-6, abs=1e-6)
    last = vit_trace.layers[-1].out[ROW].astype(np.float64)
    written, stored = comparison(at, f"final_ln.mean[{ROW}]")
    assert written == pytest.approx(last.mean(), rel=1e-6)
    assert stored == pytest.approx(float(vit_trace.final_ln.mean[ROW]), rel=1e-6)
    assert r"\mathrm{LN}_1(x)" in latex(at)


def test_the_notes_addnorm_stays_post_norm():
    at = open_page("addnorm")
    sub = [s.value for s in at.subheader]
    assert sub[0].startswith("1 · Add") and not any("Norm first" in s for s in sub)
    assert r"\text{ln\_1.out} = \mathrm{LayerNorm}(x + \text{attn\_out})" in latex(at)


@pytest.mark.usefixtures("with_checkpoint")
def test_ffn_shows_gelu_its_biases_and_reads_ln_2_of_the_query_row(vit_trace):
    at = vit_page("ffn")
    tex = latex(at)
    assert r"\mathrm{GELU}(x \cdot W_1 + b_1)" in tex and r"\mathrm{erf}" in tex
    assert r"\mathrm{LN}_2(\text{resid\_1})" in tex and r"\max(0" not in tex
    mine, stored = stored_checks(at)[f"layers[0].ffn_hidden[{ROW}, 0]"]
    assert stored == pytest.approx(float(vit_trace.layers[0].ffn_hidden[ROW, 0]), rel=1e-6)
    assert mine == pytest.approx(stored, abs=1e-5)
    assert "GELU multiplies the sum" in texts(at)
    sub = [s.value for s in at.subheader]
    assert "The GELU" in sub and any("no LayerNorm after it" in s for s in sub)
    assert not any(s == "4 · The second Add & Norm" for s in sub)


def test_the_notes_ffn_keeps_its_relu_and_second_add_and_norm():
    at = open_page("ffn")
    tex = latex(at)
    assert r"\max(0,\; x \cdot W_1 + b_1)" in tex and "GELU" not in tex
    assert "4 · The second Add & Norm" in [s.value for s in at.subheader]


CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("page", PATHS)
def test_the_vit_pages_speak_chinese_too(with_checkpoint, page):
    at = vit_page(page, lang="zh")
    shown = [m.value for m in at.markdown] + [c.value for c in at.caption]
    shown = [t for t in shown if t.strip() and not t.strip().startswith(("$", "<div"))]
    sentence = re.compile(r"[A-Za-z]{4,} [a-z]{3,} [a-z]{3,}")
    latin_only = [t for t in shown if not CJK.search(t) and sentence.search(t)]
    assert shown and not latin_only, latin_only[:3]
    assert all(CJK.search(s.value) for s in at.subheader if sentence.search(s.value))


@pytest.mark.parametrize("page", PATHS)
def test_the_vit_pages_figures_and_formulas_are_in_chinese(with_checkpoint, page, monkeypatch):
    """Every text the ViT's own parts put in a picture or a formula's \\text{…}, in 中文."""
    from lens import widgets
    from tests.test_app_figure_texts import formula_leaks, leaks

    calls = []
    real_render = widgets.render

    def spy(draw, *args, **kwargs):
        calls.append((draw.__name__, args, kwargs))
        return real_render(draw, *args, **kwargs)

    monkeypatch.setattr(widgets, "render", spy)
    at = vit_page(page, lang="zh")
    assert calls and not leaks(calls), leaks(calls)
    assert not formula_leaks(at), formula_leaks(at)


@pytest.fixture
def vit_ls(serve_checkpoints, tmp_path):
    """A DeiT-like model with LayerScale, [DIST] and two registers (no position for them)."""
    from tests.support.vit_dicts import SMALL_VIT, write_timm_checkpoint

    path = write_timm_checkpoint(tmp_path / "vit_ls_reg.safetensors",
                                 **{**SMALL_VIT, "L": 1}, dist=True, reg=2, layer_scale=True)
    serve_checkpoints(path)
    return path


@pytest.mark.parametrize("page", PATHS)
def test_layer_scale_dist_and_registers_walk_every_page(vit_ls, page):
    at = open_page(page, weights="vit_ls_reg", query=str(QUERY))
    cfg, params, _ = load_checkpoint(vit_ls)
    assert (cfg.n_prefix, cfg.layer_scale, cfg.n_pos) == (4, True, 198)
    row = QUERY + 4  # after CLS, DIST, REG1, REG2
    text, tex = texts(at), latex(at)
    if page == "overview":
        assert "LayerScale" in text and "2 register tokens" in text
        assert r"\mathrm{ls}_1 \odot" in tex and "x_{\\text{REG2}}" in tex
    if page == "positional":
        assert "the registers get none" in text and "pos_embed [198 × 128]" in text
    if page == "addnorm":
        _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), 224, 3)
        tr = encode(image, cfg, params)
        mine, stored = stored_checks(at)[f"layers[0].resid_1[{row}, 0]"]
        want = float(tr.x0[row, 0]) + float(params.layers[0].ls_1[0]) * float(
            tr.layers[0].attn_out[row, 0])
        assert mine == pytest.approx(want, rel=1e-6, abs=1e-6)
        assert stored == pytest.approx(float(tr.layers[0].resid_1[row, 0]), rel=1e-6, abs=1e-7)
    if page == "ffn":
        assert r"\mathrm{ls}_2 \odot" in tex
