"""Read the tensors of a checkpoint file into NumPy, never running code from the file.

Three formats, recognised by their first bytes (not by the file name):

* **safetensors** — an 8-byte little-endian header length n, n bytes of JSON
  `{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {…}}`, then the
  tensors' bytes (offsets count from the end of the header). Everything is validated before a
  tensor is allocated: the header length is bounded and inside the file, each dtype is one of
  F64 / F32 / F16 / BF16, each size is prod(shape)·itemsize, the ranges lie inside the file and
  do not overlap. BF16 becomes float32 by a 16-bit shift (exact).
* **npz** — `np.load(allow_pickle=False)`; each member's declared shape is checked against its
  stored size before it is read (a zip member cannot claim more than it holds).
* **PyTorch zip** (`.pth`, `.pt`, `.bin`) — see `torchfile.read_torch_zip`: a whitelist
  unpickler that knows only the tensor-rebuild names. The old non-zip pickle format is refused.

Every problem is a `CheckpointError` whose message says what is wrong and what to do.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zipfile
import zlib
from dataclasses import dataclass

import numpy as np

from .shared import CONVERT_HINT, MAX_TENSOR_BYTES, CheckpointError, bf16_to_float32
from .torchfile import read_torch_zip

MAX_HEADER_BYTES = 100 * 2**20
"""Largest safetensors JSON header accepted (100 MB; real ones are a few hundred kB)."""

SAFETENSORS_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),  # read as raw 16-bit words, then shifted into float32
}

@dataclass(frozen=True)
class TensorEntry:
    """One tensor of a safetensors header, validated."""

    name: str
    dtype: str  # "F32", "F16", "BF16" or "F64"
    shape: tuple[int, ...]
    begin: int  # byte offset from the start of the data section
    end: int


def to_float32(raw: np.ndarray, dtype: str) -> np.ndarray:
    """A tensor read as `dtype` ("F64", "F32", "F16", "BF16") as a float32 array."""
    if dtype == "BF16":
        return bf16_to_float32(raw)
    return raw.astype(np.float32, copy=False)  # F32 as read: no second copy


def file_format(path: str | os.PathLike) -> str:
    """'safetensors', 'npz', 'torch-zip' or 'torch-legacy', from the file's first bytes."""
    try:
        with open(path, "rb") as f:
            head = f.read(9)
    except OSError as err:
        raise CheckpointError(f"Cannot open the checkpoint {os.fspath(path)!r}: "
                          f"{err.strerror}.") from None
    if head[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
        except (zipfile.BadZipFile, OSError, ValueError) as err:
            raise CheckpointError(f"{os.fspath(path)!r} looks like a zip archive but cannot be "
                              f"read ({err}): the file is damaged or incomplete; download "
                              "it again.") from None
        if any(n.endswith("/data.pkl") or n == "data.pkl" for n in names):
            return "torch-zip"
        if names and all(n.endswith(".npy") for n in names):
            return "npz"
        raise CheckpointError(f"{os.fspath(path)!r} is a zip archive but neither an .npz of "
                          "arrays nor a PyTorch checkpoint: use a .safetensors, .npz or .pth "
                          "file of a ViT.")
    # safetensors first: its 8-byte little-endian header length may begin with 0x80 (one file
    # in 256), the old pickle format's first byte; byte 8 of such a pickle is its magic number's
    if len(head) >= 9 and head[8:9] == b"{":
        return "safetensors"
    if head[:1] == b"\x80":
        raise CheckpointError(
            f"{os.fspath(path)!r} is a PyTorch file in the old pickle format, which cannot be "
            "read without running code from the file; Encoder Lens never does that. "
            + CONVERT_HINT)
    raise CheckpointError(f"{os.fspath(path)!r} is not a checkpoint Encoder Lens can read: use a "
                      ".safetensors file (best), an .npz of arrays, or a PyTorch .pth/.bin.")


def read_tensors(path: str | os.PathLike) -> tuple[object, str]:
    """The file's tensors (nested dicts of float32 arrays for PyTorch files) and its format."""
    kind = file_format(path)
    if kind == "safetensors":
        return read_safetensors(path), kind
    if kind == "npz":
        return read_npz(path), kind
    return read_torch_zip(path), kind


def parse_safetensors_header(header: bytes, data_size: int) -> list[TensorEntry]:
    """Validate a safetensors JSON header against a data section of `data_size` bytes.

    Returns the tensors sorted by offset. Raises ParamsError on any inconsistency.
    """
    try:
        table = json.loads(header.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CheckpointError(f"the safetensors header is not valid JSON ({err}): the file is "
                          "damaged; download or convert it again.") from None
    if not isinstance(table, dict):
        raise CheckpointError("the safetensors header is not a JSON object: the file is damaged.")
    entries, problems = [], []
    for name, spec in table.items():
        if name == "__metadata__":
            continue
        entry = _header_entry(name, spec, problems)
        if entry is not None:
            entries.append(entry)
    if problems:
        raise CheckpointError("this safetensors file is inconsistent: " + "; ".join(problems[:5])
                          + ("; …" if len(problems) > 5 else "")
                          + ". Download or convert it again.")
    entries.sort(key=lambda e: (e.begin, e.end))
    for a, b in zip(entries, entries[1:], strict=False):
        if b.begin < a.end:
            raise CheckpointError(f"tensors {a.name!r} and {b.name!r} overlap in this safetensors "
                              "file: it is damaged or crafted; do not use it.")
    for e in entries:
        if e.end > data_size:
            raise CheckpointError(
                f"tensor {e.name!r} ends at byte {e.end:,} of the data but the file holds only "
                f"{data_size:,}: the file is truncated; download it again.")
    if sum(e.end - e.begin for e in entries) > MAX_TENSOR_BYTES:
        raise CheckpointError(f"the tensors take more than {MAX_TENSOR_BYTES / 2**30:g} GiB: far "
                          "larger than any ViT Encoder Lens can show.")
    return entries


def _header_entry(name: str, spec: object, problems: list[str]) -> TensorEntry | None:
    """One header entry checked field by field; problems are appended, None returned."""
    if not isinstance(spec, dict):
        problems.append(f"{name!r} is not described by an object")
        return None
    dtype, shape, offsets = spec.get("dtype"), spec.get("shape"), spec.get("data_offsets")
    if not isinstance(dtype, str) or dtype not in SAFETENSORS_DTYPES:
        problems.append(f"{name!r} has dtype {dtype!r} (only F32, F16, BF16 and F64 weights "
                        "are read)")
        return None
    if (not isinstance(shape, list) or len(shape) > 8
            or not all(type(s) is int and s >= 0 for s in shape)):
        problems.append(f"{name!r} has shape {shape!r}, not a list of sizes")
        return None
    if (not isinstance(offsets, list) or len(offsets) != 2
            or not all(type(o) is int for o in offsets) or not 0 <= offsets[0] <= offsets[1]):
        problems.append(f"{name!r} has data_offsets {offsets!r}")
        return None
    nbytes = math.prod(shape) * SAFETENSORS_DTYPES[dtype].itemsize
    if offsets[1] - offsets[0] != nbytes:
        problems.append(f"{name!r} of shape {tuple(shape)} {dtype} needs {nbytes:,} bytes but "
                        f"its offsets span {offsets[1] - offsets[0]:,}")
        return None
    return TensorEntry(name, dtype, tuple(shape), offsets[0], offsets[1])


def read_safetensors(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Every tensor of a .safetensors file as float32 NumPy arrays (validated first)."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        first = f.read(8)
        if len(first) < 8:
            raise CheckpointError("this safetensors file is shorter than its 8-byte header "
                              "length: it is truncated; download it again.")
        (n,) = struct.unpack("<Q", first)
        if n > MAX_HEADER_BYTES:
            raise CheckpointError(f"this safetensors file claims a {n:,}-byte header, more than "
                              f"the {MAX_HEADER_BYTES // 2**20} MB allowed: it is damaged or "
                              "crafted; do not use it.")
        if 8 + n > size:
            raise CheckpointError(f"this safetensors file claims a {n:,}-byte header but holds "
                              f"only {size:,} bytes: it is truncated; download it again.")
        entries = parse_safetensors_header(f.read(n), size - 8 - n)
        tensors = {}
        for e in entries:
            f.seek(8 + n + e.begin)
            dtype = SAFETENSORS_DTYPES[e.dtype]
            raw = np.fromfile(f, dtype=dtype, count=math.prod(e.shape))
            if raw.size != math.prod(e.shape):
                raise CheckpointError(f"tensor {e.name!r} is cut off: the file is truncated; "
                                  "download it again.")
            tensors[e.name] = to_float32(raw, e.dtype).reshape(e.shape)
    return tensors


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """The float arrays of an .npz file (no pickle), each shape checked before it is read."""
    try:
        check_npz_sizes(path)
        tensors = {}
        with np.load(path, allow_pickle=False) as npz:
            for key in npz.files:
                a = npz[key]
                if a.dtype.kind != "f":
                    raise CheckpointError(f"array {key!r} of this .npz has dtype {a.dtype}: only "
                                      "floating-point weights are read.")
                tensors[key] = a.astype(np.float32, copy=False)
        return tensors
    except CheckpointError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error) as err:
        raise CheckpointError(f"Cannot read the .npz {os.fspath(path)!r} ({type(err).__name__}: "
                          f"{err}): the file is damaged; download or convert it again."
                          ) from None


def check_npz_sizes(path: str | os.PathLike) -> None:
    """Every .npy member's declared shape fits the bytes it stores; the total is bounded."""
    declared = 0
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            with zf.open(info) as member:
                version = np.lib.format.read_magic(member)
                read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                               (2, 0): np.lib.format.read_array_header_2_0}.get(version)
                if read_header is None:
                    raise CheckpointError(f"member {info.filename!r} of this .npz has .npy "
                                      f"version {version}; save it with numpy.savez.")
                shape, _, dtype = read_header(member)
            nbytes = math.prod(shape) * dtype.itemsize
            if dtype.hasobject or nbytes > info.file_size:
                raise CheckpointError(f"member {info.filename!r} of this .npz claims {shape} "
                                  f"{dtype} but stores {info.file_size:,} bytes: the file is "
                                  "damaged or crafted; do not use it.")
            declared += nbytes
    if declared > MAX_TENSOR_BYTES:
        raise CheckpointError(f"the arrays take more than {MAX_TENSOR_BYTES / 2**30:g} GiB.")
