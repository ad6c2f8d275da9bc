"""Read a PyTorch zip checkpoint (`torch.save`, `.pth` / `.pt` / `.bin`) without unpickling it.

A `.pth` is a zip holding `…/data.pkl` (a pickle of the state dict) and `…/data/N` (the raw
bytes of storage N). Unpickling runs whatever callables the pickle names: `pickle.load` or
`torch.load(weights_only=False)` on a stranger's file runs the stranger's code. So the pickle
is read here by a **whitelist unpickler** (Python's own pure-Python `pickle._Unpickler`):

* `find_class` knows exactly: `collections.OrderedDict`, `torch._utils._rebuild_tensor_v2`,
  `torch._utils._rebuild_parameter` and the `torch.<Type>Storage` names — mapped to NumPy
  functions defined here. Any other name (`os.system`, `builtins.eval`, `argparse.Namespace`, …)
  stops the read with a CheckpointError; nothing named by the file is ever imported.
* The opcodes that call methods on built objects (INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT*) are
  removed from the dispatch table. BUILD is allowed only on an OrderedDict, whose state
  (`state_dict()`'s `_metadata` of module versions) is dropped, not set.
* Storages are read from the zip with NumPy after their sizes are checked; a tensor view is
  bounds-checked (offset, size, stride) before it is copied, and the total is capped.
"""

from __future__ import annotations

import collections
import math
import os
import pickle
import struct
import zipfile
from dataclasses import dataclass

import numpy as np

from .shared import CONVERT_HINT, MAX_TENSOR_BYTES, CheckpointError, bf16_to_float32

MAX_PICKLE_BYTES = 64 * 2**20
"""Largest data.pkl read (a ViT state dict's pickle is tens of kB)."""

STORAGE_DTYPES: dict[str, str] = {
    "FloatStorage": "f4", "HalfStorage": "f2", "DoubleStorage": "f8", "BFloat16Storage": "u2",
    "LongStorage": "i8", "IntStorage": "i4", "ShortStorage": "i2", "CharStorage": "i1",
    "ByteStorage": "u1", "BoolStorage": "?",
}

FORBIDDEN_OPCODES = frozenset(op[0] for op in (
    pickle.INST, pickle.OBJ, pickle.NEWOBJ, pickle.NEWOBJ_EX,
    pickle.EXT1, pickle.EXT2, pickle.EXT4, pickle.PERSID,
))


@dataclass(frozen=True)
class StorageKind:
    """What `torch.FloatStorage` and friends stand for here: a NumPy dtype (not callable)."""

    name: str  # e.g. "FloatStorage"
    dtype: str  # NumPy type code without byte order, e.g. "f4"


def rebuild_tensor(storage: np.ndarray, offset: int, size: tuple, stride: tuple,
                   *_ignored: object) -> np.ndarray:
    """`torch._utils._rebuild_tensor_v2`, in NumPy: the strided view of a 1-D storage, copied.

    Args:
        storage: [numel] the storage's values; offset: first element; size, stride: per axis,
            in elements. Bounds are checked before any view is made.
    Returns:
        a new array of shape `size`.
    """
    if not isinstance(storage, np.ndarray) or storage.ndim != 1:
        raise CheckpointError("a tensor in this file does not point at a storage.")
    ok = (type(offset) is int and offset >= 0 and isinstance(size, tuple | list)
          and isinstance(stride, tuple | list) and len(size) == len(stride) <= 8
          and all(type(s) is int and s >= 0 for s in size)
          and all(type(s) is int and s >= 0 for s in stride))
    if not ok:
        raise CheckpointError(f"a tensor in this file has an impossible layout "
                          f"(offset {offset!r}, size {size!r}, stride {stride!r}).")
    numel = math.prod(size)
    if numel * storage.itemsize > MAX_TENSOR_BYTES:
        raise CheckpointError(f"a tensor in this file claims {numel:,} elements: far more than "
                          "any ViT has; the file is damaged or crafted.")
    if numel:
        last = offset + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
        if last >= storage.size:
            raise CheckpointError("a tensor in this file reaches past the end of its storage: the "
                              "file is damaged or crafted.")
    else:
        return np.zeros(size, storage.dtype)
    view = np.lib.stride_tricks.as_strided(
        storage[offset:], shape=tuple(size),
        strides=tuple(s * storage.itemsize for s in stride), writeable=False)
    return np.array(view)


def rebuild_parameter(data: np.ndarray, *_ignored: object) -> np.ndarray:
    """`torch._utils._rebuild_parameter`: an nn.Parameter is its data here."""
    return data


