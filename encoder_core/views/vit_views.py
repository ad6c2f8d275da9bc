"""The views users of real Vision Transformers ask for, one formula each, computed from a trace.

A ViT's sequence is [cls, dist, registers…, patches…]: T = n_prefix + N rows, the prefix
first (see `EncoderConfig.n_prefix`). Every map laid on the image grid here is over the N
patch columns only; the prefix columns are left out (and the pages say so).

- DINO (Caron et al. 2021, `visualize_attention.py`): the last layer's CLS attention per head,
  `attentions[0, :, 0, 1:]`, and its `--threshold` mask, "keep x % of the mass".
- Attention rollout's [CLS] map (`rollout_cls_map`; the rollout itself is `rollout.py`'s).
- Token norms (Darcet et al. 2024, "Vision Transformers Need Registers"): large ViTs write a
  few patch tokens with a norm far above the rest; a norm map finds them.
- The similarity of the learned position embeddings (Dosovitskiy et al. 2021, fig. 7 centre).

float64 inside.
"""

from __future__ import annotations

import numpy as np

from ..trace import EncoderTrace
from .analysis import cosine_similarity

DINO_KEEP = 0.6  # DINO's example threshold: keep 60 % of each map's mass


def patch_values(values: np.ndarray, n_prefix: int) -> np.ndarray:
    """The patch columns of a per-token array, the prefix left out: values[..., n_prefix:].

    Args:
        values: [..., T] with T = n_prefix + N.
    Returns:
        [..., N] float64.
    """
    return np.asarray(values, dtype=np.float64)[..., n_prefix:]


def on_grid(values: np.ndarray, grid_size: int) -> np.ndarray:
    """Values over the patches laid on the patch grid, row-major (patch n at row n // G,
    column n % G). [..., N] -> [..., G, G], N = G²."""
    N = values.shape[-1]
    if N != grid_size * grid_size:
        raise ValueError(f"{N} values do not fill a {grid_size} × {grid_size} grid")
    return values.reshape(*values.shape[:-1], grid_size, grid_size)


def scale_to_max(maps: np.ndarray) -> np.ndarray:
    """Each map divided by its largest value (a map of zeros stays zeros), so maps of very
    different peaks share one colour scale. [..., N] -> [..., N] float64, each max 1 or 0."""
    m = np.asarray(maps, dtype=np.float64)
    top = m.max(axis=-1, keepdims=True)
    return m / np.where(top > 0, top, 1.0)


def _require_cls(n_prefix: int) -> None:
    if n_prefix < 1:
        raise ValueError("this view needs a [CLS] token (n_prefix ≥ 1): row 0 must be CLS")


def cls_attention(attn: np.ndarray, n_prefix: int) -> np.ndarray:
    """How much the [CLS] token (row 0) attends to each patch, per head: attn[:, 0, n_prefix:].

    DINO's `attentions[0, :, 0, 1:]`, with every prefix column (cls, dist, registers) left out,
    not only the first: the rows no longer sum to 1 (the prefix's share is missing).
    Args:
        attn: [h, T, T] one layer's softmax rows, T = n_prefix + N, row 0 the [CLS] token.
    Returns:
        [h, N] float64.
    """
    _require_cls(n_prefix)
    return patch_values(attn[:, 0, :], n_prefix)


def patch_attention(attn: np.ndarray, n_prefix: int, query_patch: int) -> np.ndarray:
    """Where patch `query_patch` looks, per head, over the patches: attn[:, n_prefix + q,
    n_prefix:] (its row of the sequence is n_prefix + q; the prefix columns are left out).

    Args:
        attn: [h, T, T]; query_patch: 0 … N − 1, row-major over the patch grid.
    Returns:
        [h, N] float64.
    """
    N = attn.shape[-1] - n_prefix
    if not 0 <= query_patch < N:
        raise ValueError(f"patch {query_patch} is not one of the {N} patches")
    return patch_values(attn[:, n_prefix + query_patch, :], n_prefix)


