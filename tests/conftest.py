"""Shared helpers for the encoder tests: a deterministic, non-trivial test image, and a trace at
each of the small configurations of `configs.TRACE_CONFIGS`."""

from __future__ import annotations

import numpy as np
import pytest
from configs import SMALL, TRACE_CONFIGS  # tests/ is on the path: pyproject's pythonpath

from encoder_core import EncoderConfig, encode


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


@pytest.fixture(scope="session")
def make_image():
    """The factory `make_test_image(size, channels=1, seed=1234)` as a fixture."""
    return make_test_image


@pytest.fixture(scope="module", params=TRACE_CONFIGS.values(), ids=TRACE_CONFIGS.keys())
def trace(request, make_image):
    """`encode` at SMALL with each change of TRACE_CONFIGS: four small, different traces."""
    cfg = EncoderConfig(**{**SMALL, **request.param})
    return encode(make_image(cfg.image_size, cfg.channels, seed=cfg.seed + 11), cfg)
