"""The explorer's payload: one bytes blob whose header, picture and float16 maps read back as
the browser reads them, the trace's weights to 3 significant digits, within the page cap; and
its browser side: the files of lens/explorer_web/, given as they are to the component and
shipped as package data."""

from __future__ import annotations

import importlib.util
import json
import struct
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from encoder_core.pipeline.attention import softmax
from lens import explorer, explorer_component
from lens.explorer_component import CSS, HTML, JS

TEXT = {"hint": "h", "aria": "a", "patch": "patch {i}", "weight": "weight"}


def read(blob: bytes) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray | None]:
    """(header, lut [256, 3], picture [side, side, 3], maps or None), as explorer.js parses."""
    (n,) = struct.unpack_from("<I", blob)
    head = json.loads(blob[4:4 + n].decode())
    body = memoryview(blob)[4 + n:]
    assert (4 + n) % 4 == 0
    lut = np.frombuffer(body, np.uint8, 768, head["lut_at"]).reshape(256, 3)
    side = head["side"]
    pic = np.frombuffer(body, np.uint8, side * side * 3, head["image_at"]).reshape(side, side, 3)
    maps = None
    if head["rows"]:
        shape = (head["rows"], head["cols"], head["N"], head["N"])
        maps = np.frombuffer(body, "<f2", int(np.prod(shape)), head["maps_at"]).reshape(shape)
    return head, lut, pic, maps


def attn_rows(rng, rows, cols, n, spread):
    """Softmax rows; a large `spread` makes them peaked (tiny weights beside one near 1)."""
    return softmax(rng.standard_normal((rows, cols, n, n)).astype(np.float32) * spread)


def test_the_picker_payload_carries_the_picture_and_no_maps():
    image = np.linspace(0, 1, 64 * 64, dtype=np.float32).reshape(64, 64, 1)
    head, lut, pic, maps = read(explorer.payload(image, 4, 10, TEXT))
    assert maps is None and head["rows"] == 0 and head["query"] == 10
    assert head["G"] == 4 and head["N"] == 16 and head["side"] == 64
    assert pic[0, 0].tolist() == [0, 0, 0] and pic[-1, -1].tolist() == [255, 255, 255]
    assert head["text"] == TEXT
    assert lut.shape == (256, 3) and lut[0].tolist() != lut[-1].tolist()


@pytest.mark.parametrize("spread", [1.0, 8.0, 30.0])  # nearly uniform … peaked rows
def test_float16_maps_give_the_trace_to_3_significant_digits(spread):
    rng = np.random.default_rng(0)
    attn = attn_rows(rng, 2, 3, 49, spread)  # [layers, heads, N, N]
    image = rng.random((56, 56, 3)).astype(np.float32)
    blob = explorer.payload(image, 7, 0, TEXT, explorer.Maps(attn, "t {i}", "w"))
    head, _, _, maps = read(blob)
    assert maps.shape == attn.shape
    shown = maps.astype(np.float64) / head["scale"]
    normal = maps >= np.float16(2**-14)  # what the tooltip gives as a number
    rel = np.abs(shown - attn)[normal] / attn[normal]
    assert rel.max() <= 2**-11 + 1e-7  # float16's half unit: 3 significant digits
    # below float16's normal numbers the tooltip says "< 1.86e-9", which is true
    assert (attn[~normal] < 2**-14 / head["scale"] * (1 + 2**-10)).all()
    if spread == 1.0:
        assert normal.all()


def test_a_peaked_row_keeps_weights_far_below_the_uniform_level():
    """8-bit transport would round a weight of 1e-6 to 0; the scaled float16 keeps 3 digits."""
    attn = np.zeros((1, 1, 4, 4), np.float32)
    attn[..., 0] = 1 - 3e-6
    attn[..., 1:] = 1e-6
    _, _, _, maps = read(explorer.payload(np.zeros((8, 8, 1), np.float32), 2, 0, TEXT,
                                          explorer.Maps(attn, "t", "w")))
    shown = maps.astype(np.float64) / explorer.SCALE
    assert np.allclose(shown[..., 1:], 1e-6, rtol=2**-11)


def test_the_cap_keeps_one_page_under_4_mb_and_says_what_falls_back():
    assert explorer.fits(8, 196)  # multi-head at the defaults: 0.6 MB
    assert explorer.map_bytes(8, 196) == 614_656
    assert explorer.fits(6 * 8, 196)  # the stack's 6 × 8 grid at the defaults: 3.7 MB
    assert not explorer.fits(16, 1024)  # 1,024 tokens × 16 heads: 32 MB, click-and-rerun
    assert not explorer.fits(4, 1024) and explorer.fits(1, 1024)


