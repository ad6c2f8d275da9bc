"""中文 in the overview's pipeline table: `lens.i18n.worded` words each step's formula and shape
(`encoder_core.views.analysis.pipeline_steps`: symbols, and words by id) from the text files,
with no English prose left, every number kept in its place, identifiers as they are; the page
shows it (AppTest)."""

from __future__ import annotations

import re

import pytest

from encoder_core import EncoderConfig
from encoder_core.views.analysis import Word, pipeline_steps
from lens.i18n import read_language, worded
from tests.support.apptest_helpers import SMALL as SMALL_LINK
from tests.support.apptest_helpers import assert_clean, new_app
from tests.support.configs import SMALL, VIT

# The identifiers of 3+ letters that stay as they are in 中文: functions and the names of the
# trace's matrices and tokens. Nothing else of 3+ Latin letters may remain.
IDENTIFIERS = frozenset({
    "softmax", "max", "LayerNorm", "GELU", "GELU_tanh", "FFN",  # functions
    "attn", "attn_h", "attn_out", "head_h", "head_1", "pos_embed", "d_model",  # matrices
    "CLS", "DIST",  # a ViT's [CLS] and [DIST] tokens
})
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
NUMBER = re.compile(r"\d+(?:\.\d+)?")

CONFIGS = {
    "note": {},
    "small_relu": SMALL,
    "vit_learned_all": {**SMALL, **VIT},
    "vit_learned_gelu_tanh_no_pe": {**SMALL, **VIT, "activation": "gelu_tanh", "use_pe": False},
    "vit_sinusoidal_no_pe": {**SMALL, **VIT, "position": "sinusoidal", "use_pe": False},
    "vit_sinusoidal_cls_only": {**SMALL, **VIT, "position": "sinusoidal", "dist_token": False,
                                "n_registers": 0, "qkv_bias": False, "layer_scale": False},
    "learned_no_prefix": {**SMALL, "position": "learned"},
    "learned_registers_only_off": {**SMALL, "position": "learned", "n_registers": 4,
                                   "use_pe": False},
    "no_pe": {"use_pe": False},
    "no_ffn_one_layer": {**SMALL, "use_ffn": False, "n_layers": 1, "scale": "d_model"},
    "pre_norm_one_layer_no_scale": {**SMALL, "norm_first": True, "n_layers": 1, "scale": "none",
                                    "activation": "gelu", "final_norm": True},
}


def english_words(text: str) -> list[str]:
    """The words of 3+ Latin letters in `text` that are not one of IDENTIFIERS."""
    return [w for w in WORD.findall(text)
            if sum(c.isalpha() for c in w) >= 3 and w not in IDENTIFIERS]


def step_texts(cfg: EncoderConfig) -> list:
    return [t for s in pipeline_steps(cfg) for t in (s.formula, s.shape)]


def english_of(text) -> str:
    """The English the command line prints for a formula or shape (its own formatter)."""
    from encoder_core.__main__ import english

    return english(text)


@pytest.mark.parametrize("changes", CONFIGS.values(), ids=CONFIGS.keys())
def test_every_formula_and_shape_reads_in_chinese_with_its_numbers(changes):
    for text in step_texts(EncoderConfig(**changes)):
        en, zh = worded(text, "en"), worded(text, "zh")
        assert not english_words(zh), (en, zh, english_words(zh))
        assert NUMBER.findall(zh) == NUMBER.findall(en), (en, zh)
        assert en == english_of(text)  # the app's English is the command line's


def test_the_configs_reach_every_word_of_the_core():
    """The configs above are the ones that matter: together their steps use every word the
    text files have for the core (a word of a branch no config reaches would go unchecked)."""
    used = {part.id for c in CONFIGS.values() for t in step_texts(EncoderConfig(**c))
            for part in t if isinstance(part, Word)}
    words = {k.removeprefix("word_") for k in read_language("en")["common"]
             if k.startswith("word_")}
    # the divisors: d_model and none are reached by the configs, d_k by the default
    assert used == words, (words - used, used - words)


