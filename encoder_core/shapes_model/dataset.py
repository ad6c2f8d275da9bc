"""A procedural data set: one grey shape among four classes on a textured background.

Each image is 224 × 224 × 1 in [0, 1] (16 × 16 patches -> 196 tokens) and holds exactly one
object — a circle, square, triangle or cross, 60–110 px across, upright, filled, anywhere fully
inside the image, brighter or darker than the background by 0.25–0.5 — on a background of a
soft gradient plus low-amplitude waves and a little pixel noise. Most images (75 %) also hold
one or two distractors that belong to no class: thin line segments or small blobs (< 30 px),
drawn with the same kind of contrast, never touching the object's bounding box.

Everything is drawn from a numpy Generator, so a seed fixes the whole sample; shapes are
written as boolean masks over coordinate grids (np.ogrid), no loops over pixels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

CLASS_NAMES: tuple[str, ...] = ("circle", "square", "triangle", "cross")
IMAGE_SIZE = 224  # side of every image, in pixels
MIN_SIZE, MAX_SIZE = 60, 110  # side of the object's bounding box, in pixels
DISTRACTOR_SHARE = 0.75  # share of images with 1–2 distractors
MIN_CONTRAST, MAX_CONTRAST = 0.25, 0.5  # |object level − background level|
NOISE_STD = 0.02  # standard deviation of the per-pixel (uniform) noise


@dataclass(frozen=True)
class Sample:
    image: np.ndarray  # [224, 224, 1] float32 in [0, 1]
    label: int  # index into CLASS_NAMES
    mask: np.ndarray  # [224, 224] bool, True on the object's pixels
    n_distractors: int = 0  # distractors drawn (0, 1 or 2)
    distractor_mask: np.ndarray | None = None  # [224, 224] bool, True on distractor pixels


def grid(size: int = IMAGE_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """Pixel-centre coordinates (y [S, 1], x [1, S]) as float32 open grids."""
    y, x = np.ogrid[0:size, 0:size]
    return y.astype(np.float32) + 0.5, x.astype(np.float32) + 0.5


def circle_mask(y: np.ndarray, x: np.ndarray, cy: float, cx: float, side: float) -> np.ndarray:
    """(x − cx)² + (y − cy)² ≤ (side/2)²: a disc of diameter `side`. Returns [S, S] bool."""
    dy, dx = y - cy, x - cx
    r = side / 2
    return dy * dy + dx * dx <= r * r


def square_mask(y: np.ndarray, x: np.ndarray, cy: float, cx: float, side: float) -> np.ndarray:
    """|x − cx| ≤ side/2 and |y − cy| ≤ side/2. Returns [S, S] bool."""
    return (np.abs(y - cy) <= side / 2) & (np.abs(x - cx) <= side / 2)


def triangle_mask(y: np.ndarray, x: np.ndarray, cy: float, cx: float, side: float) -> np.ndarray:
    """An upright isosceles triangle, base = height = side, apex at the top. [S, S] bool.

    Inside when top ≤ y ≤ bottom and |x − cx| ≤ (y − top) / side · side/2.
    """
    top = cy - side / 2
    depth = y - top  # [S, 1] distance below the apex
    return (depth >= 0) & (depth <= side) & (np.abs(x - cx) <= depth / 2)


def cross_mask(y: np.ndarray, x: np.ndarray, cy: float, cx: float, side: float,
               thickness: float) -> np.ndarray:
    """A plus sign: two bars side × thickness crossing at the centre. Returns [S, S] bool."""
    in_box = square_mask(y, x, cy, cx, side)
    bar_h = np.abs(y - cy) <= thickness / 2  # [S, 1]
    bar_v = np.abs(x - cx) <= thickness / 2  # [1, S]
    return in_box & (bar_h | bar_v)


def segment_mask(y: np.ndarray, x: np.ndarray, p0: np.ndarray, p1: np.ndarray,
                 width: float) -> np.ndarray:
    """Pixels within width/2 of the segment p0–p1 ((y, x) points). Returns [S, S] bool.

    Distance to a segment: t = clip(((p − p0)·(p1 − p0)) / |p1 − p0|², 0, 1),
    d = |p − (p0 + t (p1 − p0))|.
    """
    (y0, x0), (y1, x1) = p0, p1
    ey, ex = y1 - y0, x1 - x0
    t = np.clip(((y - y0) * ey + (x - x0) * ex) / (ey * ey + ex * ex), 0.0, 1.0)  # [S, S]
    dy, dx = y - (y0 + t * ey), x - (x0 + t * ex)
    half = width / 2
    return dy * dy + dx * dx <= half * half


def ellipse_mask(y: np.ndarray, x: np.ndarray, cy: float, cx: float, ry: float,
                 rx: float) -> np.ndarray:
    """((y − cy)/ry)² + ((x − cx)/rx)² ≤ 1. Returns [S, S] bool."""
    dy, dx = (y - cy) / ry, (x - cx) / rx
    return dy * dy + dx * dx <= 1.0


def object_mask(rng: np.random.Generator, label: int, y: np.ndarray, x: np.ndarray,
                size: int = IMAGE_SIZE) -> np.ndarray:
    """The mask of one object of class `label`, of random side and position. [S, S] bool."""
    side = rng.uniform(MIN_SIZE, MAX_SIZE)
    half = side / 2
    cy, cx = rng.uniform(half + 1, size - half - 1, size=2)  # bounding box fully inside
    name = CLASS_NAMES[label]
    if name == "circle":
        return circle_mask(y, x, cy, cx, side)
    if name == "square":
        return square_mask(y, x, cy, cx, side)
    if name == "triangle":
        return triangle_mask(y, x, cy, cx, side)
    return cross_mask(y, x, cy, cx, side, thickness=side * rng.uniform(0.28, 0.38))


def in_window(shape_fn: Callable[[np.ndarray, np.ndarray], np.ndarray], y: np.ndarray,
              x: np.ndarray, top: float, left: float, bottom: float,
              right: float) -> np.ndarray:
    """Evaluate `shape_fn(y, x)` only inside the pixel box [top, bottom] × [left, right].

    Returns the full [S, S] bool mask, False outside the box (a small shape costs little).
    """
    S = y.shape[0]
    r0, r1 = max(int(top) - 1, 0), min(int(bottom) + 2, S)
    c0, c1 = max(int(left) - 1, 0), min(int(right) + 2, S)
    mask = np.zeros((S, S), dtype=bool)
    mask[r0:r1, c0:c1] = shape_fn(y[r0:r1], x[:, c0:c1])
    return mask


def distractor_mask(rng: np.random.Generator, y: np.ndarray, x: np.ndarray,
                    size: int = IMAGE_SIZE) -> np.ndarray:
    """A thin segment (25–60 px long, 2–3 px wide) or a small blob (< 30 px). [S, S] bool."""
    if rng.random() < 0.5:
        length, angle = rng.uniform(25, 60), rng.uniform(0, np.pi)
        p0 = rng.uniform(4, size - 4, size=2)
        p1 = np.clip(p0 + length * np.array([np.sin(angle), np.cos(angle)]), 2, size - 2)
        width = rng.uniform(2.0, 3.0)
        (top, bottom), (left, right) = np.sort([p0[0], p1[0]]), np.sort([p0[1], p1[1]])
        return in_window(lambda yy, xx: segment_mask(yy, xx, p0, p1, width), y, x,
                         top - width, left - width, bottom + width, right + width)
    ry, rx = rng.uniform(4, 12, size=2)  # radii: the blob is at most 24 px across
    cy, cx = rng.uniform(14, size - 14, size=2)
    return in_window(lambda yy, xx: ellipse_mask(yy, xx, cy, cx, ry, rx), y, x,
                     cy - ry, cx - rx, cy + ry, cx + rx)


def contrasting_level(rng: np.random.Generator, background: float) -> float:
    """A grey level 0.25–0.5 above or below `background`, kept inside [0.02, 0.98]."""
    contrast = rng.uniform(MIN_CONTRAST, MAX_CONTRAST)
    sign = 1.0 if rng.random() < 0.5 else -1.0
    if not 0.02 <= background + sign * contrast <= 0.98:
        sign = -sign
    return float(np.clip(background + sign * contrast, 0.02, 0.98))


def background(rng: np.random.Generator, y: np.ndarray, x: np.ndarray,
               level: float) -> np.ndarray:
    """level + a gentle linear gradient + three low-frequency waves (amplitude ≤ ~0.15). [S, S].

    Each wave sin(a_y + a_x), a_y = 2π·f_y·u + φ, a_x = 2π·f_x·v, is written as
    sin a_y · cos a_x + cos a_y · sin a_x, so only 1-d sines are evaluated.
    """
    S = y.shape[0]
    u, v = y / S - 0.5, x / S - 0.5  # [S, 1], [1, S] in [−0.5, 0.5]
    gy, gx = (float(g) for g in rng.uniform(-0.12, 0.12, size=2))  # Python floats keep float32
    col = level + gy * u  # [S, 1]
    row = gx * v  # [1, S]
    bg = col + row  # [S, S]
    for _ in range(3):
        fy, fx = (float(f) for f in rng.uniform(-4, 4, size=2))  # cycles across the image
        amp, phase = rng.uniform(0.01, 0.03), rng.uniform(0, 2 * np.pi)
        a_y, a_x = 2 * np.pi * fy * u + phase, 2 * np.pi * fx * v  # [S, 1], [1, S]
        bg += (amp * np.sin(a_y)) * np.cos(a_x) + (amp * np.cos(a_y)) * np.sin(a_x)
    return bg.astype(np.float32, copy=False)


def make_sample(rng: np.random.Generator, size: int = IMAGE_SIZE) -> Sample:
    """One image with one object (and maybe distractors), its label and the object's mask."""
    y, x = grid(size)
    label = int(rng.integers(len(CLASS_NAMES)))
    level = rng.uniform(0.2, 0.8)
    bg = background(rng, y, x, level)  # [S, S]
    mask = object_mask(rng, label, y, x, size)  # [S, S]
    image = np.where(mask, np.float32(contrasting_level(rng, level)) + 0.5 * (bg - level), bg)

    rows, cols = np.nonzero(mask.any(axis=1))[0], np.nonzero(mask.any(axis=0))[0]
    keep_out = np.zeros((size, size), dtype=bool)  # the object's bounding box + 4 px
    keep_out[max(rows[0] - 4, 0):rows[-1] + 5, max(cols[0] - 4, 0):cols[-1] + 5] = True
    n_distractors, drawn = 0, np.zeros((size, size), dtype=bool)
    wanted = int(rng.integers(1, 3)) if rng.random() < DISTRACTOR_SHARE else 0
    for _ in range(wanted):
        for _attempt in range(20):
            d_mask = distractor_mask(rng, y, x, size)
            if d_mask.any() and not (d_mask & keep_out).any():
                image = np.where(d_mask, np.float32(contrasting_level(rng, level)), image)
                n_distractors += 1
                drawn |= d_mask
                break

    # uniform noise with standard deviation NOISE_STD (half width √3·σ), cheaper than Gaussian
    uniform = rng.random((size, size), dtype=np.float32)  # [S, S] in [0, 1)
    image += np.float32(2 * np.sqrt(3.0) * NOISE_STD) * (uniform - np.float32(0.5))
    image = np.clip(image, 0.0, 1.0).astype(np.float32)[:, :, None]  # [S, S, 1]
    return Sample(image=image, label=label, mask=mask, n_distractors=n_distractors,
                  distractor_mask=drawn)


def make_batch(seed: int, n: int,
               size: int = IMAGE_SIZE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """n samples from one seed: images [n, S, S, 1] float32, labels [n] int64, masks [n, S, S]."""
    rng = np.random.default_rng(seed)
    samples = [make_sample(rng, size) for _ in range(n)]
    images = np.stack([s.image for s in samples])  # [n, S, S, 1]
    labels = np.array([s.label for s in samples], dtype=np.int64)  # [n]
    masks = np.stack([s.mask for s in samples])  # [n, S, S]
    return images, labels, masks
