"""The logit lens (issue 53; encoder_core/views/logit_lens.py): the model's head read off the
residual stream entering every layer. Its last row is `predict`; every row equals a float64
head written out in tests/support/inside_models.py on the trace's hidden states (final norm,
pooling, fc_norm, pre-logits); per token, the [CLS] row is the pooled lens of a [CLS] head and
the mean over the patches is the pooled lens of a mean-pool head without norms. The comparison
with timm: tests/test_logit_parity.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from encoder_core import logit_lens, predict, top_classes
from encoder_core.views.logit_lens import hidden_states, lens_probabilities, lens_ranks
from tests.support.inside_models import (
    HEAD_KINDS,
    naive_head,
    naive_layer_norm,
    note_model,
    relative_error,
    traced,
    vit_model,
)

KINDS = (*HEAD_KINDS, "pre_logits")


@pytest.fixture(scope="module", params=KINDS)
def vit(request):
    cfg, params = vit_model(request.param)
    return traced(cfg, params), params


@pytest.fixture(scope="module")
def note():
    cfg, params = note_model()
    return traced(cfg, params), params


def test_the_last_row_is_the_prediction(vit, note):
    for trace, params in (vit, note):
        lens = logit_lens(trace, params)
        assert lens.shape == (trace.config.n_layers + 1, params.head.n_classes)
        assert lens.dtype == np.float32
        np.testing.assert_array_equal(lens[-1], predict(trace, params))


def test_every_row_is_the_head_written_out_on_that_layers_stream(vit):
    trace, params = vit
    cfg = trace.config
    lens = logit_lens(trace, params)
    states = [trace.x0, *(layer.out for layer in trace.layers)]
    for l, x in enumerate(states):
        normed = naive_layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps)
        expected = naive_head(normed, params.head, cfg.n_prefix, cfg.ln_eps)
        assert relative_error(lens[l], expected) <= 1e-5, l
    assert not np.allclose(lens[0], lens[-1])  # the rows do differ


def test_the_note_encoder_has_no_final_norm_so_the_head_reads_the_stream_itself(note):
    trace, params = note
    cfg = trace.config
    lens = logit_lens(trace, params)
    for l, x in enumerate(hidden_states(trace)):
        assert relative_error(lens[l], naive_head(x, params.head, 0, cfg.ln_eps)) <= 1e-5


def test_per_token_the_cls_row_is_the_pooled_lens_of_a_cls_head():
    cfg, params = vit_model("token")
    trace = traced(cfg, params)
    per_token = logit_lens(trace, params, tokens=True)
    assert per_token.shape == (cfg.n_layers + 1, cfg.seq_len, params.head.n_classes)
    np.testing.assert_allclose(per_token[:, 0], logit_lens(trace, params), rtol=1e-5, atol=1e-5)
    assert np.ptp(per_token[1, cfg.n_prefix:, 0]) > 0  # the patches say different things


def test_per_token_means_over_the_patches_are_the_mean_pool_lens(note):
    """No norm after the stream and a linear head: the mean of the patches' logits is the
    logits of the patches' mean."""
    trace, params = note
    per_token = logit_lens(trace, params, tokens=True)  # [L + 1, N, n]
    np.testing.assert_allclose(per_token.mean(axis=1), logit_lens(trace, params),
                               rtol=1e-5, atol=1e-5)


def test_per_token_rows_are_the_head_on_each_row_alone(vit):
    trace, params = vit
    cfg = trace.config
    per_token = logit_lens(trace, params, tokens=True)
    for l, i in ((0, 0), (1, cfg.n_prefix + 3), (cfg.n_layers, cfg.seq_len - 1)):
        x = hidden_states(trace)[l]
        row = naive_layer_norm(x[i], params.norm_gamma, params.norm_beta, cfg.ln_eps)
        expected = naive_head(np.stack([row, row]), params.head, 1, cfg.ln_eps)
        assert relative_error(per_token[l, i], expected) <= 1e-5, (l, i)


def test_without_a_head_it_says_so(vit):
    trace, params = vit
    with pytest.raises(ValueError, match="no classification head"):
        logit_lens(trace, dataclasses.replace(params, head=None))


def test_ranks_and_probabilities_follow_top_classes(vit):
    trace, params = vit
    lens = logit_lens(trace, params)
    probs = lens_probabilities(lens)
    np.testing.assert_allclose(probs.sum(axis=-1), 1.0)
    for l in range(len(lens)):
        order, top_p = top_classes(lens[l], k=lens.shape[1])
        for rank, c in enumerate(order):
            assert lens_ranks(lens[l], int(c)) == rank
        np.testing.assert_allclose(probs[l, order], top_p)
    assert lens_ranks(lens, 2).shape == (len(lens),)


def test_ties_rank_the_lower_class_first():
    logits = np.array([1.0, 3.0, 3.0, 0.0])
    assert [int(lens_ranks(logits, c)) for c in range(4)] == [2, 0, 1, 3]
