"""The images a page runs on: an upload decoded once per content (the picture shown and the
model's input), its cache key, the sidebar's thumbnail, the built-in photo and the generated
shape images of the trained model. Decoded images and thumbnails live in the server's caches
(`lens.resources`), shared by every session.
"""

from __future__ import annotations

import hashlib
import io
from importlib.resources import files
from pathlib import Path

import numpy as np

from encoder_core import EncoderConfig, read_image, to_model_input
from encoder_core.config import valid_patch_sizes

from . import figures, resources

DEFAULT_IMAGE = Path(str(files("encoder_core.assets"))) / "default.jpg"  # package data
DISPLAY_SIDE = 512  # the original upload is shown at most this large
THUMBNAIL_SIDE = 160  # px: the sidebar's picture of the image in use


def content_key(data: bytes) -> str:
    """The cache key of an image file: the sha256 of its bytes."""
    return hashlib.sha256(data).hexdigest()


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


def decode_image(data: bytes, image_size: int, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """(original for display [h, w, 3], model input [S, S, C]) of an image file, cached by
    content. Raises ImageError for anything that is not a usable image."""
    key = (content_key(data), image_size, channels)

    def compute() -> tuple[np.ndarray, np.ndarray]:
        rgb = read_image(data)
        step = max(1, -(-max(rgb.shape[:2]) // DISPLAY_SIDE))
        shown = np.ascontiguousarray(rgb[::step, ::step])  # a light copy to show, not to model
        cfg = EncoderConfig(image_size=image_size, patch_size=valid_patch_sizes(image_size)[-1],
                            channels=channels, d_model=8, n_heads=1, n_layers=1, d_ff=8)
        return _read_only(shown), _read_only(to_model_input(rgb, cfg))

    return resources.caches()["images"].get_or_compute(key, compute)


def thumbnail_png(image_key: str, original: np.ndarray) -> bytes:
    """A small PNG of `original` ([h, w, 3] floats in [0, 1], the image as shown), at most
    THUMBNAIL_SIDE px a side: the sidebar's reminder of which upload is in use, drawn once per
    image for every session."""
    return resources.picture(("thumbnail", image_key),
                             lambda: figures.thumbnail(original, THUMBNAIL_SIDE))


def sample_png(seed: int) -> bytes:
    """A generated shape image as PNG bytes (the trained model's data distribution)."""
    from PIL import Image

    from encoder_core.shapes_model.dataset import make_sample

    sample = make_sample(np.random.default_rng(seed))
    grey = (np.clip(sample.image[..., 0], 0, 1) * 255).round().astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(grey, mode="L").save(buf, format="PNG")
    return buf.getvalue()
