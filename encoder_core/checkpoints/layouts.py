"""The key names of ViT checkpoints, mapped to one neutral vocabulary.

Five layouts are recognised from the keys (after stripping wrapper prefixes):

* **timm** `VisionTransformer` — also DINO's and DeiT's own checkpoints (same names):
  `patch_embed.proj.*`, `cls_token`, `dist_token`, `reg_token`, `pos_embed`,
  `blocks.{i}.{norm1, attn.qkv, attn.proj, ls1.gamma, norm2, mlp.fc1, mlp.fc2, ls2.gamma}`,
  `norm.*`; qkv is one fused `[3D, D]` Linear (rows q, k, v). Head: `head`, DeiT's `head_dist`,
  `fc_norm` (global_pool="avg"; its final `norm` is then an identity, absent from the file).
* **Hugging Face ViT / DeiT** (`ViTModel`, `DeiTModel`): `embeddings.{patch_embeddings.
  projection, cls_token, distillation_token, position_embeddings}`, `encoder.layer.{i}.
  {layernorm_before, attention.attention.{query,key,value}, attention.output.dense,
  layernorm_after, intermediate.dense, output.dense}`, final `layernorm`. Head: `classifier`,
  or DeiT-with-teacher's `cls_classifier` + `distillation_classifier`.
* **Hugging Face DINOv2** (`Dinov2Model`, with registers): as HF ViT but `norm1`, `norm2`,
  `mlp.fc1`, `mlp.fc2`, `layer_scale{1,2}.lambda1`, `embeddings.register_tokens`. Head:
  `classifier`, over [CLS ‖ mean of the patch rows] (2·d wide).
* **torchvision** `VisionTransformer` (`vit_b_16` …): `conv_proj`, `class_token`,
  `encoder.pos_embedding`, `encoder.layers.encoder_layer_{i}.{ln_1, self_attention.
  {in_proj_weight, in_proj_bias, out_proj}, ln_2, mlp.0, mlp.3}` (older files: `mlp.linear_1`,
  `mlp.linear_2`), `encoder.ln`; `in_proj` is one fused `[3D, D]` (rows q, k, v), as timm's qkv.
  Head: `heads.head`, with `representation_size` also `heads.pre_logits` (then tanh).
* **Google's original `.npz`** (vit_jax / AugReg, as timm's `_load_weights` reads them):
  `embedding/kernel` `[P, P, C, D]`, `cls`, `Transformer/posembed_input/pos_embedding`,
  `Transformer/encoderblock_{i}/{LayerNorm_0, MultiHeadDotProductAttention_1/{query,key,value,
  out}, LayerNorm_2, MlpBlock_3/Dense_{0,1}}`, `Transformer/encoder_norm`; Flax kernels are
  `[in, out]` (attention: `[D, h, d_head]` and `[h, d_head, D]`, so the heads are in the file).
  Head: `head/kernel`, and `pre_logits/kernel` (then tanh) when the model has one.

The neutral names keep PyTorch's orientation (`[out, in]`); `checkpoint.py` turns them into
`EncoderParams`. Per layer: `{i}.{ln1,ln2}.{weight,bias}`, `{i}.{query,key,value,proj,fc1,fc2}.
{weight,bias}`, `{i}.{ls1,ls2}`; and `patch.{weight,bias}`, `cls`, `dist`, `registers`, `pos`,
`norm.{weight,bias}`; the head's: `head.`, `head_dist.`, `fc_norm.`, `pre_logits.{weight,bias}`
(HEAD_PARTS). Set aside, never used: a DINO projection head (`head.mlp.…`), Hugging Face's
`pooler` (ViTForImageClassification does not use it) and the mask token of masked-image
pre-training; every other unknown key is refused by the caller.
"""

from __future__ import annotations

import re

import numpy as np

from .shared import CheckpointError

WRAPPER_PREFIXES = ("module.", "backbone.", "model.", "vit.", "deit.", "dinov2.",
                    "dinov2_with_registers.", "opt/target/", "params/")
"""Stripped when most keys carry them (DDP's `module.`, DINO's `backbone.`, HF task models)."""

CONTAINER_KEYS = ("teacher", "model", "state_dict", "model_ema", "module", "student")
"""Entries that may hold the state dict in a training checkpoint, in the order they are tried
(DINO evaluates its teacher)."""

