"""What every checkpoint reader shares: its error, the size limit, the conversion hint, and
bfloat16 (in a module of its own, so that the readers import it and not each other)."""

from __future__ import annotations

import numpy as np

from ..params import ParamsError


class CheckpointError(ParamsError):
    """A checkpoint file that cannot be read safely or does not fit the encoder, in one message
    that says what is wrong and what to do (a ParamsError, as every weights problem is)."""


MAX_TENSOR_BYTES = 4 * 2**30
"""Largest total of tensor bytes a checkpoint may declare (4 GiB: ViT-L in float32 is 1.2 GB)."""

CONVERT_HINT = (
    "To convert a PyTorch file yourself (in an environment you trust, with torch and "
    "safetensors installed):\n"
    "    import torch; from safetensors.torch import save_file\n"
    "    sd = torch.load('FILE.pth', map_location='cpu', weights_only=True)\n"
    "    save_file({k: v.contiguous() for k, v in sd.items()}, 'FILE.safetensors')"
)



def bf16_to_float32(words: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) → float32: the 16 bits become the high half (exact)."""
    return (words.astype(np.uint32) << 16).view(np.float32)
