"""Test helper: small random ViT state dicts with the exact key names of timm and Hugging Face,
built with NumPy alone (no torch), for the loader's structural tests."""

from __future__ import annotations

import numpy as np


def timm_state_dict(d: int = 64, C: int = 3, P: int = 8, grid: int = 4, L: int = 2,
                    d_ff: int = 128, cls: bool = True, dist: bool = False, reg: int = 0,
                    no_embed_class: bool = False, layer_scale: bool = False,
                    head: bool = True, seed: int = 0) -> dict[str, np.ndarray]:
    """A timm VisionTransformer state dict ([out, in] Linear weights, conv [d, C, P, P])."""
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32) * 0.1

    n_pos = grid * grid + (0 if no_embed_class else int(cls) + int(dist))
    sd = {"patch_embed.proj.weight": r(d, C, P, P), "patch_embed.proj.bias": r(d),
          "pos_embed": r(1, n_pos, d), "norm.weight": 1 + r(d), "norm.bias": r(d)}
    if cls:
        sd["cls_token"] = r(1, 1, d)
    if dist:
        sd["dist_token"] = r(1, 1, d)
    if reg:
        sd["reg_token"] = r(1, reg, d)
    for i in range(L):
        b = f"blocks.{i}."
        sd |= {b + "norm1.weight": 1 + r(d), b + "norm1.bias": r(d),
               b + "attn.qkv.weight": r(3 * d, d), b + "attn.qkv.bias": r(3 * d),
               b + "attn.proj.weight": r(d, d), b + "attn.proj.bias": r(d),
               b + "norm2.weight": 1 + r(d), b + "norm2.bias": r(d),
               b + "mlp.fc1.weight": r(d_ff, d), b + "mlp.fc1.bias": r(d_ff),
               b + "mlp.fc2.weight": r(d, d_ff), b + "mlp.fc2.bias": r(d)}
        if layer_scale:
            sd |= {b + "ls1.gamma": r(d), b + "ls2.gamma": r(d)}
    if head:
        sd |= {"head.weight": r(10, d), "head.bias": r(10)}
    return sd


def hf_state_dict(d: int = 64, C: int = 3, P: int = 8, grid: int = 4, L: int = 2,
                  d_ff: int = 128, dinov2: bool = False, dist: bool = False, reg: int = 0,
                  seed: int = 0) -> dict[str, np.ndarray]:
    """A Hugging Face ViTModel / DeiTModel (dinov2=False) or Dinov2Model state dict."""
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32) * 0.1

    e = "embeddings."
    sd = {e + "patch_embeddings.projection.weight": r(d, C, P, P),
          e + "patch_embeddings.projection.bias": r(d), e + "cls_token": r(1, 1, d),
          e + "position_embeddings": r(1, grid * grid + 1 + int(dist), d),
          "layernorm.weight": 1 + r(d), "layernorm.bias": r(d)}
    if dist:
        sd[e + "distillation_token"] = r(1, 1, d)
    if dinov2:
        sd[e + "mask_token"] = r(1, d)
    if reg:
        sd[e + "register_tokens"] = r(1, reg, d)
    for i in range(L):
        b = f"encoder.layer.{i}."
        for part in ("query", "key", "value"):
            sd |= {b + f"attention.attention.{part}.weight": r(d, d),
                   b + f"attention.attention.{part}.bias": r(d)}
        sd |= {b + "attention.output.dense.weight": r(d, d),
               b + "attention.output.dense.bias": r(d)}
        names = (("norm1", "norm2", "mlp.fc1", "mlp.fc2") if dinov2 else
                 ("layernorm_before", "layernorm_after", "intermediate.dense", "output.dense"))
        sd |= {b + f"{names[0]}.weight": 1 + r(d), b + f"{names[0]}.bias": r(d),
               b + f"{names[1]}.weight": 1 + r(d), b + f"{names[1]}.bias": r(d),
               b + f"{names[2]}.weight": r(d_ff, d), b + f"{names[2]}.bias": r(d_ff),
               b + f"{names[3]}.weight": r(d, d_ff), b + f"{names[3]}.bias": r(d)}
        if dinov2:
            sd |= {b + "layer_scale1.lambda1": r(d), b + "layer_scale2.lambda1": r(d)}
    return sd


def torchvision_state_dict(d: int = 64, C: int = 3, P: int = 8, grid: int = 4, L: int = 2,
                           d_ff: int = 128, n_classes: int = 10, representation: int = 0,
                           old_mlp_names: bool = False, seed: int = 0) -> dict[str, np.ndarray]:
    """A torchvision VisionTransformer state dict (`vit_b_16`'s key names; old_mlp_names: the
    `mlp.linear_1` / `linear_2` of files saved before torchvision 0.12)."""
    rng = np.random.default_rng(seed)

    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32) * 0.1

    sd = {"class_token": r(1, 1, d), "conv_proj.weight": r(d, C, P, P), "conv_proj.bias": r(d),
          "encoder.pos_embedding": r(1, grid * grid + 1, d),
          "encoder.ln.weight": 1 + r(d), "encoder.ln.bias": r(d)}
    fc1, fc2 = ("linear_1", "linear_2") if old_mlp_names else ("0", "3")
    for i in range(L):
        b = f"encoder.layers.encoder_layer_{i}."
        sd |= {b + "ln_1.weight": 1 + r(d), b + "ln_1.bias": r(d),
               b + "self_attention.in_proj_weight": r(3 * d, d),
               b + "self_attention.in_proj_bias": r(3 * d),
               b + "self_attention.out_proj.weight": r(d, d),
               b + "self_attention.out_proj.bias": r(d),
               b + "ln_2.weight": 1 + r(d), b + "ln_2.bias": r(d),
               b + f"mlp.{fc1}.weight": r(d_ff, d), b + f"mlp.{fc1}.bias": r(d_ff),
               b + f"mlp.{fc2}.weight": r(d, d_ff), b + f"mlp.{fc2}.bias": r(d)}
    if representation:
        sd |= {"heads.pre_logits.weight": r(representation, d),
               "heads.pre_logits.bias": r(representation)}
    if n_classes:
        d_in = representation or d
        sd |= {"heads.head.weight": r(n_classes, d_in), "heads.head.bias": r(n_classes)}
    return sd


def write_timm_checkpoint(path, **kwargs) -> str:
    """Save `timm_state_dict(**kwargs)` as a .safetensors file at `path`; returns the path."""
    from safetensors.numpy import save_file

    save_file(timm_state_dict(**kwargs), str(path))
    return str(path)


# A 197-token ViT small enough for the app's tests: 224 px, P 16, CLS, d 128 (h 2 by the
# d_head = 64 rule), 2 layers, d_ff 256.
SMALL_VIT = dict(d=128, C=3, P=16, grid=14, L=2, d_ff=256)
