"""Small models with heads for the tests of issue 53 (logit lens, logit shares, patching,
faithfulness): every ViT variant of `configs.VIT` on SMALL, every parameter perturbed, with a
random head of each pooling; the note's post-norm encoder with a mean-pool head; and naive
float64 references (a LayerNorm, the head) written out here, independent of encoder_core."""

from __future__ import annotations

import dataclasses

import numpy as np

from encoder_core import EncoderConfig, HeadParams, encode, init_params
from tests.support.configs import SMALL, VIT, make_test_image, perturb_every_parameter

N_CLASSES = 5
VIT_CFG = EncoderConfig(**{**SMALL, **VIT})  # pre-norm, CLS + DIST + 2 registers, LayerScale, …
NOTE_CFG = EncoderConfig(**SMALL)  # the note's post-norm encoder (no prefix, no final norm)
HEAD_KINDS = ("token", "avg_fc_norm", "token_avg", "token_dist")


def random_head(kind: str, d: int, seed: int = 5) -> HeadParams:
    """A random head of `kind` ("token", "avg", "avg_fc_norm", "token_avg", "token_dist",
    "pre_logits"), n_classes = N_CLASSES, float32."""
    rng = np.random.default_rng(seed)

    def r(*shape: int, scale: float = 0.5) -> np.ndarray:
        return (scale * rng.standard_normal(shape)).astype(np.float32)

    pool = {"avg_fc_norm": "avg", "pre_logits": "token"}.get(kind, kind)
    d_in = 2 * d if pool == "token_avg" else d
    extra: dict[str, np.ndarray] = {}
    if kind == "token_dist":
        extra = dict(W_dist=r(d_in, N_CLASSES), b_dist=r(N_CLASSES))
    if kind == "avg_fc_norm":
        extra = dict(fc_norm_gamma=rng.uniform(0.5, 1.5, d_in).astype(np.float32),
                     fc_norm_beta=r(d_in))
    if kind == "pre_logits":
        extra = dict(W_pre=r(d_in, 7), b_pre=r(7))
        d_in = 7
    return HeadParams(pool=pool, W_head=r(d_in, N_CLASSES), b_head=r(N_CLASSES), **extra)


def vit_model(kind: str = "token", seed: int = 99):
    """(cfg, params) of VIT_CFG with every parameter perturbed and a `kind` head."""
    params = perturb_every_parameter(init_params(VIT_CFG), seed=seed)
    return VIT_CFG, dataclasses.replace(params, head=random_head(kind, VIT_CFG.d_model))


def note_model(seed: int = 3):
    """(cfg, params) of the note's post-norm encoder with a mean-pool head (the shapes model's
    kind of head)."""
    params = perturb_every_parameter(init_params(NOTE_CFG), seed=seed)
    return NOTE_CFG, dataclasses.replace(params, head=random_head("avg", NOTE_CFG.d_model))


def image_for(cfg: EncoderConfig, seed: int = 1234) -> np.ndarray:
    return make_test_image(cfg.image_size, cfg.channels, seed=seed)


def traced(cfg: EncoderConfig, params, seed: int = 1234):
    return encode(image_for(cfg, seed), cfg, params)


def naive_layer_norm(x: np.ndarray, gamma, beta, eps: float,
                     sigma: np.ndarray | None = None) -> np.ndarray:
    """γ(x − μ)/σ + β in float64, row by row; σ given (held) or √(var + ε) of x."""
    x = np.asarray(x, np.float64)
    mu = x.mean(axis=-1, keepdims=True)
    if sigma is None:
        sigma = np.sqrt(((x - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    else:
        sigma = np.asarray(sigma, np.float64).reshape(*x.shape[:-1], 1)
    return np.asarray(gamma, np.float64) * (x - mu) / sigma + np.asarray(beta, np.float64)


def naive_head(output: np.ndarray, head: HeadParams, n_prefix: int, eps: float,
               fc_sigma: np.ndarray | None = None) -> np.ndarray:
    """The head on an output [S, d], float64, written out: pooling, fc_norm (σ held when given),
    pre-logits, the linear head(s). Returns [n_classes]."""
    out = np.asarray(output, np.float64)
    if head.pool == "token":
        rows = out[0:1]
    elif head.pool == "token_dist":
        rows = out[0:2]
    elif head.pool == "avg":
        rows = out[n_prefix:].mean(axis=0, keepdims=True)
    else:
        rows = np.concatenate([out[0:1], out[n_prefix:].mean(axis=0, keepdims=True)], axis=-1)
    if head.fc_norm_gamma is not None:
        rows = naive_layer_norm(rows, head.fc_norm_gamma, head.fc_norm_beta, eps, fc_sigma)
    if head.W_pre is not None:
        rows = np.tanh(rows @ head.W_pre.astype(np.float64) + head.b_pre)
    logits = [rows[0] @ head.W_head.astype(np.float64) + head.b_head]
    if head.pool == "token_dist":
        logits.append(rows[1] @ head.W_dist.astype(np.float64) + head.b_dist)
    return np.mean(logits, axis=0)


def relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    return float(np.abs(ours - theirs).max() / np.abs(theirs).max())
