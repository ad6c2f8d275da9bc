"""Activation patching (issue 53; encoder_core/views/patching.py): every row of B at layer 0 gives
B's logits, none gives A's; after the last layer a [CLS] head sees only row 0 and a mean-pool
head moves by (x_B − x_A)[t]/N (float64, written out); one row patched equals a rerun built
here from `encode` with A's stream changed by hand; `patching_map` is `patch_run` entry by
entry, whatever its batch. The comparison with a hooked timm pass: tests/test_logit_parity.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from encoder_core import EncoderConfig, encoder_layer, patch_run, patching_map, predict, softmax
from encoder_core.views.heads_off import final_norm
from tests.support.inside_models import (
    naive_head,
    note_model,
    relative_error,
    traced,
    vit_model,
)


@pytest.fixture(scope="module", params=["vit", "note"])
def pair(request):
    cfg, params = vit_model("token") if request.param == "vit" else note_model()
    return traced(cfg, params, seed=1), traced(cfg, params, seed=7), params


def test_every_row_at_layer_0_gives_bs_logits_and_none_gives_as(pair):
    a, b, params = pair
    S, L = a.config.seq_len, a.config.n_layers
    np.testing.assert_allclose(patch_run(a, b, params, 0, np.arange(S)), predict(b, params),
                               rtol=1e-6, atol=1e-6)
    for layer in range(L + 1):
        np.testing.assert_allclose(patch_run(a, b, params, layer, []), predict(a, params),
                                   rtol=1e-6, atol=1e-6)
    assert not np.allclose(predict(a, params), predict(b, params))


def test_after_the_last_layer_a_cls_head_sees_row_0_only():
    cfg, params = vit_model("token")
    a, b = traced(cfg, params, seed=1), traced(cfg, params, seed=7)
    L = cfg.n_layers
    np.testing.assert_array_equal(patch_run(a, b, params, L, [5, 9]), predict(a, params))
    np.testing.assert_allclose(patch_run(a, b, params, L, [0]), predict(b, params),
                               rtol=1e-6, atol=1e-6)


def test_after_the_last_layer_a_mean_pool_head_moves_by_the_rows_difference():
    cfg, params = note_model()  # no final norm, mean over the patches
    a, b = traced(cfg, params, seed=1), traced(cfg, params, seed=7)
    t = 6
    x = a.layers[-1].out.astype(np.float64).copy()
    x[t] = b.layers[-1].out[t]
    expected = naive_head(x, params.head, 0, cfg.ln_eps)
    assert relative_error(patch_run(a, b, params, cfg.n_layers, [t]), expected) <= 1e-5


def rerun_by_hand(a, b, params, layer: int, rows: list[int]) -> np.ndarray:
    """A's stream entering `layer` with `rows` from B, then every layer one by one from the
    trace's own weights in float64, the final norm and the head written out."""
    cfg: EncoderConfig = a.config
    take = (lambda t: t.x0) if layer == 0 else (lambda t: t.layers[layer - 1].out)
    x = take(a).astype(np.float64).copy()
    x[rows] = take(b)[rows]
    for p in params.layers[layer:]:  # float64 x stays float64
        x = encoder_layer(x, p, cfg).out
    _, out = final_norm(a, x)
    return naive_head(out, params.head, cfg.n_prefix, cfg.ln_eps)


@pytest.mark.parametrize(("layer", "rows"), [(0, [5]), (1, [0, 4]), (2, [7])])
def test_a_patched_run_equals_a_rerun_by_hand_in_float64(pair, layer, rows):
    a, b, params = pair
    ours = patch_run(a, b, params, layer, rows)
    assert ours.dtype == np.float32
    assert relative_error(ours, rerun_by_hand(a, b, params, layer, rows)) <= 1e-5
    assert not np.allclose(ours, predict(a, params))  # the patch is seen


def test_the_map_is_patch_run_entry_by_entry_whatever_the_batch(pair):
    a, b, params = pair
    target = int(np.argmax(predict(b, params)))
    L, S = a.config.n_layers, a.config.seq_len
    full = patching_map(a, b, params, target)
    assert full.shape == (L, S) and full.dtype == np.float64
    np.testing.assert_allclose(patching_map(a, b, params, target, chunk=3), full, atol=1e-6)
    for layer, t in ((0, 0), (1, S - 1), (L - 1, S // 2)):
        p = softmax(patch_run(a, b, params, layer, [t]).astype(np.float64))[target]
        assert abs(full[layer, t] - p) <= 1e-6, (layer, t)
    assert np.ptp(full) > 0


def test_passes_of_different_models_layers_and_rows_out_of_range_are_refused(pair):
    a, b, params = pair
    L, S = a.config.n_layers, a.config.seq_len
    with pytest.raises(ValueError, match="does not exist"):
        patch_run(a, b, params, L + 1, [0])
    with pytest.raises(ValueError, match="sequence rows"):
        patch_run(a, b, params, 0, [S])
    other_cfg, other_params = (note_model() if a.config.norm_first else vit_model("token"))
    with pytest.raises(ValueError, match="same model"):
        patch_run(a, traced(other_cfg, other_params), params, 0, [0])
    with pytest.raises(ValueError, match="no classification head"):
        patching_map(a, b, dataclasses.replace(params, head=None), 0)
