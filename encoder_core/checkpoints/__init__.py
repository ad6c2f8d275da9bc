"""Real ViT checkpoints (timm, DINO, DeiT, Hugging Face ViT / DeiT / DINOv2, Google .npz,
torchvision), read safely — never unpickled — into the note's parameters, with their
classification head when they have one:

    load.py        load_checkpoint -> (cfg, params, info); CheckpointInfo
    layouts.py     the checkpoints' key names -> one neutral vocabulary
    labels.py      the head's class names: config.json, ImageNet-1k's, or "class k"
    tensorfile.py  validated .safetensors / .npz readers, and the dispatch by file kind
    torchfile.py   PyTorch .pth zip files through a whitelist unpickler (no code runs)
    resample.py    the position grid at another image size (timm's / HF's bicubic)
    shared.py      CheckpointError, the size limit, the conversion hint, bfloat16

Every file problem is a CheckpointError (a ParamsError) with a message that says what to do.
"""

from .load import CheckpointInfo, load_checkpoint
from .shared import CheckpointError

__all__ = ["CheckpointError", "CheckpointInfo", "load_checkpoint"]
