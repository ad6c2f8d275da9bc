"""The encoder's settings: one frozen dataclass, validated on creation.

Defaults are the study note's: a 224 × 224 grey image cut into 16 × 16 patches (196 tokens),
d_model = 512, h = 8 heads, 6 layers, d_ff = 2048. Where the note and the 2017 paper differ
(the score scaling, the feed-forward sub-layer) the default follows the paper and the note's
variant is one switch away; see README.md, "Where we deviate from the note".
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

Scale = Literal["d_k", "d_model", "none"]
SCALES: tuple[str, ...] = ("d_k", "d_model", "none")

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

    def __post_init__(self) -> None:
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
        """N, the sequence length: (image_size / patch_size)²."""
        return self.grid_size**2

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
        """Bytes of the scores and attn arrays over all layers: n_layers·n_heads·N²·2·4."""
        return self.n_layers * self.n_heads * self.n_tokens**2 * 2 * 4

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
    if cfg.d_model % 2:
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
    if problems:
        return problems
    if cfg.n_tokens > MAX_TOKENS:
        problems.append(
            f"{cfg.n_tokens} tokens is more than the {MAX_TOKENS} allowed: "
            "use a larger patch size or a smaller image."
        )
    elif cfg.attention_bytes > MAX_ATTENTION_BYTES:
        problems.append(
            f"the attention maps would take {cfg.attention_bytes / 2**30:.2f} GiB "
            f"(n_layers·n_heads·N²·2·4 bytes), more than 1 GiB: "
            "use fewer layers, fewer heads or fewer tokens."
        )
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
            if cfg.n_layers * h * cfg.n_tokens**2 * 2 * 4 <= MAX_ATTENTION_BYTES:
                heads.append(h)
    return heads
