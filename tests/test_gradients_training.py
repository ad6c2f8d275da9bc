"""On the note's encoder (post-norm, sinusoidal positions, ReLU, the mean-pool head), the
gradient of the shapes model's loss from `encoder_core.backward` equals the trainer's own
hand-written backward (`training/backward.py`) on one batch, for every weight, ≤ 1e-5 of each
tensor's largest value — in float32, as the trainer trains, and in float64.

The batch's trace is the trainer's own forward cache laid out as an EncoderTrace with a leading
batch axis B on every field: both backwards read the same forward.
"""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import (
    EncoderParams,
    EncoderTrace,
    HeadParams,
    backward,
    positional_encoding,
)
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import make_batch
from training.backward import backward as trainer_backward
from training.backward import cross_entropy, forward, layer_params, theta_from

TOLERANCE = 1e-5


def batch_trace(images: np.ndarray, cache, theta, cfg) -> EncoderTrace:
    """The trainer's cache as an EncoderTrace with a leading B (no prefix, PE on, no final
    norm: tokens is embedded, pos is pe, output is the last layer's out)."""
    pe = np.broadcast_to(positional_encoding(cfg.n_tokens, cfg.d_model, images.dtype.type),
                         cache.inputs[0].shape)  # [B, N, d]
    embedded = cache.inputs[0] - pe  # x0 = embedded + pe
    params = trained_params(theta, cfg)
    return EncoderTrace(config=cfg, params=params, image=images, pixels=images,
                        patches=cache.patches, embedded=embedded, pe=pe, tokens=embedded,
                        pos=pe, x0=cache.inputs[0], layers=tuple(cache.layers), final_ln=None,
                        output=cache.layers[-1].out)


def trained_params(theta, cfg):
    """theta as EncoderParams in its own dtype, the head's mean pool included."""
    return EncoderParams(W_E=theta["W_E"],
                         layers=tuple(layer_params(theta, l) for l in range(cfg.n_layers)),
                         head=HeadParams(pool="avg", W_head=theta["W_cls"], b_head=theta["b_cls"]))


def as_theta(grads, cfg) -> dict[str, np.ndarray]:
    """The core's weight gradients under the trainer's keys."""
    out = {"W_E": grads.W_E, "W_cls": grads.head.W_head, "b_cls": grads.head.b_head}
    for l, lp in enumerate(grads.layers):
        for name in ("W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1", "W_1", "b_1", "W_2", "b_2",
                     "gamma_2", "beta_2"):
            out[f"layer{l}/{name}"] = getattr(lp, name)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_loss_gradient_equals_the_trainers_backward_on_one_batch(dtype):
    cfg, params, head = load_trained()
    theta = theta_from(params, head, dtype)
    images, labels, _ = make_batch(2024, 4)
    images = images.astype(dtype)
    logits, cache = forward(images, theta, cfg)
    loss, d_logits = cross_entropy(logits, labels)
    theirs = trainer_backward(d_logits, cache, theta, cfg)
    trace = batch_trace(images, cache, theta, cfg)
    grads = backward(trace, trace.params, d_logits)
    ours = as_theta(grads.params, cfg)
    assert sorted(ours) == sorted(theirs)
    errors = {}
    for key, value in theirs.items():
        assert ours[key].shape == value.shape and ours[key].dtype == dtype, key
        errors[key] = float(np.abs(ours[key] - value).max() / np.abs(value).max())
    assert max(errors.values()) <= TOLERANCE, errors
    assert grads.layers[0].attn.shape == (4, cfg.n_heads, cfg.n_tokens, cfg.n_tokens)
    assert loss > 0 and np.abs(theirs["layer0/W_Q"]).max() > 0  # a gradient worth comparing
