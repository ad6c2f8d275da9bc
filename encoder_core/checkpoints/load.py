"""Load a real ViT checkpoint (timm, DINO, DeiT, Hugging Face ViT / DeiT / DINOv2, Google,
torchvision) safely, with its classification head when it has one.

    cfg, params, info = load_checkpoint("vit_small.safetensors")
    trace = encode(load_image(photo, cfg), cfg, params)  # the image in [0, 1]

1. **Read** the tensors without running code from the file (`tensorfile.read_tensors`).
2. **Find** the state dict (a training checkpoint's `teacher` / `model` entry), strip wrapper
   prefixes (`module.`, `backbone.`, `vit.`, …), recognise the layout from the keys and rename
   them (`layouts.py`); unknown encoder keys are refused.
3. **Settle every setting** from the weights' shapes, `config.json` / `preprocessor_config.json`
   beside the file, or a stated default / inference rule — each with its source in `info`.
4. **Convert** to `EncoderParams` in our conventions: `X · W` (PyTorch's `[out, in]`
   transposed), W_E rows in our patch order (p1, p2, c): timm's conv weight `[d, C, P, P]` →
   `w.transpose(2, 3, 1, 0).reshape(P·P·C, d)`. Another image size resamples the position grid
   bicubically (`resample.py`, as timm or Hugging Face do for their own layouts).
5. **The head**, when the file has one: its pooling from the family (`head_params`),
   `[out, in]` transposed to `W_head [d_in, n_classes]`, shapes checked; its class names from
   `config.json`, else ImageNet-1k's for 1,000 classes, else "class k" (`labels.py`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..config import ConfigError, EncoderConfig
from ..params import EncoderParams, HeadParams, LayerParams, check_params, head_problems
from .labels import class_labels
from .layouts import HEAD_PARTS, detect_layout, find_state_dict, strip_prefixes, to_neutral
from .resample import resample_pos_embed
from .shared import CheckpointError
from .tensorfile import read_tensors

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
HALF = (0.5, 0.5, 0.5)  # Google's / timm augreg / HF ViT: (x − 0.5) / 0.5
MAX_CONFIG_BYTES = 1 << 20
HF_ACTIVATIONS = {"gelu": "gelu", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
                  "gelu_fast": "gelu_tanh", "relu": "relu"}
FAMILY_EPS = {"timm": 1e-6, "hf-vit": 1e-12, "hf-dinov2": 1e-6, "google": 1e-6,
              "torchvision": 1e-6}
STANDARD_HEADS = {(192, 12): ("Ti", 3), (384, 12): ("S", 6), (768, 12): ("B", 12),
                  (1024, 24): ("L", 16), (1280, 32): ("H", 16), (1408, 40): ("g", 16),
                  (1536, 40): ("giant2 (DINOv2)", 24), (1664, 48): ("G", 16)}
"""(d_model, layers) -> (the ViT size, its heads): ViT-B/16, B/32, L/16, L/32, H/14 of the ViT
paper and torchvision, Ti / S of DeiT, g / G of Zhai et al. 2022, DINOv2's giant2 (timm's
vision_transformer.py). d_head = 64 would give ViT-H 20 heads: it has 16 of 80."""


@dataclass(frozen=True)
class Setting:
    """One setting of the loaded model and where it came from."""

    name: str  # an EncoderConfig field, e.g. "n_heads"
    value: object
    source: str  # "weights" (a tensor's shape), "config", "argument", "inferred", "default"
    why: str = ""  # the rule or the file, e.g. "d_head = 64 (ViT convention)"


@dataclass(frozen=True)
class CheckpointInfo:
    """What `load_checkpoint` found: family, format and the source of every setting."""

    path: str
    format: str  # "safetensors", "npz" or "torch-zip"
    layout: str  # "timm", "hf-vit", "hf-dinov2", "google" or "torchvision"
    family: str  # e.g. "DINO (timm layout)", "Hugging Face DINOv2 with registers"
    settings: tuple[Setting, ...]
    set_aside: tuple[str, ...]  # keys nothing uses: a DINO projection head, HF pooler, mask token
    prefixes_stripped: tuple[str, ...]  # e.g. ("module.", "backbone.")
    containers: tuple[str, ...]  # entries walked into, e.g. ("teacher",)
    left_out: tuple[str, ...]  # sibling entries of those, e.g. ("student", "epoch")
    n_params: int  # parameters used by the encoder (the head's not counted)
    notes: tuple[str, ...]
    head: str = ""  # the classification head in words, "" without one
    labels: tuple[str, ...] = ()  # [n_classes] class names in logit order, () without a head
    labels_source: str = ""  # e.g. "config.json id2label", "ImageNet-1k (1,000 classes)"

    def source(self, name: str) -> str:
        """The source of setting `name` ("weights", "config", …)."""
        return next(s.source for s in self.settings if s.name == name)

    def guessed_normalisation(self) -> str:
        """Why the pixel mean / std are what they are when no configuration file gave them
        (the family's usual values, a guess), else ""."""
        if self.source("pixel_mean") == "config":
            return ""
        return next(s.why for s in self.settings if s.name == "pixel_mean")

    def describe(self) -> list[str]:
        """Human-readable lines (the CLI prints them)."""
        lines = [f"checkpoint: {self.path} ({self.format}, {self.layout} layout)",
                 f"family: {self.family}", f"encoder parameters: {self.n_params:,}"]
        if self.containers:
            lines.append(f"state dict taken from: {'.'.join(self.containers)}"
                         + (f" (left out: {', '.join(self.left_out)})" if self.left_out else ""))
        if self.prefixes_stripped:
            lines.append(f"prefixes stripped: {', '.join(self.prefixes_stripped)}")
        if self.set_aside:
            lines.append(f"set aside (not the encoder): {', '.join(self.set_aside)}")
        if self.head:
            lines.append(f"classification head: {self.head}; class names: "
                         f"{self.labels_source}")
        for s in self.settings:
            lines.append(f"  {s.name:<12} = {s.value!s:<28} [{s.source}]"
                         + (f" {s.why}" if s.why else ""))
        lines += [f"note: {n}" for n in self.notes]
        return lines


def load_checkpoint(path: str | os.PathLike, image_size: int | None = None,
                    n_heads: int | None = None,
                    ) -> tuple[EncoderConfig, EncoderParams, CheckpointInfo]:
    """Read a ViT checkpoint into (cfg, params, info); see the module docstring.

    Args:
        path: a .safetensors, .npz or PyTorch zip (.pth / .pt / .bin) file, or a folder
            holding one (a Hugging Face `save_pretrained` folder: model.safetensors first).
        image_size: run at this image size (a multiple of the patch size); the learned
            position grid is resampled. None: the checkpoint's own size.
        n_heads: the number of attention heads, for a file that does not say (a torchvision
            ViT of no standard size). None: from the file, its config.json or its size.
    Raises:
        CheckpointError (a ParamsError): with a message that says what is wrong and what to
            do.
    """
    path = weights_file(Path(path))
    obj, fmt = read_tensors(path)
    sd, containers, left_out = find_state_dict(obj)
    sd, stripped = strip_prefixes(sd)
    layout = detect_layout(set(sd))
    tensors, aside, origin = to_neutral(sd, layout)
    check_tensors(tensors, origin)
    head_tensors = {k: v for k, v in tensors.items() if k.split(".")[0] in HEAD_PARTS}
    tensors = {k: v for k, v in tensors.items() if k not in head_tensors}
    configs = read_configs(Path(path).parent)
    settings, notes = settle(tensors, layout, configs, image_size, Path(path).name, containers,
                             stripped, heads_in_file(sd, layout), n_heads)
    values = {s.name: s.value for s in settings}
    family = values.pop("family")
    try:
        cfg = EncoderConfig(**values)
    except ConfigError as err:
        raise CheckpointError(f"This checkpoint gives an encoder Encoder Lens cannot run: {err} "
                          "For too many tokens, run it at a smaller size: image_size= "
                          "(command line: --image-size), e.g. 224.") from None
    check_shapes(tensors, cfg, origin)
    params = to_params(tensors, cfg, antialias=not layout.startswith("hf"))
    config = configs.get("config.json", {})
    head, head_text = head_params(head_tensors, cfg, layout, config, origin)
    labels, labels_source = (), ""
    if head is not None:
        labels, labels_source, note = class_labels(config, head.n_classes)
        notes += [note] if note else []
        said = "global_pool" in config or "global_pool" in section(config, "model_args")
        if layout == "timm" and head.pool == "token" and not said:
            notes.append("the head reads the [CLS] row, timm's default global_pool='token': a "
                         "model trained with global_pool='avg' and no fc_norm needs a "
                         "config.json that says so.")
    params = check_params(replace(params, head=head), cfg)
    info = CheckpointInfo(
        path=os.fspath(path), format=fmt, layout=layout, family=str(family),
        settings=tuple(s for s in settings if s.name != "family"), set_aside=aside,
        prefixes_stripped=stripped, containers=containers, left_out=left_out,
        n_params=count_params(params), notes=tuple(notes), head=head_text, labels=labels,
        labels_source=labels_source)
    return cfg, params, info


WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin", "model.npz")


def weights_file(path: Path) -> Path:
    """`path` itself, or for a folder the first of WEIGHT_FILES inside it."""
    if not path.is_dir():
        return path
    for name in WEIGHT_FILES:
        if (path / name).is_file():
            return path / name
    raise CheckpointError(f"the folder {path} holds none of {', '.join(WEIGHT_FILES)}: give the "
                      "weights file itself.")


def check_tensors(tensors: dict[str, np.ndarray], origin: dict[str, str]) -> None:
    """Every encoder tensor is floating point and finite; else one ParamsError naming them."""
    not_float = sorted(origin[k] for k, v in tensors.items() if v.dtype.kind != "f")
    if not_float:
        raise CheckpointError(f"these weights are not floating point: {', '.join(not_float[:8])}.")
    bad = sorted({origin[k].split("[")[0] for k, v in tensors.items()
                  if not np.isfinite(v).all()})
    if bad:
        raise CheckpointError(f"these weights hold NaN or infinity: {', '.join(bad[:8])}"
                          f"{', …' if len(bad) > 8 else ''}. The checkpoint is broken (a "
                          "diverged training run or a damaged file); use another.")


def neutral_shapes(T: dict[str, np.ndarray], cfg: EncoderConfig) -> dict[str, tuple]:
    """The PyTorch shape every encoder tensor must have for `cfg` (at the native grid)."""
    d, C, P, d_ff = cfg.d_model, cfg.channels, cfg.patch_size, cfg.d_ff
    n_pos = T["pos"].shape[-2] if T["pos"].ndim == 3 else -1
    shapes = {"patch.weight": (d, C, P, P), "patch.bias": (d,), "cls": (1, 1, d),
              "dist": (1, 1, d), "registers": (1, cfg.n_registers, d), "pos": (1, n_pos, d),
              "norm.weight": (d,), "norm.bias": (d,)}
    for i in range(cfg.n_layers):
        shapes |= {f"{i}.{n}": (d, d) for n in ("query.weight", "key.weight", "value.weight",
                                                "proj.weight")}
        shapes |= {f"{i}.{n}": (d,) for n in ("ln1.weight", "ln1.bias", "ln2.weight",
                                              "ln2.bias", "query.bias", "key.bias",
                                              "value.bias", "proj.bias", "fc2.bias", "ls1",
                                              "ls2")}
        shapes |= {f"{i}.fc1.weight": (d_ff, d), f"{i}.fc1.bias": (d_ff,),
                   f"{i}.fc2.weight": (d, d_ff)}
    return shapes


def check_shapes(T: dict[str, np.ndarray], cfg: EncoderConfig, origin: dict[str, str]
                 ) -> None:
    """Every tensor has its expected shape and every required one is there; else ParamsError."""
    shapes = neutral_shapes(T, cfg)
    required = ["patch.weight", "pos"] + [
        f"{i}.{n}" for i in range(cfg.n_layers)
        for n in ("ln1.weight", "ln1.bias", "ln2.weight", "ln2.bias", "query.weight",
                  "key.weight", "value.weight", "proj.weight", "fc1.weight", "fc2.weight")]
    problems = [f"{k} is missing" for k in required if k not in T]
    problems += [f"{origin[k]} has shape {tuple(v.shape)}, expected {shapes[k]}"
                 for k, v in T.items() if k in shapes and tuple(v.shape) != shapes[k]]
    problems += [f"{origin[k]} is not an encoder tensor" for k in T if k not in shapes]
    if problems:
        shown = "; ".join(problems[:6]) + ("; …" if len(problems) > 6 else "")
        raise CheckpointError(
            f"The checkpoint's tensors do not fit one ViT (d_model {cfg.d_model}, "
            f"{cfg.n_layers} layers, d_ff {cfg.d_ff}, patch {cfg.patch_size}; "
            f"a missing one in the neutral names of layouts.py): {shown}.")


def read_configs(folder: Path) -> dict[str, dict]:
    """`config.json` and `preprocessor_config.json` beside the weights, when present."""
    found = {}
    for name in ("config.json", "preprocessor_config.json"):
        file = folder / name
        if not file.is_file():
            continue
        if file.stat().st_size > MAX_CONFIG_BYTES:
            raise CheckpointError(f"{file} is larger than 1 MB: not a model configuration.")
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise CheckpointError(f"{file} is not valid JSON ({err}): fix or remove it.") from None
        if not isinstance(data, dict):
            raise CheckpointError(f"{file} is not a JSON object: fix or remove it.")
        found[name] = data
    return found


def heads_in_file(sd: dict[str, np.ndarray], layout: str) -> int | None:
    """The head count when the weights hold it (Google's query kernel [D, h, d_head])."""
    query = sd.get("Transformer/encoderblock_0/MultiHeadDotProductAttention_1/query/kernel")
    return query.shape[1] if layout == "google" and query is not None and query.ndim == 3 else None


def settle(T: dict[str, np.ndarray], layout: str, configs: dict[str, dict],
           image_size: int | None, file_name: str, containers: tuple[str, ...],
           stripped: tuple[str, ...], weights_heads: int | None = None,
           given_heads: int | None = None) -> tuple[list[Setting], list[str]]:
    """Every EncoderConfig value (plus "family") with its source; and notes for `info`."""
    notes: list[str] = []
    S: list[Setting] = []
    hf = configs.get("config.json", {}) if layout in ("hf-vit", "hf-dinov2") else {}
    timm_cfg = (configs.get("config.json", {}) if layout in ("timm", "google", "torchvision")
                else {})
    pre = configs.get("preprocessor_config.json", {})

    w = T.get("patch.weight")
    if w is None or w.ndim != 4 or w.shape[2] != w.shape[3]:
        raise CheckpointError("the patch embedding weight is missing or not a square conv kernel "
                          f"[d, C, P, P] (got {None if w is None else w.shape}).")
    d, C, P = w.shape[0], w.shape[1], w.shape[2]
    layers = sorted({int(k.split(".")[0]) for k in T if k[0].isdigit()})
    if not layers or layers != list(range(len(layers))):
        raise CheckpointError(f"the encoder layers are not numbered 0 … L−1 (found {layers[:12]}).")
    fc1 = T.get("0.fc1.weight")
    if fc1 is None:
        raise CheckpointError("layer 0 has no feed-forward weight (fc1 / intermediate.dense).")
    S += [Setting("d_model", d, "weights", "patch embedding rows"),
          Setting("channels", C, "weights"), Setting("patch_size", P, "weights"),
          Setting("n_layers", len(layers), "weights"),
          Setting("d_ff", fc1.shape[0], "weights", "fc1 rows")]

    cls, dist, reg = "cls" in T, "dist" in T, T.get("registers")
    n_reg = 0 if reg is None else int(np.prod(reg.shape[:-1]))
    if "pos" not in T:
        raise CheckpointError("this checkpoint has no learned position embedding; Encoder Lens "
                          "loads ViTs with one (pos_embed / position_embeddings).")
    n_pos = int(np.prod(T["pos"].shape[:-1]))
    grid, pos_prefix = position_grid(n_pos, int(cls) + int(dist), n_reg)
    S += [Setting("cls_token", cls, "weights"), Setting("dist_token", dist, "weights"),
          Setting("n_registers", n_reg, "weights"), Setting("position", "learned", "weights"),
          Setting("pos_prefix", pos_prefix, "weights", f"{n_pos} position rows")]

    native = grid * P
    if image_size is None:
        S.append(Setting("image_size", native, "weights", f"{grid}×{grid} position grid"))
    else:
        if image_size % P or image_size <= 0:
            raise CheckpointError(
                f"image_size {image_size} is not a positive multiple of the patch size {P}: "
                f"choose e.g. {max(P, round(image_size / P) * P)}.")
        how = ("Hugging Face's (no antialias)" if layout.startswith("hf")
               else "timm's (antialiased)")
        S.append(Setting("image_size", image_size, "argument",
                         f"position grid resampled bicubically from {grid}×{grid}, as {how}"
                         if image_size != native else ""))

    S += biases_and_norms(T, len(layers))
    S.append(Setting("norm_first", True, "weights", "ViT blocks are pre-norm"))
    timm_heads = timm_cfg.get("num_heads", section(timm_cfg, "model_args").get("num_heads"))
    S.append(heads_setting(d, hf.get("num_attention_heads", timm_heads), weights_heads,
                           n_layers=len(layers), layout=layout, given=given_heads, channels=C))
    S.append(eps_setting(layout, hf))
    S.append(activation_setting(hf, layout))
    arch = timm_cfg.get("architecture")
    hint = f"{file_name} {arch}" if isinstance(arch, str) else file_name
    family = family_name(layout, hf, hint, dist, n_reg, containers, stripped)
    if isinstance(arch, str):
        family += f": {arch}"
    S.append(Setting("family", family, "inferred"))
    mean, std = normalisation(layout, family, section(timm_cfg, "pretrained_cfg"), pre, C)
    S += [mean, std]
    if mean.source != "config":
        notes.append(f"the pixel normalisation is guessed ({mean.why}): mean {mean.value}, "
                     f"std {std.value}. If the model was trained with others, give them in a "
                     f"config.json beside the file: {normalisation_example(C)}.")
    missing_b = [i for i in layers for n in ("fc1", "fc2") if f"{i}.{n}.bias" not in T]
    if missing_b:
        notes.append(f"{len(missing_b)} FFN biases are absent in the file and set to zero.")
    return S, notes


def section(config: dict, key: str) -> dict:
    """config[key] when it is a JSON object, else {} (a malformed section is ignored)."""
    value = config.get(key)
    return value if isinstance(value, dict) else {}


def position_grid(n_pos: int, n_cls_dist: int, n_reg: int) -> tuple[int, bool]:
    """(grid side, pos_prefix) from the number of position rows, or ParamsError.

    pos_prefix: the cls/dist tokens have rows (timm's default); else only the patches do (timm
    `no_embed_class=True`). Registers never have a row.
    """
    def side(rows: int) -> int:
        g = math.isqrt(max(rows, 0))
        return g if g > 0 and g * g == rows else 0

    if side(n_pos - n_cls_dist):
        return side(n_pos - n_cls_dist), True
    if n_cls_dist and side(n_pos):
        return side(n_pos), False
    hint = (" (timm with reg_tokens and no_embed_class=False gives registers a position row, "
            "which Encoder Lens does not model)") if n_reg else ""
    raise CheckpointError(f"{n_pos} position rows do not form a square patch grid after the "
                      f"{n_cls_dist} prefix row(s){hint}.")


def biases_and_norms(T: dict[str, np.ndarray], n_layers: int) -> list[Setting]:
    """patch/qkv/proj bias, LayerScale, final norm: on when every layer has the tensor."""
    def every(name: str) -> bool:
        have = [f"{i}.{name}" in T for i in range(n_layers)]
        if any(have) and not all(have):
            raise CheckpointError(f"only some layers have {name}: the checkpoint is inconsistent.")
        return all(have)

    qkv = [every(f"{p}.bias") for p in ("query", "key", "value")]
    if any(qkv) and not all(qkv):
        raise CheckpointError("only some of the query / key / value biases are present; Encoder "
                          "Lens needs all three or none.")
    return [Setting("patch_bias", "patch.bias" in T, "weights"),
            Setting("qkv_bias", all(qkv), "weights"),
            Setting("proj_bias", every("proj.bias"), "weights"),
            Setting("layer_scale", every("ls1") and every("ls2"), "weights"),
            Setting("final_norm", "norm.weight" in T, "weights")]


HEADS_OPTIONS = ("scripts/app --checkpoint FILE --n-heads H, python -m encoder_core IMAGE "
                 "--checkpoint FILE --n-heads H, or load_checkpoint(path, n_heads=H)")
"""Where a head count can be given, as the refusals name them."""


def config_example(d: int, channels: int) -> str:
    """A config.json for a file that does not say its heads: `H` in place of the head count,
    with words saying it is the model's own (a number written here would be copied as is, and a
    wrong one loads without a word: the heads split d_model differently), and the pixel
    normalisation timm's way, one number per channel — MNIST's for one channel, ImageNet's for
    three. Copied with the H left in, it is not JSON: the loader refuses it."""
    mean, std, whose = (([0.485, 0.456, 0.406], [0.229, 0.224, 0.225], "ImageNet's")
                        if channels == 3 else
                        ([0.1307] * channels, [0.3081] * channels, "MNIST's"))
    return ('{"num_heads": H, "pretrained_cfg": ' + json.dumps({"mean": mean, "std": std})
            + f"}} (H: the number of heads the model was built with, a divisor of d_model {d}"
            f" — not a guess; {whose} mean / std here: one number per channel, the file has "
            f"{channels})")


def normalisation_example(channels: int) -> str:
    """timm's pretrained_cfg in a config.json, one number per channel (MNIST's for one
    channel, ImageNet's for three)."""
    mean, std = (([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]) if channels == 3
                 else ([0.1307] * channels, [0.3081] * channels))
    return json.dumps({"pretrained_cfg": {"mean": mean, "std": std}})


def heads_setting(d: int, from_config: object, from_weights: int | None = None,
                  n_layers: int = 0, layout: str = "timm", given: int | None = None,
                  channels: int = 3) -> Setting:
    """n_heads: the argument, the weights (Google's kernels), config.json, the standard size by
    width and depth (STANDARD_HEADS); else d_head = 64 for timm / Hugging Face files, and for a
    torchvision file (which never says) a CheckpointError asking for the count."""
    if given is not None:
        if type(given) is not int or given <= 0 or d % given:
            raise CheckpointError(f"n_heads {given!r} does not divide d_model {d}: give a "
                                  "divisor of it.")
        return Setting("n_heads", given, "argument")
    if from_weights is not None and from_weights > 0 and d % from_weights == 0:
        return Setting("n_heads", from_weights, "weights", "query kernel [D, h, d_head]")
    if from_config is not None:
        if type(from_config) is not int or from_config <= 0 or d % from_config:
            raise CheckpointError(
                f"config.json gives {from_config!r} heads for d_model {d}: fix it.")
        return Setting("n_heads", from_config, "config")
    if (d, n_layers) in STANDARD_HEADS:
        size, h = STANDARD_HEADS[(d, n_layers)]
        return Setting("n_heads", h, "inferred",
                       f"the standard ViT-{size}: d_model {d}, {n_layers} layers, {h} heads")
    if layout == "torchvision":
        raise CheckpointError(
            f"A torchvision ViT file does not say its number of heads, and d_model {d} with "
            f"{n_layers} layers is not one of its standard sizes (B/16, B/32: 768 × 12; L/16, "
            "L/32: 1024 × 24; H/14: 1280 × 32): give the head count — "
            f"{HEADS_OPTIONS} — or put a config.json beside the file that gives it, with the "
            f"pixel normalisation the model was trained on: {config_example(d, channels)}.")
    if d % 64:
        raise CheckpointError(
            f"the number of heads is not in the weights and d_model {d} is not a multiple of "
            f"64 (the usual d_head): give it — {HEADS_OPTIONS} — or put a config.json beside "
            "the checkpoint with num_heads (a Hugging Face folder: num_attention_heads), e.g. "
            f"{config_example(d, channels)}.")
    return Setting("n_heads", d // 64, "inferred", "d_head = 64 (the ViT convention)")


def eps_setting(layout: str, hf: dict) -> Setting:
    eps = hf.get("layer_norm_eps")
    if eps is not None:
        if not isinstance(eps, float | int) or not eps > 0:
            raise CheckpointError(f"config.json gives layer_norm_eps {eps!r}: fix it.")
        return Setting("ln_eps", float(eps), "config")
    return Setting("ln_eps", FAMILY_EPS[layout], "default",
                   {"timm": "timm ViT", "hf-vit": "ViTConfig", "hf-dinov2": "Dinov2Config",
                    "google": "Flax LayerNorm", "torchvision": "torchvision ViT"}[layout])


def activation_setting(hf: dict, layout: str) -> Setting:
    act = hf.get("hidden_act")
    if act is None and layout == "google":
        return Setting("activation", "gelu", "default", "exact (erf) GELU, as timm runs these "
                       "weights (the original Flax code used the tanh form)")
    if act is None:
        return Setting("activation", "gelu", "default", "exact (erf) GELU, as timm and HF")
    if not isinstance(act, str) or act not in HF_ACTIVATIONS:
        raise CheckpointError(f"config.json asks for hidden_act {act!r}; Encoder Lens implements "
                          f"{', '.join(HF_ACTIVATIONS)}.")
    return Setting("activation", HF_ACTIVATIONS[act], "config", f"hidden_act {act!r}")


def family_name(layout: str, hf: dict, hint: str, dist: bool, n_reg: int,
                containers: tuple[str, ...], stripped: tuple[str, ...]) -> str:
    """A readable family from structural marks, the config and (last) the file name and
    timm architecture in `hint`."""
    name = hint.lower()
    if layout == "google":
        return "Google ViT (.npz)"
    if layout == "torchvision":
        return "torchvision ViT"
    if layout == "hf-dinov2":
        return "Hugging Face DINOv2" + (" with registers" if n_reg else "")
    if layout == "hf-vit":
        deit = dist or hf.get("model_type") == "deit" or "deit" in name
        return "Hugging Face DeiT" if deit else "Hugging Face ViT"
    if dist:
        return "DeiT distilled (timm layout)"
    if {"teacher", "student"} & set(containers) or "backbone." in stripped or "dino" in name:
        return "DINO (timm layout)"
    if "deit" in name:
        return "DeiT (timm layout)"
    return "timm ViT" + (" with registers" if n_reg else "")


def normalisation(layout: str, family: str, pretrained: dict, pre: dict, C: int
                  ) -> list[Setting]:
    """pixel_mean / pixel_std: the config's, else the family's (ImageNet or 0.5)."""
    for cfg, mean_key, std_key, file in ((pretrained, "mean", "std", "config.json"),
                                         (pre, "image_mean", "image_std",
                                          "preprocessor_config.json")):
        if mean_key in cfg and std_key in cfg:
            mean, std = cfg[mean_key], cfg[std_key]
            ok = all(isinstance(v, list) and len(v) == C and
                     all(isinstance(x, float | int) for x in v) for v in (mean, std))
            if not ok:
                raise CheckpointError(f"{file} gives {mean_key} {mean!r} / {std_key} {std!r}: "
                                  f"need {C} numbers each.")
            return [Setting("pixel_mean", tuple(map(float, mean)), "config", file),
                    Setting("pixel_std", tuple(map(float, std)), "config", file)]
    imagenet = any(k in family for k in ("DINO", "DeiT", "torchvision"))
    mean, std = (IMAGENET_MEAN, IMAGENET_STD) if imagenet else (HALF, HALF)
    why = ("ImageNet mean/std (DINO, DeiT, DINOv2, torchvision)" if imagenet
           else "0.5/0.5 (Google / timm augreg / HF ViT); check if your model differs")
    if C != 3:
        mean, std, why = (0.5,) * C, (0.5,) * C, f"0.5 for {C} channel(s)"
    return [Setting("pixel_mean", mean, "inferred", why), Setting("pixel_std", std, "inferred")]


def to_params(T: dict[str, np.ndarray], cfg: EncoderConfig, antialias: bool = True
              ) -> EncoderParams:
    """The neutral tensors in our conventions (shapes checked before, by `check_shapes`).

    antialias: how a position grid is resampled to cfg.image_size (True: timm; False: HF).
    """
    d, P, C = cfg.d_model, cfg.patch_size, cfg.channels

    def vec(name: str) -> np.ndarray | None:
        return None if name not in T else T[name].reshape(-1)

    def lin(name: str) -> np.ndarray:
        return T[name].T  # PyTorch [out, in] -> our [in, out]

    layers = []
    for i in range(cfg.n_layers):
        fc1_b, fc2_b = vec(f"{i}.fc1.bias"), vec(f"{i}.fc2.bias")
        layers.append(LayerParams(
            W_Q=lin(f"{i}.query.weight"), W_K=lin(f"{i}.key.weight"),
            W_V=lin(f"{i}.value.weight"), W_O=lin(f"{i}.proj.weight"),
            gamma_1=vec(f"{i}.ln1.weight"), beta_1=vec(f"{i}.ln1.bias"),
            W_1=lin(f"{i}.fc1.weight"),
            b_1=np.zeros(cfg.d_ff, np.float32) if fc1_b is None else fc1_b,
            W_2=lin(f"{i}.fc2.weight"), b_2=np.zeros(d, np.float32) if fc2_b is None else fc2_b,
            gamma_2=vec(f"{i}.ln2.weight"), beta_2=vec(f"{i}.ln2.bias"),
            b_Q=vec(f"{i}.query.bias"), b_K=vec(f"{i}.key.bias"), b_V=vec(f"{i}.value.bias"),
            b_O=vec(f"{i}.proj.bias"), ls_1=vec(f"{i}.ls1"), ls_2=vec(f"{i}.ls2")))
    pos = T["pos"].reshape(-1, d)
    n_pos_prefix = (int(cfg.cls_token) + int(cfg.dist_token)) if cfg.pos_prefix else 0
    pos = resample_pos_embed(pos, n_pos_prefix, cfg.grid_size, antialias)
    # conv weight [d, C, P1, P2] -> [P1, P2, C, d] -> [P·P·C, d]: rows in our (p1, p2, c) order
    W_E = T["patch.weight"].transpose(2, 3, 1, 0).reshape(P * P * C, d)
    return EncoderParams(
        W_E=W_E, layers=tuple(layers), b_E=vec("patch.bias"),
        cls=None if "cls" not in T else T["cls"].reshape(1, d),
        dist=None if "dist" not in T else T["dist"].reshape(1, d),
        registers=None if "registers" not in T else T["registers"].reshape(-1, d),
        pos_embed=pos, norm_gamma=vec("norm.weight"), norm_beta=vec("norm.bias"))


POOL_WORDS = {"token": "the [CLS] row",
              "token_dist": "the [CLS] and [DIST] rows, two heads averaged",
              "avg": "the mean of the patch rows", "token_avg": "[CLS ‖ mean of the patch rows]"}


def head_pool(H: dict[str, np.ndarray], cfg: EncoderConfig, layout: str, config: dict) -> str:
    """How the family pools the output for its head (see `params.POOLS`)."""
    if "head_dist.weight" in H:
        return "token_dist"  # DeiT distilled: timm head + head_dist, HF cls_ + distillation_
    if layout == "hf-dinov2":
        return "token_avg"  # Dinov2ForImageClassification: [CLS ‖ mean of the patch tokens]
    pool = config.get("global_pool", section(config, "model_args").get("global_pool"))
    if "fc_norm.weight" in H or pool == "avg" or not cfg.cls_token:
        return "avg"
    return "token"


def head_params(H: dict[str, np.ndarray], cfg: EncoderConfig, layout: str, config: dict,
                origin: dict[str, str]) -> tuple[HeadParams | None, str]:
    """The classification head in our conventions (X · W), and its description; (None, "")
    when the file has none. Every shape is checked: CheckpointError naming the file's keys."""
    if not H:
        return None, ""
    if "head.weight" not in H:
        parts = ", ".join(sorted(origin[k] for k in H))
        raise CheckpointError(f"the checkpoint has head parts ({parts}) but no classification "
                              "head weight: save the whole model.")
    pool = head_pool(H, cfg, layout, config)
    d = cfg.d_model
    d_pool = 2 * d if pool == "token_avg" else d
    w = H["head.weight"]
    n = w.shape[0] if w.ndim == 2 else -1
    d_in = H["pre_logits.weight"].shape[0] if "pre_logits.weight" in H else d_pool
    want = {"head.weight": (n, d_in), "head.bias": (n,), "head_dist.weight": (n, d_in),
            "head_dist.bias": (n,), "fc_norm.weight": (d_pool,), "fc_norm.bias": (d_pool,),
            "pre_logits.weight": (d_in, d_pool), "pre_logits.bias": (d_in,)}
    problems = [f"{origin[k]} has shape {tuple(v.shape)}, expected {want[k]}"
                for k, v in H.items() if k in want and tuple(v.shape) != want[k]]
    problems += [f"{origin[k]} is not a head tensor" for k in H if k not in want]
    problems += [f"{origin[f'{part}.weight']} has no bias ({part}.bias)"
                 for part in HEAD_PARTS if f"{part}.weight" in H and f"{part}.bias" not in H]
    problems += [f"{origin[f'{part}.bias']} has no weight" for part in HEAD_PARTS
                 if f"{part}.bias" in H and f"{part}.weight" not in H]
    if n < 1:
        problems.insert(0, f"{origin['head.weight']} has shape {tuple(w.shape)}: a classification "
                           "head's weight is [n_classes, d_in]")
    if problems:
        raise CheckpointError("The checkpoint's classification head does not fit its encoder "
                              f"(d_model {d}, pooling {POOL_WORDS[pool]}): "
                              + "; ".join(problems[:6]) + ".")

    def t(name: str) -> np.ndarray | None:
        return None if name not in H else (H[name].T if H[name].ndim == 2 else H[name])

    head = HeadParams(pool=pool, W_head=t("head.weight"), b_head=t("head.bias"),
                      W_dist=t("head_dist.weight"), b_dist=t("head_dist.bias"),
                      fc_norm_gamma=t("fc_norm.weight"), fc_norm_beta=t("fc_norm.bias"),
                      W_pre=t("pre_logits.weight"), b_pre=t("pre_logits.bias"))
    problems = head_problems(head, cfg)
    if problems:
        raise CheckpointError("The checkpoint's classification head does not fit its encoder: "
                              + "; ".join(problems) + ".")
    parts = [f"{n} classes from {POOL_WORDS[pool]}"]
    if head.fc_norm_gamma is not None:
        parts.append("LayerNorm (fc_norm)")
    if head.W_pre is not None:
        parts.append(f"pre-logits {d_pool} → {d_in} + tanh")
    return head, ", then ".join(parts) + f" ({origin['head.weight']})"


def count_params(params: EncoderParams) -> int:
    """Parameters of the encoder (every array of `params`)."""
    arrays = [params.W_E, params.b_E, params.cls, params.dist, params.registers,
              params.pos_embed, params.norm_gamma, params.norm_beta]
    for lp in params.layers:
        arrays += list(vars(lp).values())
    return sum(a.size for a in arrays if a is not None)


__all__ = ["CheckpointInfo", "Setting", "load_checkpoint"]
