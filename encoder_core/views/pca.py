"""PCA of the patch features — the DINOv2 picture: which patches are the object, and
how its parts differ.

On the patch rows X [N, d] of one layer's output (or of the encoder's output, after the final
norm), the prefix tokens ([CLS], [DIST], registers) left out, in float64:

1. Centre the rows and take the SVD:  X̃ = X − mean(X),  X̃ = U Σ Vᵀ.  The first principal
   component is v₁ = Vᵀ[0] (unit), its share of variance σ₁² / Σ σₖ², and each patch's
   projection p = X̃ v₁ [N].
2. **The sign rule.** An SVD gives v₁ only up to its sign. We orient it so that the border
   patches (the grid's first and last rows and columns) have a negative mean projection: the
   background is assumed to touch the border, the object not. (When the border's mean
   projection is exactly 0, the entry of v₁ largest in magnitude is made positive.)
3. Foreground = the patches with p > 0.
4. A second PCA over the foreground patches alone (centred on their own mean): its first three
   components (unit, largest-magnitude entry positive, so that the colours do not depend on
   the SVD's signs), each with its share of the foreground's variance. Each foreground patch's
   three projections, each scaled to [0, 1] over the foreground (min → 0, max → 1), are its
   red, green and blue; the background is black.
5. Fewer than 3 foreground patches: no second PCA (`too_few`); the first component alone.

Nothing depends on the order of the patch rows: permuting X and `border` alike permutes the
projections, the mask and the colours alike and leaves the components and shares as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..trace import EncoderTrace

N_COLOURS = 3  # components of the foreground PCA shown as red, green, blue
MIN_FOREGROUND = 3  # foreground patches the second PCA needs


@dataclass(frozen=True)
class PatchPCA:
    """The two PCAs of one layer's patch rows. N = patches, d = d_model, k = 3 (0 when
    too_few). Every array is float64 (the mask bool) and read-only."""

    first: np.ndarray  # [N] each patch's projection on v₁, oriented by the sign rule
    first_component: np.ndarray  # [d] v₁, unit
    first_share: float  # σ₁² / Σ σₖ²: v₁'s share of the patches' variance, in [0, 1]
    border_mean: float  # mean of `first` over the border patches (< 0 by the rule, or 0)
    foreground: np.ndarray  # [N] bool, first > 0
    components: np.ndarray  # [k, d] the foreground PCA's first components, unit, orthogonal
    shares: np.ndarray  # [k] each one's share of the foreground's variance; sum ≤ 1
    projections: np.ndarray  # [N, k] foreground patches' projections on them (0 elsewhere)
    rgb: np.ndarray  # [N, 3] in [0, 1]: projections min-max scaled per colour; 0 = background
    too_few: bool  # fewer than MIN_FOREGROUND foreground patches: no second PCA (k = 0)

    @property
    def n_foreground(self) -> int:
        return int(self.foreground.sum())


def border_patches(grid_size: int) -> np.ndarray:
    """[G·G] bool, row-major: True on the grid's first and last rows and columns."""
    G = grid_size
    on = np.zeros((G, G), dtype=bool)
    on[0, :] = on[-1, :] = on[:, 0] = on[:, -1] = True
    return on.reshape(G * G)


