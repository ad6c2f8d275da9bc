"""The encoder's settings: one frozen dataclass, validated on creation.

Defaults are the study note's: a 224 × 224 grey image cut into 16 × 16 patches (196 tokens),
d_model = 512, h = 8 heads, 6 layers, d_ff = 2048. Where the note and the 2017 paper differ
(the score scaling, the feed-forward sub-layer) the default follows the paper and the note's
variant is one switch away; see README.md, "Where we deviate from the note".

The Vision Transformer variants (timm / DINO / DeiT / Hugging Face ViT / DINOv2) are
fields too, each off by default so the note's encoder is exactly as it was: pre-norm blocks,
prefix tokens ([CLS], DeiT's distillation token, DINOv2's registers), learned positions,
biases on the patch embedding / Q, K, V / W_O, GELU, a final LayerNorm, LayerScale and the
image normalisation. The sequence is `[cls, dist, registers…, patches…]`: `n_tokens` keeps
meaning the number of PATCHES, `seq_len` counts every row.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields
from typing import Literal

Scale = Literal["d_k", "d_model", "none"]
SCALES: tuple[str, ...] = ("d_k", "d_model", "none")
Position = Literal["sinusoidal", "learned"]
POSITIONS: tuple[str, ...] = ("sinusoidal", "learned")
Activation = Literal["relu", "gelu", "gelu_tanh"]
ACTIVATIONS: tuple[str, ...] = ("relu", "gelu", "gelu_tanh")

MAX_TOKENS = 1024
MAX_ATTENTION_BYTES = 1 << 30  # 1 GiB for scores + attn of all layers and heads (float32)


class ConfigError(ValueError):
    """An impossible setting; the message says what to change."""


@dataclass(frozen=True)
class EncoderConfig:
    image_size: int = 224  # side of the square image the model receives, in pixels
    patch_size: int = 16  # side P of one square patch, in pixels
    channels: int = 1  # C: 1 = grey (the note), 3 = RGB
    d_model: int = 512  # width of every token vector
    n_heads: int = 8  # h: attention heads per layer
    n_layers: int = 6  # encoder layers stacked (the note: 6)
    d_ff: int = 2048  # inner width of the feed-forward network (the app ties it to 4·d_model)
    use_ffn: bool = True  # False = the note's day-01 layer: attention + Add & Norm only
    scale: Scale = "d_k"  # divide scores by √d_head ("d_k", the paper), √d_model (the note), or 1
    use_pe: bool = True  # False = ablation: no positional encoding is added
    ln_eps: float = 1e-5  # ε inside the layer-norm square root
    seed: int = 0  # seed of the random parameters
    # --- Vision Transformer variants; every default is the note's encoder ----------
    norm_first: bool = False  # True = pre-norm (ViT): x + ls_1 ⊙ attn_out(LN_1(x)); False = post
    cls_token: bool = False  # prepend a learned [CLS] token (params.cls [1, d])
    dist_token: bool = False  # DeiT's distillation token after [CLS] (params.dist [1, d])
    n_registers: int = 0  # DINOv2 register tokens after cls/dist (params.registers [R, d])
    position: Position = "sinusoidal"  # "learned" = params.pos_embed [n_pos, d] (ViT)
    pos_prefix: bool = True  # learned only: cls/dist get a position row (timm no_embed_class=False)
    patch_bias: bool = False  # b_E [d] on the patch embedding
    qkv_bias: bool = False  # b_Q, b_K, b_V [d]
    proj_bias: bool = False  # b_O [d]
    activation: Activation = "relu"  # FFN non-linearity: relu, gelu (exact erf), gelu_tanh
    final_norm: bool = False  # a last LayerNorm on the output (params.norm_gamma, norm_beta [d])
    layer_scale: bool = False  # per layer ls_1, ls_2 [d] scaling each sub-layer's output
    pixel_mean: tuple[float, ...] = ()  # per channel; non-empty: encode uses (image − mean) / std
    pixel_std: tuple[float, ...] = ()  # per channel, > 0; set together with pixel_mean

    def __post_init__(self) -> None:
        # a list (e.g. from JSON) or NumPy numbers become a tuple of floats, so the config stays
        # hashable, comparable and JSON-friendly
        for name in ("pixel_mean", "pixel_std"):
            value = getattr(self, name)
            if isinstance(value, (list, tuple)) and all(
                    isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value):
                object.__setattr__(self, name, tuple(float(v) for v in value))
        problems = validation_problems(self)
        if problems:
            raise ConfigError(" ".join(problems))

    # --- derived sizes, named as in the README -------------------------------------------
    @property
    def grid_size(self) -> int:
        """Patches along one side of the image: image_size / patch_size."""
        return self.image_size // self.patch_size

    @property
    def n_tokens(self) -> int:
        """N, the number of patches: (image_size / patch_size)² (the sequence length without
        prefix tokens)."""
        return self.grid_size**2

    @property
    def n_prefix(self) -> int:
        """Rows before the patches: [CLS] + distillation token + registers."""
        return int(self.cls_token) + int(self.dist_token) + self.n_registers

    @property
    def seq_len(self) -> int:
        """Rows of every per-token array: n_prefix + n_tokens (= n_tokens by default)."""
        return self.n_prefix + self.n_tokens

    @property
    def n_pos(self) -> int:
        """Rows of a learned pos_embed: n_tokens, + cls and dist when pos_prefix (never the
        registers)."""
        prefix = int(self.cls_token) + int(self.dist_token) if self.pos_prefix else 0
        return prefix + self.n_tokens

    @property
    def normalises_pixels(self) -> bool:
        """True when `encode` computes (image − pixel_mean) / pixel_std itself."""
        return bool(self.pixel_mean)

    @property
    def patch_dim(self) -> int:
        """Values in one flattened patch: P·P·C."""
        return self.patch_size * self.patch_size * self.channels

    @property
    def d_head(self) -> int:
        """Width of one head: d_model / n_heads (the paper's d_k)."""
        return self.d_model // self.n_heads

    @property
    def score_scale(self) -> float:
        """The divisor of Q·Kᵀ: √d_head, √d_model or 1, as chosen by `scale`."""
        return {"d_k": self.d_head**0.5, "d_model": self.d_model**0.5, "none": 1.0}[self.scale]

    @property
    def attention_bytes(self) -> int:
        """Bytes of the scores and attn arrays over all layers: n_layers·n_heads·seq_len²·2·4."""
        return self.n_layers * self.n_heads * self.seq_len**2 * 2 * 4

    def replace(self, **changes: object) -> EncoderConfig:
        """A copy with some fields changed (validated like any new config)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return EncoderConfig(**values)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def validation_problems(cfg: EncoderConfig) -> list[str]:
    """Every reason `cfg` is impossible, each a sentence that says what to change."""
    positive = ("image_size", "patch_size", "channels", "d_model", "n_heads", "n_layers", "d_ff")
    problems = []
    for name in positive:
        value = getattr(cfg, name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            problems.append(f"{name} must be a positive whole number, got {value!r}.")
    if problems:
        return problems
    if cfg.channels not in (1, 3):
        problems.append(f"channels must be 1 (grey) or 3 (RGB), got {cfg.channels}.")
    if cfg.image_size % cfg.patch_size:
        problems.append(
            f"image_size {cfg.image_size} is not a multiple of patch_size {cfg.patch_size}: "
            "choose a patch size that divides the image size."
        )
    if cfg.d_model % 2 and cfg.position == "sinusoidal":
        problems.append(
            f"d_model must be even (the positional encoding pairs sin and cos), got {cfg.d_model}."
        )
    if cfg.d_model % cfg.n_heads:
        problems.append(
            f"d_model {cfg.d_model} is not divisible by n_heads {cfg.n_heads}: "
            "choose h among the divisors of d_model."
        )
    if cfg.scale not in SCALES:
        problems.append(f"scale must be one of {', '.join(SCALES)}, got {cfg.scale!r}.")
    if not cfg.ln_eps > 0:
        problems.append(f"ln_eps must be positive, got {cfg.ln_eps!r}.")
    if not isinstance(cfg.seed, int) or cfg.seed < 0:
        problems.append(f"seed must be a non-negative whole number, got {cfg.seed!r}.")
    problems += variant_problems(cfg)
    if problems:
        return problems
    if cfg.seq_len > MAX_TOKENS:
        prefix = f" ({cfg.n_tokens} patches + {cfg.n_prefix} prefix)" if cfg.n_prefix else ""
        problems.append(
            f"{cfg.seq_len} tokens{prefix} is more than the {MAX_TOKENS} allowed: "
            "use a larger patch size or a smaller image."
        )
    elif cfg.attention_bytes > MAX_ATTENTION_BYTES:
        problems.append(
            f"the attention maps would take {cfg.attention_bytes / 2**30:.2f} GiB "
            f"(n_layers·n_heads·N²·2·4 bytes), more than 1 GiB: "
            "use fewer layers, fewer heads or fewer tokens."
        )
    return problems


def variant_problems(cfg: EncoderConfig) -> list[str]:
    """Every impossible Vision Transformer setting, each a sentence."""
    problems = []
    flags = ("norm_first", "cls_token", "dist_token", "pos_prefix", "patch_bias", "qkv_bias",
             "proj_bias", "final_norm", "layer_scale")
    for name in flags:
        if not isinstance(getattr(cfg, name), bool):
            problems.append(f"{name} must be True or False, got {getattr(cfg, name)!r}.")
    if (not isinstance(cfg.n_registers, int) or isinstance(cfg.n_registers, bool)
            or cfg.n_registers < 0):
        problems.append(f"n_registers must be a whole number ≥ 0, got {cfg.n_registers!r}.")
    if cfg.dist_token is True and cfg.cls_token is not True:
        problems.append("dist_token needs cls_token: the distillation token follows [CLS] "
                        "(DeiT); switch cls_token on or dist_token off.")
    if cfg.position not in POSITIONS:
        problems.append(f"position must be one of {', '.join(POSITIONS)}, got {cfg.position!r}.")
    if cfg.activation not in ACTIVATIONS:
        problems.append(
            f"activation must be one of {', '.join(ACTIVATIONS)}, got {cfg.activation!r}.")
    problems += pixel_problems(cfg)
    return problems


def pixel_problems(cfg: EncoderConfig) -> list[str]:
    """Why pixel_mean / pixel_std cannot normalise the image (empty when they can, or are off)."""
    mean, std = cfg.pixel_mean, cfg.pixel_std
    for name, value in (("pixel_mean", mean), ("pixel_std", std)):
        if not isinstance(value, tuple) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                for v in value):
            return [f"{name} must be a tuple of finite numbers, one per channel, got {value!r}."]
    if bool(mean) != bool(std):
        return ["pixel_mean and pixel_std go together: give both (one value per channel) "
                "or neither."]
    problems = []
    if mean and isinstance(cfg.channels, int):
        for name, value in (("pixel_mean", mean), ("pixel_std", std)):
            if len(value) != cfg.channels:
                problems.append(f"{name} has {len(value)} values; the image has "
                                f"channels = {cfg.channels}: give one value per channel.")
    if any(v <= 0 for v in std):
        problems.append(f"pixel_std must be positive in every channel, got {std!r}.")
    return problems


def valid_patch_sizes(image_size: int) -> list[int]:
    """Patch sizes that divide image_size and give at most MAX_TOKENS tokens (and ≥ 4 tokens)."""
    return [p for p in range(2, image_size // 2 + 1)
            if image_size % p == 0 and 4 <= (image_size // p) ** 2 <= MAX_TOKENS]


def valid_head_counts(cfg: EncoderConfig) -> list[int]:
    """Values of n_heads that divide d_model and keep the attention arrays within 1 GiB."""
    heads = []
    for h in range(1, cfg.d_model + 1):
        if cfg.d_model % h == 0:
            if cfg.n_layers * h * cfg.seq_len**2 * 2 * 4 <= MAX_ATTENTION_BYTES:
                heads.append(h)
    return heads