class WhitelistUnpickler(pickle._Unpickler):
    """Unpickles a torch state dict into NumPy; refuses every global not on the whitelist."""

    dispatch = {k: v for k, v in pickle._Unpickler.dispatch.items()
                if k not in FORBIDDEN_OPCODES}

    def load_build(self) -> None:
        """BUILD: only an OrderedDict's metadata dict, which is dropped (no setattr)."""
        state = self.stack.pop()
        if not (isinstance(self.stack[-1], collections.OrderedDict) and isinstance(state, dict)):
            raise CheckpointError("this PyTorch file sets the state of an object other than a "
                              "state dict: it holds more than tensors.")

    dispatch[pickle.BUILD[0]] = load_build

    def __init__(self, data: bytes, zf: zipfile.ZipFile, prefix: str, byteorder: str) -> None:
        import io

        super().__init__(io.BytesIO(data))
        self.zf, self.prefix, self.byteorder = zf, prefix, byteorder
        self.storages: dict[str, np.ndarray] = {}

    def find_class(self, module: str, name: str) -> object:
        allowed = {
            ("collections", "OrderedDict"): collections.OrderedDict,
            ("torch._utils", "_rebuild_tensor_v2"): rebuild_tensor,
            ("torch._utils", "_rebuild_parameter"): rebuild_parameter,
        }
        if (module, name) in allowed:
            return allowed[(module, name)]
        if module == "torch" and name in STORAGE_DTYPES:
            return StorageKind(name, STORAGE_DTYPES[name])
        raise CheckpointError(
            f"this PyTorch file asks to run {module}.{name} while loading; Encoder Lens only "
            "reads tensors and never runs code from a file, so it stopped. If the file is a "
            "training checkpoint, save its state dict alone; if you did not make it, do not "
            "load it anywhere. " + CONVERT_HINT)

    def persistent_load(self, pid: object) -> np.ndarray:
        ok = (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"
              and isinstance(pid[1], StorageKind) and isinstance(pid[2], str)
              and pid[2].isdigit() and type(pid[4]) is int and pid[4] >= 0)
        if not ok:
            raise CheckpointError(f"this PyTorch file refers to an unknown object {pid!r}.")
        kind, key, numel = pid[1], pid[2], pid[4]
        if key not in self.storages:
            self.storages[key] = self.read_storage(key, kind, numel)
        return self.storages[key]

    def read_storage(self, key: str, kind: StorageKind, numel: int) -> np.ndarray:
        """Storage `key` from the zip as a 1-D array of `numel` values (sizes checked first)."""
        dtype = np.dtype(("<" if self.byteorder == "little" else ">") + kind.dtype)
        name = f"{self.prefix}data/{key}"
        try:
            info = self.zf.getinfo(name)
        except KeyError:
            raise CheckpointError(f"storage {key} is missing from this PyTorch file: it is "
                              "truncated or damaged; download it again.") from None
        nbytes = numel * dtype.itemsize
        total = sum(a.nbytes for a in self.storages.values()) + nbytes
        if info.file_size != nbytes or total > MAX_TENSOR_BYTES:
            raise CheckpointError(f"storage {key} of this PyTorch file should hold {nbytes:,} "
                              f"bytes but holds {info.file_size:,}: the file is damaged or "
                              "crafted; do not use it.")
        raw = np.frombuffer(self.zf.read(info), dtype=dtype)
        if kind.name == "BFloat16Storage":
            return bf16_to_float32(raw.astype("<u2"))
        return raw.astype(dtype.newbyteorder("="))


def read_torch_zip(path: str | os.PathLike) -> object:
    """The object `torch.save` wrote (dicts of tensors), with every tensor a NumPy array.

    Raises ParamsError for anything but plain containers of tensors (see the module docstring).
    """
    try:
        with zipfile.ZipFile(path) as zf:
            pkls = [n for n in zf.namelist() if n == "data.pkl" or n.endswith("/data.pkl")]
            if len(pkls) != 1:
                raise CheckpointError("this PyTorch zip holds no single data.pkl: it is not a "
                                  "checkpoint written by torch.save.")
            prefix = pkls[0][: -len("data.pkl")]
            info = zf.getinfo(pkls[0])
            if info.file_size > MAX_PICKLE_BYTES:
                raise CheckpointError(f"the pickle of this PyTorch file is {info.file_size:,} "
                                  "bytes: far more than a state dict needs.")
            byteorder = "little"
            if f"{prefix}byteorder" in zf.namelist():
                if zf.getinfo(f"{prefix}byteorder").file_size > 16:
                    raise CheckpointError(
                        "this PyTorch file's byteorder entry is not a byte order.")
                byteorder = zf.read(f"{prefix}byteorder").decode("ascii", "replace")
                if byteorder not in ("little", "big"):
                    raise CheckpointError(f"this PyTorch file has byte order {byteorder!r}.")
            return WhitelistUnpickler(zf.read(info), zf, prefix, byteorder).load()
    except CheckpointError:
        raise
    except (pickle.UnpicklingError, zipfile.BadZipFile, EOFError, KeyError, TypeError,
            ValueError, IndexError, AttributeError, OSError, RecursionError, struct.error,
            ArithmeticError, MemoryError) as err:
        raise CheckpointError(f"Cannot read the PyTorch file {os.fspath(path)!r} as plain "
                          f"tensors ({type(err).__name__}: {err}). " + CONVERT_HINT) from None
