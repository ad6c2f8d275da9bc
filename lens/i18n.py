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
from dataclasses import dataclass
from pathlib import Path

from encoder_core.views.analysis import Text, words

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


def translate(key: str, lang: str, owner: str | None = None, /, *, root: Path = TEXTS,
              **values: object) -> str:
    """The text for `key` in `lang`, from `owner`'s file first, then the common one, with
    `values` filled into its {placeholders}. Raises KeyError for a key in neither."""
    texts = catalogue(lang, root)  # a language without a folder: all English
    text = texts.get(owner or COMMON, {}).get(key)
    if text is None:
        text = texts.get(COMMON, {}).get(key)
    if text is None:
        raise KeyError(f"no text {key!r} in {owner or COMMON}.toml nor in common.toml")
    return text.format(**values) if values else text


@dataclass(frozen=True)
class Texts:
    """The texts of one owner (a page's id, a block's name; None: the common ones) in one
    language — the one way the app gets a string: `t = Texts(lang, owner)`, then
    `t("key", **values)`, the owner's text or else the common one (`translate`). It holds no
    page state, so a widget may keep it (a `format_func`) past the run."""

    lang: str
    owner: str | None = None

    def __call__(self, key: str, **values: object) -> str:
        return translate(key, self.lang, self.owner, **values)

    def of(self, owner: str | None) -> Texts:
        """The same language's texts of another owner."""
        return Texts(self.lang, owner)


def worded(text: Text, lang: str) -> str:
    """A formula or shape of the core (`encoder_core.views.analysis.Text`: symbols, and words by id)
    in `lang`: each word is the common text "word_<id>" with the word's values."""
    return words(text, lambda w: translate(f"word_{w.id}", lang, **dict(w.values)))
