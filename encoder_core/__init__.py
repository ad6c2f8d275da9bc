"""encoder_core — a Transformer encoder on an image, in NumPy, with every intermediate exposed.

The files follow the pipeline of the study note:
    config.py      EncoderConfig, the settings
    image.py       load_image: any upload -> [S, S, C] in [0, 1]
    patches.py     normalise_pixels, patchify / unpatchify     (step 1a)
    embedding.py   embed: patches · W_E (+ b_E); prefix_tokens  (step 1b)
    positional.py  positional_encoding; patch_positions, position_rows   (step 2)
    attention.py   Q, K, V, scores, softmax, heads   (step 3, sub-layer 1)
    norm.py        layer_norm                        (Add & Norm)
    ffn.py         feed_forward; relu, gelu, gelu_tanh   (the paper's FFN sub-layer)
    encoder.py     encoder_layer, encode             (the stack)
    trace.py       the dataclasses that hold every intermediate
    params.py      init_params, save_params, load_params
    analysis.py    rollout, attention distance, entropy, … (what the app plots)
Real ViT checkpoints (timm, DINO, DeiT, Hugging Face ViT / DeiT / DINOv2, Google .npz):
    checkpoint.py  load_checkpoint -> (cfg, params, info), read safely
    layouts.py     the checkpoints' key names -> one neutral vocabulary
    tensorfile.py  validated .safetensors / .npz readers;  torchfile.py  .pth, never unpickled
    resample.py    the position grid at another image size (timm's / HF's bicubic)

Every default is the study note's encoder. The Vision Transformer variants (issue 11: timm,
DINO, DeiT, Hugging Face ViT, DINOv2) are switches of `EncoderConfig`, each off by default:
`norm_first` (pre-norm), `cls_token`, `dist_token`, `n_registers` (the sequence is
`[cls, dist, registers…, patches…]`, `seq_len` rows; `n_tokens` stays the number of patches),
`position="learned"` (+ `pos_prefix`), `patch_bias`, `qkv_bias`, `proj_bias`,
`activation` ("relu", "gelu", "gelu_tanh"), `final_norm`, `layer_scale`, and `pixel_mean` /
`pixel_std` (applied inside `encode`: callers pass an image in [0, 1]). Their parameters are
optional fields of `EncoderParams` / `LayerParams`, None when the variant is off.
"""

from .attention import attention_scores, merge_heads, softmax, split_heads
from .checkpoint import CheckpointInfo, load_checkpoint
from .config import ConfigError, EncoderConfig
from .embedding import embed, patch_rows, prefix_names, prefix_tokens, token_names
from .encoder import encode, encoder_layer
from .ffn import feed_forward, gelu, gelu_tanh, relu
from .image import ImageError, load_image, read_image, to_model_input
from .norm import layer_norm
from .params import EncoderParams, LayerParams, ParamsError, init_params, load_params, save_params
from .patches import normalise_pixels, patch_centres, patchify, unpatchify
from .positional import patch_positions, position_rows, positional_encoding
from .trace import EncoderTrace, LayerNormTrace, LayerTrace, trace_arrays

__all__ = [
    "CheckpointInfo", "load_checkpoint",
    "ConfigError", "EncoderConfig", "EncoderParams", "EncoderTrace", "ImageError",
    "LayerNormTrace", "LayerParams", "LayerTrace", "ParamsError", "attention_scores", "embed",
    "encode", "encoder_layer", "feed_forward", "gelu", "gelu_tanh", "init_params", "layer_norm",
    "load_image", "load_params", "merge_heads", "normalise_pixels", "patch_centres",
    "patch_positions", "patch_rows", "patchify", "position_rows", "positional_encoding",
    "prefix_names", "prefix_tokens", "token_names",
    "read_image", "relu", "save_params", "softmax", "split_heads", "to_model_input",
    "trace_arrays", "unpatchify",
]
