"""Faithfulness of a relevance map: delete the patches it ranks first and watch the class's
probability fall (the deletion curve; Chefer, Gur & Wolf 2021's positive perturbation test,
Petsiuk et al. 2018's "deletion"), or put them back first into an emptied image (insertion).

The baseline a patch is replaced by is the image's MEAN COLOUR: per channel, the mean of that
channel over the whole image (every pixel, in [0, 1], before the model's own pixel
normalisation), painted over all P × P pixels of the patch.

    order        = the patches by relevance, most relevant first (`relevance_order`)
    k_s          = round(s · N / steps)                        s = 0 … steps
    deletion:  image_s = image with patches order[:k_s] set to the mean colour
    insertion: image_s = the all-mean image with patches order[:k_s] put back
    p_s        = softmax(model(image_s))[target]
    fractions  = k_s / N,  area = Σ_s ½(p_s + p_{s+1})(f_{s+1} − f_s)    (trapezoid, over 0 … 1)

A faithful map has a LOW deletion area (the probability falls at once) and a HIGH insertion
area. Both curves start / end at the full image's probability and the all-mean image's.
The steps + 1 images run through the encoder as batches (`batch_logits`: one layer's arrays at
a time, no trace kept): steps + 1 forwards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..config import EncoderConfig
from ..params import EncoderParams, check_shapes
from ..pipeline.attention import softmax
from ..pipeline.embedding import embed, prefix_tokens
from ..pipeline.encoder import encoder_layer
from ..pipeline.head import output_logits
from ..pipeline.norm import layer_norm
from ..pipeline.patches import normalise_pixels, patchify
from ..pipeline.positional import patch_positions, position_rows
from .logit_lens import require_head

CHUNK = 16  # images per batch in `batch_logits`


@dataclass(frozen=True)
class Curve:
    """A deletion or insertion curve of one class on one image."""

    fractions: np.ndarray  # [steps + 1] the share of patches deleted (inserted), 0 … 1
    probs: np.ndarray  # [steps + 1] float64 softmax probability of the target at each step
    area: float  # the trapezoid rule of probs over fractions (0 … 1)


def relevance_order(scores: np.ndarray) -> np.ndarray:
    """The patches by score, highest first; equal scores by index (a stable sort). NaN last.

    scores: [N] one value per patch (prefix left out). Returns [N] int patch indices."""
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    key = np.where(np.isnan(s), np.inf, -s)
    return np.argsort(key, kind="stable")


def mean_colour(image: np.ndarray) -> np.ndarray:
    """The image's mean colour: per channel, the mean over every pixel. [S, S, C] -> [C]."""
    return np.asarray(image, np.float64).reshape(-1, image.shape[-1]).mean(axis=0)


def patch_pixels(cfg: EncoderConfig, patches: np.ndarray) -> np.ndarray:
    """A pixel mask [S, S] bool, True on the patches listed (patch p: grid row p // G, column
    p % G, as `patchify` orders them)."""
    G, P = cfg.grid_size, cfg.patch_size
    grid = np.zeros(G * G, dtype=bool)
    grid[np.asarray(patches, dtype=int)] = True
    return np.repeat(np.repeat(grid.reshape(G, G), P, axis=0), P, axis=1)  # [S, S]


def step_counts(n_patches: int, steps: int) -> np.ndarray:
    """k_s = round(s · N / steps), s = 0 … steps: patches changed at each step. [steps + 1]."""
    if not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a whole number ≥ 1, got {steps!r}.")
    return np.rint(np.arange(steps + 1) * n_patches / steps).astype(int)


def perturbed_images(image: np.ndarray, cfg: EncoderConfig, order: np.ndarray, steps: int,
                     insertion: bool) -> tuple[np.ndarray, np.ndarray]:
    """The steps + 1 images of the curve: [steps + 1, S, S, C] float32, and k_s / N [steps + 1].
    Deletion: order[:k_s] set to the mean colour; insertion: only order[:k_s] kept."""
    N = cfg.n_tokens
    order = np.asarray(order, dtype=int).reshape(-1)
    if order.shape != (N,) or sorted(order.tolist()) != list(range(N)):
        raise ValueError(f"order must list each of the {N} patches once.")
    counts = step_counts(N, steps)
    base = np.broadcast_to(mean_colour(image), image.shape)  # [S, S, C]
    images = []
    for k in counts:
        chosen = patch_pixels(cfg, order[:k])[..., None]  # [S, S, 1]
        images.append(np.where(chosen, image, base) if insertion else np.where(chosen, base, image))
    return np.stack(images).astype(np.float32), counts / N


