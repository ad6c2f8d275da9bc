"""One step of learning (`encoder_core.views.learning`): the softmax's Jacobian is softmax's
finite differences, the one-row LayerNorm backward equals the backward's own row, the SGD and
Adam steps equal their formulas, and a small enough step lowers the loss (three seeds). Every
gradient the page shows against autograd: tests/test_learning_parity.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import encode, predict
from encoder_core.params import init_params
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import make_sample
from encoder_core.views.learning import (
    AdamState,
    adam_step,
    attention_change,
    cross_entropy,
    image_loss,
    layer_norm_row_backward,
    logit_move,
    loss_gradients,
    random_head,
    sgd_step,
    softmax_jacobian,
    softmax_row_backward,
    train_step,
    trainable,
    value_gradients,
)
from tests.support.learning import relative_error, shapes_case


@pytest.fixture(scope="module")
def shapes():
    return shapes_case()


# --- the pieces against their own formulas -----------------------------------------------------

def test_softmax_jacobian_is_finite_differences_of_softmax():
    z = np.random.default_rng(0).normal(size=7)
    sm = lambda v: np.exp(v - v.max()) / np.exp(v - v.max()).sum()  # noqa: E731
    J = softmax_jacobian(sm(z))
    e = 1e-6
    fd = np.stack([(sm(z + e * np.eye(7)[j]) - sm(z - e * np.eye(7)[j])) / (2 * e)
                   for j in range(7)], axis=1)  # column j: ∂a/∂z_j
    assert np.abs(J - fd).max() < 1e-8
    assert np.allclose(J.sum(axis=1), 0) and np.allclose(J, J.T)
    row = softmax_row_backward(sm(z), np.ones(7))
    assert list(row.largest(3)) == sorted(np.argsort(z)[-3:])
    assert np.allclose(row.d_scores, 0)  # an even gradient on every weight moves no score


def test_the_one_row_layer_norm_backward_equals_the_core_backward(shapes):
    cfg, params, sample, trace = shapes
    lg = loss_gradients(trace, params, sample.label)
    r = 42
    ln = layer_norm_row_backward(trace.layers[0].resid_1[r], params.layers[0].gamma_1,
                                 cfg.ln_eps, lg.grads.layers[0].ln_1.out[r])
    assert relative_error(ln.dx, lg.grads.layers[0].resid_1[r]) <= 1e-5
    assert relative_error(ln.d_var, lg.grads.layers[0].ln_1.var[r]) <= 1e-4
    assert relative_error(ln.d_mean, lg.grads.layers[0].ln_1.mean[r]) <= 1e-4


def test_cross_entropy_is_minus_log_p_and_its_gradient_p_minus_onehot():
    logits = np.array([2.0, -1.0, 0.5, 3.0])
    loss, p, d = cross_entropy(logits, 2)
    assert math.isclose(loss, -math.log(np.exp(0.5) / np.exp(logits).sum()), rel_tol=1e-12)
    assert np.allclose(d, p - np.eye(4)[2]) and math.isclose(p.sum(), 1.0)


def test_the_sgd_step_is_theta_minus_lr_g(shapes):
    cfg, params, sample, trace = shapes
    g = loss_gradients(trace, params, sample.label).grads.params
    new = sgd_step(params, g, 10.0, cfg)  # large: the step stands out of θ's rounding
    before, after, grads = trainable(params), trainable(new), trainable(g)
    assert set(after) == set(before) and "params/W_E" in after and "params/head/W_head" in after
    for k in before:  # the step taken, against −lr·g (float32 rounding of θ: ≤ 1e-3 of it)
        step = after[k].astype(np.float64) - before[k]
        assert relative_error(step, -10.0 * grads[k].astype(np.float64)) <= 1e-3, k
    assert not np.array_equal(after["params/W_E"], before["params/W_E"])


def test_two_adam_steps_follow_the_formula(shapes):
    cfg, params, sample, trace = shapes
    g1 = loss_gradients(trace, params, sample.label).grads.params
    p1, s1 = adam_step(params, g1, AdamState(), 1e-3, cfg)
    g2 = loss_gradients(encode(sample.image, cfg, p1), p1, sample.label).grads.params
    p2, s2 = adam_step(p1, g2, s1, 1e-3, cfg)
    assert (s1.t, s2.t) == (1, 2)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for k, theta in trainable(params).items():
        a1, a2 = trainable(g1)[k].astype(np.float64), trainable(g2)[k].astype(np.float64)
        # step 1: m̂ = g, v̂ = g², so the step is lr·g/(|g| + ε)
        assert np.allclose(trainable(p1)[k], theta - 1e-3 * a1 / (np.abs(a1) + eps), atol=2e-7)
        m = b1 * (1 - b1) * a1 + (1 - b1) * a2
        v = b2 * (1 - b2) * a1 * a1 + (1 - b2) * a2 * a2
        expect = trainable(p1)[k] - 1e-3 * (m / (1 - b1**2)) / (np.sqrt(v / (1 - b2**2)) + eps)
        assert np.allclose(trainable(p2)[k], expect, atol=2e-7), k


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("optimiser, lr", [("sgd", 1e-3), ("adam", 1e-4)])
def test_a_small_step_lowers_the_loss(seed, optimiser, lr):
    """On the trained model's and a random model's weights, a generated shape of each seed."""
    cfg, trained, _ = load_trained()
    sample = make_sample(np.random.default_rng(100 + seed))
    fresh = init_params(cfg.replace(seed=seed))
    fresh = type(fresh)(W_E=fresh.W_E, layers=fresh.layers, head=random_head(cfg, 4, seed))
    for params in (trained, fresh):
        step = train_step(sample.image, sample.label, cfg, params, optimiser, lr)
        after = image_loss(sample.image, sample.label, cfg, step.params)
        assert after < step.loss_before, (optimiser, seed)


# --- the answers of the page's questions -----------------------------------------------------

def test_logit_move_reads_the_labels_logit_and_its_direction():
    assert logit_move(np.array([1.0, 2.0]), np.array([0.5, 2.5]), 1) == ("up", 0.5)
    assert logit_move(np.array([1.0, 2.0]), np.array([0.5, 2.5]), 0) == ("down", -0.5)
    assert logit_move(np.array([1.0, 2.0]), np.array([1.0, 2.0]), 0)[0] == "same"


def test_the_labels_logit_goes_up_after_a_small_step_here(shapes):
    """On this image with the trained weights (not a law: the loss must fall, the label's
    logit need not rise)."""
    cfg, params, sample, trace = shapes
    step = train_step(sample.image, sample.label, cfg, params, "sgd", 1e-3)
    after = predict(encode(sample.image, cfg, step.params), step.params)
    direction, delta = logit_move(predict(trace, params), after, sample.label)
    assert direction == "up" and delta > 0


def test_value_gradients_are_the_backwards_and_zero_for_an_unattended_key(shapes):
    cfg, params, sample, trace = shapes
    g = loss_gradients(trace, params, sample.label).grads
    vg = value_gradients(trace.layers[1].attn[2], g.layers[1].heads[2])
    assert relative_error(vg.dv_norm, np.linalg.norm(g.layers[1].v[2], axis=-1)) <= 1e-5
    assert np.allclose(vg.received.sum(), cfg.seq_len)  # every query's row sums to 1
    attn = np.array(trace.layers[1].attn[2], dtype=np.float64)
    attn[:, 7] = 0.0  # no query attends to key 7
    attn /= attn.sum(axis=-1, keepdims=True)
    vg = value_gradients(attn, g.layers[1].heads[2])
    assert vg.received[7] == 0 and vg.dv_norm[7] == 0 and vg.dv_norm.max() > 0


def test_the_attention_change_is_after_minus_before_and_finds_its_largest(shapes):
    """One SGD step of 0.1 on the image: Δattn is each layer's attn after − before, and the
    place and value it names are those of the largest |Δ| (found here by a loop of our own)."""
    cfg, params, sample, trace = shapes
    after = encode(sample.image, cfg, train_step(sample.image, sample.label, cfg, params,
                                                 "sgd", 0.1).params)
    change = attention_change(trace, after)
    best = (0.0, None)
    for l, (a, b) in enumerate(zip(trace.layers, after.layers, strict=True)):
        d = b.attn.astype(np.float64) - a.attn.astype(np.float64)
        assert np.array_equal(change.delta[l], d)
        k = np.unravel_index(int(np.argmax(np.abs(d))), d.shape)
        if abs(d[k]) > abs(best[0]):
            best = (float(d[k]), (l, *(int(i) for i in k)))
    assert best[0] != 0 and change.value == best[0]
    assert (change.layer, change.head, change.query, change.key) == best[1]
    assert not change.delta.flags.writeable
