"""The trainer's new path (`training.model`: `encode_batch` + `predict`, then
`encoder_core.backward` on the batch's trace) gives the same loss, logits and weight gradients
as its own hand-written backward (`training/backward.py`) on one batch of the shapes model.

Per tensor, max |new − old| / max |old| ≤ 1e-6 in float64 (the same math: only the order of
the sums differs), ≤ 1e-5 in float32, as the trainer trains (float32 rounding of two different
orders of the same sums through 2 layers of 196 tokens).
"""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import make_batch
from training.backward import backward as old_backward
from training.backward import forward as old_forward
from training.model import cross_entropy, loss_and_grads, theta_from

TOLERANCE = {np.float64: 1e-6, np.float32: 1e-5}


def relative_error(new: np.ndarray, old: np.ndarray) -> float:
    return float(np.abs(new - old).max() / np.abs(old).max())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_core_backward_gives_the_old_trainers_gradients_on_one_batch(dtype):
    cfg, params, head = load_trained()
    theta = theta_from(params, head, dtype)
    images, labels, _ = make_batch(2024, 8)
    images = images.astype(dtype)
    logits_old, cache = old_forward(images, theta, cfg)
    loss_old, dlogits = cross_entropy(logits_old, labels)
    old = old_backward(dlogits, cache, theta, cfg)
    loss, logits, new = loss_and_grads(images, labels, theta, cfg)
    assert sorted(new) == sorted(old) == sorted(theta)
    errors = {"logits": relative_error(logits, logits_old)}
    for key, value in old.items():
        assert new[key].shape == value.shape and new[key].dtype == dtype, key
        errors[key] = relative_error(new[key], value)
    print(f"\n{np.dtype(dtype).name}: loss {loss:.6f} vs {loss_old:.6f}; largest relative "
          f"error {max(errors.values()):.1e} ({max(errors, key=errors.get)})")
    assert abs(loss - loss_old) <= TOLERANCE[dtype] * abs(loss_old)
    assert max(errors.values()) <= TOLERANCE[dtype], errors
    assert loss > 0 and np.abs(old["layer0/W_Q"]).max() > 0  # a gradient worth comparing
