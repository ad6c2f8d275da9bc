"""The note's excerpts as the step pages show them: its math carries no Chinese outside
\\text{…} (KaTeX sets CJK in math mode only with a console warning, unicodeTextInMathMode)."""

from __future__ import annotations

import re

import pytest

from lens.note import CJK, cjk_as_text, note_markdown
from lens.steps import PAGES

MATH = re.compile(r"\$(.+?)\$")
TEXT = re.compile(r"\\text\{[^{}]*\}")


def test_chinese_in_math_is_set_as_text_and_nothing_else_changes():
    assert cjk_as_text(r"W_Q、W_K、W_V") == r"W_Q\text{、}W_K\text{、}W_V"
    assert cjk_as_text(r"最终输出 = γ * \hat{x_i} + β") == r"\text{最终输出} = γ * \hat{x_i} + β"
    assert cjk_as_text(r"\frac{QK^T}{\sqrt{d_k}}") == r"\frac{QK^T}{\sqrt{d_k}}"


@pytest.mark.parametrize("page", [p for p in PAGES if PAGES[p].note])
def test_no_chinese_in_the_math_of_a_steps_note(page):
    maths = MATH.findall(note_markdown(PAGES[page].note))
    bare = [m for m in maths if CJK.search(TEXT.sub("", m))]
    assert not bare, f"{page}: Chinese in math mode: {bare}"


def test_the_note_has_math_with_chinese_in_it():
    """The case above is real: some step's note has Chinese inside its math."""
    shown = "".join(note_markdown(PAGES[p].note) for p in PAGES if PAGES[p].note)
    assert r"\text{、}" in shown
