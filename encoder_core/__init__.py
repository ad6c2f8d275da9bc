"""encoder_core — a Transformer encoder on an image, in NumPy, with every intermediate exposed.

The files follow the pipeline of the study note:
    config.py      EncoderConfig, the settings
    image.py       load_image: any upload -> [S, S, C] in [0, 1]
    patches.py     patchify / unpatchify            (step 1a)
    embedding.py   embed: patches · W_E              (step 1b)
    positional.py  positional_encoding               (step 2)
    attention.py   Q, K, V, scores, softmax, heads   (step 3, sub-layer 1)
    norm.py        layer_norm                        (Add & Norm)
    ffn.py         feed_forward                      (the paper's FFN sub-layer)
    encoder.py     encoder_layer, encode             (the stack)
    trace.py       the dataclasses that hold every intermediate
    params.py      init_params, save_params, load_params
    analysis.py    rollout, attention distance, entropy, … (what the app plots)
Real ViT checkpoints (timm, DINO, DeiT, Hugging Face ViT / DeiT / DINOv2, Google .npz):
    checkpoint.py  load_checkpoint -> (cfg, params, info), read safely
    layouts.py     the checkpoints' key names -> one neutral vocabulary
    tensorfile.py  validated .safetensors / .npz readers;  torchfile.py  .pth, never unpickled
    resample.py    the position grid at another image size (timm's / HF's bicubic)
"""

from .attention import attention_scores, merge_heads, softmax, split_heads
from .checkpoint import CheckpointInfo, load_checkpoint
from .config import ConfigError, EncoderConfig
from .embedding import embed
from .encoder import encode, encoder_layer
from .ffn import feed_forward
from .image import ImageError, load_image, read_image, to_model_input
from .norm import layer_norm
from .params import EncoderParams, LayerParams, ParamsError, init_params, load_params, save_params
from .patches import patch_centres, patchify, unpatchify
from .positional import positional_encoding
from .trace import EncoderTrace, LayerNormTrace, LayerTrace, trace_arrays

__all__ = [
    "CheckpointInfo", "load_checkpoint",
    "ConfigError", "EncoderConfig", "EncoderParams", "EncoderTrace", "ImageError",
    "LayerNormTrace", "LayerParams", "LayerTrace", "ParamsError", "attention_scores", "embed",
    "encode", "encoder_layer", "feed_forward", "init_params", "layer_norm", "load_image",
    "load_params", "merge_heads", "patch_centres", "patchify", "positional_encoding",
    "read_image", "save_params", "softmax", "split_heads", "to_model_input", "trace_arrays",
    "unpatchify",
]
