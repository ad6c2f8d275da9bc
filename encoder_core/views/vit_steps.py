"""The steps a Vision Transformer adds to the note's encoder, written out for the pages.

A real ViT normalises the pixels, learns its positions and uses GELU; the pages show
each of these with the real numbers, checked against the trace. Each function here computes one
of them from the trace's own arrays, in float64 so a page can print it beside the float32 value
the encoder stored. Pure NumPy; nothing here changes its arguments.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..config import EncoderConfig
from ..pipeline.ffn import GELU_TANH_C, SQRT_2_OVER_PI, gelu, gelu_tanh, relu

if TYPE_CHECKING:
    from ..checkpoints.load import CheckpointInfo


@dataclass(frozen=True)
class PixelTerms:
    x: np.ndarray  # [C] the pixel's values in [0, 1], one per channel
    mean: np.ndarray  # [C] the checkpoint's pixel_mean
    std: np.ndarray  # [C] the checkpoint's pixel_std
    value: np.ndarray  # [C] (x − mean) / std, float64


def pixel_terms(x: np.ndarray, mean: tuple[float, ...], std: tuple[float, ...]) -> PixelTerms:
    """One pixel normalised as the checkpoint was trained: (x − mean) / std, per channel.

    Args:
        x: [C] one pixel of the image in [0, 1]; mean, std: C values each (std > 0).
    Returns:
        PixelTerms, every field float64 [C].
    """
    x64 = np.asarray(x, dtype=np.float64)
    mean64, std64 = np.asarray(mean, dtype=np.float64), np.asarray(std, dtype=np.float64)
    return PixelTerms(x=x64, mean=mean64, std=std64, value=(x64 - mean64) / std64)


def similarity_mosaic(sim: np.ndarray, grid_size: int, gap: int = 1) -> np.ndarray:
    """The ViT paper's figure 7 (centre) as one matrix: tile (r, c) is row p = r·G + c of `sim`
    laid on the G × G grid, so each patch's similarity to every other patch sits where that
    patch is in the image; tiles are separated by `gap` rows / columns of NaN.

    Args:
        sim: [N, N] (N = G²), e.g. cos(pos_embed_p, pos_embed_q) of the patches' rows.
    Returns:
        [G·(G + gap) − gap, G·(G + gap) − gap] float64; cell (r·(G+gap) + a, c·(G+gap) + b) is
        sim[r·G + c, a·G + b].
    """
    G = grid_size
    tiles = np.asarray(sim, dtype=np.float64).reshape(G, G, G, G)  # [r, c, a, b]
    pitch = G + gap
    out = np.full((G * pitch - gap, G * pitch - gap), np.nan)
    for r in range(G):
        for c in range(G):
            out[r * pitch:r * pitch + G, c * pitch:c * pitch + G] = tiles[r, c]
    return out


def activation_curve(activation: str, lo: float = -4.0, hi: float = 4.0,
                     n: int = 161) -> tuple[np.ndarray, np.ndarray]:
    """The FFN's non-linearity on a grid, as the encoder computes it (for a plot).

    Args:
        activation: "relu", "gelu" (x·Φ(x), erf) or "gelu_tanh".
    Returns:
        (x [n], act(x) [n]) float64.
    """
    x = np.linspace(lo, hi, n)
    fn = {"relu": relu, "gelu": gelu, "gelu_tanh": gelu_tanh}[activation]
    return x, fn(x)


def activation_gate(pre: float, activation: str) -> float:
    """The factor g with act(pre) = pre · g, in float64: ReLU 1 or 0; GELU Φ(pre) =
    ½(1 + erf(pre/√2)); its tanh form ½(1 + tanh(√(2/π)(pre + 0.044715·pre³)))."""
    if activation == "relu":
        return 1.0 if pre > 0 else 0.0
    if activation == "gelu":
        return 0.5 * (1.0 + math.erf(pre / math.sqrt(2.0)))
    if activation == "gelu_tanh":
        return 0.5 * (1.0 + math.tanh(SQRT_2_OVER_PI * (pre + GELU_TANH_C * pre ** 3)))
    raise ValueError(f"unknown activation {activation!r}")


def vit_differences(cfg: EncoderConfig) -> list[str]:
    """Ids of what this configuration does that the note's encoder does not, in pipeline order:
    "pixels", "patch_bias", "cls", "dist", "registers", "learned", "pre_norm", "qkv_bias",
    "proj_bias", "gelu", "gelu_tanh", "layer_scale", "final_norm" ([] for the note's)."""
    on = {"pixels": cfg.normalises_pixels, "patch_bias": cfg.patch_bias, "cls": cfg.cls_token,
          "dist": cfg.dist_token, "registers": cfg.n_registers > 0,
          "learned": cfg.position == "learned", "pre_norm": cfg.norm_first,
          "qkv_bias": cfg.qkv_bias, "proj_bias": cfg.proj_bias,
          "gelu": cfg.use_ffn and cfg.activation == "gelu",
          "gelu_tanh": cfg.use_ffn and cfg.activation == "gelu_tanh",
          "layer_scale": cfg.layer_scale, "final_norm": cfg.final_norm}
    return [name for name, yes in on.items() if yes]


def residual_entry(x: float, y: float, ls: float | None = None) -> float:
    """One entry of a residual add, in float64: x + y, or x + ls·y with LayerScale."""
    return float(x) + (1.0 if ls is None else float(ls)) * float(y)


def pixel_stats_guess(info: CheckpointInfo | None) -> str:
    """Why a checkpoint's pixel_mean / pixel_std are what they are when they were NOT read from
    it or its config ("inferred" / "default": the rule for its family, e.g. "0.5/0.5 (Google /
    timm augreg / HF ViT); check if your model differs"); "" when they were, or for no model.

    Args:
        info: the checkpoint's CheckpointInfo, or None (the note's encoder).
    """
    if info is None:
        return ""
    for s in info.settings:
        if s.name == "pixel_mean" and s.source in ("inferred", "default"):
            return s.why or s.source
    return ""
