"""encoder_core — a Transformer encoder on an image, in NumPy, with every intermediate exposed.

The folders say what a module is for:
    config.py       EncoderConfig, the settings;  params.py  init_params, save / load_params
    trace.py        the dataclasses that hold every intermediate
    image.py        load_image: any upload -> [S, S, C] in [0, 1]
    pipeline/       the note's math in pipeline order: patches, embedding, positional,
                    attention (multi-head, W_O), norm, ffn, encoder (encode;
                    encode_batch, the trainer's)
    checkpoints/    real ViT checkpoints (timm, DINO, DeiT, Hugging Face, Google .npz,
                    torchvision), read safely, heads kept: load_checkpoint, CheckpointError
    views/          what the app derives from a trace: rollout, analysis, explain, ViT views
    shapes_model/   the generated shapes data set and the classifier of the shipped weights
    cost.py         what a trace and the views' derived work cost, predicted from the config:
                    trace_bytes, params_bytes, encode_peak_bytes, encode_seconds, trace_cost
    gradients.py    backward: the gradient of a logit with respect to every trace field and
                    weight, from the trace alone
    export.py       the trace as .npz;  __main__.py  the command line;  bench.py  the benchmark

Every default is the study note's encoder. The Vision Transformer variants (timm,
DINO, DeiT, Hugging Face ViT, DINOv2) are switches of `EncoderConfig`, each off by default:
`norm_first` (pre-norm), `cls_token`, `dist_token`, `n_registers` (the sequence is
`[cls, dist, registers…, patches…]`, `seq_len` rows; `n_tokens` stays the number of patches),
`position="learned"` (+ `pos_prefix`), `patch_bias`, `qkv_bias`, `proj_bias`,
`activation` ("relu", "gelu", "gelu_tanh"), `final_norm`, `layer_scale`, and `pixel_mean` /
`pixel_std` (applied inside `encode`: callers pass an image in [0, 1]). Their parameters are
optional fields of `EncoderParams` / `LayerParams`, None when the variant is off.

A model's prediction is `predict(trace, params)`: the logits of its classification
head (`params.head`, a `HeadParams`: a checkpoint's head, the shapes model's), pooled as its
family does (`pipeline/head.py`); `backward(trace, params, target)` is the gradient of one of
those logits (or of a loss) with respect to every field of the trace, in its own shape
(`gradients.py`); `relevance(trace, params, target, method)` how much that logit rests on each
patch, from the attention and its gradient (`views/relevance.py`).
"""

from .checkpoints.load import CheckpointInfo, load_checkpoint
from .config import ConfigError, EncoderConfig
from .cost import (
    Cost,
    encode_peak_bytes,
    encode_seconds,
    params_bytes,
    params_cost,
    trace_bytes,
    trace_cost,
)
from .gradients import backward
from .image import ImageError, load_image, read_image, to_model_input
from .params import (
    EncoderParams,
    HeadParams,
    LayerParams,
    ParamsError,
    init_params,
    load_params,
    save_params,
)
from .pipeline.attention import attention_scores, merge_heads, softmax, split_heads
from .pipeline.embedding import embed, patch_rows, prefix_names, prefix_tokens, token_names
from .pipeline.encoder import encode, encode_batch, encoder_layer
from .pipeline.ffn import feed_forward, gelu, gelu_tanh, relu
from .pipeline.head import predict, top_classes
from .pipeline.norm import layer_norm
from .pipeline.patches import normalise_pixels, patch_centres, patchify, unpatchify
from .pipeline.positional import patch_positions, position_rows, positional_encoding
from .trace import EncoderTrace, LayerNormTrace, LayerTrace, trace_arrays
from .views.faithfulness import Curve, deletion_curve, insertion_curve, relevance_order
from .views.logit_attribution import LogitShares, NotDecomposable, logit_attribution, total
from .views.logit_lens import logit_lens
from .views.patching import patch_run, patching_map
from .views.relevance import relevance

__all__ = [
    "CheckpointInfo", "load_checkpoint",
    "Curve", "LogitShares", "NotDecomposable", "deletion_curve", "insertion_curve",
    "logit_attribution", "logit_lens", "patch_run", "patching_map", "relevance_order", "total",
    "ConfigError", "Cost", "EncoderConfig", "EncoderParams", "EncoderTrace", "HeadParams",
    "ImageError", "backward",
    "LayerNormTrace", "LayerParams", "LayerTrace", "ParamsError", "attention_scores", "embed",
    "encode", "encode_batch", "encode_peak_bytes", "encode_seconds", "encoder_layer",
    "feed_forward", "gelu",
    "gelu_tanh", "init_params", "layer_norm", "load_image", "load_params", "merge_heads",
    "normalise_pixels", "params_bytes", "params_cost",
    "patch_centres",
    "patch_positions", "patch_rows", "patchify", "position_rows", "positional_encoding",
    "predict", "prefix_names", "prefix_tokens", "token_names", "top_classes",
    "read_image", "relevance", "relu", "save_params", "softmax", "split_heads", "to_model_input",
    "trace_arrays", "trace_bytes", "trace_cost", "unpatchify",
]
