"""Turn an uploaded file into the square float image the encoder reads.

Policy
------
* **Sources.** A path (``str`` or ``os.PathLike``), raw ``bytes``/``bytearray``/``memoryview``,
  or a binary file object (Streamlit's ``UploadedFile``, ``io.BytesIO``, anything with ``.read()``).
* **Formats.** Whatever Pillow decodes as a raster (PNG, JPEG, WebP, BMP, TIFF, GIF, ...).
  Anything else (empty, text, SVG, truncated or damaged files, zero-size images) raises
  `ImageError`, a ``ValueError`` whose message tells a non-programmer what is wrong and what to
  do. No other exception escapes `read_image` for a bad file.
* **Size limit.** `MAX_PIXELS` = 25 megapixels, read from the file header *before* any pixel is
  decoded, far below Pillow's own decompression-bomb warning (about 89 megapixels). Pillow's
  ``DecompressionBombWarning``/``DecompressionBombError`` are turned into `ImageError` too.
* **Orientation and animation.** The EXIF orientation tag is honoured (a phone photo shows the
  way up it was taken); of an animation (GIF, APNG, WebP) the first frame is used.
* **Modes to RGB in [0, 1].** Integer modes are divided by their type's full range: 8-bit modes
  by 255, ``I;16*`` by 65535, ``I`` (int32) by 2**31 - 1 with negatives clipped to 0; ``1`` is
  0/1. Float ``F`` is min-max normalised after NaN/inf are set to 0 (a constant image becomes 0).
  Transparent pixels (``LA``, ``PA``, ``RGBA``, ``P``/``L``/``RGB`` with a transparency key) are
  composited onto **white** (a transparency key on a 16-bit or float image is ignored).
  CMYK, YCbCr, LAB, HSV go through Pillow's ``convert("RGB")``.
* **Model input.** Centre crop to a square (the short side), then resize to
  ``cfg.image_size`` with Pillow's antialiasing ``BICUBIC`` filter (the ViT/timm convention) on
  float ("F" mode) images, so values are never quantised to 8 bits; the result is clipped to
  [0, 1] because bicubic overshoots at edges. For ``cfg.channels == 1`` the grey value is
  Pillow's "L" luma, ITU-R 601-2: L = R·299/1000 + G·587/1000 + B·114/1000.
"""

from __future__ import annotations

import io
import os
import warnings
from typing import BinaryIO

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from .config import EncoderConfig

MAX_PIXELS = 25_000_000
"""Largest width × height accepted (25 MP: a 5000 × 5000 photo; its float RGB copy is 300 MB).
Far below Pillow's 89-megapixel decompression-bomb warning."""

RESAMPLE = Image.Resampling.BICUBIC
"""The antialiasing filter of `to_model_input` (the ViT/timm convention)."""

LUMA = (np.array([299, 587, 114]) / 1000).astype(np.float32)
"""ITU-R 601-2 luma weights of R, G, B, as in Pillow's "L" conversion."""

ImageSource = str | os.PathLike | bytes | bytearray | memoryview | BinaryIO

_FORMATS = "PNG, JPEG, WebP, BMP, TIFF or GIF"
_NOT_AN_IMAGE = (
    f"This file is not an image Encoder Lens can read ({_FORMATS}). Please upload one of those."
)
_DAMAGED = (
    "This image file is damaged or incomplete (perhaps cut off while uploading), so Encoder "
    f"Lens cannot read it. Please upload it again, or save it anew as {_FORMATS}."
)
_TOO_BIG = (
    f"This image is too large to open safely: more than {MAX_PIXELS / 1e6:g} megapixels. "
    "Please downscale it (for example to 2000 × 2000 pixels) and upload it again."
)


class ImageError(ValueError):
    """An upload that cannot be used; the message says what is wrong and what to do."""


def read_image(source: ImageSource) -> np.ndarray:
    """Decode `source` at its own size: float32 RGB array [H, W, 3] with values in [0, 1].

    Raises `ImageError` for anything that is not a readable raster image (see module docstring).
    """
    file = _as_file(source)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(file) as img:
                _check_size(img.width, img.height)  # header only: nothing decoded yet
                img.seek(0)  # first frame of an animation
                img.load()  # decode now, inside the guard: truncated files fail here
                try:
                    ImageOps.exif_transpose(img, in_place=True)
                except Exception:  # a broken EXIF block: keep the pixels as stored
                    pass
                rgb = _to_rgb(img)
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageError(_TOO_BIG) from exc
    except UnidentifiedImageError as exc:
        raise ImageError(_NOT_AN_IMAGE) from exc
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise ImageError(
            f"Encoder Lens cannot open the file {exc.filename!r}: {exc.strerror}. "
            "Please check the path and try again."
        ) from exc
    except MemoryError as exc:
        raise ImageError(
            "There is not enough memory to open this image. "
            "Please downscale it and upload it again."
        ) from exc
    except Exception as exc:  # last line of defence: Pillow raises many kinds for bad files
        raise ImageError(_DAMAGED) from exc
    if not np.isfinite(rgb).all():  # cannot happen by construction; never hand on NaN/inf
        rgb = np.nan_to_num(rgb, nan=0.0, posinf=1.0, neginf=0.0)
    return rgb