_W = r"(weight|bias)"
TIMM = (
    (rf"patch_embed\.proj\.{_W}", r"patch.\1"),
    (r"cls_token", "cls"), (r"dist_token", "dist"), (r"reg_token", "registers"),
    (r"pos_embed", "pos"), (rf"norm\.{_W}", r"norm.\1"),
    (rf"blocks\.(\d+)\.norm1\.{_W}", r"\1.ln1.\2"),
    (rf"blocks\.(\d+)\.attn\.qkv\.{_W}", r"\1.qkv.\2"),
    (rf"blocks\.(\d+)\.attn\.proj\.{_W}", r"\1.proj.\2"),
    (r"blocks\.(\d+)\.ls1\.gamma", r"\1.ls1"),
    (rf"blocks\.(\d+)\.norm2\.{_W}", r"\1.ln2.\2"),
    (rf"blocks\.(\d+)\.mlp\.fc1\.{_W}", r"\1.fc1.\2"),
    (rf"blocks\.(\d+)\.mlp\.fc2\.{_W}", r"\1.fc2.\2"),
    (r"blocks\.(\d+)\.ls2\.gamma", r"\1.ls2"),
    (rf"head\.{_W}", r"head.\1"), (rf"head_dist\.{_W}", r"head_dist.\1"),
    (rf"fc_norm\.{_W}", r"fc_norm.\1"),
)  # fmt: skip
TIMM_ASIDE = (r"head\..*",)  # a DINO projection head (head.mlp.…, head.last_layer.…)
HEAD_PARTS = ("head", "head_dist", "fc_norm", "pre_logits")
"""The neutral names' first part for the classification head's tensors."""

_HF_COMMON = (
    (rf"embeddings\.patch_embeddings\.projection\.{_W}", r"patch.\1"),
    (r"embeddings\.cls_token", "cls"), (r"embeddings\.distillation_token", "dist"),
    (r"embeddings\.register_tokens", "registers"),
    (r"embeddings\.position_embeddings", "pos"), (rf"layernorm\.{_W}", r"norm.\1"),
    (rf"encoder\.layer\.(\d+)\.attention\.attention\.(query|key|value)\.{_W}", r"\1.\2.\3"),
    (rf"encoder\.layer\.(\d+)\.attention\.output\.dense\.{_W}", r"\1.proj.\2"),
    (rf"classifier\.{_W}", r"head.\1"), (rf"cls_classifier\.{_W}", r"head.\1"),
    (rf"distillation_classifier\.{_W}", r"head_dist.\1"),
)  # fmt: skip
HF_VIT = _HF_COMMON + (
    (rf"encoder\.layer\.(\d+)\.layernorm_before\.{_W}", r"\1.ln1.\2"),
    (rf"encoder\.layer\.(\d+)\.layernorm_after\.{_W}", r"\1.ln2.\2"),
    (rf"encoder\.layer\.(\d+)\.intermediate\.dense\.{_W}", r"\1.fc1.\2"),
    (rf"encoder\.layer\.(\d+)\.output\.dense\.{_W}", r"\1.fc2.\2"),
)  # fmt: skip
HF_DINOV2 = _HF_COMMON + (
    (rf"encoder\.layer\.(\d+)\.norm1\.{_W}", r"\1.ln1.\2"),
    (rf"encoder\.layer\.(\d+)\.norm2\.{_W}", r"\1.ln2.\2"),
    (rf"encoder\.layer\.(\d+)\.mlp\.fc1\.{_W}", r"\1.fc1.\2"),
    (rf"encoder\.layer\.(\d+)\.mlp\.fc2\.{_W}", r"\1.fc2.\2"),
    (r"encoder\.layer\.(\d+)\.layer_scale1\.lambda1", r"\1.ls1"),
    (r"encoder\.layer\.(\d+)\.layer_scale2\.lambda1", r"\1.ls2"),
)  # fmt: skip
HF_ASIDE = (r"pooler\..*", r"embeddings\.mask_token")

_B = r"Transformer/encoderblock_(\d+)/"
_MHA = _B + r"MultiHeadDotProductAttention_1/"
GOOGLE = (
    (r"embedding/(kernel|bias)", r"patch.\1"), (r"cls", "cls"),
    (r"Transformer/posembed_input/pos_embedding", "pos"),
    (r"Transformer/encoder_norm/(scale|bias)", r"norm.\1"),
    (_B + r"LayerNorm_0/(scale|bias)", r"\1.ln1.\2"),
    (_B + r"LayerNorm_2/(scale|bias)", r"\1.ln2.\2"),
    (_MHA + r"(query|key|value)/(kernel|bias)", r"\1.\2.\3"),
    (_MHA + r"out/(kernel|bias)", r"\1.proj.\2"),
    (_B + r"MlpBlock_3/Dense_0/(kernel|bias)", r"\1.fc1.\2"),
    (_B + r"MlpBlock_3/Dense_1/(kernel|bias)", r"\1.fc2.\2"),
    (r"head/(kernel|bias)", r"head.\1"), (r"pre_logits/(kernel|bias)", r"pre_logits.\1"),
)  # fmt: skip
GOOGLE_ASIDE = ()

