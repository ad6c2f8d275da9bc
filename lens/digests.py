"""Keys and sizes by content, for the caches (`lens.cache`) and for whoever names a value by
what it holds: `array_digest` (a whole array's digest, remembered for a read-only one),
`value_key` (a function's arguments as a hashable key), `nbytes` (the arrays reachable from a
value) and `frozen` (whether an array's values can still change). No cache and no Streamlit
here: a page section may name a picture by its content without reaching the server's caches.
"""

from __future__ import annotations

import dataclasses
import hashlib
import weakref
from collections.abc import Hashable

import numpy as np


def nbytes(obj: object) -> int:
    """Bytes of the NumPy arrays reachable from `obj` through dataclass fields, tuples, lists
    and dict values, each array counted once (an upper bound: a view counts as its own bytes)."""
    seen: set[int] = set()
    total = 0
    todo = [obj]
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, np.ndarray):
            total += item.nbytes
        elif dataclasses.is_dataclass(item) and not isinstance(item, type):
            todo += [getattr(item, f.name) for f in dataclasses.fields(item)]
        elif isinstance(item, (tuple, list)):
            todo += list(item)
        elif isinstance(item, dict):
            todo += list(item.values())
    return total


def frozen(a: np.ndarray) -> bool:
    """True when nothing can change `a`'s values: it and every array it is a view of are
    read-only, down to an array that owns its memory (or an immutable `bytes`). (An owner could
    set its flag back to writeable; nothing in this project does.)"""
    while True:
        if a.flags.writeable:
            return False
        base = a.base
        if base is None:
            return True
        if not isinstance(base, np.ndarray):
            return isinstance(base, bytes)
        a = base


# id(array) -> (a weak reference to it, its digest); an entry leaves when its array dies, so an
# id is never read for another array.
_DIGESTS: dict[int, tuple[weakref.ref, bytes]] = {}


def array_digest(a: np.ndarray) -> bytes:
    """A digest of the whole array (shape, dtype, every value). Remembered for a `frozen` array
    (a trace's or the weights' arrays): a rerun showing the same arrays pays a dict look-up, not
    a pass over the bytes. Streamlit's own hashing samples 100,000 values of an array of over
    500,000, so two arrays differing elsewhere would share a picture; this one reads them all."""
    known = _DIGESTS.get(id(a))
    if known is not None and known[0]() is a:
        return known[1]
    if a.dtype.hasobject:  # its bytes are pointers, not values
        raise TypeError("an array of Python objects has no content digest")
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{a.shape}{a.dtype.str}".encode())
    h.update(np.ascontiguousarray(a).data)
    digest = h.digest()
    if frozen(a):
        key = id(a)
        _DIGESTS[key] = (weakref.ref(a, lambda _, key=key: _DIGESTS.pop(key, None)), digest)
    return digest


def value_key(value: object) -> Hashable:
    """A hashable key for a function's argument, by content: arrays by `array_digest`, lists,
    tuples, dicts and dataclasses item by item, anything else as itself with its type (so that
    1, 1.0 and True stay apart). Raises TypeError for an unhashable value of another kind."""
    if isinstance(value, np.ndarray):
        return ("ndarray", array_digest(value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(value_key(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), value_key(v)) for k, v in value.items())))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value).__qualname__,
                tuple(value_key(getattr(value, f.name)) for f in dataclasses.fields(value)))
    hash(value)
    return (type(value).__qualname__, value)
