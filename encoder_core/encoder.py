"""Step 3 and the whole encoder: one code path that keeps every intermediate.

    x0 = patchify(image)·W_E + PE
    for each layer:  x = LayerNorm(x + MultiHead(x));  x = LayerNorm(x + FFN(x))   (post-norm)
    output = x
"""

from __future__ import annotations

import numpy as np

from .attention import attention_scores, merge_heads, softmax, split_heads
from .config import EncoderConfig
from .embedding import embed
from .ffn import feed_forward
from .norm import layer_norm
from .params import EncoderParams, LayerParams, check_params, init_params
from .patches import patchify
from .positional import positional_encoding
from .trace import EncoderTrace, LayerTrace, freeze


def encoder_layer(x: np.ndarray, p: LayerParams, cfg: EncoderConfig) -> LayerTrace:
    """One post-norm encoder layer; returns every intermediate.

    Args:
        x: [..., N, d_model], the layer's input; leading batch axes are allowed (one image:
            none; the trainer: [B]). Its dtype is kept (float64 stays float64).
        p: the layer's weights; cfg: the settings (n_heads, scale, use_ffn, ln_eps).
    Returns:
        LayerTrace whose fields carry the same leading axes as x, e.g. attn [..., h, N, N].
    """
    h = cfg.n_heads
    q = split_heads(x @ p.W_Q, h)  # [..., N, d] @ [d, d] -> [..., N, d] -> [..., h, N, d_head]
    k = split_heads(x @ p.W_K, h)
    v = split_heads(x @ p.W_V, h)
    scores = attention_scores(q, k, cfg.score_scale)  # [..., h, N, d_head] x2 -> [..., h, N, N]
    attn = softmax(scores)  # [..., h, N, N], rows sum to 1
    heads = attn @ v  # [..., h, N, N] @ [..., h, N, d_head] -> [..., h, N, d_head]
    concat = merge_heads(heads)  # [..., h, N, d_head] -> [..., N, d]
    attn_out = concat @ p.W_O  # [..., N, d] @ [d, d] -> [..., N, d]
    resid_1 = x + attn_out  # Add
    ln_1 = layer_norm(resid_1, p.gamma_1, p.beta_1, cfg.ln_eps)  # & Norm
    ffn_hidden = ffn_out = resid_2 = ln_2 = None
    out = ln_1.out
    if cfg.use_ffn:
        # [..., N, d] -> ffn_hidden [..., N, d_ff] -> ffn_out [..., N, d]
        ffn_hidden, ffn_out = feed_forward(ln_1.out, p.W_1, p.b_1, p.W_2, p.b_2)
        resid_2 = ln_1.out + ffn_out
        ln_2 = layer_norm(resid_2, p.gamma_2, p.beta_2, cfg.ln_eps)
        out = ln_2.out
    return LayerTrace(q=q, k=k, v=v, scores=scores, attn=attn, heads=heads, concat=concat,
                      attn_out=attn_out, resid_1=resid_1, ln_1=ln_1, ffn_hidden=ffn_hidden,
                      ffn_out=ffn_out, resid_2=resid_2, ln_2=ln_2, out=out)


def encode(image: np.ndarray, cfg: EncoderConfig,
           params: EncoderParams | None = None) -> EncoderTrace:
    """Run the encoder on one image and keep every intermediate.

    Args:
        image: [image_size, image_size, channels] in [0, 1] (see `load_image`).
        cfg: the settings.
        params: the weights (shapes checked against cfg: ParamsError); None draws them with
            `init_params(cfg)`.
    Returns:
        EncoderTrace, every array float32 and read-only.
    """
    S, C = cfg.image_size, cfg.channels
    if image.shape != (S, S, C):
        raise ValueError(f"image has shape {image.shape}; this configuration needs {(S, S, C)}.")
    params = init_params(cfg) if params is None else check_params(params, cfg)
    image = np.array(image, dtype=np.float32)  # a private copy
    patches = patchify(image, cfg.patch_size)  # [N, P·P·C]
    embedded = embed(patches, params.W_E)  # [N, d]
    pe = positional_encoding(cfg.n_tokens, cfg.d_model)  # [N, d]
    x0 = embedded + pe if cfg.use_pe else embedded.copy()
    layers = []
    x = x0
    for p in params.layers:
        layer = encoder_layer(x, p, cfg)
        layers.append(layer)
        x = layer.out
    trace = EncoderTrace(config=cfg, params=params, image=image, patches=patches,
                         embedded=embedded, pe=pe, x0=x0, layers=tuple(layers), output=x)
    return freeze(trace)