def keep_mass(maps: np.ndarray, fraction: float) -> np.ndarray:
    """DINO's `--threshold` mask: per map, the fewest largest weights whose share of the map's
    mass reaches `fraction`.

    As DINO's visualize_attention.py: sort each map ascending, divide by its sum, take the
    cumulative sum c, keep a weight where c > 1 − fraction (the weight that crosses the line is
    kept). Defined beyond DINO's script:
    - ties: equal weights are ranked by patch index, the lower index counting as the larger
      (kept first), so the mask is the same on every run (torch.sort's order of ties is not
      specified);
    - fraction ≤ 0 keeps nothing; fraction ≥ 1 keeps every weight > 0; a map whose weights are
      all 0 keeps nothing.
    Args:
        maps: [..., N] weights ≥ 0 (e.g. `cls_attention`); fraction: the share of mass to keep.
    Returns:
        bool [..., N], True where the weight is kept.
    """
    m = np.asarray(maps, dtype=np.float64)
    if fraction <= 0:
        return np.zeros(m.shape, dtype=bool)
    if fraction >= 1:
        return m > 0
    N = m.shape[-1]
    # ascending, ties by descending index: a stable sort of the reversed maps
    order = N - 1 - np.argsort(m[..., ::-1], axis=-1, kind="stable")  # [..., N]
    ascending = np.take_along_axis(m, order, axis=-1)  # [..., N]
    total = ascending.sum(axis=-1, keepdims=True)  # [..., 1]
    share = ascending / np.where(total > 0, total, 1.0)
    kept_sorted = np.cumsum(share, axis=-1) > 1 - fraction  # [..., N]
    kept_sorted &= total > 0
    kept = np.empty(m.shape, dtype=bool)
    np.put_along_axis(kept, order, kept_sorted, axis=-1)
    return kept


def kept_share(maps: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The share of each map's mass on its kept weights (≥ the fraction asked of `keep_mass`).
    maps, kept: [..., N] -> [...] float64 (0 for a map of zeros)."""
    m = np.asarray(maps, dtype=np.float64)
    total = m.sum(axis=-1)
    return np.where(kept, m, 0.0).sum(axis=-1) / np.where(total > 0, total, 1.0)


def rollout_cls_map(R: np.ndarray, n_prefix: int) -> np.ndarray:
    """The [CLS] row of the rollout over the patches, divided by its largest value, as
    vit-explain shows it (`mask = result[0, 0, 1:]; mask / max(mask)`), with every prefix
    column left out (vit-explain leaves out only column 0). A row of zeros stays zeros.

    Args:
        R: [T, T] (from `rollout.attention_rollout`), or its row 0 alone [T] (`row=0`).
    Returns:
        [N] float64 in [0, 1], its maximum 1.
    """
    _require_cls(n_prefix)
    return scale_to_max(patch_values(R[0] if R.ndim == 2 else R, n_prefix))  # [N]


def token_norms(x: np.ndarray) -> np.ndarray:
    """‖x_i‖₂ of every token. [T, d] -> [T] float64.

    Darcet et al. (2024) find that large ViTs write a few background patch tokens with norms
    several times the rest (and use them as scratch space); registers take that role."""
    return np.linalg.norm(np.asarray(x, dtype=np.float64), axis=-1)


def high_norm_tokens(norms: np.ndarray, factor: float = 2.0) -> np.ndarray:
    """The tokens whose norm is more than `factor` times the median norm: a plain cut-off to
    list the outliers a norm map shows (Darcet et al. see a bimodal distribution of norms in
    large ViTs). [N] -> int indices, in order."""
    return np.flatnonzero(norms > factor * np.median(norms))


def position_similarity(pos: np.ndarray, n_prefix_pos: int) -> np.ndarray:
    """Cosine similarity between the learned position embeddings of every pair of patches
    (the ViT paper's fig. 7, centre): cos(p_i, p_j), p = pos[n_prefix_pos:].

    Args:
        pos: [n_pos, d] the learned pos_embed; n_prefix_pos: its leading rows that belong to
            the prefix (cls, dist: `EncoderConfig.n_pos − n_tokens`), left out.
    Returns:
        [N, N] float64; row i laid on the grid (`similarity_on_grid`) is the paper's tile i.
    """
    return cosine_similarity(np.asarray(pos)[n_prefix_pos:])


def position_cosines(trace: EncoderTrace) -> np.ndarray:
    """cos(position i, position j) for every pair of patches: the rows of the sinusoidal PE,
    or a ViT's learned pos_embed rows of its patches (`position_similarity`, the prefix's rows
    left out). [N, N] float64"""
    cfg = trace.config
    if cfg.position == "learned":
        return position_similarity(trace.params.pos_embed, cfg.n_pos - cfg.n_tokens)
    return cosine_similarity(trace.pe)


def similarity_on_grid(similarity: np.ndarray, patch: int, grid_size: int) -> np.ndarray:
    """Row `patch` of a [N, N] similarity laid on the patch grid: [G, G]."""
    return on_grid(similarity[patch], grid_size)
