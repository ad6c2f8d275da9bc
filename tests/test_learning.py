"""One step of learning (`encoder_core.views.learning`): every gradient the page "How it learns"
shows equals PyTorch autograd's on the same model (the shipped shapes model, written here in
torch from its own weights), ≤ 1e-4 of each tensor's largest value; the softmax's Jacobian and
the one-row LayerNorm backward equal the backward's own rows; the SGD and Adam steps equal
their formulas; a small enough step lowers the loss (three seeds)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import encode
from encoder_core.params import init_params
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import make_sample
from encoder_core.views.learning import (
    AdamState,
    adam_step,
    cross_entropy,
    image_loss,
    layer_norm_row_backward,
    loss_gradients,
    random_head,
    scores_row_gradient,
    sgd_step,
    softmax_jacobian,
    softmax_row_backward,
    train_step,
    trainable,
)

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def shapes():
    cfg, params, head = load_trained()
    sample = make_sample(np.random.default_rng(3))
    trace = encode(sample.image, cfg, params)
    return cfg, params, sample, trace


def relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    theirs = np.asarray(theirs, dtype=np.float64)
    return float(np.abs(np.asarray(ours, np.float64) - theirs).max() / np.abs(theirs).max())


# --- against autograd ----------------------------------------------------------------------

def torch_pass(trace, params, label):
    """The shapes model's forward in torch (post-norm, ReLU, no biases on Q/K/V/W_O, mean pool)
    from the trace's patches and positions, every node shown by the page retained."""
    from tests.support.torch_shim import torch  # noqa: PLC0415  (test-only)

    cfg = trace.config
    t = lambda a: torch.tensor(np.asarray(a, np.float64), requires_grad=True)  # noqa: E731
    kept = {"W_E": t(params.W_E)}
    h, d = cfg.n_heads, cfg.d_model
    s = cfg.score_scale
    x = torch.tensor(trace.patches, dtype=torch.float64) @ kept["W_E"]
    x = x + torch.tensor(trace.pe, dtype=torch.float64)
    x.retain_grad()
    kept["x0"] = x

    def ln(z, g, b):
        mu = z.mean(-1, keepdim=True)
        var = ((z - mu) ** 2).mean(-1, keepdim=True)
        return g * (z - mu) / torch.sqrt(var + cfg.ln_eps) + b

    for l, p in enumerate(params.layers):
        w = {k: t(getattr(p, k)) for k in ("W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1",
                                           "W_1", "b_1", "W_2", "b_2", "gamma_2", "beta_2")}
        kept.update({f"layer{l}/{k}": v for k, v in w.items()})
        S = x.shape[0]
        q, k, v = ((x @ w[n]).reshape(S, h, d // h).transpose(0, 1) for n in ("W_Q", "W_K", "W_V"))
        scores = q @ k.transpose(1, 2) / s
        scores.retain_grad()
        attn = torch.softmax(scores, -1)
        attn.retain_grad()
        concat = (attn @ v).transpose(0, 1).reshape(S, d)
        resid_1 = x + concat @ w["W_O"]
        resid_1.retain_grad()
        ln_1 = ln(resid_1, w["gamma_1"], w["beta_1"])
        ln_1.retain_grad()
        hidden = torch.relu(ln_1 @ w["W_1"] + w["b_1"])
        hidden.retain_grad()
        ffn_out = hidden @ w["W_2"] + w["b_2"]
        ffn_out.retain_grad()
        resid_2 = ln_1 + ffn_out
        resid_2.retain_grad()
        x = ln(resid_2, w["gamma_2"], w["beta_2"])
        x.retain_grad()
        kept |= {f"{l}/scores": scores, f"{l}/attn": attn, f"{l}/resid_1": resid_1,
                 f"{l}/ln_1": ln_1, f"{l}/hidden": hidden, f"{l}/ffn_out": ffn_out,
                 f"{l}/resid_2": resid_2, f"{l}/out": x}
    pooled = x.mean(0)
    pooled.retain_grad()
    kept["pooled"] = pooled
    W_cls, b_cls = t(params.head.W_head), t(params.head.b_head)
    logits = pooled @ W_cls + b_cls
    logits.retain_grad()
    kept |= {"logits": logits, "W_cls": W_cls, "b_cls": b_cls}
    loss = torch.nn.functional.cross_entropy(logits[None], torch.tensor([label]))
    loss.backward()
    return loss.item(), {k: v.grad.numpy() for k, v in kept.items()}


@pytest.mark.parity
def test_every_gradient_the_page_shows_equals_autograds(shapes):
    cfg, params, sample, trace = shapes
    lg = loss_gradients(trace, params, sample.label)
    loss, theirs = torch_pass(trace, params, sample.label)
    assert abs(lg.loss - loss) <= 1e-4 * max(1.0, abs(loss))
    g = lg.grads
    ours = {"logits": lg.d_logits, "pooled": lg.d_pooled, "x0": g.x0, "W_E": g.params.W_E,
            "W_cls": g.params.head.W_head, "b_cls": g.params.head.b_head}
    for l, (gl, gp) in enumerate(zip(g.layers, g.params.layers, strict=True)):
        ours |= {f"{l}/scores": gl.scores, f"{l}/attn": gl.attn, f"{l}/resid_1": gl.resid_1,
                 f"{l}/ln_1": gl.ln_1.out, f"{l}/hidden": gl.ffn_hidden,
                 f"{l}/ffn_out": gl.ffn_out, f"{l}/resid_2": gl.resid_2, f"{l}/out": gl.out}
        ours |= {f"layer{l}/{k}": getattr(gp, k) for k in (
            "W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1", "W_1", "b_1", "W_2", "b_2",
            "gamma_2", "beta_2")}
    errors = {k: relative_error(ours[k], theirs[k]) for k in theirs}
    assert max(errors.values()) <= TOLERANCE, {k: e for k, e in errors.items() if e > TOLERANCE}
    assert set(errors) == set(ours)


@pytest.mark.parity
def test_the_one_row_pieces_equal_autograds(shapes):
    """The softmax Jacobian's product and the one-row LayerNorm backward, on the rows the page
    shows, against autograd's dL/dscores and dL/dresid."""
    cfg, params, sample, trace = shapes
    lg = loss_gradients(trace, params, sample.label)
    _, theirs = torch_pass(trace, params, sample.label)
    for l in range(cfg.n_layers):
        for head, query in ((0, 0), (cfg.n_heads - 1, 100)):
            row = scores_row_gradient(trace.layers[l].attn[head, query],
                                      lg.grads.layers[l].attn[head, query])
            assert relative_error(row, theirs[f"{l}/scores"][head, query]) <= TOLERANCE
            pieces = softmax_row_backward(trace.layers[l].attn[head, query],
                                          lg.grads.layers[l].attn[head, query])
            assert np.array_equal(pieces.d_scores, row)
            assert np.allclose(pieces.d_scores, pieces.a * (pieces.d_attn - pieces.weighted))
        ln = layer_norm_row_backward(trace.layers[l].resid_2[7], params.layers[l].gamma_2,
                                     cfg.ln_eps, lg.grads.layers[l].out[7])
        assert relative_error(ln.dx, theirs[f"{l}/resid_2"][7]) <= TOLERANCE


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
