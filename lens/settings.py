"""Settings: everything a learner can set, as one frozen, typed value — no Streamlit here.

`Settings` owns every default, the URL codec (`from_url` / `to_url`), the rules that keep a
combination possible (`normalised`: the patch divides the image, h divides d_model within the
memory limit, the layer, head and query exist), the derived values (d_ff = 4·d_model for
random weights) and `to_config()`. A model may fix the architecture (the trained shapes
weights do; loaded checkpoints will): `normalised(models)` copies it into the fields it locks
and never derives over them. The trained model also ships at several points of its training:
`train_step` picks one (`FINAL_STEP` = its final weights) among the steps the caller passes as
`checkpoints`. Every value it replaces is reported as a `Notice` that names the key, the value
given, the value used and why (a reason id with its details; the app words it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Literal, get_args

from encoder_core import ConfigError, EncoderConfig
from encoder_core.config import (
    MAX_ATTENTION_BYTES,
    SCALES,
    Scale,
    valid_head_counts,
    valid_patch_sizes,
)

from .models import ID_PATTERN

Lang = Literal["en", "zh"]
Source = Literal["default", "upload", "sample"]
LANGS: tuple[str, ...] = get_args(Lang)
SOURCES: tuple[str, ...] = get_args(Source)
WEIGHTS: tuple[str, ...] = ("random", "trained")  # the note encoder's; checkpoints add ids

# What the controls offer (the sidebar draws exactly these).
CHANNELS = (1, 3)
CENTRE = -1  # the query's default, resolved by `normalised` to the centre patch of the grid
IMAGE_SIZES = (32, 48, 64, 96, 128, 160, 192, 224, 256, 320, 384, 448, 512)
D_MODELS = (8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
MAX_LAYERS = 12
MAX_SEED = 2**31 - 1
D_FF_PER_D_MODEL = 4  # random weights: d_ff = 4·d_model, as in the paper (2048 = 4·512)
FINAL_STEP = -1  # train_step of the trained model's final (shipped) weights

# The fields a model that fixes the architecture locks (scaling and PE stay switches).
ARCHITECTURE = ("channels", "image_size", "patch_size", "d_model", "n_heads", "n_layers",
                "use_ffn")


@dataclass(frozen=True)
class Notice:
    """A value that could not be used as given, and what was used instead."""

    key: str  # the setting (a Settings field name)
    given: str  # the value as given (text of the link, or the value before a change)
    used: str  # the value used instead, as it appears in a link
    why: str  # reason id: not_a_number, not_a_switch, not_an_option, not_allowed,
    #           out_of_range, patch_divide, heads_divide, heads_memory, locked, no_model,
    #           upload_lost, no_checkpoint
    detail: Mapping[str, object] = field(default_factory=dict)  # values for the reason's text


@dataclass(frozen=True)
class Settings:
    lang: Lang = "en"  # language of the app
    source: Source = "default"  # the image: built-in photo, an upload, a generated shape
    weights: str = "random"  # seeded random weights, the model trained on shapes, or the id
    #                          of a loaded checkpoint (lens.models)
    train_step: int = FINAL_STEP  # trained weights: after this many training steps (-1 = final)
    channels: int = 1  # C: 1 = grey (the note), 3 = RGB
    image_size: int = 224  # S, side of the image the model receives
    patch_size: int = 16  # P, side of a patch; divides S
    d_model: int = 512  # width of every token vector
    n_heads: int = 8  # h; divides d_model
    n_layers: int = 6  # encoder layers
    use_ffn: bool = True  # the paper's feed-forward sub-layer (the note's day 01 has none)
    scale: Scale = "d_k"  # divide the scores by √d_k (paper), √d_model (note) or 1
    use_pe: bool = True  # add the positional encoding
    seed: int = 0  # seed of the random weights
    sample_seed: int = 0  # which generated shape
    layer: int = 0  # selected layer, 0-based (shown 1…L)
    head: int = 0  # selected head, 0-based (shown 1…h)
    query: int = CENTRE  # selected query patch, row-major; CENTRE: the centre patch
    lesson: bool = False  # lesson mode: each step asks its predictions before it shows them
    # The configuration of a model that fixes the architecture; not in links.
    architecture: EncoderConfig | None = None

    # --- derived values ----------------------------------------------------------------------
    @property
    def locked(self) -> tuple[str, ...]:
        """The fields the current model fixes (none for random weights)."""
        return ARCHITECTURE if self.architecture is not None else ()

    @property
    def d_ff(self) -> int:
        """Inner width of the FFN: the model's, or 4·d_model for random weights."""
        if self.architecture is not None:
            return self.architecture.d_ff
        return D_FF_PER_D_MODEL * self.d_model

    def patch_options(self) -> list[int]:
        """Patch sizes that divide the image size (4 … 1,024 tokens)."""
        return valid_patch_sizes(self.image_size)

    def head_options(self) -> list[int]:
        """Head counts that divide d_model and keep the attention maps within the limit."""
        return valid_head_counts(_probe(self))

    def to_config(self) -> EncoderConfig:
        """The encoder's configuration. Raises ConfigError for an impossible combination
        (`normalised` never returns one)."""
        switches = {"scale": self.scale, "use_pe": self.use_pe}
        if self.architecture is not None:
            return self.architecture.replace(**switches)
        return EncoderConfig(channels=self.channels, image_size=self.image_size,
                             patch_size=self.patch_size, d_model=self.d_model,
                             n_heads=self.n_heads, n_layers=self.n_layers, d_ff=self.d_ff,
                             use_ffn=self.use_ffn, seed=self.seed, **switches)

    def replace(self, **changes: object) -> Settings:
        return replace(self, **changes)

    def lighter_options(self) -> list[tuple[str, int]]:
        """(field, value) of single changes that make the work lighter, each still a valid
        setting: half the layers, the next smaller d_model (with h still dividing it), the
        next larger patch (fewer tokens). None for a model that fixes the architecture."""
        if self.locked:
            return []
        options = []
        if self.n_layers > 1:
            options.append(("n_layers", max(1, self.n_layers // 2)))
        smaller = [d for d in D_MODELS if d < self.d_model and d % self.n_heads == 0]
        if smaller:
            options.append(("d_model", smaller[-1]))
        larger = [p for p in self.patch_options() if p > self.patch_size]
        if larger:
            options.append(("patch_size", larger[0]))
        return options

    # --- links -------------------------------------------------------------------------------
    def to_url(self) -> dict[str, str]:
        """Every setting as link text (switches as 1 / 0)."""
        return {key: _encode(getattr(self, key)) for key in URL_KEYS}

    @classmethod
    def from_url(cls, query: Mapping[str, str],
                 models: Mapping[str, EncoderConfig] | None = None,
                 checkpoints: Sequence[int] = (),
                 ) -> tuple[Settings, list[Notice]]:
        """Settings from a link's query; unknown keys are ignored. Each value its control does
        not allow is replaced — a number by the nearest allowed value, anything else by the
        default — with a Notice; then the combination is made possible (`normalised`)."""
        values: dict[str, object] = {}
        notices: list[Notice] = []
        for key in URL_KEYS:
            if key in query:
                value, notice = _decode(key, str(query[key]))
                values[key] = value
                if notice is not None:
                    notices.append(notice)
        if values.get("source") == "upload":  # an uploaded image cannot travel in a link
            values["source"] = "default"
            notices.append(Notice("source", "upload", "default", "upload_lost"))
        settings, more = cls(**values).normalised(models, checkpoints)
        # a model fixing the architecture is news only for the values the link gave
        more = [n for n in more if n.why != "locked" or n.key in query]
        centre = _encode(CENTRE)  # a query that fell back to the default: say which patch
        notices = [replace(n, used=_encode(settings.query))
                   if n.key == "query" and n.used == centre else n
                   for n in notices]
        return settings, notices + more

    # --- possible combinations -----------------------------------------------------------
    def normalised(self, models: Mapping[str, EncoderConfig] | None = None,
                   checkpoints: Sequence[int] = (),
                   ) -> tuple[Settings, list[Notice]]:
        """The nearest possible settings and a Notice for each value changed.

        `models` maps a weights id to the architecture it fixes ("trained" -> its config, a
        loaded checkpoint's id -> its config); "random" is always available. `checkpoints` are
        the training steps the trained model ships at, increasing; the last is its final
        weights (train_step FINAL_STEP).
        """
        models = models or {}
        s, notices = self, []

        def change(key: str, used: object, why: str, **detail: object) -> None:
            nonlocal s
            notices.append(Notice(key, _encode(getattr(s, key)), _encode(used), why, detail))
            s = replace(s, **{key: used})

        if s.weights != "random" and s.weights not in models:
            change("weights", "random", "no_model", name=s.weights)
        if s.source == "sample" and "trained" not in models:  # the shapes it was trained on
            change("source", "default", "no_model", name="trained")
        if s.weights == "trained" and s.train_step not in train_steps(checkpoints):
            final = checkpoints[-1] if checkpoints else None
            near = _nearest(s.train_step, checkpoints) if checkpoints else final
            change("train_step", FINAL_STEP if near == final else near, "no_checkpoint",
                   steps=", ".join(map(str, train_steps(checkpoints))), final=final)
        arch = models.get(s.weights)
        s = replace(s, architecture=arch)
        if arch is not None:
            for key in ARCHITECTURE:
                if getattr(s, key) != getattr(arch, key):
                    change(key, getattr(arch, key), "locked")
        patches = s.patch_options()
        if s.patch_size not in patches:
            change("patch_size", _nearest(s.patch_size, patches), "patch_divide",
                   s=s.image_size)
        probe = _probe(s)  # the sizes, with one head
        heads = valid_head_counts(probe)
        if s.n_heads not in heads:
            why = "heads_divide" if s.d_model % s.n_heads else "heads_memory"
            gib = probe.attention_bytes * s.n_heads / 2**30
            change("n_heads", _nearest(s.n_heads, heads), why, d=s.d_model, L=s.n_layers,
                   N=probe.n_tokens, gib=round(gib, 2), limit=MAX_ATTENTION_BYTES / 2**30)
        if s.query == CENTRE:  # the default: the centre patch of this grid, without a word
            s = replace(s, query=(probe.grid_size // 2) * probe.grid_size + probe.grid_size // 2)
        for key, count in (("layer", s.n_layers), ("head", s.n_heads),
                           ("query", probe.n_tokens)):
            value = getattr(s, key)
            if not 0 <= value < count:
                change(key, min(max(value, 0), count - 1), "out_of_range", lo=0, hi=count - 1)
        return s, notices


def train_steps(checkpoints: Sequence[int]) -> tuple[int, ...]:
    """The train_step values possible with these checkpoints: the steps before the last, then
    FINAL_STEP for the last (the final weights). [0, 500, 6000] -> (0, 500, -1)."""
    return (*checkpoints[:-1], FINAL_STEP)


URL_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Settings) if f.name != "architecture")
DEFAULTS = Settings()

# How each link key is read: a choice among texts, a switch, a number among options, or a
# whole number in a range.
CHOICES: dict[str, tuple[str, ...]] = {"lang": LANGS, "source": SOURCES, "scale": SCALES}
SWITCHES = ("use_ffn", "use_pe", "lesson")
OPTIONS: dict[str, tuple[int, ...]] = {"channels": CHANNELS, "image_size": IMAGE_SIZES,
                                       "d_model": D_MODELS}
# Whole numbers; train_step and the last five are checked against the combination later
# (`normalised`).
RANGES: dict[str, tuple[int, int]] = {
    "n_layers": (1, MAX_LAYERS), "train_step": (FINAL_STEP, MAX_SEED), "seed": (0, MAX_SEED),
    "sample_seed": (0, MAX_SEED),
    "patch_size": (1, MAX_SEED), "n_heads": (1, MAX_SEED), "layer": (0, MAX_SEED),
    "head": (0, MAX_SEED), "query": (0, MAX_SEED)}
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _encode(value: object) -> str:
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def _decode(key: str, raw: str) -> tuple[object, Notice | None]:
    """(value, None) when `raw` is allowed as it is, else (the value used, a Notice)."""
    default = getattr(DEFAULTS, key)

    def fallback(used: object, why: str, **detail: object) -> tuple[object, Notice]:
        return used, Notice(key, raw, _encode(used), why, detail)

    if key == "weights":  # a model's id (checked against the loaded models by `normalised`)
        if raw in WEIGHTS or ID_PATTERN.fullmatch(raw):
            return raw, None
        return fallback(default, "not_an_option", options=", ".join(WEIGHTS) + ", a model id")
    if key in CHOICES:
        if raw in CHOICES[key]:
            return raw, None
        return fallback(default, "not_an_option", options=", ".join(CHOICES[key]))
    if key in SWITCHES:
        low = raw.strip().lower()
        if low in _TRUE or low in _FALSE:
            return low in _TRUE, None
        return fallback(default, "not_a_switch")
    number = _number(raw)
    if number is None:
        return fallback(default, "not_a_number")
    if key in OPTIONS:
        if number in OPTIONS[key]:
            return int(number), None
        return fallback(_nearest(number, OPTIONS[key]), "not_allowed",
                        options=", ".join(map(str, OPTIONS[key])))
    lo, hi = RANGES[key]
    used = int(min(max(round(number), lo), hi))
    if used == number:
        return used, None
    return fallback(used, "out_of_range", lo=lo, hi=hi)


def _number(raw: str) -> float | None:
    """A finite number written in `raw`, or None."""
    try:
        value = float(raw.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _nearest(value: float, allowed: tuple[int, ...] | list[int]) -> int:
    """The allowed value closest to `value` (the smaller one on a tie)."""
    return min(allowed, key=lambda a: (abs(a - value), a))


def _probe(s: Settings) -> EncoderConfig:
    """A configuration with one head, to ask which head counts are possible."""
    try:
        return EncoderConfig(image_size=s.image_size, patch_size=s.patch_size,
                             d_model=s.d_model, n_heads=1, n_layers=s.n_layers, d_ff=8)
    except ConfigError as err:  # only reachable by a caller that skipped the patch rule
        raise ValueError(f"no head count is possible: {err}") from None
