"""The trace as one `.npz` file: every intermediate, the parameters and the config.

Keys: `pixels`, `patches`, `embedded`, `pe`, `tokens`, `pos`, `x0`, `output`, `layer{l}/{field}`,
`layer{l}/ln_1/{mean,var,normed,out}` (likewise `ln_2`), `final_ln/{…}` with a final norm,
`params/W_E`, `params/layer{l}/{name}` (and the variants' `params/cls`, `params/pos_embed`,
`params/layer{l}/b_Q`, … when set), `image`, and `config` (JSON in a 0-d string array).
Loads with `np.load(allow_pickle=False)`.
"""

from __future__ import annotations

import io
import json
from os import PathLike
from typing import IO

import numpy as np

from .params import params_to_arrays
from .trace import EncoderTrace, trace_arrays


def export_arrays(trace: EncoderTrace) -> dict[str, np.ndarray]:
    """Every array of the export, by key."""
    arrays = dict(trace_arrays(trace))
    arrays["image"] = trace.image
    arrays.update(params_to_arrays(trace.params))
    arrays["config"] = np.array(json.dumps(trace.config.to_dict()))
    return arrays


def save_trace(file: str | PathLike | IO[bytes], trace: EncoderTrace) -> None:
    """Write the export to a path or binary file (uncompressed: fast, as large as the arrays)."""
    np.savez(file, **export_arrays(trace))


def trace_npz_bytes(trace: EncoderTrace) -> bytes:
    """The export as bytes (for a download button)."""
    buf = io.BytesIO()
    save_trace(buf, trace)
    return buf.getvalue()
