"""encoder_core.views.pca against a naive PCA written from the definition (the covariance
matrix summed from outer products, then numpy.linalg.eigh), and its invariants: unit,
orthogonal components, shares in [0, 1] summing to at most 1, the sign rule, the result
independent of the order of the patches and of the features' sign."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode
from encoder_core.params import init_params
from encoder_core.views.pca import (
    border_patches,
    layer_features,
    mask_iou,
    on_image,
    patch_pca,
    trace_pca,
)

G, D = 8, 24  # an 8 × 8 grid of patches, 24 features


def naive_pca(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvectors (columns, largest eigenvalue first) and eigenvalue shares of the
    covariance of the rows of X, from the definition: C = 1/n Σᵢ (xᵢ − μ)(xᵢ − μ)ᵀ."""
    n, d = X.shape
    mu = sum(X[i] for i in range(n)) / n
    C = np.zeros((d, d))
    for i in range(n):
        C += np.outer(X[i] - mu, X[i] - mu)
    C /= n
    values, vectors = np.linalg.eigh(C)  # ascending
    order = np.argsort(values)[::-1]
    values, vectors = np.clip(values[order], 0, None), vectors[:, order]
    return vectors, values / values.sum()


def naive_patch_pca(X: np.ndarray, border: np.ndarray):
    """The module's rules, written again on naive_pca: (first [N], foreground [N],
    components [3, d], shares [3], rgb [N, 3])."""
    vectors, shares = naive_pca(X)
    v1 = vectors[:, 0]
    p = np.array([(x - X.mean(axis=0)) @ v1 for x in X])
    if p[border].mean() > 0:
        p, v1 = -p, -v1
    fg = p > 0
    F = X[fg]
    fvec, fshares = naive_pca(F)
    comps = fvec[:, :3].T.copy()
    for c in comps:  # the largest-magnitude entry positive
        if c[np.argmax(np.abs(c))] < 0:
            c *= -1
    proj = np.array([[(f - F.mean(axis=0)) @ c for c in comps] for f in F])  # [n_fg, 3]
    rgb = np.zeros((len(X), 3))
    rgb[fg] = (proj - proj.min(axis=0)) / (proj.max(axis=0) - proj.min(axis=0))
    return p, fg, comps, fshares[:3], rgb, shares[0]


def planted(seed: int, blob: list[tuple[int, int]] | None = None, noise: float = 0.3):
    """Features of a G × G grid: background rows around one vector, the blob's patches (a
    3 × 4 block by default) around another, each part with its own variation. [N, D]."""
    rng = np.random.default_rng(seed)
    blob = blob if blob is not None else [(r, c) for r in range(2, 5) for c in range(3, 7)]
    inside = np.zeros((G, G), dtype=bool)
    for r, c in blob:
        inside[r, c] = True
    inside = inside.reshape(-1)
    bg, obj = rng.normal(size=D), rng.normal(size=D) * 3
    parts = rng.normal(size=(3, D))  # three directions the object's patches vary along
    X = np.where(inside[:, None], obj, bg) + noise * rng.normal(size=(G * G, D))
    X[inside] += rng.normal(size=(int(inside.sum()), 3)) * [2.0, 1.2, 0.7] @ parts
    return X, inside


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_pca_equals_the_naive_covariance_and_eigh_pca(seed):
    X, _ = planted(seed)
    border = border_patches(G)
    got = patch_pca(X, border)
    p, fg, comps, shares, rgb, share1 = naive_patch_pca(X, border)
    np.testing.assert_allclose(got.first, p, atol=1e-9)
    assert got.first_share == pytest.approx(share1, rel=1e-9)
    np.testing.assert_array_equal(got.foreground, fg)
    np.testing.assert_allclose(got.components, comps, atol=1e-8)
    np.testing.assert_allclose(got.shares, shares, rtol=1e-8)
    np.testing.assert_allclose(got.rgb, rgb, atol=1e-8)


def test_a_real_traces_output_equals_the_naive_pca_too():
    cfg = EncoderConfig(d_model=32, n_heads=4, n_layers=2, d_ff=64, patch_size=32, seed=1)
    image = np.random.default_rng(3).random((224, 224, 1), dtype=np.float32)
    tr = encode(image, cfg, init_params(cfg))
    got = trace_pca(tr)
    p, fg, *_ = naive_patch_pca(layer_features(tr).astype(np.float64), border_patches(7))
    np.testing.assert_allclose(got.first, p, atol=1e-6)
    np.testing.assert_array_equal(got.foreground, fg)
    assert trace_pca(tr, 0).first.shape == (cfg.n_tokens,)
    assert not np.allclose(trace_pca(tr, 0).first_component, got.first_component)


