"""encoder_core.image: every Pillow mode, messy uploads and hostile files.

All files are generated here (Pillow into io.BytesIO, or hand-made bytes); nothing is downloaded.
"""

from __future__ import annotations

import io
import struct
import time
import tracemalloc
import warnings
import zlib

import numpy as np
import pytest
from PIL import Image, ImageFile

from encoder_core.config import EncoderConfig
from encoder_core.image import MAX_PIXELS, ImageError, load_image, read_image, to_model_input

S = 32


def cfg(channels: int) -> EncoderConfig:
    return EncoderConfig(
        image_size=S, patch_size=8, channels=channels, d_model=64, n_heads=4, n_layers=1, d_ff=128
    )


def encode(img: Image.Image, fmt: str = "PNG", **params: object) -> bytes:
    """The bytes of `img` saved as `fmt`."""
    buf = io.BytesIO()
    img.save(buf, fmt, **params)
    return buf.getvalue()


def png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png_claiming(width: int, height: int, idat: bytes | None = None) -> bytes:
    """A grey 8-bit PNG whose IHDR claims width × height; no pixel data unless `idat` is given."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    body = png_chunk(b"IHDR", ihdr)
    if idat is not None:
        body += png_chunk(b"IDAT", idat)
    return b"\x89PNG\r\n\x1a\n" + body + png_chunk(b"IEND", b"")


def noise_rgb(size: int = 64, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8))


def assert_model_input(x: np.ndarray, channels: int) -> None:
    assert x.dtype == np.float32
    assert x.shape == (S, S, channels)
    assert np.isfinite(x).all()
    assert x.min() >= 0.0 and x.max() <= 1.0


# --- every mode ---------------------------------------------------------------------------------
def _mode_image(mode: str) -> Image.Image:
    """A 48 × 40 gradient in `mode`, with a transparent corner where the mode has alpha."""
    ramp = np.linspace(0, 1, 48 * 40).reshape(40, 48)
    if mode == "1":
        return Image.fromarray(ramp > 0.5).convert("1")
    if mode == "I;16":
        return Image.fromarray((ramp * 65535).astype(np.uint16))
    if mode == "I":
        return Image.fromarray((ramp * (2**31 - 1)).astype(np.int32))
    if mode == "F":
        return Image.fromarray((ramp * 7 - 3).astype(np.float32))
    rgb = Image.fromarray((np.stack([ramp, ramp**2, 1 - ramp / 2], -1) * 255).astype(np.uint8))
    if mode == "P":
        img = rgb.convert("P", palette=Image.Palette.ADAPTIVE, colors=16)
        img.info["transparency"] = 0
        return img
    img = rgb.convert(mode)
    if "A" in mode:
        img.putpixel((0, 0), (0, 0) if mode == "LA" else (0, 0, 0, 0))
    return img


MODES = [
    ("1", "PNG"),
    ("L", "PNG"),
    ("LA", "PNG"),
    ("P", "PNG"),
    ("RGB", "PNG"),
    ("RGBA", "PNG"),
    ("CMYK", "JPEG"),
    ("CMYK", "TIFF"),
    ("I;16", "PNG"),
    ("I", "TIFF"),
    ("F", "TIFF"),
]


@pytest.mark.parametrize("channels", [1, 3])
@pytest.mark.parametrize(("mode", "fmt"), MODES)
def test_every_pillow_mode_loads_to_finite_float32_in_unit_range(mode, fmt, channels):
    data = encode(_mode_image(mode), fmt)
    assert Image.open(io.BytesIO(data)).mode == mode  # the file really is in this mode
    rgb = read_image(data)
    assert rgb.dtype == np.float32 and rgb.shape == (40, 48, 3)
    assert np.isfinite(rgb).all() and rgb.min() >= 0.0 and rgb.max() <= 1.0
    assert rgb.max() - rgb.min() > 0.5  # the content survived, not a blank image
    assert_model_input(load_image(data, cfg(channels)), channels)


def test_white_grey_image_is_all_ones():
    data = encode(Image.new("L", (20, 30), 255))
    assert np.array_equal(read_image(data), np.ones((30, 20, 3), np.float32))
    assert np.allclose(load_image(data, cfg(1)), 1.0, atol=1e-6)


def test_one_bit_image_is_zero_or_one():
    img = Image.new("1", (4, 2), 0)
    img.putpixel((1, 0), 1)
    rgb = read_image(encode(img))
    expected = np.zeros((2, 4), np.float32)
    expected[0, 1] = 1.0
    assert np.array_equal(rgb[..., 0], expected) and np.array_equal(rgb[..., 2], expected)


def test_sixteen_bit_is_scaled_by_65535_not_255():
    img = Image.fromarray(np.array([[65535, 32768, 0]], dtype=np.uint16))
    assert img.mode == "I;16"
    grey = read_image(encode(img))[0, :, 0]
    assert np.allclose(grey, [1.0, 32768 / 65535, 0.0], atol=1e-7)


def test_int32_is_scaled_by_its_full_range_and_negatives_clip_to_zero():
    img = Image.fromarray(np.array([[2**31 - 1, 2**30, -5]], dtype=np.int32))
    assert img.mode == "I"
    grey = read_image(encode(img, "TIFF"))[0, :, 0]
    assert np.allclose(grey, [1.0, 0.5, 0.0], atol=1e-6)


def test_float_image_with_nan_and_inf_becomes_finite_min_max_normalised():
    values = np.array([[np.nan, np.inf, -np.inf, 2.0], [-1.0, 3.0, 0.0, 1.0]], dtype=np.float32)
    rgb = read_image(encode(Image.fromarray(values), "TIFF"))
    grey = rgb[..., 0]
    assert np.isfinite(rgb).all()
    assert grey.min() == 0.0 and grey.max() == 1.0
    # NaN/±inf count as 0, then (v - (-1)) / (3 - (-1))
    assert np.allclose(grey, [[0.25, 0.25, 0.25, 0.75], [0.0, 1.0, 0.25, 0.5]])


def test_constant_float_image_becomes_zeros_not_nan():
    rgb = read_image(encode(Image.fromarray(np.full((3, 5), 7.5, np.float32)), "TIFF"))
    assert np.array_equal(rgb, np.zeros((3, 5, 3), np.float32))


def test_transparent_pixels_are_composited_onto_white():
    px = np.zeros((1, 3, 4), np.uint8)  # black, with alpha 0, 255 and 128
    px[0, :, 3] = [0, 255, 128]
    rgb = read_image(encode(Image.fromarray(px, "RGBA")))
    assert np.allclose(rgb[0, 0], 1.0)  # fully transparent -> white
    assert np.allclose(rgb[0, 1], 0.0)  # opaque black stays black
    assert np.allclose(rgb[0, 2], 1 - 128 / 255, atol=1e-6)  # half -> grey


def test_palette_transparency_key_is_composited_onto_white():
    img = Image.new("P", (2, 1))
    img.putpalette([0, 0, 0, 255, 0, 0])  # index 0 black, index 1 red
    img.putpixel((1, 0), 1)
    data = encode(img, transparency=0)  # black index is transparent
    rgb = read_image(data)
    assert np.allclose(rgb[0, 0], 1.0)
    assert np.allclose(rgb[0, 1], [1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("colour", "luma"), [((255, 0, 0), 0.299), ((0, 255, 0), 0.587), ((0, 0, 255), 0.114)]
)
def test_grey_uses_itu_r_601_luma_weights(colour, luma):
    data = encode(Image.new("RGB", (10, 10), colour))
    assert np.allclose(load_image(data, cfg(1)), luma, atol=1e-6)


def test_rgb_model_input_keeps_the_three_channels_apart():
    x = load_image(encode(Image.new("RGB", (10, 10), (255, 0, 0))), cfg(3))
    assert np.allclose(x[..., 0], 1.0) and np.allclose(x[..., 1:], 0.0)


# --- messy uploads ------------------------------------------------------------------------------
def _exif_jpeg(orientation: int | None) -> bytes:
    """40 wide × 20 tall, left half black, right half white, with an EXIF Orientation tag."""
    arr = np.zeros((20, 40), np.uint8)
    arr[:, 20:] = 255
    img = Image.fromarray(arr).convert("RGB")
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    return encode(img, "JPEG", exif=exif.tobytes(), quality=95)


def test_exif_orientation_is_honoured():
    assert read_image(_exif_jpeg(None)).shape == (20, 40, 3)  # as stored
    rgb = read_image(_exif_jpeg(6))  # 6 = "rotate 90° clockwise to display"
    assert rgb.shape == (40, 20, 3)
    assert rgb[:20].mean() < 0.1 and rgb[20:].mean() > 0.9  # the left half is now on top


def test_animation_uses_the_first_frame():
    black, white = Image.new("L", (16, 16), 0), Image.new("L", (16, 16), 255)
    data = encode(black, "GIF", save_all=True, append_images=[white], duration=100)
    with Image.open(io.BytesIO(data)) as gif:
        assert gif.n_frames == 2
    rgb = read_image(data)
    assert rgb.max() < 0.05


@pytest.mark.parametrize("tall", [False, True])
def test_non_square_is_centre_cropped_to_the_short_side(tall):
    arr = np.zeros((20, 40), np.uint8)  # black left and right quarters, white centre
    arr[:, 10:30] = 255
    if tall:
        arr = arr.T.copy()
    x = load_image(encode(Image.fromarray(arr)), cfg(1))
    assert np.allclose(x, 1.0, atol=1e-6)


def test_resize_keeps_float_precision_without_8_bit_rounding():
    rgb = np.full((50, 70, 3), 0.5003, np.float32)  # between 127/255 and 128/255
    assert np.allclose(to_model_input(rgb, cfg(3)), 0.5003, atol=1e-6)


def test_bicubic_overshoot_is_clipped_to_unit_range():
    rgb = np.zeros((10, 10, 3), np.float32)
    rgb[:, 5:] = 1.0  # a hard edge: unclipped bicubic upscaling goes to about -0.07 and 1.07
    x = to_model_input(rgb, cfg(3))
    assert x.min() == 0.0 and x.max() == 1.0


def test_downscaling_antialiases_fine_detail():
    checker = (np.indices((64, 64)).sum(0) % 2).astype(np.float32)
    x = to_model_input(np.repeat(checker[..., None], 3, -1), cfg(1))
    assert np.allclose(x, 0.5, atol=0.02)  # averaged, not aliased to 0 or 1


def test_path_bytes_file_objects_and_read_only_objects_give_identical_results(tmp_path):
    data = encode(noise_rgb(40))
    path = tmp_path / "upload.png"
    path.write_bytes(data)

    class ReadOnly:
        def read(self) -> bytes:
            return data

    consumed = io.BytesIO(data)
    consumed.read()  # cursor at the end, as after a preview in the app
    sources = [str(path), path, data, bytearray(data), memoryview(data), io.BytesIO(data),
               consumed, ReadOnly()]  # fmt: skip
    reference = read_image(data)
    for source in sources:
        assert np.array_equal(read_image(source), reference), type(source)
        assert np.array_equal(load_image(source, cfg(1)), load_image(data, cfg(1)))


def test_reading_changes_no_global_pillow_or_warning_state():
    before = (Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES, list(warnings.filters))
    read_image(encode(noise_rgb(8)))
    with pytest.raises(ImageError):
        read_image(png_claiming(10000, 10000))
    after = (Image.MAX_IMAGE_PIXELS, ImageFile.LOAD_TRUNCATED_IMAGES, list(warnings.filters))
    assert before == after


# --- hostile files ------------------------------------------------------------------------------
def assert_human_image_error(exc_info: pytest.ExceptionInfo[ImageError]) -> str:
    err = exc_info.value
    assert type(err) is ImageError and isinstance(err, ValueError)
    message = str(err)
    assert len(message) > 30 and "image" in message.lower()
    return message


HOSTILE = {
    "empty": b"",
    "text": b"hello world",
    "svg": b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" '
    b'height="10"><rect width="10" height="10"/></svg>',
    "truncated_png": (lambda d: d[: len(d) // 2])(encode(noise_rgb())),
    "truncated_jpeg": (lambda d: d[: len(d) // 2])(encode(noise_rgb(), "JPEG")),
    "random": np.random.default_rng(7).integers(0, 256, 4096, dtype=np.uint8).tobytes(),
    "zero_size_png": png_claiming(0, 10),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_file_raises_a_human_image_error(name):
    with pytest.raises(ImageError) as exc_info:
        read_image(HOSTILE[name])
    assert_human_image_error(exc_info)


@pytest.mark.filterwarnings("ignore::UserWarning")  # Pillow's TIFF plugin warns on bad tags
@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "GIF", "TIFF", "BMP", "WEBP"])
def test_corrupted_files_load_cleanly_or_raise_image_error_never_anything_else(fmt):
    rng = np.random.default_rng(sum(map(ord, fmt)))
    valid = encode(noise_rgb(24), fmt)
    for i in range(80):
        data = bytearray(valid)
        for at in rng.integers(0, len(data), rng.integers(1, 8)):
            data[at] = rng.integers(0, 256)
        if i % 3 == 0:
            data = data[: rng.integers(0, len(data))]
        try:
            rgb = read_image(bytes(data))
        except ImageError as err:
            assert "image" in str(err).lower()
        else:
            assert rgb.dtype == np.float32 and rgb.ndim == 3 and rgb.shape[2] == 3
            assert np.isfinite(rgb).all() and rgb.min() >= 0.0 and rgb.max() <= 1.0


def test_a_path_that_does_not_exist_raises_image_error(tmp_path):
    with pytest.raises(ImageError) as exc_info:
        read_image(tmp_path / "missing.png")
    assert "missing.png" in str(exc_info.value)


def _read_measured(data: bytes) -> tuple[pytest.ExceptionInfo[ImageError], float, int]:
    """read_image(data) that must fail: the error, the seconds taken, the peak traced bytes."""
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(ImageError) as exc_info:
            read_image(data)
        seconds = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return exc_info, seconds, peak


@pytest.fixture(scope="module")
def complete_png_over_limit() -> bytes:
    """A complete, valid, all-black 5001 × 5001 grey PNG (25.01 MP, about 24 kB compressed)."""
    return png_claiming(5001, 5001, idat=zlib.compress(bytes(5001 * 5002), 9))


@pytest.mark.parametrize("complete", [False, True])
def test_over_max_pixels_is_refused_from_the_header_fast_and_without_decoding(
    complete, complete_png_over_limit
):
    assert 5001 * 5001 > MAX_PIXELS and 5001 * 5001 < Image.MAX_IMAGE_PIXELS
    data = complete_png_over_limit if complete else png_claiming(5001, 5001)
    exc_info, seconds, peak = _read_measured(data)
    message = assert_human_image_error(exc_info)
    assert "megapixels" in message and "5001 × 5001" in message and "downscale" in message
    assert seconds < 1.0
    assert peak < 10 * 2**20  # decoding would allocate 25 MB (Pillow) + 300 MB (float RGB)


def test_above_pillows_bomb_limit_is_an_image_error():
    assert 20000 * 20000 > 2 * Image.MAX_IMAGE_PIXELS  # Pillow raises DecompressionBombError
    exc_info, seconds, peak = _read_measured(png_claiming(20000, 20000))
    assert "megapixels" in assert_human_image_error(exc_info)
    assert seconds < 1.0 and peak < 10 * 2**20


def test_pillows_bomb_warning_becomes_an_image_error_and_does_not_leak():
    assert Image.MAX_IMAGE_PIXELS < 10000 * 10000 < 2 * Image.MAX_IMAGE_PIXELS
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ImageError) as exc_info:
            read_image(png_claiming(10000, 10000))
    assert "megapixels" in assert_human_image_error(exc_info)
    assert not [w for w in caught if issubclass(w.category, Image.DecompressionBombWarning)]


def test_image_error_is_a_value_error():
    assert issubclass(ImageError, ValueError)
