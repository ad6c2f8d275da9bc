"""The trainer's step (`training.model`) is the core's forward and backward on a batch, plumbed
right: the gradient of the loss the trainer follows, and the model it trains.

The backward itself is `encoder_core.backward`, checked field by field and weight by weight
against finite differences (tests/test_gradients.py, one image and a batch) and against autograd
(tests/test_gradients_parity.py). Here, on a tiny configuration in float64:

1. d loss / d θ from `loss_and_grads` matches central finite differences of the loss for every
   parameter under its theta key (the cross-entropy's d loss / d logits, the mapping of the
   core's gradients back to theta, the head).
2. The trainer's batched forward gives the attention and logits of `encode` + `predict` per
   image (the head in the weights): the trained math is the shown math.

(Before training/backward.py was removed, the two backwards agreed on a batch of the shipped
model to 1.2e-15 in float64 and 8.5e-7 in float32: see the commit that removed it.)
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params, predict, softmax, trace_arrays
from encoder_core.shapes_model.classifier import ClassifierHead
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_batch
from training.model import cross_entropy, forward, loss_and_grads, params_from, theta_from
from training.train import initial_theta, model_config

TINY = EncoderConfig(image_size=32, patch_size=8, channels=1, d_model=8, n_heads=2, n_layers=2,
                     d_ff=16, seed=3)
CLASSES = ("a", "b", "c", "d")
STEP = 1e-5  # central-difference step
PER_TENSOR = 10  # entries checked per parameter tensor


def tiny_problem() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """float64 parameters (non-trivial γ, β and biases), 2 random images, 2 labels."""
    rng = np.random.default_rng(11)
    head = ClassifierHead(rng.normal(0, 0.5, (TINY.d_model, 4)), rng.normal(0, 0.1, 4), CLASSES)
    theta = theta_from(init_params(TINY), head, np.float64)
    for name in theta:
        if name.rsplit("/", 1)[-1].startswith(("gamma", "beta", "b_")):
            theta[name] = theta[name] + rng.normal(0, 0.3, theta[name].shape)
    images = rng.random((2, TINY.image_size, TINY.image_size, 1))  # float64
    return theta, images, np.array([1, 3])


THETA, IMAGES, LABELS = tiny_problem()


def loss_at(theta: dict[str, np.ndarray]) -> float:
    return cross_entropy(forward(IMAGES, theta, TINY)[0], LABELS)[0]


@pytest.fixture(scope="module")
def analytic_grads() -> dict[str, np.ndarray]:
    return loss_and_grads(IMAGES, LABELS, THETA, TINY)[2]


def test_every_parameter_gets_a_float64_gradient_of_its_shape(analytic_grads):
    assert sorted(analytic_grads) == sorted(THETA)
    for name, g in analytic_grads.items():
        assert g.shape == THETA[name].shape and g.dtype == np.float64, name
        assert np.abs(g).max() > 1e-8, name  # not trivially zero


@pytest.mark.parametrize("name", sorted(THETA))
def test_the_loss_gradient_matches_central_finite_differences(name, analytic_grads):
    theta = {k: v.copy() for k, v in THETA.items()}
    flat = theta[name].reshape(-1)  # a view: writing flat changes theta[name]
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    picks = rng.choice(flat.size, size=min(PER_TENSOR, flat.size), replace=False)
    for i in picks:
        old = flat[i]
        flat[i] = old + STEP
        plus = loss_at(theta)
        flat[i] = old - STEP
        minus = loss_at(theta)
        flat[i] = old
        numeric = (plus - minus) / (2 * STEP)
        analytic = analytic_grads[name].reshape(-1)[i]
        rel = abs(numeric - analytic) / max(abs(numeric), abs(analytic), 1e-6)
        assert rel < 1e-4, f"{name}[{i}]: analytic {analytic:.6e}, numeric {numeric:.6e}"


def test_a_float64_step_keeps_float64_in_every_traced_array():
    logits, trace, _ = forward(IMAGES, THETA, TINY)
    arrays = trace_arrays(trace) | {"logits": logits}
    assert "layer1/ln_2/var" in arrays and "layer0/attn" in arrays
    wrong = {name: a.dtype for name, a in arrays.items() if a.dtype != np.float64}
    assert not wrong, wrong


@pytest.mark.parametrize("which", ["tiny", "shipped_architecture"])
def test_training_forward_equals_encode_and_predict(which):
    if which == "tiny":
        cfg, names = TINY, CLASSES
        rng = np.random.default_rng(5)
        images = rng.random((3, 32, 32, 1)).astype(np.float32)
        head = ClassifierHead(rng.normal(0, 0.5, (cfg.d_model, 4)), np.zeros(4), CLASSES)
        theta = theta_from(init_params(cfg), head, np.float32)
    else:
        cfg, names = model_config(), CLASS_NAMES
        images = make_batch(7, 3)[0]
        theta = initial_theta(cfg, seed=0)
        theta["W_cls"] *= 50  # logits of a useful size
    params, _ = params_from(theta, cfg.n_layers, names)
    logits, trace, _ = forward(images, theta, cfg)
    assert logits.shape == (3, 4) and logits.dtype == np.float32
    for b, image in enumerate(images):
        ref = encode(image, cfg, params)
        ref_logits = predict(ref, params)
        scale = np.abs(ref_logits).max()
        assert np.abs(logits[b] - ref_logits).max() <= 1e-5 * scale
        for l, layer in enumerate(ref.layers):
            assert np.allclose(trace.layers[l].attn[b], layer.attn, rtol=1e-5, atol=1e-7)
        assert np.isclose(softmax(ref_logits).sum(), 1.0, atol=1e-6)