_TV = r"encoder\.layers\.encoder_layer_(\d+)\."
TORCHVISION = (
    (rf"conv_proj\.{_W}", r"patch.\1"), (r"class_token", "cls"),
    (r"encoder\.pos_embedding", "pos"), (rf"encoder\.ln\.{_W}", r"norm.\1"),
    (_TV + rf"ln_1\.{_W}", r"\1.ln1.\2"),
    (_TV + r"self_attention\.in_proj_(weight|bias)", r"\1.qkv.\2"),
    (_TV + rf"self_attention\.out_proj\.{_W}", r"\1.proj.\2"),
    (_TV + rf"ln_2\.{_W}", r"\1.ln2.\2"),
    (_TV + rf"mlp\.(?:0|linear_1)\.{_W}", r"\1.fc1.\2"),
    (_TV + rf"mlp\.(?:3|linear_2)\.{_W}", r"\1.fc2.\2"),
    (rf"heads\.head\.{_W}", r"head.\1"), (rf"heads\.pre_logits\.{_W}", r"pre_logits.\1"),
)  # fmt: skip

LAYOUTS = {"timm": (TIMM, TIMM_ASIDE), "hf-vit": (HF_VIT, HF_ASIDE),
           "hf-dinov2": (HF_DINOV2, HF_ASIDE), "google": (GOOGLE, GOOGLE_ASIDE),
           "torchvision": (TORCHVISION, ())}


def is_array(value: object) -> bool:
    return isinstance(value, np.ndarray)


def find_state_dict(obj: object) -> tuple[dict[str, np.ndarray], tuple[str, ...], tuple[str, ...]]:
    """The flat {name: array} inside what a file holds.

    Returns (state dict, the container entries walked into, the sibling entries left out).
    A training checkpoint (`{"teacher": …, "epoch": …}`) is searched in CONTAINER_KEYS order.
    """
    path: list[str] = []
    left: list[str] = []
    for _ in range(4):
        if not isinstance(obj, dict) or not obj:
            break
        if all(is_array(v) for v in obj.values()):
            if not all(isinstance(k, str) for k in obj):
                break
            return dict(obj), tuple(path), tuple(left)
        inner = next((k for k in CONTAINER_KEYS if isinstance(obj.get(k), dict)), None)
        if inner is None:
            break
        left += [f"{'.'.join(path + [str(k)])}" for k in obj if k != inner]
        path.append(inner)
        obj = obj[inner]
    raise CheckpointError("this file holds no state dict of tensors (a dict of named tensors, or "
                      f"one under {', '.join(repr(k) for k in CONTAINER_KEYS)}): save the "
                      "model's state_dict().")


def strip_prefixes(sd: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], tuple[str, ...]]:
    """Remove wrapper prefixes carried by more than half of the keys, repeatedly.

    Returns the renamed dict and the prefixes stripped, in order (e.g. ("module.", "backbone.")).
    """
    stripped: list[str] = []
    changed = True
    while changed:
        changed = False
        for p in WRAPPER_PREFIXES:
            if sum(k.startswith(p) for k in sd) * 2 > len(sd):
                renamed = {(k[len(p):] if k.startswith(p) else k): v for k, v in sd.items()}
                if len(renamed) != len(sd):
                    raise CheckpointError(f"stripping the prefix {p!r} makes two keys equal: the "
                                      "file mixes two models; save one state dict.")
                sd, changed = renamed, True
                stripped.append(p)
    return sd, tuple(stripped)


def detect_layout(keys: set[str]) -> str:
    """'timm', 'hf-vit', 'hf-dinov2', 'google' or 'torchvision' from the keys; else ParamsError
    naming some."""
    if "patch_embed.proj.weight" in keys:
        return "timm"
    if "conv_proj.weight" in keys and "encoder.pos_embedding" in keys:
        return "torchvision"
    if "embedding/kernel" in keys and any(k.startswith("Transformer/encoderblock_") for k in keys):
        return "google"
    if "embeddings.patch_embeddings.projection.weight" in keys:
        dinov2 = any(re.fullmatch(r"encoder\.layer\.\d+\.norm1\.weight", k) for k in keys)
        return "hf-dinov2" if dinov2 else "hf-vit"
    shown = ", ".join(sorted(keys)[:8]) + (", …" if len(keys) > 8 else "")
    raise CheckpointError(
        "Unknown checkpoint layout: these keys are not a timm / DINO / DeiT VisionTransformer "
        "(patch_embed.proj.weight, blocks.0.attn.qkv.weight, …), a Hugging Face ViT / DeiT / "
        "DINOv2 model (embeddings.patch_embeddings.projection.weight, encoder.layer.0.…), "
        "a torchvision VisionTransformer (conv_proj.weight, encoder.layers.encoder_layer_0.…) "
        "nor Google's ViT .npz (embedding/kernel, Transformer/encoderblock_0/…). "
        f"Its keys: {shown}. Save the state dict of one of those models.")


