"""The hand-written backward of training/ is the gradient of the visualised forward.

1. Every parameter's gradient matches central finite differences in float64 (tiny config).
   The forward is the core's own (`encoder_layer` on [B, N, d], …), so the check runs through
   the functions the app shows, and float64 stays float64 in every cached array.
2. The batched training forward gives the same attention, output and logits as
   `encoder_core.encode` + `encoder_core.predict` per image (the head in the weights): the
   trained math is the shown math."""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params, predict, softmax
from encoder_core.shapes_model.classifier import ClassifierHead
from encoder_core.shapes_model.dataset import make_batch
from training.backward import backward, cross_entropy, forward, params_from, theta_from
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
    logits, _ = forward(IMAGES, theta, TINY)
    return cross_entropy(logits, LABELS)[0]


@pytest.fixture(scope="module")
def analytic_grads() -> dict[str, np.ndarray]:
    logits, cache = forward(IMAGES, THETA, TINY)
    _, dlogits = cross_entropy(logits, LABELS)
    return backward(dlogits, cache, THETA, TINY)


def test_backward_returns_a_float64_gradient_for_every_parameter(analytic_grads):
    assert sorted(analytic_grads) == sorted(THETA)
    for name, g in analytic_grads.items():
        assert g.shape == THETA[name].shape, name
        assert g.dtype == np.float64, name


@pytest.mark.parametrize("name", sorted(THETA))
def test_backward_matches_central_finite_differences(name, analytic_grads):
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


def test_float64_forward_keeps_float64_in_every_cached_array():
    logits, cache = forward(IMAGES, THETA, TINY)
    arrays = {"logits": logits, "patches": cache.patches, "pooled": cache.pooled}
    for l, (x, layer) in enumerate(zip(cache.inputs, cache.layers, strict=True)):
        arrays[f"inputs[{l}]"] = x
        for f in dataclasses.fields(layer):
            value = getattr(layer, f.name)
            if isinstance(value, np.ndarray):
                arrays[f"layers[{l}].{f.name}"] = value
            else:  # a LayerNormTrace (training always has the FFN)
                for g in dataclasses.fields(value):
                    arrays[f"layers[{l}].{f.name}.{g.name}"] = getattr(value, g.name)
    assert "layers[1].ln_2.var" in arrays and "layers[0].attn" in arrays
    wrong = {name: a.dtype for name, a in arrays.items() if a.dtype != np.float64}
    assert not wrong, wrong


def test_gradient_is_not_trivially_zero(analytic_grads):
    for name, g in analytic_grads.items():
        assert np.abs(g).max() > 1e-8, name


@pytest.mark.parametrize("which", ["tiny", "shipped_architecture"])
def test_training_forward_equals_encode_and_predict(which):
    if which == "tiny":
        cfg = TINY
        rng = np.random.default_rng(5)
        images = rng.random((3, 32, 32, 1)).astype(np.float32)
        head = ClassifierHead(rng.normal(0, 0.5, (cfg.d_model, 4)), np.zeros(4), CLASSES)
        theta = theta_from(init_params(cfg), head, np.float32)
    else:
        cfg = model_config()
        images = make_batch(7, 3)[0]
        theta = initial_theta(cfg, seed=0)
        theta["W_cls"] *= 50  # logits of a useful size
    params, head = params_from(theta, cfg.n_layers, tuple(head.class_names)
                               if which == "tiny" else ("circle", "square", "triangle", "cross"))
    logits, cache = forward(images, theta, cfg)
    for b, image in enumerate(images):
        trace = encode(image, cfg, params)
        ref_logits = predict(trace, params)
        probs = softmax(ref_logits)
        scale = np.abs(ref_logits).max()
        assert np.abs(logits[b] - ref_logits).max() <= 1e-5 * scale
        assert np.allclose(cache.pooled[b], trace.output.mean(axis=0), rtol=1e-5, atol=1e-6)
        for l, layer in enumerate(trace.layers):
            assert np.allclose(cache.layers[l].attn[b], layer.attn, rtol=1e-5, atol=1e-7)
        assert np.isclose(probs.sum(), 1.0, atol=1e-6)