def input_rows(images: np.ndarray, cfg: EncoderConfig, params: EncoderParams) -> np.ndarray:
    """x0 of each image, as `encode` makes it: pixels normalised, patches embedded, the prefix
    tokens prepended, the positions added. images [B, S, S, C] -> [B, seq_len, d]."""
    dtype = images.dtype.type
    pixels = (normalise_pixels(images, cfg.pixel_mean, cfg.pixel_std, dtype)
              if cfg.normalises_pixels else images)
    tokens = embed(patchify(pixels, cfg.patch_size), params.W_E, params.b_E)  # [B, N, d]
    if cfg.n_prefix:
        prefix = prefix_tokens(params.cls, params.dist, params.registers, cfg.d_model)
        prefix = np.broadcast_to(prefix.astype(dtype), (len(images), *prefix.shape))
        tokens = np.concatenate([prefix, tokens], axis=-2)  # [B, seq_len, d]
    if not cfg.use_pe:
        return tokens
    pe = patch_positions(cfg, params.pos_embed, dtype)  # [N, d]
    return tokens + position_rows(cfg, pe, params.pos_embed)


def batch_logits(images: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
                 chunk: int = CHUNK) -> np.ndarray:
    """The model's logits on every image, `chunk` images at a time, one layer's arrays held at
    a time (no trace): what `predict(encode(image))` gives, image by image.

    images: [B, S, S, C] in [0, 1]. Returns [B, n_classes] float32."""
    require_head(params)
    check_shapes(params, cfg)
    images = np.asarray(images, dtype=np.float32)
    out = []
    for start in range(0, len(images), chunk):
        x = input_rows(images[start:start + chunk], cfg, params)  # [b, seq_len, d]
        for p in params.layers:
            x = encoder_layer(x, p, cfg).out
        if cfg.final_norm:
            x = layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps).out
        out.append(output_logits(x, params.head, cfg.n_prefix, cfg.ln_eps))
    return np.concatenate(out)


def perturbation_curve(image: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
                       order: np.ndarray, target: int, steps: int, insertion: bool) -> Curve:
    """The deletion (insertion=False) or insertion curve; see the module's docstring."""
    images, fractions = perturbed_images(np.asarray(image, np.float32), cfg, order, steps,
                                         insertion)
    probs = softmax(batch_logits(images, cfg, params).astype(np.float64))[:, target]
    area = float(np.sum((probs[1:] + probs[:-1]) * np.diff(fractions)) / 2)
    return Curve(fractions=fractions, probs=probs, area=area)


def deletion_curve(image: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
                   order: np.ndarray, target: int, steps: int) -> Curve:
    """The target's probability as the patches in `order` are replaced by the image's mean
    colour (per channel, over the whole image), steps + 1 points from the full image to the
    all-mean one.

    Args:
        image: [S, S, C] in [0, 1] (what `encode` takes); cfg, params: the model, with a head.
        order: [N] every patch once, the first deleted first (`relevance_order`).
        target: the class; steps: ≥ 1 (k_s = round(s·N/steps) patches at step s).
    Returns:
        Curve: fractions k_s / N, probs [steps + 1], area (trapezoid; low = faithful).
    """
    return perturbation_curve(image, cfg, params, order, target, steps, insertion=False)


def insertion_curve(image: np.ndarray, cfg: EncoderConfig, params: EncoderParams,
                    order: np.ndarray, target: int, steps: int) -> Curve:
    """The target's probability as the patches in `order` are put back into the all-mean image
    (the image's mean colour per channel, over the whole image), from it to the full image.
    Arguments and result as `deletion_curve` (area: high = faithful)."""
    return perturbation_curve(image, cfg, params, order, target, steps, insertion=True)