def principal_components(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The first k principal components of the rows of X [n, d] (float64), by SVD of the
    centred rows: X̃ = X − mean, X̃ = U Σ Vᵀ. Returns (components [k', d] = Vᵀ[:k'], unit;
    shares [k'] = σᵢ² / Σ σⱼ², 0 when X̃ = 0; X̃ [n, d]), k' = min(k, n, d)."""
    Xc = X - X.mean(axis=0)  # [n, d]
    _, sigma, Vt = np.linalg.svd(Xc, full_matrices=False)  # [min(n, d)], [min(n, d), d]
    var = sigma**2
    total = float(var.sum())
    kk = min(k, len(sigma))
    shares = var[:kk] / total if total > 0 else np.zeros(kk)
    return Vt[:kk], shares, Xc


def largest_positive(components: np.ndarray) -> np.ndarray:
    """Each row's sign flipped so that its entry largest in magnitude is positive. [k, d]."""
    if components.size == 0:
        return components
    big = components[np.arange(len(components)), np.abs(components).argmax(axis=1)]  # [k]
    return components * np.where(big < 0, -1.0, 1.0)[:, None]


def min_max(values: np.ndarray) -> np.ndarray:
    """Each column of values [n, k] scaled to [0, 1] (min → 0, max → 1; a constant one → 0.5)."""
    lo, hi = values.min(axis=0), values.max(axis=0)  # [k]
    span = hi - lo
    return np.where(span > 0, (values - lo) / np.where(span > 0, span, 1.0), 0.5)


def patch_pca(X: np.ndarray, border: np.ndarray) -> PatchPCA:
    """The foreground mask and the colours of the patch rows X [N, d] (any float dtype; computed
    in float64), border [N] bool the patches on the grid's border (`border_patches`). The rules
    are those of the module's docstring."""
    X = np.asarray(X, dtype=np.float64)
    border = np.asarray(border, dtype=bool)
    N, d = X.shape
    if border.shape != (N,) or not border.any():
        raise ValueError(f"border must be [N] = [{N}] bool with a border patch; got "
                         f"{border.shape}")
    (v1,), (share1,), Xc = principal_components(X, 1)  # [d], share, [N, d]
    p = Xc @ v1  # [N, d] @ [d] -> [N]
    constant = not np.any(Xc)  # every row the same: no direction, no foreground
    del Xc  # not held beside the second PCA's arrays
    border_mean = float(p[border].mean())
    if border_mean > 0 or (border_mean == 0 and v1[np.abs(v1).argmax()] < 0):
        v1, p, border_mean = -v1, -p, -border_mean
    if constant:
        p, border_mean = np.zeros(N), 0.0
    fg = p > 0  # [N]
    n_fg = int(fg.sum())
    too_few = n_fg < MIN_FOREGROUND
    projections = np.zeros((N, 0))
    components, shares = np.zeros((0, d)), np.zeros(0)
    rgb = np.zeros((N, N_COLOURS))
    if not too_few:
        components, shares, Fc = principal_components(X[fg], N_COLOURS)  # [k, d], [k], [n_fg, d]
        components = largest_positive(components)
        k = len(components)
        projections = np.zeros((N, k))
        projections[fg] = Fc @ components.T  # [n_fg, d] @ [d, k] -> [n_fg, k]
        rgb[fg, :k] = min_max(projections[fg])
    result = PatchPCA(first=p, first_component=v1, first_share=float(share1),
                      border_mean=border_mean, foreground=fg, components=components,
                      shares=shares, projections=projections, rgb=rgb, too_few=too_few)
    for value in vars(result).values():
        if isinstance(value, np.ndarray):
            value.flags.writeable = False
    return result


def layer_features(trace: EncoderTrace, layer: int | None = None) -> np.ndarray:
    """The patch rows the PCA reads: trace.output (after the final norm, when there is one) for
    layer None, else that layer's output (0-based). [N, d], the prefix rows left out."""
    n = trace.config.n_prefix
    rows = trace.output if layer is None else trace.layers[layer].out  # [S, d]
    return rows[n:]  # [S, d] -> [N, d]


def trace_pca(trace: EncoderTrace, layer: int | None = None) -> PatchPCA:
    """`patch_pca` of `layer_features(trace, layer)` on the trace's patch grid."""
    return patch_pca(layer_features(trace, layer), border_patches(trace.config.grid_size))


def on_image(values: np.ndarray, grid_size: int, patch_size: int) -> np.ndarray:
    """Per-patch values [N, c] as a picture [G·P, G·P, c]: each patch's value over its P × P
    pixels (row-major patches)."""
    G, P = grid_size, patch_size
    grid = values.reshape(G, G, -1)  # [N, c] -> [G, G, c]
    return np.repeat(np.repeat(grid, P, axis=0), P, axis=1)  # [G·P, G·P, c]


def mask_iou(predicted: np.ndarray, true: np.ndarray) -> float:
    """|predicted ∧ true| / |predicted ∨ true| of two bool masks of one shape (1 when both are
    empty)."""
    union = int(np.logical_or(predicted, true).sum())
    return 1.0 if union == 0 else int(np.logical_and(predicted, true).sum()) / union