def test_the_foreground_is_the_planted_object_not_the_border():
    X, inside = planted(4)
    got = patch_pca(X, border_patches(G))
    np.testing.assert_array_equal(got.foreground, inside)
    assert got.border_mean < 0 and got.first[border_patches(G)].mean() == got.border_mean


@pytest.mark.parametrize("seed", [0, 5, 6])
def test_components_are_unit_and_orthogonal_and_shares_in_0_1(seed):
    X, _ = planted(seed)
    got = patch_pca(X, border_patches(G))
    assert np.linalg.norm(got.first_component) == pytest.approx(1.0)
    np.testing.assert_allclose(got.components @ got.components.T, np.eye(3), atol=1e-10)
    assert np.all((got.shares >= 0) & (got.shares <= 1)) and got.shares.sum() <= 1 + 1e-12
    assert np.all(np.diff(got.shares) <= 0)  # largest first
    assert 0 <= got.first_share <= 1
    assert got.rgb.min() >= 0 and got.rgb.max() <= 1
    assert np.all(got.rgb[~got.foreground] == 0)  # background black
    for c in range(3):  # each colour spans [0, 1] over the foreground
        assert got.rgb[got.foreground, c].min() == 0 and got.rgb[got.foreground, c].max() == 1


def test_the_sign_rule_makes_the_result_independent_of_the_features_sign():
    X, _ = planted(7)
    border = border_patches(G)
    a, b = patch_pca(X, border), patch_pca(-X, border)
    assert a.border_mean < 0 and b.border_mean < 0
    np.testing.assert_allclose(a.first, b.first, atol=1e-9)
    np.testing.assert_array_equal(a.foreground, b.foreground)


def test_the_result_does_not_depend_on_the_order_of_the_patches():
    X, _ = planted(8)
    border = border_patches(G)
    perm = np.random.default_rng(9).permutation(G * G)
    a, b = patch_pca(X, border), patch_pca(X[perm], border[perm])
    np.testing.assert_allclose(b.first, a.first[perm], atol=1e-9)
    np.testing.assert_array_equal(b.foreground, a.foreground[perm])
    np.testing.assert_allclose(b.first_component, a.first_component, atol=1e-9)
    np.testing.assert_allclose(b.components, a.components, atol=1e-8)
    np.testing.assert_allclose(b.shares, a.shares, rtol=1e-9)
    np.testing.assert_allclose(b.rgb, a.rgb[perm], atol=1e-8)


def test_fewer_than_three_foreground_patches_says_so_and_keeps_the_first_component():
    X, inside = planted(10, blob=[(3, 3), (3, 4)], noise=0.05)
    got = patch_pca(X, border_patches(G))
    np.testing.assert_array_equal(got.foreground, inside)
    assert got.too_few and got.n_foreground == 2
    assert got.components.shape == (0, D) and got.shares.shape == (0,)
    assert np.all(got.rgb == 0) and got.first.shape == (G * G,)
    assert not patch_pca(*planted(10)[:1], border_patches(G)).too_few


def test_identical_rows_give_no_foreground_and_no_error():
    got = patch_pca(np.ones((G * G, D)), border_patches(G))
    assert got.too_few and got.n_foreground == 0 and got.first_share == 0
    assert np.all(got.first == 0)


def test_the_result_is_read_only_and_a_border_is_required():
    got = patch_pca(planted(11)[0], border_patches(G))
    with pytest.raises(ValueError):
        got.first[0] = 1.0
    with pytest.raises(ValueError, match="border"):
        patch_pca(np.ones((4, 3)), np.zeros(4, dtype=bool))


def test_the_border_is_the_first_and_last_rows_and_columns():
    b = border_patches(4).reshape(4, 4)
    assert b.sum() == 12 and not b[1:3, 1:3].any()


def test_on_image_and_iou():
    values = np.arange(4, dtype=float).reshape(4, 1)  # a 2 × 2 grid
    img = on_image(values, 2, 3)
    assert img.shape == (6, 6, 1) and img[0, 5, 0] == 1 and img[5, 0, 0] == 2
    a = np.array([True, True, False, False])
    assert mask_iou(a, np.array([True, False, True, False])) == pytest.approx(1 / 3)
    assert mask_iou(a, a) == 1 and mask_iou(~a, a) == 0