def test_the_check_catches_a_word_left_in_english():
    zh = worded(("attn = softmax(", Word("tokens"), ") row by row"), "zh")
    assert english_words(zh) == ["row", "row"]


def test_chinese_keeps_each_number_where_it_was():
    cfg = EncoderConfig(**{**SMALL, **VIT})
    by = {s.id: s for s in pipeline_steps(cfg)}
    assert worded(by["scores"].shape, "zh") == "(20 × 8) · (8 × 20) = 20 × 20, × 4 个头"
    assert worded(by["output"].formula, "zh") == "堆叠 3 层；CLS 行（输出[0]）代表整幅图像"
    assert worded(by["output"].shape, "zh") == "20 × 32（CLS 行：1 × 32）"
    assert worded(by["add_1"].formula, "zh") == "x ← x + ls_1 ⊙ attn_out（x 未归一化）"
    # a full-width bracket has its own space: none doubled before the "="
    cls_only = EncoderConfig(**{**SMALL, **VIT, "position": "sinusoidal", "dist_token": False,
                                "n_registers": 0})
    positional = {s.id: s for s in pipeline_steps(cls_only)}["positional"]
    assert worded(positional.shape, "zh") == "17 × 32 + PE 16 × 32（只加在图像块的行上）= 17 × 32"
    assert worded(positional.shape, "en") == (
        "17 × 32 + PE 16 × 32 on the patch rows = 17 × 32")


# the link's small model (apptest_helpers.SMALL) as the app builds it: d_ff = 4 · d_model
LINK_CFG = EncoderConfig(image_size=64, patch_size=16, d_model=32, n_heads=2, n_layers=2,
                         d_ff=128)


def pipeline_table(lang: str, **query: str):
    """The overview's pipeline table, opened with a link carrying `query`, in `lang`."""
    at = new_app(**query, lang=lang)
    at.run()
    assert_clean(at)
    return at.table[0].value


def assert_chinese(table, steps) -> None:
    assert list(table.columns) == ["步骤", "公式", "形状", "参数量"]
    for column, field in (("公式", "formula"), ("形状", "shape")):
        for text in table[column]:
            assert not english_words(text), (column, text, english_words(text))
        assert list(table[column]) == [worded(getattr(s, field), "zh") for s in steps]
    per_layer = [f"{s.n_params:,}（每层）" for s in steps if s.per_layer and s.n_params]
    assert per_layer and set(per_layer) <= set(table["参数量"])  # full-width brackets in 中文


def test_the_overview_table_speaks_chinese():
    table = pipeline_table("zh", **SMALL_LINK, use_pe="0")
    assert_chinese(table, pipeline_steps(LINK_CFG.replace(use_pe=False)))
    assert "x0 = X（不加位置编码）" in list(table["公式"])
    assert "(16 × 16) · (16 × 16) = 16 × 16, × 2 个头" in list(table["形状"])  # 16 patches


@pytest.mark.parametrize("use_pe", ["1", "0"])
def test_a_vits_overview_table_speaks_chinese(with_checkpoint, use_pe):
    from encoder_core import load_checkpoint

    cfg = load_checkpoint(with_checkpoint)[0].replace(use_pe=use_pe == "1")
    table = pipeline_table("zh", weights="vit_tiny_test", use_pe=use_pe)
    assert_chinese(table, pipeline_steps(cfg))
    assert table["公式"].iloc[-1].endswith("；CLS 行（输出[0]）代表整幅图像")


def test_the_overview_table_in_english_is_the_command_lines_text():
    table = pipeline_table("en", **SMALL_LINK)
    steps = pipeline_steps(LINK_CFG)
    assert list(table["formula"]) == [english_of(s.formula) for s in steps]
    assert list(table["shapes"]) == [english_of(s.shape) for s in steps]
    assert list(table["parameters"]) == [
        f"{s.n_params:,}" + (" (per layer)" if s.per_layer and s.n_params else "") for s in steps]
