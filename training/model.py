"""The model the trainer trains, forward and backward by encoder_core: its weights as one flat
dict `theta`, the loss, and one step's gradients.

The forward is `encoder_core.encode_batch` (`encode` on a leading batch axis B) and the head's
`predict`; the backward is `encoder_core.backward` on that batch's trace, seeded with the
cross-entropy's d loss / d logits. The dtype follows the inputs: float32 for training, float64
for a gradient check.

Parameters live in one flat dict `theta` of writable arrays, keyed like the `.npz`:
`W_E`, `layer{l}/{W_Q, W_K, W_V, W_O, gamma_1, beta_1, W_1, b_1, W_2, b_2, gamma_2, beta_2}`,
`W_cls`, `b_cls`. N = n_tokens, d = d_model, K = n_classes.
"""

from __future__ import annotations

from dataclasses import MISSING, fields

import numpy as np

from encoder_core import (
    EncoderConfig,
    EncoderParams,
    EncoderTrace,
    HeadParams,
    LayerParams,
    backward,
    encode_batch,
    predict,
    softmax,
)
from encoder_core.params import freeze_params
from encoder_core.shapes_model.classifier import ClassifierHead
from encoder_core.shapes_model.dataset import CLASS_NAMES

# the note's layer (no optional ViT parameters: the trainer's encoder is post-norm, no biases on
# Q, K, V, W_O, no LayerScale); the fields' order is LayerParams'
LAYER_FIELDS = tuple(f.name for f in fields(LayerParams) if f.default is MISSING)


# --- parameters as one flat dict ----------------------------------------------------------

def theta_from(params: EncoderParams, head: ClassifierHead,
               dtype: type = np.float32) -> dict[str, np.ndarray]:
    """Writable copies of every parameter, keyed `W_E`, `layer{l}/{name}`, `W_cls`, `b_cls`."""
    theta = {"W_E": np.array(params.W_E, dtype=dtype)}
    for l, lp in enumerate(params.layers):
        for name in LAYER_FIELDS:
            theta[f"layer{l}/{name}"] = np.array(getattr(lp, name), dtype=dtype)
    theta["W_cls"] = np.array(head.W_cls, dtype=dtype)
    theta["b_cls"] = np.array(head.b_cls, dtype=dtype)
    return theta


def layer_params(theta: dict[str, np.ndarray], l: int) -> LayerParams:
    """Layer l's weights from `theta` as the core's LayerParams: the same arrays, no copy, so
    their dtype (float32 or float64) is the computation's."""
    return LayerParams(**{name: theta[f"layer{l}/{name}"] for name in LAYER_FIELDS})


def encoder_params(theta: dict[str, np.ndarray], n_layers: int) -> EncoderParams:
    """`theta` as the core's EncoderParams with its head (the mean of the output rows, then
    W_cls, b_cls): the same arrays, no copy, writable, in theta's dtype."""
    layers = tuple(layer_params(theta, l) for l in range(n_layers))
    head = HeadParams(pool="avg", W_head=theta["W_cls"], b_head=theta["b_cls"])
    return EncoderParams(W_E=theta["W_E"], layers=layers, head=head)


def theta_grads(grads: EncoderParams) -> dict[str, np.ndarray]:
    """The core's weight gradients (`backward(…).params`) under theta's keys (read-only arrays,
    not copied)."""
    out = {"W_E": grads.W_E}
    for l, lp in enumerate(grads.layers):
        for name in LAYER_FIELDS:
            out[f"layer{l}/{name}"] = getattr(lp, name)
    out["W_cls"] = grads.head.W_head
    out["b_cls"] = grads.head.b_head
    return out


def params_from(theta: dict[str, np.ndarray], n_layers: int,
                class_names: tuple[str, ...] = CLASS_NAMES,
                ) -> tuple[EncoderParams, ClassifierHead]:
    """The inverse of `theta_from`: frozen float32 EncoderParams (with the head as
    `params.head`) and the ClassifierHead with its class names."""
    layers = tuple(layer_params(theta, l) for l in range(n_layers))
    head = ClassifierHead(theta["W_cls"], theta["b_cls"], class_names)
    params = freeze_params(EncoderParams(W_E=theta["W_E"], layers=layers, head=head.params()))
    return params, head


# --- forward, loss, backward ----------------------------------------------------------------

def cross_entropy(logits: np.ndarray, labels: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = mean_b −log softmax(logits_b)[label_b]; also d loss / d logits = (p − onehot)/B.

    Args:
        logits: [B, K]; labels: [B] ints.
    Returns:
        (loss, dlogits [B, K])
    """
    B = logits.shape[0]
    shifted = logits - logits.max(axis=-1, keepdims=True)  # [B, K]
    log_z = np.log(np.exp(shifted).sum(axis=-1))  # [B]
    loss = float(np.mean(log_z - shifted[np.arange(B), labels]))
    dlogits = softmax(logits)  # [B, K], a new array
    dlogits[np.arange(B), labels] -= 1
    dlogits /= B
    return loss, dlogits


def forward(images: np.ndarray, theta: dict[str, np.ndarray], cfg: EncoderConfig,
            ) -> tuple[np.ndarray, EncoderTrace, EncoderParams]:
    """Encoder + head on a batch: `encode_batch` + `predict`.

    Args:
        images: [B, S, S, C] in [0, 1], the dtype of the computation (float32 or float64).
        theta: the parameters (same dtype).
    Returns:
        (logits [B, K], the batch's trace [B, …], theta as EncoderParams) — what `backward`
        reads.
    """
    if not cfg.use_ffn or not cfg.use_pe:
        raise ValueError("training covers the full encoder: use_ffn and use_pe must be on.")
    params = encoder_params(theta, cfg.n_layers)
    trace = encode_batch(images, cfg, params)  # every field [B, …]
    return predict(trace, params), trace, params  # [B, N, d] -> mean, W_cls -> [B, K]


def loss_and_grads(images: np.ndarray, labels: np.ndarray, theta: dict[str, np.ndarray],
                   cfg: EncoderConfig) -> tuple[float, np.ndarray, dict[str, np.ndarray]]:
    """One training step's numbers: the batch's mean cross-entropy, its logits [B, K] and
    d loss / d θ for every parameter (theta's keys, read-only arrays), by `encoder_core.backward`
    on the batch's trace.

    Args:
        images: [B, S, S, C]; labels: [B] ints; theta: the parameters (the images' dtype).
    """
    logits, trace, params = forward(images, theta, cfg)
    loss, dlogits = cross_entropy(logits, labels)
    grads = backward(trace, params, dlogits)  # the gradients of every field and weight
    return loss, logits, theta_grads(grads.params)