def to_neutral(sd: dict[str, np.ndarray], layout: str
               ) -> tuple[dict[str, np.ndarray], tuple[str, ...], dict[str, str]]:
    """Rename the keys of `layout` to the neutral names; split timm's fused qkv.

    Returns (neutral tensors, keys set aside, {neutral name: the file's key} for messages).
    Raises ParamsError listing every key that is neither an encoder key nor a head key.
    """
    table, aside_patterns = LAYOUTS[layout]
    neutral: dict[str, np.ndarray] = {}
    origin: dict[str, str] = {}
    aside, unknown = [], []
    for key, value in sd.items():
        name = next((re.sub(pat, rep, key) for pat, rep in table if re.fullmatch(pat, key)),
                    None)
        if name is not None:
            neutral[name], origin[name] = value, key
        elif any(re.fullmatch(p, key) for p in aside_patterns):
            aside.append(key)
        else:
            unknown.append(key)
    if unknown:
        shown = ", ".join(sorted(unknown)[:10]) + (", …" if len(unknown) > 10 else "")
        raise CheckpointError(
            f"This checkpoint has {len(unknown)} encoder key(s) the NumPy encoder does not "
            f"implement: {shown}. They change the computation (e.g. q_norm / k_norm, "
            "norm_pre, attn_pool, SwiGLU), so the model cannot be shown exactly (the "
            "classification head's keys are read, a DINO projection head set aside).")
    if layout == "google":
        neutral = flax_to_torch(neutral)
        origin = {flax_name(n): k for n, k in origin.items()}
    else:
        neutral = split_fused_qkv(neutral)
    for name in neutral:
        m = re.fullmatch(r"(\d+)\.(query|key|value)\.(weight|bias)", name)
        if name not in origin and m:
            origin[name] = f"{origin[f'{m[1]}.qkv.{m[3]}']}[{m[2]}]"
    return neutral, tuple(sorted(aside)), origin


def flax_name(name: str) -> str:
    """A neutral name with Flax's `scale` / `kernel` as PyTorch's `weight`."""
    return name.replace(".scale", ".weight").replace(".kernel", ".weight")


def flax_to_torch(neutral: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Google/Flax tensors to PyTorch's orientation: kernels `[in, out]` → `[out, in]`.

    embedding `[P, P, C, D]` → `[D, C, P, P]`; query/key/value `[D, h, d_head]` → `[h·d_head,
    D]` (their bias `[h, d_head]` → `[h·d_head]`); out `[h, d_head, D]` → `[D, h·d_head]`;
    `scale` is a LayerNorm weight. Shapes are checked later, by the caller.
    """
    out = {}
    for name, w in neutral.items():
        name = flax_name(name)
        part = name.split(".")[-2] if "." in name else name
        if name == "patch.weight" and w.ndim == 4:
            w = w.transpose(3, 2, 0, 1)
        elif part in ("query", "key", "value") and w.ndim == 3:
            w = w.reshape(w.shape[0], -1).T
        elif part in ("query", "key", "value") and w.ndim == 2:  # a bias [h, d_head]
            w = w.reshape(-1)
        elif part == "proj" and name.endswith("weight") and w.ndim == 3:
            w = w.reshape(-1, w.shape[-1]).T
        elif (part in ("fc1", "fc2", "head", "pre_logits") and name.endswith("weight")
              and w.ndim == 2):
            w = w.T
        out[name] = w
    return out


def split_fused_qkv(neutral: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`{i}.qkv.weight [3D, D]` → query / key / value `[D, D]` (rows 0:D, D:2D, 2D:3D): timm's
    `attn.qkv`, torchvision's `self_attention.in_proj_weight`."""
    out = {}
    for name, value in neutral.items():
        m = re.fullmatch(r"(\d+)\.qkv\.(weight|bias)", name)
        if m is None:
            out[name] = value
            continue
        if value.shape[0] % 3:
            raise CheckpointError(f"layer {m[1]}'s fused q/k/v {m[2]} has shape {value.shape}: "
                              "its first axis should be 3·d_model (q, k, v stacked).")
        for part, rows in zip(("query", "key", "value"), np.split(value, 3), strict=True):
            out[f"{m[1]}.{part}.{m[2]}"] = rows
    return out
