"""Tests for what pages 6–7 (scores & softmax, multi-head attention) add to encoder_core
and lens.figures."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.analysis import (
    contribution_norms,
    head_contributions,
    head_sum_gap,
    scaling_demo,
)
from encoder_core.explain import summarise_terms
from lens import figures


@pytest.fixture(scope="module")
def small_trace(make_image):
    cfg = EncoderConfig(image_size=32, patch_size=8, d_model=16, n_heads=4, n_layers=1, d_ff=64)
    return encode(make_image(32), cfg, init_params(cfg))


def test_summarise_terms_shows_first_and_largest_and_accounts_for_the_rest():
    terms = np.array([0.1, -0.2, 0.3, 0.05, 0.0, 5.0, -0.01, -7.0, 0.02, 0.4])
    s = summarise_terms(terms, first=4, largest=2)
    assert list(s.shown) == [0, 1, 2, 3, 5, 7]
    assert s.rest_count == 4
    assert s.rest_sum == pytest.approx(0.0 - 0.01 + 0.02 + 0.4)
    assert s.total == pytest.approx(terms.sum())
    assert terms[s.shown].sum() + s.rest_sum == pytest.approx(s.total)


def test_summarise_terms_of_a_short_sum_shows_every_term_and_leaves_nothing():
    s = summarise_terms(np.array([1.0, 2.0, 3.0]))
    assert list(s.shown) == [0, 1, 2]
    assert s.rest_count == 0
    assert s.rest_sum == pytest.approx(0.0)
    assert s.total == pytest.approx(6.0)


def test_head_contributions_sum_to_attn_out_and_head_sum_gap_is_rounding(small_trace):
    layer, W_O = small_trace.layers[0], small_trace.params.layers[0].W_O
    contrib = head_contributions(layer.heads, W_O)  # [h, N, d]
    np.testing.assert_allclose(contrib.sum(axis=0), layer.attn_out, atol=1e-5)
    gap = head_sum_gap(layer.heads, W_O, layer.attn_out)
    assert 0.0 <= gap < 1e-5


def test_head_sum_gap_sees_a_wrong_attn_out(small_trace):
    layer, W_O = small_trace.layers[0], small_trace.params.layers[0].W_O
    wrong = np.array(layer.attn_out)
    wrong[3, 5] += 0.5
    assert head_sum_gap(layer.heads, W_O, wrong) == pytest.approx(0.5, abs=1e-5)


def test_contribution_norms_are_the_row_norms_of_each_head_contribution(small_trace):
    layer, W_O = small_trace.layers[0], small_trace.params.layers[0].W_O
    contrib = head_contributions(layer.heads, W_O)
    norms = contribution_norms(contrib)
    assert norms.shape == contrib.shape[:2]
    assert norms[2, 7] == pytest.approx(float(np.sqrt((contrib[2, 7] ** 2).sum())), rel=1e-6)
    one_row = contribution_norms(head_contributions(layer.heads[:, 7:8], W_O))
    np.testing.assert_allclose(one_row[:, 0], norms[:, 7], rtol=1e-6)


def test_scaling_demo_of_one_head_slice_matches_that_head_of_the_whole_layer(small_trace):
    layer = small_trace.layers[0]
    whole = scaling_demo(layer.q, layer.k, 16)
    one = scaling_demo(layer.q[2:3], layer.k[2:3], 16)
    for a, b in zip(whole, one, strict=True):
        np.testing.assert_allclose(a.attn[2], b.attn[0], atol=1e-6)
    # the paper's case is the trace's attn at the default scaling
    np.testing.assert_allclose(one[0].attn[0], layer.attn[2], atol=1e-5)
    # flatter with √d_model, sharper without scaling: entropy ordered none < d_k < d_model
    assert one[2].entropy.mean() < one[0].entropy.mean() < one[1].entropy.mean()


def test_bar_panels_renders_a_png_with_tick_labels_and_highlight():
    png = figures.bar_panels(np.random.default_rng(0).random((3, 20)), ["a", "b", "c"],
                             "key j", "weight", "three rows", highlight=4,
                             tick_labels=[str(i + 1) for i in range(20)])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("rows", [1, 2, 8, 40])
def test_row_heatmap_renders_a_png_for_few_or_many_rows_and_wide_matrices(rows):
    m = np.random.default_rng(1).standard_normal((rows, 600))
    png = figures.row_heatmap(m, "contributions", "output feature j", "head",
                              [str(r + 1) for r in range(rows)], highlight_col=3)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
