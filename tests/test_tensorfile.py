"""encoder_core.checkpoints.tensorfile: our safetensors / npz readers equal the reference
library's, and every malformed or hostile file is a ParamsError before anything large is
allocated."""

import json
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file, save_file

from encoder_core.checkpoints.tensorfile import (
    bf16_to_float32,
    file_format,
    parse_safetensors_header,
    read_npz,
    read_safetensors,
    read_tensors,
)
from encoder_core.params import ParamsError


def write_raw_safetensors(path, header: dict, data: bytes, declared_len: int | None = None):
    head = json.dumps(header).encode()
    n = len(head) if declared_len is None else declared_len
    path.write_bytes(struct.pack("<Q", n) + head + data)


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    return {"a": rng.standard_normal((3, 4)).astype(np.float32),
            "b": rng.standard_normal(5).astype(np.float16),
            "c": rng.standard_normal((2, 2, 2)),  # float64
            "empty": np.zeros((0, 3), np.float32)}


def test_safetensors_reader_equals_the_reference_library(tmp_path, arrays):
    path = tmp_path / "w.safetensors"
    save_file(arrays, str(path))
    ours, theirs = read_safetensors(path), load_file(str(path))
    assert set(ours) == set(theirs)
    for k in theirs:
        assert ours[k].dtype == np.float32 and ours[k].shape == theirs[k].shape
        np.testing.assert_array_equal(ours[k], theirs[k].astype(np.float32))


def test_bf16_becomes_the_float32_with_the_same_high_bits():
    x = np.array([1.0, -2.5, 3.140625, 1e-3, -0.0], np.float32)
    words = (x.view(np.uint32) >> 16).astype(np.uint16)  # truncation to bfloat16
    back = bf16_to_float32(words)
    np.testing.assert_array_equal(back.view(np.uint32), x.view(np.uint32) & 0xFFFF0000)
    assert back[0] == 1.0 and back[1] == -2.5


def test_bf16_tensor_in_a_file(tmp_path):
    words = np.array([0x3F80, 0xC020], np.uint16)  # 1.0, -2.5
    write_raw_safetensors(tmp_path / "b.safetensors",
                          {"x": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}},
                          words.tobytes())
    np.testing.assert_array_equal(read_safetensors(tmp_path / "b.safetensors")["x"], [1.0, -2.5])


def test_truncated_safetensors_is_refused(tmp_path, arrays):
    path = tmp_path / "w.safetensors"
    save_file(arrays, str(path))
    blob = path.read_bytes()
    for cut in (4, 20, len(blob) - 3):
        (tmp_path / "t.safetensors").write_bytes(blob[:cut])
        with pytest.raises(ParamsError, match="truncated|header|damaged"):
            read_tensors(tmp_path / "t.safetensors")


def test_a_header_claiming_2_gb_is_refused_before_reading_it(tmp_path):
    path = tmp_path / "big.safetensors"
    write_raw_safetensors(path, {}, b"", declared_len=2 * 2**30)
    with pytest.raises(ParamsError, match="2,147,483,648-byte header"):
        read_safetensors(path)


def test_header_longer_than_the_file_is_refused(tmp_path):
    path = tmp_path / "h.safetensors"
    write_raw_safetensors(path, {}, b"", declared_len=5000)
    with pytest.raises(ParamsError, match="truncated"):
        read_safetensors(path)


