"""The whole encoder: one code path that keeps every intermediate (a layer: attention, Add & Norm,
FFN).

The note's encoder (the default, post-norm):

    x0 = patchify(image)·W_E + PE
    for each layer:  x = LayerNorm(x + MultiHead(x));  x = LayerNorm(x + FFN(x))
    output = x

A Vision Transformer (timm, DINO, DeiT, Hugging Face ViT, DINOv2) switches on, in
the config, the variants around the same steps:

    pixels = (image − mean) / std                                       (pixel_mean/std)
    x0 = [cls, dist, registers…, patchify(pixels)·W_E + b_E] + pos      (prefix, learned pos)
    for each layer (pre-norm):  x = x + ls_1 ⊙ MultiHead(LN_1(x))       (b_Q, b_K, b_V, b_O)
                                x = x + ls_2 ⊙ FFN(LN_2(x))             (GELU)
    output = LN(x)                                                      (final_norm)
"""

from __future__ import annotations

import numpy as np

from ..config import EncoderConfig
from ..params import EncoderParams, LayerParams, check_params, check_shapes, init_params
from ..trace import EncoderTrace, LayerTrace, freeze
from .attention import multi_head_attention
from .embedding import embed, prefix_tokens
from .ffn import feed_forward
from .norm import layer_norm
from .patches import normalise_pixels, patchify
from .positional import patch_positions, position_rows


def layer_scaled(ls: np.ndarray | None, y: np.ndarray) -> np.ndarray:
    """ls ⊙ y (LayerScale, one factor per column), or y itself when there is none.

    ls: [d_model] or None; y: [..., N, d_model].
    """
    return y if ls is None else ls * y


def encoder_layer(x: np.ndarray, p: LayerParams, cfg: EncoderConfig,
                  heads_off: tuple[int, ...] = ()) -> LayerTrace:
    """One encoder layer, post-norm (the note) or pre-norm (`cfg.norm_first`, ViT).

    Post-norm:  resid_1 = x + ls_1 ⊙ attn_out(x),           ln_1 = LN(resid_1),
                resid_2 = ln_1.out + ls_2 ⊙ FFN(ln_1.out),  ln_2 = LN(resid_2),  out = ln_2.out
    Pre-norm:   ln_1 = LN(x),  resid_1 = x + ls_1 ⊙ attn_out(ln_1.out),
                ln_2 = LN(resid_1),  resid_2 = resid_1 + ls_2 ⊙ FFN(ln_2.out),  out = resid_2
    (ls_1, ls_2 only with layer_scale; without the FFN out is ln_1.out, or resid_1 pre-norm.)

    Args:
        x: [..., S, d_model], the layer's input (S = seq_len); leading batch axes are allowed
            (one image: none; the trainer: [B]). Its dtype is kept (float64 stays float64).
        p: the layer's weights; cfg: the settings (n_heads, scale, use_ffn, ln_eps, variants).
        heads_off: heads whose outputs are set to 0 before W_O (`zero_heads`); ()
            for the model itself (what `encode` runs).
    Returns:
        LayerTrace whose fields carry the same leading axes as x, e.g. attn [..., h, S, S].
    """
    if cfg.norm_first:
        ln_1 = layer_norm(x, p.gamma_1, p.beta_1, cfg.ln_eps)  # Norm first
        a = multi_head_attention(ln_1.out, p, cfg, heads_off)
        resid_1 = x + layer_scaled(p.ls_1, a["attn_out"])  # Add
        ffn_hidden = ffn_out = resid_2 = ln_2 = None
        out = resid_1
        if cfg.use_ffn:
            ln_2 = layer_norm(resid_1, p.gamma_2, p.beta_2, cfg.ln_eps)
            ffn_hidden, ffn_out = feed_forward(ln_2.out, p.W_1, p.b_1, p.W_2, p.b_2,
                                               cfg.activation)
            resid_2 = resid_1 + layer_scaled(p.ls_2, ffn_out)
            out = resid_2
    else:
        a = multi_head_attention(x, p, cfg, heads_off)
        resid_1 = x + layer_scaled(p.ls_1, a["attn_out"])  # Add
        ln_1 = layer_norm(resid_1, p.gamma_1, p.beta_1, cfg.ln_eps)  # & Norm
        ffn_hidden = ffn_out = resid_2 = ln_2 = None
        out = ln_1.out
        if cfg.use_ffn:
            # [..., S, d] -> ffn_hidden [..., S, d_ff] -> ffn_out [..., S, d]
            ffn_hidden, ffn_out = feed_forward(ln_1.out, p.W_1, p.b_1, p.W_2, p.b_2,
                                               cfg.activation)
            resid_2 = ln_1.out + layer_scaled(p.ls_2, ffn_out)
            ln_2 = layer_norm(resid_2, p.gamma_2, p.beta_2, cfg.ln_eps)
            out = ln_2.out
    return LayerTrace(**a, resid_1=resid_1, ln_1=ln_1, ffn_hidden=ffn_hidden, ffn_out=ffn_out,
                      resid_2=resid_2, ln_2=ln_2, out=out)


