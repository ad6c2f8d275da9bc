"""English / 中文: every label, caption and explanation is looked up by its key, never written in
the code.

The texts are data a translator edits without Python: `lens/texts/<lang>/<owner>.toml`, one
file per page (the owner is the page's id: `multihead.toml`), one for the words every page
shares (`common.toml`), and one per shared component (`blocks.toml`, `meaning.toml`). TOML, read
with the standard library's `tomllib`: a flat table of `key = "text"` pairs, comments allowed,
long texts wrapped with a line-ending backslash — no indentation rules (YAML's), no third-party
parser, and a string is always a string (YAML reads `no`, `on`, `1.0` as other types).

English is the source and the fallback: a language that lacks a key, or a whole file, shows the
English text of that key (`catalogue`). A page reads its own file, then the common one; its
keys may not reuse a common key (`collisions`), so no page can change a word of the sidebar or
the header. Code identifiers and symbols (W_Q, d_model, softmax) stay as they are everywhere.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

from .settings import LANGS

TEXTS = Path(__file__).resolve().parent / "texts"  # <lang>/<owner>.toml
SOURCE = "en"  # the language every text is written in first, and the fallback of the others
COMMON = "common"  # the owner of the words every page shares

# The language switch's own labels: each language named in itself.
LANG_NAMES: dict[str, str] = dict(zip(LANGS, ("English", "中文"), strict=True))

Catalogue = dict[str, dict[str, str]]  # owner -> key -> text


def read_language(lang: str, root: Path = TEXTS) -> Catalogue:
    """The text files of one language as they are, without fallback: owner -> key -> text."""
    folder = root / lang
    if not folder.is_dir():
        return {}
    out: Catalogue = {}
    for path in sorted(folder.glob("*.toml")):
        with path.open("rb") as f:
            table = tomllib.load(f)
        bad = [k for k, v in table.items() if not isinstance(v, str)]
        if bad:
            raise ValueError(f"{path}: {', '.join(bad)} must be strings (a text each)")
        out[path.stem] = table
    return out


@functools.cache
def catalogue(lang: str, root: Path = TEXTS) -> Catalogue:
    """Every text of `lang`, each key that the language lacks filled in from English: owner ->
    key -> text. Read once per process."""
    merged = {owner: dict(table) for owner, table in read_language(SOURCE, root).items()}
    if lang != SOURCE:
        for owner, table in read_language(lang, root).items():
            merged.setdefault(owner, {}).update(table)
    return merged


def collisions(root: Path = TEXTS) -> dict[str, list[str]]:
    """Owner -> its keys that are also common keys (none may be: a page would shadow them)."""
    texts = catalogue(SOURCE, root)
    common = set(texts.get(COMMON, {}))
    return {owner: sorted(set(table) & common) for owner, table in texts.items()
            if owner != COMMON and set(table) & common}


def has_text(key: str, owner: str | None = None, root: Path = TEXTS) -> bool:
    """Whether `key` is one of `owner`'s texts or a common one."""
    texts = catalogue(SOURCE, root)
    return key in texts.get(owner or COMMON, {}) or key in texts.get(COMMON, {})


def translate(key: str, lang: str, owner: str | None = None, root: Path = TEXTS,
              **values: object) -> str:
    """The text for `key` in `lang`, from `owner`'s file first, then the common one, with
    `values` filled into its {placeholders}. Raises KeyError for a key in neither."""
    texts = catalogue(lang if lang in LANGS or root != TEXTS else SOURCE, root)
    text = texts.get(owner or COMMON, {}).get(key)
    if text is None:
        text = texts.get(COMMON, {}).get(key)
    if text is None:
        raise KeyError(f"no text {key!r} in {owner or COMMON}.toml nor in common.toml")
    return text.format(**values) if values else text


def translator(lang: str, owner: str | None = None):
    """`translate` bound to a language and an owner: t(key, **values) -> text."""
    def t(key: str, **values: object) -> str:
        return translate(key, lang, owner, **values)
    return t


import re  # noqa: E402  (FORMULA_ZH goes with item 3 of issue 20)

# The English words of `encoder_core.analysis.pipeline_steps` (its Step.formula and Step.shape),
# as (pattern, 中文) in the order they are applied: whole phrases first, then the single words
# that name a matrix. Numbers are captured (\1), never listed, so every value passes through;
# identifiers and symbols (softmax, LayerNorm, GELU, attn_out, W_Q, PE, pos_embed, CLS, γ, β)
# stay. ASCII mode: a Chinese character next to a word is not a word character for \b.
FORMULA_ZH: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.ASCII), zh) for pattern, zh in (
        (r"; the CLS row output\[(\d+)\] stands for the image",
         r"；CLS 行（输出[\1]）代表整幅图像"),
        (r"\b(\d+) layers stacked", r"堆叠 \1 层"),
        (r"\b(\d+) layer stacked", r"只有 \1 层"),
        (r" after the last layer", "（在最后一层之后）"),
        (r" \(x not normalised\)", "（x 未归一化）"),
        (r" \(PE off\)", "（不加位置编码）"),
        (r" \(positions off\)", "（不加学到的位置）"),
        (r" on the patch rows ?", "（只加在图像块的行上）"),
        (r" \(none on the registers\) ?", "（寄存器词元不加位置）"),
        (r" \(CLS row: ([^()]*)\)", r"（CLS 行：\1）"),
        (r"softmax\(scores\) row by row", "逐行 softmax(分数)"),
        (r"\b(\d+) heads\b", r"\1 个头"),
        (r"\b(\d+) REG\b", r"\1 个寄存器"),
        (r", mean = ", "，均值 = "),
        (r", std = ", "，标准差 = "),
        (r"\bpixels\b", "像素"),
        (r"\bimage\b", "图像"),
        (r"\bmean\b", "均值"),
        (r"\bstd\b", "标准差"),
        (r"\bpatches\b", "图像块"),
        (r"\btokens\b", "词元"),
        (r"\boutput\b", "输出"),
    ))


def formula_in(text: str, lang: str) -> str:
    """A pipeline step's formula or shape text (`encoder_core.analysis.Step`) in `lang`: as it
    is in English; in 中文 with each English phrase of FORMULA_ZH replaced, numbers and
    identifiers kept."""
    if lang != "zh":
        return text
    for pattern, zh in FORMULA_ZH:
        text = pattern.sub(zh, text)
    return text
