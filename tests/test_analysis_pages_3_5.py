"""Tests for what pages 3–5 (embedding, positional, Q/K/V) add to encoder_core."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core.explain import pe_terms
from encoder_core.positional import positional_encoding


@pytest.mark.parametrize("d_model", [8, 32, 512])
def test_pe_terms_value_equals_the_positional_encoding_entry(d_model):
    n_tokens = 49
    pe = positional_encoding(n_tokens, d_model)
    for pos in (0, 1, 7, 48):
        for column in (0, 1, 2, d_model // 2, d_model - 2, d_model - 1):
            terms = pe_terms(pos, column, d_model)
            assert terms.value == pytest.approx(float(pe[pos, column]), abs=1e-6)


def test_pe_terms_pairs_sin_on_even_and_cos_on_odd_columns_with_one_frequency():
    even, odd = pe_terms(5, 6, 64), pe_terms(5, 7, 64)
    assert (even.func, odd.func) == ("sin", "cos")
    assert even.i == odd.i == 3
    assert even.angle == odd.angle
    assert even.exponent == pytest.approx(6 / 64)
    assert even.denominator == pytest.approx(10000 ** (6 / 64))
    assert even.angle == pytest.approx(5 / 10000 ** (6 / 64))
    assert even.value ** 2 + odd.value ** 2 == pytest.approx(1.0)


def test_pe_terms_at_position_zero_is_sin_0_and_cos_0():
    assert pe_terms(0, 0, 16).value == 0.0
    assert pe_terms(0, 1, 16).value == 1.0
    assert np.isclose(pe_terms(0, 15, 16).angle, 0.0)