def test_the_blob_stays_within_the_cap_when_fits_says_so():
    rng = np.random.default_rng(1)
    attn = attn_rows(rng, 6, 8, 196, 1.0)
    blob = explorer.payload(rng.random((224, 224, 1)).astype(np.float32), 14, 105, TEXT,
                            explorer.Maps(attn, "t", "w"))
    assert explorer.fits(48, 196) and len(blob) <= explorer.MAX_BYTES


@pytest.mark.parametrize("size, grid, side", [(224, 14, 224), (512, 32, 256), (512, 16, 256),
                                              (32, 8, 32), (320, 10, 250)])
def test_the_picture_side_is_a_multiple_of_the_grid_and_at_most_256(size, grid, side):
    pixels = explorer.picture_pixels(np.zeros((size, size, 1), np.float32), grid)
    assert pixels.shape == (side, side, 3) and pixels.dtype == np.uint8
    assert side % grid == 0 and side <= explorer.MAX_PICTURE


def test_labels_travel_in_the_data_never_in_the_code():
    blob = explorer.payload(np.zeros((8, 8, 1), np.float32), 2, 0,
                            {**TEXT, "patch": "<img src=x onerror=alert(1)>"})
    assert b"<img src=x" in blob  # as data, written by textContent
    for code in (HTML, CSS, JS):
        assert "innerHTML" not in code and "<img" not in code


WEB = Path(explorer.__file__).parent / "explorer_web"


def test_the_component_is_built_from_the_files_of_explorer_web(monkeypatch):
    """lens.explorer_component hands st.components.v2 the files' text, read as they are."""
    calls = []
    monkeypatch.setattr(explorer_component.st.components.v2, "component",
                        lambda name, **kw: calls.append((name, kw)))
    # a second copy of the module (so the real one, which others hold, is left as it is)
    spec = importlib.util.spec_from_file_location("lens._explorer_copy",
                                                  explorer_component.__file__)
    copy = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, copy)  # where its dataclasses look themselves up
    spec.loader.exec_module(copy)
    files = {kind: (WEB / f"explorer.{kind}").read_text(encoding="utf-8")
             for kind in ("html", "css", "js")}
    similarity = {**files, "html": files["html"].replace('"el-explorer"', '"el-similarity"')}
    assert similarity["html"] != files["html"]  # the same files, the root named apart
    assert calls == [("encoder_lens_explorer", files), ("encoder_lens_similarity", similarity)]
    assert (HTML, CSS, JS) == (files["html"], files["css"], files["js"])
    # the JS is the module the component runs, and reads the protocol's header length first
    assert "export default function (component)" in JS
    assert "const n = view.getUint32(0, true);" in JS  # uint32, little-endian


def test_package_data_ships_every_file_of_explorer_web():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    globs = pyproject["tool"]["setuptools"]["package-data"]["lens"]
    shipped = {f for pattern in globs for f in WEB.parent.glob(pattern)}
    files = set(WEB.iterdir())
    assert {f.name for f in files} >= {"explorer.html", "explorer.css", "explorer.js"}
    assert files <= shipped


def test_the_similarity_payload_carries_the_unit_rows_as_float16_after_the_picture():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((16, 8)).astype(np.float32)
    unit = X / np.linalg.norm(X, axis=1, keepdims=True)
    image = rng.random((64, 64, 1)).astype(np.float32)
    blob = explorer.similarity_payload(image, 4, 5, {"title": "{i}"}, unit)
    (n,) = struct.unpack_from("<I", blob)
    head = json.loads(blob[4:4 + n])
    assert (head["mode"], head["N"], head["d"], head["query"]) == ("similarity", 16, 8, 5)
    assert (head["rows"], head["cols"]) == (1, 1) and "maps_at" not in head
    start = 4 + n + head["unit_at"]
    assert start % 4 == 0 and len(blob) == start + 2 * 16 * 8
    rows = np.frombuffer(blob, "<f2", 16 * 8, start).reshape(16, 8)
    assert np.array_equal(rows, unit.astype(np.float16))
    with pytest.raises(ValueError):
        explorer.similarity_payload(image, 3, 0, {}, unit)  # 16 rows for a 3 × 3 grid


def test_the_similarity_rows_fit_up_to_the_cap():
    assert explorer.rows_bytes(1024, 1024) == 2 * 2**20
    assert explorer.rows_fit(1024, 1024)  # the largest settings: 2 MiB beside the picture
    limit = (explorer.MAX_BYTES - 2**18) // 2  # N · d at the cap
    assert explorer.rows_fit(1, limit) and not explorer.rows_fit(1, limit + 1)
