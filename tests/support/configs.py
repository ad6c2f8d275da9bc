"""Small configurations shared by the core tests (kept tiny so every test runs in milliseconds)."""

from __future__ import annotations

import numpy as np

# 32 × 32 grey image, 8 px patches -> 16 tokens; d_model 32, 4 heads, 3 layers
SMALL = dict(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=3, d_ff=64)

# The `trace` fixture (conftest.py) runs at each: SMALL with these changes, one switch each.
TRACE_CONFIGS = {
    "small": {},
    "rgb_scale_none": dict(channels=3, scale="none"),
    "no_ffn_d_model": dict(use_ffn=False, scale="d_model", n_heads=2),
    "64_tokens_8_heads": dict(patch_size=4, d_model=64, n_heads=8, d_ff=128, seed=3),
}

# The Vision Transformer variants (issue 11), on top of SMALL: every optional part switched on
# (pre-norm, [CLS] + distillation token + registers, learned positions, biases, GELU, final
# norm, LayerScale, RGB with pixel statistics, timm's ε).
VIT = dict(channels=3, norm_first=True, cls_token=True, dist_token=True, n_registers=2,
           position="learned", patch_bias=True, qkv_bias=True, proj_bias=True,
           activation="gelu", final_norm=True, layer_scale=True, ln_eps=1e-6,
           pixel_mean=(0.485, 0.456, 0.406), pixel_std=(0.229, 0.224, 0.225))  # fmt: skip


def perturb_every_parameter(params, seed: int = 99):
    """Every parameter (optional ones included) moved away from its initial value by a seeded
    random amount, so a zero bias, a unit γ or a constant LayerScale cannot hide a missing term.
    γ and LayerScale are multiplied by U(0.5, 1.5); every other array gets N(0, 0.1²) added."""
    import dataclasses

    import numpy as np

    rng = np.random.default_rng(seed)

    def move(name, a):
        if a is None:
            return None
        if name.startswith(("gamma", "ls_", "norm_gamma")):
            return (a * rng.uniform(0.5, 1.5, a.shape)).astype(np.float32)
        return (a + rng.normal(0.0, 0.1, a.shape)).astype(np.float32)

    layers = tuple(
        type(lp)(**{f.name: move(f.name, getattr(lp, f.name)) for f in dataclasses.fields(lp)})
        for lp in params.layers
    )
    top = {f.name: move(f.name, getattr(params, f.name))
           for f in dataclasses.fields(params) if f.name != "layers"}
    return type(params)(layers=layers, **top)


def make_test_image(size: int, channels: int = 1, seed: int = 1234) -> np.ndarray:
    """Smooth gradients + a bright disc + a little fixed noise, float32 [size, size, C] in [0, 1].

    Every channel differs (RGB is not grey repeated) so a channel mix-up shows.
    """
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:size, 0:size].astype(np.float64) / max(size - 1, 1)
    disc = ((x - 0.62) ** 2 + (y - 0.38) ** 2 < 0.22**2).astype(np.float64)
    planes = []
    for c in range(channels):
        grad = 0.15 + 0.35 * x * (1 + c) / channels + 0.25 * y * (channels - c) / channels
        wave = 0.1 * np.sin(2 * np.pi * (x * (2 + c) + y))
        planes.append(grad + wave + 0.3 * disc + 0.05 * rng.standard_normal((size, size)))
    return np.clip(np.stack(planes, axis=-1), 0.0, 1.0).astype(np.float32)
