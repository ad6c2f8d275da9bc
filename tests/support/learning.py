"""What the tests of "How it learns" share (tests/test_learning.py and its autograd parity,
tests/test_learning_parity.py): the shipped shapes model on one generated shape, and how far
apart two gradients are."""

from __future__ import annotations

import numpy as np

from encoder_core import encode
from encoder_core.shapes_model.classifier import load_trained
from encoder_core.shapes_model.dataset import make_sample

TOLERANCE = 1e-4  # relative, to the largest entry: the bound for every gradient shown


def shapes_case() -> tuple:
    """(cfg, params, sample, trace): the trained shapes model on generated shape 3."""
    cfg, params, _ = load_trained()
    sample = make_sample(np.random.default_rng(3))
    return cfg, params, sample, encode(sample.image, cfg, params)


def relative_error(ours: np.ndarray, theirs: np.ndarray) -> float:
    theirs = np.asarray(theirs, dtype=np.float64)
    return float(np.abs(np.asarray(ours, np.float64) - theirs).max() / np.abs(theirs).max())
