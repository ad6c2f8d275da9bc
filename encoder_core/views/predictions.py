"""The answers of the lesson's prediction tasks, read off a trace: which patch is most like
another, where a row of attention looks most, whether a divisor makes rows sharper or flatter,
what share of a row lies within a bound, at which depth the logit lens settles on a class,
whether a map's deletion curve falls faster than another's. Pure functions of arrays; the app
asks the questions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

Outcome = Literal["sharper", "flatter", "same"]


def most_similar_other(similarity_row: np.ndarray, i: int) -> int:
    """The patch j ≠ i with the largest similarity to patch i (the first on a tie).

    Args:
        similarity_row: [N] e.g. cos(PE_i, PE_j) for every j
    """
    s = np.asarray(similarity_row, dtype=np.float64).copy()
    s[i] = -np.inf
    return int(np.argmax(s))


def top_patch(weights: np.ndarray) -> int:
    """The patch with the largest weight (the first on a tie). [N] -> index."""
    return int(np.argmax(np.asarray(weights)))


@dataclass(frozen=True)
class ChoiceQuality:
    """How good a chosen patch was against the true values of every patch."""

    value: float  # the chosen patch's value (a weight, a similarity)
    best: float  # the largest value among the candidates
    share: float  # (value − lowest) / (best − lowest): 1 for the best, 0 for the worst
    rank: int  # 1 for the best; patches with a larger value come first
    of: int  # how many candidates


def choice_quality(values: np.ndarray, chosen: int, exclude: int | None = None) -> ChoiceQuality:
    """The chosen patch's place among all candidates (all patches but `exclude`).

    Args:
        values: [N] the true value of each patch (attention weights, similarities)
        chosen: the patch the learner chose; exclude: a patch that is no candidate (the patch
            a similarity is measured from)
    """
    v = np.asarray(values, dtype=np.float64)
    keep = np.ones(v.shape[0], dtype=bool)
    if exclude is not None:
        keep[exclude] = False
    candidates = v[keep]
    best, low = float(candidates.max()), float(candidates.min())
    value = float(v[chosen])
    spread = best - low
    share = 1.0 if spread == 0 else (value - low) / spread
    rank = 1 + int(np.sum(candidates > value))
    return ChoiceQuality(value=value, best=best, share=share, rank=rank, of=int(keep.sum()))


def compare_sharpness(entropy_now: float, entropy_other: float, tol: float = 1e-6) -> Outcome:
    """Whether a row with entropy `entropy_other` is sharper, flatter or the same as one with
    `entropy_now` (in nats: a lower entropy is a sharper row)."""
    if abs(entropy_other - entropy_now) <= tol:
        return "same"
    return "sharper" if entropy_other < entropy_now else "flatter"


def share_within(x: np.ndarray, bound: float = 1.0) -> float:
    """The share of the values with |x| ≤ bound. [...] -> float in [0, 1]."""
    return float(np.mean(np.abs(np.asarray(x, dtype=np.float64)) <= bound))


def settles_at(lens_logits: np.ndarray, target: int) -> int | None:
    """The depth from which class `target` is the top-1 of the logit lens and stays so to the
    end: the smallest l with argmax(lens[m]) = target for every m ≥ l (ties: the lower class
    first, as `top_classes`); None when it is not the top-1 at the last depth.

    lens_logits: [L + 1, n_classes] (`logit_lens`: row 0 entering layer 0, row L the
    prediction). Returns 0 … L or None. The answer to "at which layer does the class become
    the top-1?" (row l is after layer l, 1-based)."""
    top = np.argmax(np.asarray(lens_logits), axis=-1)  # [L + 1], the first maximum on a tie
    if top[-1] != target:
        return None
    depth = len(top) - 1
    while depth > 0 and top[depth - 1] == target:
        depth -= 1
    return depth


Pace = Literal["faster", "slower", "same"]


def deletion_pace(area_map: float, area_other: float, tol: float = 0.01) -> Pace:
    """Whether deleting patches in a map's order lowers the class's probability faster than in
    another order (e.g. random): a smaller deletion-curve area is a faster fall. Areas within
    `tol` of each other are "same"."""
    if abs(area_map - area_other) <= tol:
        return "same"
    return "faster" if area_map < area_other else "slower"
