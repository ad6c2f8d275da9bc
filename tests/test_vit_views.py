"""The ViT views (encoder_core/views/vit_views.py): each checked against a naive loop written from
the published method (DINO's visualize_attention.py, jacobgil/vit-explain's vit_rollout.py, the
ViT paper's position similarity), not from the vectorised code, plus invariants."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.views.analysis import prefix_share
from encoder_core.views.rollout import (
    attention_rollout,
    discard_count,
    discard_lowest,
    fuse_heads,
    k_lowest,
    rollout_step,
)
from encoder_core.views.vit_views import (
    cls_attention,
    high_norm_tokens,
    keep_mass,
    kept_share,
    on_grid,
    patch_attention,
    patch_values,
    position_cosines,
    position_similarity,
    rollout_cls_map,
    scale_to_max,
    similarity_on_grid,
    token_norms,
)
from tests.support.configs import SMALL, VIT


def random_attention(rng, h: int, T: int, peaked: float = 3.0) -> np.ndarray:
    """[h, T, T] softmax rows of random scores (float32, like a trace)."""
    s = rng.standard_normal((h, T, T)) * peaked
    e = np.exp(s - s.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def vit_trace(make_image):
    """A small ViT: [cls, dist, reg, reg] + 16 patches, 4 heads, 3 layers."""
    cfg = EncoderConfig(**{**SMALL, **VIT})
    return encode(make_image(cfg.image_size, cfg.channels), cfg, init_params(cfg))


# --- naive references, one loop per sentence of the method ------------------------------------

def naive_cls_attention(attn, n_prefix):
    h, T, _ = attn.shape
    return np.array([[float(attn[g, 0, j]) for j in range(n_prefix, T)] for g in range(h)])


def naive_patch_attention(attn, n_prefix, q):
    h, T, _ = attn.shape
    return np.array([[float(attn[g, n_prefix + q, j]) for j in range(n_prefix, T)]
                     for g in range(h)])


def naive_dino_threshold(weights, fraction):
    """DINO: sort ascending, normalise, cumsum, keep cumval > 1 − threshold; ties ordered by
    descending index (so the lower index is later, i.e. counts as larger)."""
    w = [float(v) for v in weights]
    order = sorted(range(len(w)), key=lambda j: (w[j], -j))
    total = sum(w)
    keep = [False] * len(w)
    cum = 0.0
    for j in order:
        cum += w[j] / total
        keep[j] = cum > 1 - fraction
    return np.array(keep)


def naive_rollout(attns, head_fusion, discard_ratio):
    """vit-explain's rollout written out with loops, rows renormalised (keepdim)."""
    T = attns[0].shape[-1]
    result = [[1.0 if i == j else 0.0 for j in range(T)] for i in range(T)]
    for attn in attns:
        h = attn.shape[0]
        fused = [[0.0] * T for _ in range(T)]
        for i in range(T):
            for j in range(T):
                vals = [float(attn[g, i, j]) for g in range(h)]
                fused[i][j] = {"mean": sum(vals) / h, "max": max(vals),
                               "min": min(vals)}[head_fusion]
        flat = [(fused[i][j], i * T + j) for i in range(T) for j in range(T)]
        k = int(T * T * discard_ratio)
        for _, index in sorted(flat)[:k]:  # lowest first; equal values: lower index first
            if index != 0:  # never the class token's own weight
                fused[index // T][index % T] = 0.0
        a = [[(fused[i][j] + (1.0 if i == j else 0.0)) / 2 for j in range(T)] for i in range(T)]
        a = [[a[i][j] / sum(a[i]) for j in range(T)] for i in range(T)]
        result = [[sum(a[i][m] * result[m][j] for m in range(T)) for j in range(T)]
                  for i in range(T)]
    return np.array(result)


# --- CLS attention and attention from a patch --------------------------------------------------

def test_cls_attention_is_row_0_over_the_patch_columns(vit_trace):
    cfg = vit_trace.config
    attn = vit_trace.layers[-1].attn
    got = cls_attention(attn, cfg.n_prefix)
    assert got.shape == (cfg.n_heads, cfg.n_tokens)
    np.testing.assert_array_equal(got, naive_cls_attention(attn, cfg.n_prefix))
    # the prefix's share is what is missing from each row
    prefix_share = attn[:, 0, :cfg.n_prefix].astype(np.float64).sum(-1)
    np.testing.assert_allclose(got.sum(-1) + prefix_share, 1.0, atol=1e-5)


def test_cls_attention_needs_a_cls_token():
    with pytest.raises(ValueError, match="CLS"):
        cls_attention(random_attention(np.random.default_rng(0), 2, 4), 0)


def test_patch_attention_is_the_patch_row_over_the_patch_columns(vit_trace):
    cfg = vit_trace.config
    attn = vit_trace.layers[1].attn
    for q in (0, 5, cfg.n_tokens - 1):
        np.testing.assert_array_equal(patch_attention(attn, cfg.n_prefix, q),
                                      naive_patch_attention(attn, cfg.n_prefix, q))
    with pytest.raises(ValueError, match="not one of"):
        patch_attention(attn, cfg.n_prefix, cfg.n_tokens)


def test_patch_attention_without_prefix_is_the_whole_row():
    attn = random_attention(np.random.default_rng(1), 3, 9)
    np.testing.assert_array_equal(patch_attention(attn, 0, 4), attn[:, 4, :])


def test_on_grid_is_row_major_and_refuses_a_partial_grid():
    v = np.arange(2 * 9, dtype=np.float64).reshape(2, 9)
    g = on_grid(v, 3)
    assert g.shape == (2, 3, 3)
    for n in range(9):
        assert g[1, n // 3, n % 3] == v[1, n]
    with pytest.raises(ValueError, match="grid"):
        on_grid(np.zeros(10), 3)
    np.testing.assert_array_equal(patch_values(np.arange(6), 2), [2, 3, 4, 5])


# --- keep x % of the mass ----------------------------------------------------------------------

@pytest.mark.parametrize("fraction", [0.1, 0.3, 0.6, 0.9, 0.99])
def test_keep_mass_matches_dino_threshold_loop(fraction):
    maps = np.random.default_rng(2).dirichlet(np.full(49, 0.3), size=6)  # [6, 49]
    got = keep_mass(maps, fraction)
    want = np.stack([naive_dino_threshold(m, fraction) for m in maps])
    np.testing.assert_array_equal(got, want)


def test_keep_mass_keeps_the_fewest_largest_reaching_the_fraction():
    maps = np.random.default_rng(3).gamma(0.5, size=(5, 3, 64))  # [5, 3, 64], any leading axes
    for fraction in (0.2, 0.5, 0.6, 0.85):
        kept = keep_mass(maps, fraction)
        assert kept.shape == maps.shape
        for m, k in zip(maps.reshape(-1, 64), kept.reshape(-1, 64), strict=True):
            share = m / m.sum()
            assert share[k].sum() >= fraction  # reaches it
            assert share[k].sum() - share[k].min() < fraction  # one fewer would not
            assert share[k].min() >= share[~k].max()  # the largest ones


def test_keep_mass_grows_with_the_fraction():
    m = np.random.default_rng(4).random((4, 100))
    previous = keep_mass(m, 0.05)
    for fraction in np.linspace(0.1, 1.0, 10):
        now = keep_mass(m, fraction)
        assert (now | previous).sum() == now.sum()  # previous ⊆ now
        previous = now
    assert now.all()


def test_keep_mass_ties_keep_the_lower_patch_index_first():
    uniform = np.full(4, 0.25)
    np.testing.assert_array_equal(keep_mass(uniform, 0.5), [True, True, False, False])
    np.testing.assert_array_equal(keep_mass(uniform, 0.6), [True, True, True, False])
    tied = np.array([0.1, 0.3, 0.1, 0.3, 0.2])
    np.testing.assert_array_equal(keep_mass(tied, 0.35), [False, True, False, True, False])
    np.testing.assert_array_equal(keep_mass(tied, 0.7), [False, True, False, True, True])
    np.testing.assert_array_equal(keep_mass(tied, 0.85), [True, True, False, True, True])


def test_keep_mass_at_0_and_1_and_on_an_empty_map():
    m = np.array([[0.0, 0.5, 0.2, 0.0, 0.3], [0.0, 0.0, 0.0, 0.0, 0.0]])
    assert not keep_mass(m, 0.0).any()
    assert not keep_mass(m, -1.0).any()
    np.testing.assert_array_equal(keep_mass(m, 1.0), m > 0)
    np.testing.assert_array_equal(keep_mass(m, 1.5), m > 0)
    assert not keep_mass(m, 0.6)[1].any()  # nothing to keep in a map of zeros
    np.testing.assert_array_equal(keep_mass(m, 0.6)[0], [False, True, False, False, True])


# --- rollout -----------------------------------------------------------------------------------

@pytest.mark.parametrize("head_fusion", ["mean", "max", "min"])
@pytest.mark.parametrize("discard_ratio", [0.0, 0.5, 0.9])
def test_rollout_matches_vit_explain_loop(head_fusion, discard_ratio):
    rng = np.random.default_rng(5)
    attns = [random_attention(rng, 3, 7) for _ in range(3)]  # T = 1 + 6
    got = attention_rollout(attns, head_fusion, discard_ratio)
    np.testing.assert_allclose(got, naive_rollout(attns, head_fusion, discard_ratio),
                               rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("head_fusion", ["mean", "max", "min"])
def test_rollout_rows_sum_to_1(head_fusion):
    rng = np.random.default_rng(6)
    attns = [random_attention(rng, 4, 10) for _ in range(4)]
    R = attention_rollout(attns, head_fusion, 0.7)
    assert R.dtype == np.float64
    np.testing.assert_allclose(R.sum(-1), 1.0, atol=1e-12)
    assert (R >= 0).all()


def test_rollout_with_mean_and_nothing_discarded_is_the_papers_rollout(vit_trace):
    """The defaults are the note's rollout, R = Â_L ⋯ Â_1, Â_l = ½·mean_h(attn_l) + ½·I,
    written here straight from the formula."""
    attns = [lt.attn for lt in vit_trace.layers]
    T = attns[0].shape[-1]
    R = np.eye(T)
    for attn in attns:
        R = (0.5 * attn.astype(np.float64).mean(axis=0) + 0.5 * np.eye(T)) @ R
    np.testing.assert_allclose(attention_rollout(attns), R, atol=1e-6)
    np.testing.assert_array_equal(attention_rollout(attns, "mean", 0.0), attention_rollout(attns))


def test_discard_drops_the_k_lowest_but_never_cls_to_cls():
    fused = np.arange(1.0, 17.0).reshape(4, 4)  # 16 distinct weights; index 0 is the lowest
    out = discard_lowest(fused, 0.25)  # k = 4: indices 0…3, 0 kept -> 3 dropped
    assert out[0, 0] == 1.0
    np.testing.assert_array_equal(out[0, 1:], 0.0)
    np.testing.assert_array_equal(out[1:], fused[1:])
    fused[0, 0] = 100.0  # no longer among the lowest: k weights dropped
    out = discard_lowest(fused, 0.25)
    assert (out == 0).sum() == 4 and out[0, 0] == 100.0 and out[1, 0] == 0.0
    assert fused[1, 0] == 5.0  # the input is not changed
    with pytest.raises(ValueError, match="discard_ratio"):
        discard_lowest(fused, 1.5)


def test_discard_count_is_int_of_t_squared_times_the_ratio():
    fused = np.random.default_rng(7).random((7, 7)) + 1.0  # all > 0; (0, 0) rarely lowest
    fused[0, 0] = 10.0
    for ratio in (0.0, 0.1, 0.5, 0.9, 0.99, 1.0):
        assert (discard_lowest(fused, ratio) == 0).sum() == int(49 * ratio) - (ratio == 1.0)
        assert discard_count(7, ratio) == int(49 * ratio)


def test_discard_ties_take_the_lower_flat_index_first():
    fused = np.array([[0.5, 0.2, 0.2], [0.2, 0.9, 0.2], [0.9, 0.9, 0.9]])
    out = discard_lowest(fused, 0.34)  # k = int(3.06) = 3 of the four 0.2s: flat 1, 2, 3
    np.testing.assert_array_equal(out, [[0.5, 0, 0], [0, 0.9, 0.2], [0.9, 0.9, 0.9]])


def test_fuse_heads_and_its_unknown_name():
    attn = np.random.default_rng(8).random((3, 4, 4))
    np.testing.assert_allclose(fuse_heads(attn, "mean"), attn.mean(0))
    np.testing.assert_array_equal(fuse_heads(attn, "max"), attn.max(0))
    np.testing.assert_array_equal(fuse_heads(attn, "min"), attn.min(0))
    with pytest.raises(ValueError, match="head_fusion"):
        fuse_heads(attn, "median")


def test_rollout_step_normalises_rows_not_columns():
    fused = np.array([[0.6, 0.3], [0.1, 0.1]])  # max / min fusion rows need not sum to 1
    a = rollout_step(fused)
    np.testing.assert_allclose(a.sum(-1), 1.0)
    # vit-explain's a / a.sum(-1) would divide column j by row j's sum instead
    b = (fused + np.eye(2)) / 2
    assert not np.allclose(b / b.sum(-1), a)


def test_rollout_cls_map_is_the_cls_row_over_patches_scaled_to_max_1():
    rng = np.random.default_rng(9)
    attns = [random_attention(rng, 2, 3 + 9) for _ in range(2)]  # 3 prefix + 9 patches
    R = attention_rollout(attns, "max", 0.5)
    m = rollout_cls_map(R, 3)
    assert m.shape == (9,) and m.max() == 1.0
    np.testing.assert_allclose(m * R[0, 3:].max(), R[0, 3:])
    np.testing.assert_array_equal(rollout_cls_map(np.eye(4), 1), np.zeros(3))
    with pytest.raises(ValueError, match="CLS"):
        rollout_cls_map(R, 0)


def test_rollout_discarding_more_changes_the_cls_map(vit_trace):
    attns = [lt.attn for lt in vit_trace.layers]
    n = vit_trace.config.n_prefix
    maps = [rollout_cls_map(attention_rollout(attns, f, r), n)
            for f in ("mean", "max", "min") for r in (0.0, 0.9)]
    for i in range(len(maps)):
        for j in range(i):
            assert not np.allclose(maps[i], maps[j])


# --- token norms, position similarity ----------------------------------------------------------

def test_token_norms_match_a_loop(vit_trace):
    x = vit_trace.layers[-1].out
    want = [math.sqrt(sum(float(v) ** 2 for v in row)) for row in x]
    np.testing.assert_allclose(token_norms(x), want, rtol=1e-12)
    assert token_norms(x).shape == (vit_trace.config.seq_len,)


def test_high_norm_tokens_are_those_over_factor_times_the_median():
    norms = np.array([1.0, 1.1, 0.9, 5.0, 1.0, 2.5])
    np.testing.assert_array_equal(high_norm_tokens(norms), [3, 5])
    np.testing.assert_array_equal(high_norm_tokens(norms, factor=3.0), [3])
    assert high_norm_tokens(np.ones(5)).size == 0


def test_position_similarity_matches_a_loop_and_leaves_the_prefix_out(vit_trace):
    cfg = vit_trace.config
    pos = vit_trace.params.pos_embed
    n_prefix_pos = cfg.n_pos - cfg.n_tokens
    assert n_prefix_pos == 2  # cls and dist have rows, registers none
    S = position_similarity(pos, n_prefix_pos)
    assert S.shape == (cfg.n_tokens, cfg.n_tokens)
    p = pos[n_prefix_pos:].astype(np.float64)
    for i in range(cfg.n_tokens):
        for j in range(cfg.n_tokens):
            dot = sum(p[i, k] * p[j, k] for k in range(p.shape[1]))
            want = dot / math.sqrt(sum(v * v for v in p[i])) / math.sqrt(sum(v * v for v in p[j]))
            assert S[i, j] == pytest.approx(want, abs=1e-12)
    np.testing.assert_allclose(np.diag(S), 1.0)
    np.testing.assert_allclose(S, S.T)
    tile = similarity_on_grid(S, 5, cfg.grid_size)
    assert tile.shape == (cfg.grid_size, cfg.grid_size) and tile[1, 1] == pytest.approx(1.0)


def test_kept_share_reaches_the_fraction_asked():
    maps = np.random.default_rng(10).gamma(0.7, size=(6, 49))
    for fraction in (0.3, 0.6, 0.9):
        share = kept_share(maps, keep_mass(maps, fraction))
        assert share.shape == (6,) and (share >= fraction).all() and (share <= 1).all()
    assert kept_share(np.zeros((1, 4)), np.ones((1, 4), bool))[0] == 0.0


def test_scale_to_max_gives_each_map_a_top_of_1():
    maps = np.array([[1.0, 4.0, 2.0], [0.0, 0.0, 0.0], [0.5, 0.25, 0.5]])
    np.testing.assert_array_equal(scale_to_max(maps), [[0.25, 1, 0.5], [0, 0, 0], [1, 0.5, 1]])


def test_prefix_share_is_what_the_grid_map_leaves_out(vit_trace):
    cfg = vit_trace.config
    attn = vit_trace.layers[0].attn
    for row in (0, cfg.n_prefix + 3):
        share = prefix_share(attn[:, row, :], cfg.n_prefix)
        want = [sum(float(attn[g, row, j]) for j in range(cfg.n_prefix)) for g in range(4)]
        np.testing.assert_allclose(share, want, rtol=1e-12)
    np.testing.assert_allclose(prefix_share(attn[:, 0, :], cfg.n_prefix)
                               + cls_attention(attn, cfg.n_prefix).sum(-1), 1.0, atol=1e-5)


def test_k_lowest_is_the_first_k_of_a_stable_sort():
    rng = np.random.default_rng(11)
    for values in (rng.random(500), rng.integers(0, 5, 500).astype(float), np.zeros(20)):
        for k in (0, 1, 7, 100, values.size - 1, values.size, values.size + 3):
            want = np.sort(np.argsort(values, kind="stable")[:k])
            np.testing.assert_array_equal(k_lowest(values, k), want)


@pytest.mark.parametrize("head_fusion", ["mean", "max", "min"])
def test_the_rollout_row_alone_is_that_row_of_r(head_fusion):
    rng = np.random.default_rng(12)
    attns = [random_attention(rng, 3, 11) for _ in range(4)]
    R = attention_rollout(attns, head_fusion, 0.6)
    for row in (0, 5):
        r = attention_rollout(attns, head_fusion, 0.6, row=row)
        np.testing.assert_allclose(r, R[row], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(rollout_cls_map(attention_rollout(attns, head_fusion, 0.6, row=0),
                                               2), rollout_cls_map(R, 2), rtol=1e-12)


def test_position_cosines_reads_a_vits_learned_rows_and_the_notes_sinusoids(vit_trace, trace):
    np.testing.assert_array_equal(position_cosines(vit_trace), position_similarity(
        vit_trace.params.pos_embed, vit_trace.config.n_pos - vit_trace.config.n_tokens))
    pe = trace.pe.astype(np.float64)  # the note's encoder: the rows of the sinusoidal table
    unit = pe / np.linalg.norm(pe, axis=1, keepdims=True)
    np.testing.assert_allclose(position_cosines(trace), unit @ unit.T, atol=1e-12)
    assert position_cosines(trace).shape == (trace.config.n_tokens,) * 2