def to_model_input(rgb: np.ndarray, cfg: EncoderConfig) -> np.ndarray:
    """Centre-crop `rgb` [H, W, 3] to a square, resize it to the model's size and pick channels.

    Returns float32 [cfg.image_size, cfg.image_size, cfg.channels] in [0, 1]: BICUBIC on float
    data (no 8-bit rounding), clipped to [0, 1]; grey is the ITU-R 601-2 luma of R, G, B.
    """
    rgb = np.asarray(rgb, dtype=np.float32)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or 0 in rgb.shape:
        raise ValueError(f"expected a non-empty RGB array [H, W, 3], got shape {rgb.shape}")
    h, w, _ = rgb.shape
    side = min(h, w)
    top, left = (h - side) // 2, (w - side) // 2
    square = rgb[top : top + side, left : left + side]
    if cfg.channels == 1:
        square = (square @ LUMA)[..., None]
    size = (cfg.image_size, cfg.image_size)
    planes = [
        np.asarray(
            Image.fromarray(np.ascontiguousarray(square[..., c])).resize(
                size, RESAMPLE, reducing_gap=None
            )
        )
        for c in range(square.shape[2])
    ]
    out = np.clip(np.nan_to_num(np.stack(planes, axis=-1), nan=0.0), 0.0, 1.0)
    return out.astype(np.float32, copy=False)


def load_image(source: ImageSource, cfg: EncoderConfig) -> np.ndarray:
    """`read_image` then `to_model_input`: float32 [image_size, image_size, channels] in [0, 1]."""
    return to_model_input(read_image(source), cfg)


# --- helpers ------------------------------------------------------------------------------------
def _as_file(source: ImageSource) -> str | os.PathLike | BinaryIO:
    """Something `Image.open` accepts: a path, or an in-memory copy of bytes / a file object."""
    if isinstance(source, (str, os.PathLike)):
        return source
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        try:  # io.BytesIO, Streamlit's UploadedFile: the whole content, wherever the cursor is
            data = source.getvalue() if hasattr(source, "getvalue") else source.read()
        except Exception as exc:  # e.g. a closed file or a broken connection
            raise ImageError(
                "Encoder Lens could not read the uploaded file. Please upload it again."
            ) from exc
    else:
        raise TypeError(f"expected a path, bytes or a binary file object, got {type(source)}")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError("the file object must be opened in binary mode ('rb')")
    if not data:
        raise ImageError(f"This file is empty. Please upload an image ({_FORMATS}).")
    return io.BytesIO(bytes(data))


def _check_size(width: int, height: int) -> None:
    """Refuse zero-size images and images over `MAX_PIXELS`, from the header's size alone."""
    if width <= 0 or height <= 0:
        raise ImageError(
            f"This image has no pixels ({width} × {height}). "
            "Please upload a picture that is at least 1 × 1 pixel."
        )
    if width * height > MAX_PIXELS:
        raise ImageError(
            f"This image is {width} × {height} = {width * height / 1e6:.2f} megapixels, more than "
            f"the {MAX_PIXELS / 1e6:g} megapixels Encoder Lens accepts. Please downscale it "
            "(for example to 2000 × 2000 pixels) and upload it again."
        )


def _to_rgb(img: Image.Image) -> np.ndarray:
    """Pixels of a decoded Pillow image as float32 [H, W, 3] in [0, 1] (policy: module doc)."""
    mode = img.mode
    if mode == "F":
        grey = np.nan_to_num(np.asarray(img, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        lo, hi = grey.min(), grey.max()
        grey = (grey - lo) / (hi - lo) if hi > lo else np.zeros_like(grey)
    elif mode == "I" or mode.startswith("I;"):  # int32 / 16-bit: the type's full range
        raw = np.asarray(img)
        grey = np.clip(raw, 0, None).astype(np.float64) / np.iinfo(raw.dtype).max
    elif "A" in mode or "transparency" in img.info:  # composite onto white
        rgba = np.asarray(img.convert("RGBA"), dtype=np.float32) / 255
        alpha = rgba[..., 3:]
        return rgba[..., :3] * alpha + (1 - alpha)
    elif mode in ("1", "L"):
        grey = np.asarray(img, dtype=np.float32) / (1 if mode == "1" else 255)
    else:  # RGB, P, CMYK, YCbCr, LAB, HSV, ...
        rgb = np.asarray(img if mode == "RGB" else img.convert("RGB")).astype(np.float32)
        rgb /= 255
        return rgb
    return np.repeat(grey.astype(np.float32)[..., None], 3, axis=-1)
