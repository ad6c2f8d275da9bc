"""encoder_core.views.similarity against a naive cosine written from the definition (explicit
loops of products and square roots, float64), and its invariants: the pointed patch's own value
is 1, every value in [−1, 1], cos(i, j) = cos(j, i); the prefix rows left out; a zero row."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode
from encoder_core.params import init_params
from encoder_core.views.pca import layer_features
from encoder_core.views.similarity import cosine_map, unit_rows


def naive_cosine(X: np.ndarray, i: int, j: int) -> float:
    """x_i · x_j / (‖x_i‖ ‖x_j‖), one product at a time (0 when a row is zero)."""
    dot = ni = nj = 0.0
    for k in range(X.shape[1]):
        dot += float(X[i, k]) * float(X[j, k])
        ni += float(X[i, k]) ** 2
        nj += float(X[j, k]) ** 2
    return 0.0 if ni == 0 or nj == 0 else dot / (math.sqrt(ni) * math.sqrt(nj))


@pytest.fixture(scope="module", params=[False, True], ids=["note", "cls"])
def trace(request):
    cfg = EncoderConfig(d_model=32, n_heads=4, n_layers=2, d_ff=64, patch_size=32, seed=1,
                        cls_token=request.param)
    image = np.random.default_rng(0).random((cfg.image_size, cfg.image_size, cfg.channels))
    return encode(image.astype(np.float32), cfg, init_params(cfg))


@pytest.mark.parametrize("layer", [None, 0, 1])
def test_cosine_map_equals_the_naive_cosine_of_the_layers_patch_rows(trace, layer):
    X = np.asarray(layer_features(trace, layer), dtype=np.float64)
    n = trace.config.n_prefix
    rows = trace.output if layer is None else trace.layers[layer].out
    assert np.array_equal(X, rows[n:])  # the prefix rows left out
    unit = unit_rows(trace, layer)
    N = trace.config.n_tokens
    assert unit.shape == (N, trace.config.d_model) and unit.dtype == np.float32
    assert not unit.flags.writeable
    for i in (0, N // 2, N - 1):
        got = cosine_map(unit, i)
        want = np.array([naive_cosine(X, i, j) for j in range(N)])
        assert got.shape == (N,) and np.max(np.abs(got - want)) < 1e-6


def test_unit_rows_have_norm_1_and_the_invariants_hold(trace):
    unit = unit_rows(trace)
    N = unit.shape[0]
    assert np.allclose(np.linalg.norm(unit.astype(np.float64), axis=1), 1.0, atol=1e-6)
    C = np.stack([cosine_map(unit, i) for i in range(N)])  # [N, N]
    assert np.allclose(np.diag(C), 1.0, atol=1e-6)  # the pointed patch's own value
    assert C.min() >= -1.0 and C.max() <= 1.0
    assert np.allclose(C, C.T, atol=1e-7)  # symmetric


def test_a_zero_row_has_cosine_0_and_a_row_far_out_is_caught():
    X = np.array([[3.0, 4.0], [0.0, 0.0], [-6.0, -8.0], [4.0, -3.0]])
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    unit = (X / np.where(norms > 0, norms, 1)).astype(np.float32)
    assert np.allclose(cosine_map(unit, 0), [1, 0, -1, 0], atol=1e-7)
    assert np.allclose(cosine_map(unit, 1), [0, 0, 0, 0])
    with pytest.raises(IndexError):
        cosine_map(unit, 4)


def test_cosine_map_leaves_its_rows_unchanged(trace):
    unit = np.array(unit_rows(trace))  # a writable copy
    before = unit.copy()
    cosine_map(unit, 3)
    assert np.array_equal(unit, before)
