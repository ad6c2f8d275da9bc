"""`encoder_core.relevance`: class-specific relevance per patch (Chefer et al.; vit-explain's
gradient rollout, corrected). Invariants: ≥ 0, one value per patch in float32; with one layer
Chefer's map is the [CLS] row of I + Ā; a patch the logit does not depend on (a constructed
case) gets 0; the row carried through the layers equals the same row of the whole matrix
products, written here from the formulas in float64 (the [CLS] row, or the mean over the rows
without [CLS]). Autograd's attention gradients: tests/test_gradients_parity.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from encoder_core import EncoderConfig, backward, encode, init_params, predict, relevance
from encoder_core.views.rollout import discard_lowest
from tests.support.configs import VIT, make_test_image, perturb_every_parameter
from tests.test_gradients import random_head

BASE = dict(image_size=16, patch_size=4, channels=1, d_model=16, n_heads=2, n_layers=3,
            d_ff=32, seed=8)
CASES = {"note": ({}, "avg"), "vit": (VIT, "token_dist"),
         "registers_no_cls": (dict(norm_first=True, n_registers=2, activation="gelu"), "avg")}
METHODS = ("chefer", "gradient_rollout")


def model(changes, pool, n_layers=3):
    cfg = EncoderConfig(**{**BASE, **changes, "n_layers": n_layers})
    params = perturb_every_parameter(init_params(cfg), seed=n_layers)
    params = replace(params, head=random_head(cfg, pool, ()))
    trace = encode(make_test_image(cfg.image_size, cfg.channels), cfg, params)
    return cfg, params, trace


def full_matrix_relevance(trace, params, target, method, discard_ratio=0.0) -> np.ndarray:
    """The methods as written: whole T × T matrices in float64, first layer first; the [CLS]
    row over the patch columns, or the mean of the patch rows without [CLS]."""
    cfg = trace.config
    grads = backward(trace, params, target)
    T = cfg.seq_len
    R = np.eye(T)
    for layer, d_layer in zip(trace.layers, grads.layers, strict=True):
        A, dA = layer.attn.astype(np.float64), d_layer.attn.astype(np.float64)
        if method == "chefer":
            fused = np.clip(dA * A, 0, None).mean(axis=0)  # E_h((∇A ⊙ A)⁺)
            R = R + fused @ R
        else:
            fused = discard_lowest(np.clip((A * dA).mean(axis=0), 0, None), discard_ratio)
            a = fused + np.eye(T)
            a = a / a.sum(axis=1, keepdims=True)  # row i by its own sum
            R = a @ R
    n = cfg.n_prefix
    return R[0, n:] if cfg.cls_token else R[n:, n:].mean(axis=0)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_relevance_is_one_non_negative_float32_per_patch(case, method):
    cfg, params, trace = model(*CASES[case])
    r = relevance(trace, params, 1, method)
    assert r.shape == (cfg.n_tokens,) and r.dtype == np.float32
    assert (r >= 0).all() and r.max() > 0


@pytest.mark.parametrize(("method", "discard_ratio"), [("chefer", 0.0),
                                                        ("gradient_rollout", 0.0),
                                                        ("gradient_rollout", 0.6)])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_carried_row_is_the_row_of_the_whole_product(case, method, discard_ratio):
    cfg, params, trace = model(*CASES[case])
    ours = relevance(trace, params, 3, method, discard_ratio=discard_ratio)
    theirs = full_matrix_relevance(trace, params, 3, method, discard_ratio)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6 * np.abs(theirs).max())


def test_the_target_class_changes_the_map():
    cfg, params, trace = model(*CASES["vit"])
    maps = [relevance(trace, params, c, "chefer") for c in range(3)]
    assert not np.allclose(maps[0], maps[1]) and not np.allclose(maps[1], maps[2])


@pytest.mark.parametrize("case", ["vit", "note"])
def test_with_one_layer_chefers_map_is_the_readout_row_of_identity_plus_fused(case):
    cfg, params, trace = model(*CASES[case], n_layers=1)
    grads = backward(trace, params, 0)
    A, dA = trace.layers[0].attn, grads.layers[0].attn
    fused = np.maximum(dA * A, 0).mean(axis=0)  # [T, T]
    I_plus = np.eye(cfg.seq_len) + fused
    n = cfg.n_prefix
    expected = I_plus[0, n:] if cfg.cls_token else I_plus[n:, n:].mean(axis=0)
    np.testing.assert_allclose(relevance(trace, params, 0, "chefer"), expected, rtol=1e-6)


def shunned_patch_model(j: int):
    """One post-norm layer with [CLS]; every query is b_Q (W_Q = 0), chosen orthogonal to every
    key but patch j's and −10⁴·s along it: every row's attention to patch j underflows to an
    exact 0, so nothing reads patch j and the [CLS] logit does not depend on it."""
    cfg = EncoderConfig(image_size=16, patch_size=4, channels=1, d_model=32, n_heads=1,
                        n_layers=1, d_ff=64, cls_token=True, qkv_bias=True, use_pe=False, seed=4)
    params = perturb_every_parameter(init_params(cfg), seed=5)
    lp = params.layers[0]
    layer = replace(lp, W_Q=np.zeros_like(lp.W_Q), b_Q=np.zeros_like(lp.b_Q),
                    b_K=np.zeros_like(lp.b_K))
    params = replace(params, layers=(layer,), head=random_head(cfg, "token", ()))
    image = make_test_image(cfg.image_size, cfg.channels)
    keys = encode(image, cfg, params).layers[0].k[0].astype(np.float64)  # [T, d] (b_Q: no role)
    row = cfg.n_prefix + j
    others = np.delete(keys, row, axis=0)  # [T − 1, d]
    u = keys[row] - np.linalg.pinv(others) @ others @ keys[row]  # ⊥ every other key
    u *= -1.0 / (u @ keys[row])  # u · k_j = −1
    b_Q = (1e4 * cfg.score_scale * u).astype(np.float32)
    params = replace(params, layers=(replace(layer, b_Q=b_Q),))
    return cfg, params, image


def patch_moved(image, cfg, j, amount=0.05):
    out = image.copy()
    r, c = divmod(j, cfg.grid_size)
    P = cfg.patch_size
    out[r * P:(r + 1) * P, c * P:(c + 1) * P] += amount
    return out


def test_a_patch_the_logit_does_not_depend_on_gets_zero():
    j = 6
    cfg, params, image = shunned_patch_model(j)
    trace = encode(image, cfg, params)
    assert (trace.layers[0].attn[:, :, cfg.n_prefix + j] == 0).all()
    logits = predict(trace, params)
    # the premise: moving patch j changes no logit; moving another patch does
    np.testing.assert_array_equal(predict(encode(patch_moved(image, cfg, j), cfg, params),
                                          params), logits)
    assert not np.array_equal(predict(encode(patch_moved(image, cfg, 2), cfg, params), params),
                              logits)
    for target in range(3):
        for method in METHODS:
            r = relevance(trace, params, target, method)
            assert r[j] == 0, (target, method)
            assert (np.delete(r, j) > 0).any(), (target, method)


def test_an_unknown_method_or_a_discard_for_chefer_is_refused():
    cfg, params, trace = model(*CASES["note"], n_layers=1)
    with pytest.raises(ValueError, match="method must be one of"):
        relevance(trace, params, 0, "rollout")
    with pytest.raises(ValueError, match="discard_ratio"):
        relevance(trace, params, 0, "chefer", discard_ratio=0.5)


@pytest.mark.parametrize("case", CASES)
def test_the_maps_beside_it_read_the_same_row_as_the_rollout_and_the_attention(case):
    """attention_readout: the [CLS] row (or the patch rows' mean) of the last layer's heads'
    mean and of the whole rollout matrix R, the prefix columns left out."""
    from encoder_core.views.analysis import rollout_mean_over_queries
    from encoder_core.views.relevance import attention_readout
    from encoder_core.views.rollout import attention_rollout

    cfg, _, trace = model(*CASES[case])
    n = cfg.n_prefix
    last, rolled = attention_readout(trace)
    R = attention_rollout([layer.attn for layer in trace.layers])  # [T, T] float64
    A = trace.layers[-1].attn.astype(np.float64).mean(axis=0)  # [T, T]
    if cfg.cls_token:
        want_last, want_rolled = A[0, n:], R[0, n:]
    else:
        want_last, want_rolled = A[n:].mean(axis=0)[n:], rollout_mean_over_queries(R, n)[n:]
    assert last.shape == rolled.shape == (cfg.n_tokens,)
    np.testing.assert_allclose(last, want_last, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(rolled, want_rolled, rtol=1e-9, atol=1e-12)
