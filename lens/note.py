"""The study note's original Chinese text, cut into the app's steps.

assets/note_zh/day01-encode.txt is the note exactly as written (from shared/seed). Each step
page shows the lines that belong to it (its entry in lens.steps names them); the overview shows
the whole note.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

# assets/ is package data of encoder_core.assets (pyproject.toml): there installed or not
NOTE_FILE = Path(str(files("encoder_core.assets"))) / "note_zh" / "day01-encode.txt"

Ranges = tuple[tuple[int, int], ...]  # a step's lines of the note: (first, last), 1-based,
#                                      inclusive; each step's are in its entry of lens.steps


def note_lines(ranges: Ranges | None) -> list[str]:
    """The note's lines of a step, verbatim ([] when the note has none, e.g. the FFN)."""
    if not ranges or not NOTE_FILE.exists():
        return []
    lines = NOTE_FILE.read_text(encoding="utf-8").splitlines()
    return [line for a, b in ranges for line in lines[a - 1:b]]


def note_markdown(ranges: Ranges | None) -> str:
    """A step's lines as Markdown: bullets kept with their nesting, \\( \\) math as $ $."""
    out = []
    for line in note_lines(ranges):
        stripped = line.lstrip(" ")
        indent = (len(line) - len(stripped)) // 2
        if stripped.startswith(("•", "- ")):
            text = stripped.lstrip("•-").strip()
            line = "    " * indent + "- " + text
        elif stripped and not out:
            line = f"**{stripped}**"
        elif stripped and indent == 0:
            line = f"\n**{stripped}**\n"
        out.append(line)
    text = "\n".join(out)
    text = re.sub(r"\\\((.+?)\\\)", lambda m: f"${cjk_as_text(m.group(1).strip())}$", text)
    return text.replace("$ $", "$\u2009$")


CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]+")  # CJK letters and full-width punctuation


def cjk_as_text(tex: str) -> str:
    """The note's math with its Chinese in \\text{…}: KaTeX sets CJK in math mode only with a
    warning (\\(W_Q、W_K、W_V\\) → W_Q\\text{、}W_K\\text{、}W_V)."""
    return CJK.sub(lambda m: rf"\text{{{m.group(0)}}}", tex)


PLAIN_MATH = ((r"\oplus", "⊕"), (r"\cdot", "·"), (r"\times", "×"), ("\\sqrt(", "√("),
              (r"\left", ""), (r"\right", ""))


def plain_math(tex: str) -> str:
    """The note's little LaTeX as plain text (for the handout, where a CJK character inside
    mathtext would be a dummy glyph): \\frac{a}{b} → a/b, \\sqrt{x} → √x, d_{model} → d_model,
    \\hat{x_i} → x̂_i."""
    for a, b in PLAIN_MATH:
        tex = tex.replace(a, b)
    for _ in range(3):  # nested braces, innermost first
        tex = re.sub(r"\\frac\{([^{}]*)\}\{([^{}]*)\}", r"\1/\2", tex)
        tex = re.sub(r"\\sqrt\{([^{}]*)\}", r"√\1", tex)
        tex = re.sub(r"\\hat\{(\w)([^{}]*)\}", "\\1\u0302\\2", tex)
        tex = re.sub(r"_\{([^{}]*)\}", r"_\1", tex)
    return tex.replace("\\", "")


def note_plain(ranges: Ranges | None) -> list[str]:
    """A step's lines for print: verbatim, indentation kept, its math as plain text."""
    return [re.sub(r"\\\((.+?)\\\)|\$(.+?)\$",
                   lambda m: plain_math((m.group(1) or m.group(2)).strip()), line)
            for line in note_lines(ranges) if line.strip()]