def encode(image: np.ndarray, cfg: EncoderConfig,
           params: EncoderParams | None = None) -> EncoderTrace:
    """Run the encoder on one image and keep every intermediate.

    Args:
        image: [image_size, image_size, channels] in [0, 1] (see `load_image`); with
            pixel_mean/pixel_std set, the normalisation is done here.
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
    return freeze(_encoder_pass(image, cfg, params))


def encode_batch(images: np.ndarray, cfg: EncoderConfig, params: EncoderParams) -> EncoderTrace:
    """Run the encoder on a batch and keep every intermediate: `encode` image by image, in one
    pass (the trainer's forward, what `backward` reads for a batch).

    Args:
        images: [B, image_size, image_size, channels] in [0, 1], float32 (training) or float64
            (a gradient check): the computation's dtype.
        cfg: the settings.
        params: the weights in the images' dtype, shapes checked against cfg (ParamsError), used
            as they are: not copied, not frozen (the trainer updates them between steps).
    Returns:
        EncoderTrace in the images' dtype whose fields carry a leading [B] (image [B, S, S, C],
        x0 [B, S, d], layers[l].attn [B, h, S, S], output [B, S, d], …) but pe [N, d] and
        pos [S, d], the same for every image. Its arrays are new (image is `images`) and
        writable: the trace is the caller's alone.
    """
    S, C = cfg.image_size, cfg.channels
    if images.ndim != 4 or images.shape[1:] != (S, S, C):
        raise ValueError(f"images have shape {images.shape}; this configuration needs "
                         f"[B, {S}, {S}, {C}].")
    if images.dtype not in (np.float32, np.float64):
        raise ValueError(f"images are {images.dtype}; the batched encoder runs in float32 or "
                         "float64.")
    check_shapes(params, cfg)
    return _encoder_pass(images, cfg, params)


def _encoder_pass(image: np.ndarray, cfg: EncoderConfig, params: EncoderParams) -> EncoderTrace:
    """The forward of `encode` and `encode_batch`, every step named as in the trace.

    image: [..., S_img, S_img, C] (leading batch axes allowed), its dtype the computation's;
    params: checked against cfg. Returns the trace, not frozen.
    """
    dtype = image.dtype.type
    lead = image.shape[:-3]  # () for one image, (B,) for a batch
    pixels = (normalise_pixels(image, cfg.pixel_mean, cfg.pixel_std, dtype)
              if cfg.normalises_pixels else image)  # [..., S, S, C]
    patches = patchify(pixels, cfg.patch_size)  # [..., N, P·P·C]
    embedded = embed(patches, params.W_E, params.b_E)  # [..., N, d]
    pe = patch_positions(cfg, params.pos_embed, dtype)  # [N, d]
    if cfg.n_prefix:
        prefix = prefix_tokens(params.cls, params.dist, params.registers, cfg.d_model)
        prefix = np.broadcast_to(prefix.astype(dtype), (*lead, *prefix.shape))  # [..., n, d]
        tokens = np.concatenate([prefix, embedded], axis=-2)  # [..., n_prefix + N, d]
    else:
        tokens = embedded  # the same rows: no prefix
    pos = position_rows(cfg, pe, params.pos_embed)  # [seq_len, d]
    x0 = tokens + pos if cfg.use_pe else tokens.copy()  # [..., seq_len, d]
    layers = []
    x = x0
    for p in params.layers:
        layer = encoder_layer(x, p, cfg)
        layers.append(layer)
        x = layer.out
    final_ln = None
    if cfg.final_norm:
        final_ln = layer_norm(x, params.norm_gamma, params.norm_beta, cfg.ln_eps)
        x = final_ln.out
    return EncoderTrace(config=cfg, params=params, image=image, pixels=pixels, patches=patches,
                        embedded=embedded, pe=pe, tokens=tokens, pos=pos, x0=x0,
                        layers=tuple(layers), final_ln=final_ln, output=x)