@pytest.mark.parametrize("entry, message", [
    ({"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}, "dtype 'I64'"),
    ({"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}, "needs 12 bytes"),
    ({"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}, "not a list of sizes"),
    ({"dtype": "F32", "shape": [2], "data_offsets": [8, 0]}, "data_offsets"),
    ({"dtype": "F32", "shape": [10**12], "data_offsets": [0, 4 * 10**12]}, "ends at byte"),
    ("nonsense", "not described by an object"),
])  # fmt: skip
def test_inconsistent_header_entries_are_refused(entry, message):
    with pytest.raises(ParamsError, match=message):
        parse_safetensors_header(json.dumps({"x": entry}).encode(), data_size=16)


def test_overlapping_tensors_are_refused():
    header = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
              "y": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}
    with pytest.raises(ParamsError, match="overlap"):
        parse_safetensors_header(json.dumps(header).encode(), data_size=16)


def test_header_that_is_not_json_is_refused():
    with pytest.raises(ParamsError, match="not valid JSON"):
        parse_safetensors_header(b"{not json", data_size=0)


def test_npz_is_read_without_pickle_and_checked(tmp_path, arrays):
    np.savez(tmp_path / "w.npz", **{k: v for k, v in arrays.items()})
    got = read_npz(tmp_path / "w.npz")
    for k, v in arrays.items():
        np.testing.assert_array_equal(got[k], v.astype(np.float32))
    np.savez(tmp_path / "o.npz", x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ParamsError):
        read_tensors(tmp_path / "o.npz")
    np.savez(tmp_path / "i.npz", x=np.arange(3))
    with pytest.raises(ParamsError, match="floating-point"):
        read_npz(tmp_path / "i.npz")


def test_a_damaged_compressed_npz_is_a_params_error(tmp_path, arrays):
    np.savez_compressed(tmp_path / "c.npz", a=arrays["a"], c=arrays["c"])
    np.testing.assert_array_equal(read_npz(tmp_path / "c.npz")["a"], arrays["a"])
    blob = bytearray((tmp_path / "c.npz").read_bytes())
    for i in range(60, 160, 7):  # inside the first member's compressed data
        blob[i] ^= 0xFF
    (tmp_path / "d.npz").write_bytes(bytes(blob))
    with pytest.raises(ParamsError, match="damaged|claims|not"):
        read_tensors(tmp_path / "d.npz")


def test_npz_member_claiming_more_than_it_stores_is_refused(tmp_path):
    import zipfile

    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (100000, 100000), }"
    header = header.ljust(117) + "\n"
    member = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + b"\0" * 16
    with zipfile.ZipFile(tmp_path / "bomb.npz", "w") as zf:
        zf.writestr("x.npy", member)
    with pytest.raises(ParamsError, match="claims"):
        read_tensors(tmp_path / "bomb.npz")


def test_formats_are_recognised_by_their_bytes_not_their_names(tmp_path, arrays):
    save_file(arrays, str(tmp_path / "w.pth"))  # a safetensors file with a misleading name
    assert file_format(tmp_path / "w.pth") == "safetensors"
    (tmp_path / "x.safetensors").write_bytes(b"hello world, not weights")
    with pytest.raises(ParamsError, match="not a checkpoint"):
        read_tensors(tmp_path / "x.safetensors")
    with pytest.raises(ParamsError, match="Cannot open"):
        read_tensors(tmp_path / "missing.safetensors")


@pytest.mark.parametrize("low_byte", [0x80, 0x7F, 0x81])
def test_a_safetensors_header_length_that_begins_like_a_pickle_is_still_safetensors(tmp_path,
                                                                                    low_byte):
    """The 8-byte header length is little-endian: one file in 256 starts with 0x80, the old
    pickle format's first byte. Such a file is read, not refused as a pickle."""
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    header = json.dumps({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}})
    n = 0x100 + low_byte  # the padded header's length: its low byte is `low_byte`
    raw = header.encode().ljust(n, b" ")
    path = tmp_path / "w.safetensors"
    path.write_bytes(struct.pack("<Q", n) + raw + values.tobytes())
    assert path.read_bytes()[:1] == bytes([low_byte])
    assert file_format(path) == "safetensors"
    tensors, kind = read_tensors(path)
    assert kind == "safetensors" and np.array_equal(tensors["w"], values)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=12)
entries = st.fixed_dictionaries({}, optional={
    "dtype": st.sampled_from(["F32", "F16", "BF16", "F64", "I8", "x"]) | json_values,
    "shape": st.lists(st.integers(-3, 40), max_size=4) | json_values,
    "data_offsets": st.lists(st.integers(-5, 200), min_size=2, max_size=2) | json_values,
})


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(header=st.dictionaries(st.text(max_size=6), entries | json_values, max_size=4),
       data=st.binary(max_size=160), declared=st.none() | st.integers(0, 2**64 - 1))
def test_any_header_gives_arrays_or_a_params_error(tmp_path, header, data, declared):
    path = tmp_path / "fuzz.safetensors"
    try:
        blob = json.dumps(header).encode()
    except (ValueError, OverflowError):
        return
    n = len(blob) if declared is None else declared
    path.write_bytes(struct.pack("<Q", n) + blob + data)
    try:
        tensors, kind = read_tensors(path)
    except ParamsError:
        return
    assert kind == "safetensors"
    for a in tensors.values():
        assert a.dtype == np.float32
