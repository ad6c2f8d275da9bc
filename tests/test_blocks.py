"""The worked-arithmetic blocks (`lens.blocks`, `lens.blocks_rows`) on a small real trace: the
numbers each block shows are the float64 recomputation and agree with the trace, and every
block renders in English and 中文 without a missing text."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.views.analysis import head_contributions
from encoder_core.views.explain import (
    dot_terms,
    hidden_unit_terms,
    largest_terms,
    layer_norm_sums,
    layer_norm_terms,
    softmax_terms,
    summarise_terms,
)
from lens import blocks, blocks_rows
from lens.i18n import Texts, read_language
from lens.latex import num
from lens.steps import ALL_PAGES

ROOT = Path(__file__).resolve().parents[1]
LANGS = ["en", "zh"]
CJK = re.compile(r"[\u4e00-\u9fff]")
CFG = EncoderConfig(image_size=32, patch_size=8, d_model=32, n_heads=2, n_layers=1, d_ff=128)
I, J = 5, 3  # the query row and the column / key of the worked entries


@pytest.fixture(scope="module")
def trace(make_image):
    return encode(make_image(32), CFG, init_params(CFG))


def _script(module: str, block: str, args: tuple, kwargs: dict) -> None:
    import importlib

    getattr(importlib.import_module(module), block)(*args, **kwargs)


def show(block: str, lang: str, *args, **kwargs) -> AppTest:
    """Run lens.blocks.<block> (or blocks_rows.<block>) alone in a page, in `lang`."""
    module = (blocks if hasattr(blocks, block) else blocks_rows).__name__
    at = AppTest.from_function(_script, default_timeout=60,
                               args=(module, block, (SimpleNamespace(lang=lang), *args), kwargs))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in [*at.markdown, *at.caption, *at.code, *at.success]]
    assert texts
    if lang == "zh":  # a block's own words are translated
        assert any(CJK.search(t) for t in texts), texts
    else:
        assert not any(CJK.search(t) for t in texts), texts
    return at


def assert_folded(at: AppTest, lang: str, kind: str) -> None:
    """The block's long arithmetic (its `kind` elements: latex or code) sits in one folded
    expander labelled "Show the arithmetic", and its check against the trace stays outside."""
    assert len(at.expander) == 1
    box = at.expander[0]
    assert box.label == Texts(lang, blocks.OWNER)("show_arithmetic")
    assert not box.proto.expanded  # folded until the learner opens it
    assert len(box.get(kind)) >= 1
    outside = [m.value for m in at.markdown if m not in box.markdown]
    assert outside or at.success, "the key number is not in view"


def stored_in(text: str, field: str) -> float:
    """The number after `field` … ** in a check line."""
    return float(re.search(re.escape(f"`{field}`") + r"[^*]*\*\*([-+0-9.e]+)\*\*", text)[1])


@pytest.mark.parametrize("lang", LANGS)
def test_dot_product_writes_the_float64_sum_and_the_stored_value(trace, lang):
    terms = dot_terms(trace.patches[I], trace.params.W_E[:, J])  # 64 products
    stored = trace.embedded[I, J]
    at = show("dot_product", lang, r"\text{embedded}[5, 3]", terms, stored, "embedded[5, 3]")
    assert_folded(at, lang, "latex")
    latex = at.latex[0].value
    for k in (0, 1, 2, 3, 63):
        assert rf"({num(terms.a[k])})\,({num(terms.b[k])})" in latex
    assert latex.rstrip("$\n").endswith(rf"&= {num(terms.total)}\end{{aligned}}")
    assert "59" in at.caption[0].value and "64" in at.caption[0].value  # 64 − 5 not written
    check = at.markdown[0].value
    assert f"**{terms.total:.7g}**" in check.split("`")[0]
    assert stored_in(check, "embedded[5, 3]") == float(f"{stored:.7g}")
    assert stored_in(check, "embedded[5, 3]") == pytest.approx(terms.total, abs=2e-6)


@pytest.mark.parametrize("lang", LANGS)
def test_stored_check_shows_the_recomputation_and_the_stored_value_apart(lang):
    at = show("stored_check", lang, 0.123456789, np.float32(0.5), "pe[1, 2]")
    check = at.markdown[0].value
    assert "**0.1234568**" in check
    assert stored_in(check, "pe[1, 2]") == 0.5


@pytest.mark.parametrize("lang", LANGS)
def test_largest_products_lists_the_largest_terms_with_extra_columns(trace, lang):
    terms = dot_terms(trace.patches[I], trace.params.W_E[:, J])
    at = show("largest_products", lang, terms, "patches[i, k]", "W_E[k, j]",
              extra={"pixel": str})
    table = at.table[0].value
    top = largest_terms(terms.products, 4)
    assert list(np.abs(table.iloc[:, 4])) == sorted(np.abs(table.iloc[:, 4]), reverse=True)
    assert list(table.columns[:4]) == ["k", "pixel", "patches[i, k]", "W_E[k, j]"]
    assert list(table["k"]) == list(top)
    assert list(table["pixel"]) == [str(k) for k in top]
    np.testing.assert_allclose(table.iloc[:, 4], terms.products[top])
    np.testing.assert_allclose(table["patches[i, k]"] * table["W_E[k, j]"], table.iloc[:, 4])


@pytest.mark.parametrize("lang", LANGS)
def test_dot_listing_shows_first_and_largest_terms_the_rest_and_the_scaled_score(trace, lang):
    layer = trace.layers[0]
    s = CFG.score_scale
    terms = dot_terms(layer.q[1, I], layer.k[1, J], divisor=s)  # d_k = 16 terms
    stored = layer.scores[1, I, J]
    at = show("dot_listing", lang, "q_5 · k_3 = Σ_k q_5[k] · k_3[k]", terms, stored,
              "scores[5, 3]", size="d_k", divisor=f"√d_k (√{CFG.d_head})")
    assert_folded(at, lang, "code")
    assert stored_in(at.markdown[0].value, "scores[5, 3]") == float(f"{stored:.7g}")
    code = at.code[0].value
    summary = summarise_terms(terms.products)
    written = [float(x) for x in re.findall(r"^\s+k =\s*\d+:.* = ([-+]\d+\.\d{4})$", code, re.M)]
    assert len(written) == len(summary.shown)
    np.testing.assert_allclose(written, terms.products[summary.shown], atol=5e-5)
    rest = float(re.search(rf"{summary.rest_count} \D+ ([-+]\d+\.\d{{4}})$", code, re.M)[1])
    assert rest == pytest.approx(summary.rest_sum, abs=5e-5)
    assert f"   = {terms.total:+.6g}\n" in code
    assert f"scores[5, 3] = {terms.total:+.6g} / {s:.6g} = {terms.result:+.6g}" in code
    held = float(code.splitlines()[-1].split("=")[-1])
    assert held == float(f"{float(stored):+.6g}")
    assert held == pytest.approx(terms.result, abs=1e-5)
    assert "d_k = 16" in at.caption[0].value


@pytest.mark.parametrize("lang", LANGS)
def test_sum_listing_of_the_heads_adds_up_to_attn_out(trace, lang):
    layer = trace.layers[0]
    contrib = head_contributions(layer.heads[:, I:I + 1, :], trace.params.layers[0].W_O)
    values = contrib[:, 0, J]  # [h]
    at = show("sum_listing", lang, values, ["head 1", "head 2"], layer.attn_out[I, J],
              "attn_out[5, 3]", first=16, unit="heads")
    assert_folded(at, lang, "code")
    code = at.code[0].value
    shown = [float(x) for x in re.findall(r"head \d:\s+([-+]\d+\.\d{4})$", code, re.M)]
    np.testing.assert_allclose(shown, values, atol=5e-5)
    total = float(re.search(r"Σ = (\S+)$", code, re.M)[1])
    assert total == pytest.approx(float(np.sum(values, dtype=np.float64)), rel=1e-5)
    assert float(code.splitlines()[-1].split("=")[-1]) == pytest.approx(total, abs=1e-5)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("relu", ["zero", "pass"])
def test_hidden_unit_writes_sum_bias_relu_and_the_stored_activation(trace, lang, relu):
    lt, lp = trace.layers[0], trace.params.layers[0]
    units = [hidden_unit_terms(lt.ln_1.out[I], lp.W_1, lp.b_1, j) for j in range(CFG.d_ff)]
    j = next(j for j, u in enumerate(units) if (u.pre <= 0) == (relu == "zero"))
    unit, field = units[j], f"layers[0].ffn_hidden[5, {j}]"
    at = show("hidden_unit", lang, unit, lt.ffn_hidden[I, j], I, j, field)
    assert_folded(at, lang, "latex")
    assert at.latex[0] not in at.expander[0].latex  # the formula stays in view
    worked = at.latex[1].value
    assert rf"= \max(0,\; {num(unit.pre)}) = {num(unit.hidden)}" in worked
    for k in (0, 1, 2, 3, 31):
        assert rf"({num(unit.dot.a[k])})\,({num(unit.dot.b[k])})" in worked
    top = largest_terms(unit.dot.products)
    assert all(f"k = {k}: " in at.caption[1].value for k in top)
    assert at.markdown[0].value == Texts(lang, blocks.OWNER)(f"relu_{relu}")
    check = at.markdown[1].value
    assert f"**{unit.hidden:.7g}**" in check.split("`")[0]  # the recomputation, after the ReLU
    assert stored_in(check, field) == pytest.approx(unit.hidden, abs=2e-6)


@pytest.mark.parametrize("lang", LANGS)
def test_softmax_row_writes_max_exponentials_sum_and_matches_the_trace(trace, lang):
    layer = trace.layers[0]
    terms = softmax_terms(layer.scores[0, I])  # N = 16
    at = show("softmax_row", lang, terms, layer.attn[0, I], I, J)
    assert_folded(at, lang, "code")
    assert stored_in(at.markdown[0].value, f"attn[5, {J}]") == float(f"{layer.attn[0, I, J]:.7g}")
    code = at.code[0].value
    arg = int(np.argmax(terms.x))
    assert f"m = s[5, {arg}] = {terms.x[arg]:+.4f}" in code
    assert f"     = {terms.total:.6g}\n" in code
    for k in {arg, J, I}:
        assert f"{terms.exp[k]:.6g} / {terms.total:.6g} = {terms.p[k]:.6g}" in code
        held = float(re.search(rf"attn\[5, {k}\] = (\S+)$", code, re.M)[1])
        assert held == pytest.approx(terms.p[k], abs=1e-6)
    assert "Σ_j attn[5, j] = 1.000000" in code


@pytest.mark.parametrize("lang", LANGS)
def test_layer_norm_row_matches_the_trace_and_checks_the_normed_row(trace, lang):
    lt, lp = trace.layers[0], trace.params.layers[0]
    terms = layer_norm_terms(lt.resid_1[I], lp.gamma_1, lp.beta_1, CFG.ln_eps)
    sums = layer_norm_sums(terms)
    k = 7
    at = show("layer_norm_row", lang, terms, lp.gamma_1, lp.beta_1, CFG.ln_eps, k, lt.ln_1, I,
              "layers[0].ln_1")
    assert_folded(at, lang, "latex")
    mu, var, std, normed, out = (m.value for m in at.latex)
    assert mu.rstrip("$\n").endswith(f"= {num(terms.mean)} \\end{{aligned}}")
    assert var.rstrip("$\n").endswith(f"= {num(terms.var)} \\end{{aligned}}")
    assert std.rstrip("$\n").endswith(f"= {num(terms.std)}")
    assert normed.rstrip("$\n").endswith(f"= {num(terms.normed[k])}")
    assert out.rstrip("$\n").endswith(f"= {num(terms.out[k])}")
    table = at.dataframe[0].value
    written = table.iloc[:, 1].astype(float).to_numpy()
    held = table.iloc[:, 2].astype(float).to_numpy()
    np.testing.assert_allclose(written, [terms.mean, terms.var, terms.normed[k], terms.out[k]],
                               rtol=1e-6)
    np.testing.assert_allclose(held, written, rtol=1e-4, atol=1e-5)
    assert list(table.iloc[:, 3]) == ["layers[0].ln_1.mean[5]", "layers[0].ln_1.var[5]",
                                      "layers[0].ln_1.normed[5, 7]", "layers[0].ln_1.out[5, 7]"]
    assert f"{sums.normed_var:.6f}" in at.success[0].value


def test_every_block_text_has_english_and_chinese_and_is_used():
    source = "".join((ROOT / "lens" / f).read_text(encoding="utf-8")
                     for f in ("blocks.py", "blocks_rows.py"))
    en, zh = (read_language(lang)[blocks.OWNER] for lang in ("en", "zh"))
    assert list(en) == list(zh)
    for key in en:
        assert en[key].strip() and zh[key].strip(), key
        assert set(re.findall(r"{(\w+)", en[key])) == set(re.findall(r"{(\w+)", zh[key])), key
        used = f'"{key}"' in source or f"'{key}'" in source or key.startswith("more_")
        assert used, f"{key} is never shown"
        assert key not in read_language("en")["common"], f"{key} is also a common text"


def test_no_page_keeps_its_own_copy_of_a_block_text():
    texts = read_language("en")
    for p in ALL_PAGES:
        page_keys = set(texts[p.id])
        assert not page_keys & set(texts[blocks.OWNER]), (p.id, page_keys & set(texts["blocks"]))
        assert not page_keys & {"check", "dots", "largest", "trace_value", "col_ab"}, p.id
