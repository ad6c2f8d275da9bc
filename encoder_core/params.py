"""The trainable parameters: W_E and, per layer, attention, Add & Norm and FFN weights.

Every weight is drawn from its own random stream keyed by (seed, layer, name), so changing
n_layers leaves the existing layers untouched and changing n_heads changes no weight at all
(all heads of a layer live side by side in one [d_model, d_model] matrix).
Saved to `.npz` under the keys `params/W_E` and `params/layer{l}/{name}`, never with pickle.

The Vision Transformer variants add optional parameters, `None` when the config
leaves their variant off (so the note's files keep exactly their key set): on the encoder
`b_E`, `cls`, `dist`, `registers`, `pos_embed`, `norm_gamma`, `norm_beta` (keys
`params/{name}`), on each layer `b_Q`, `b_K`, `b_V`, `b_O`, `ls_1`, `ls_2` (keys
`params/layer{l}/{name}`). When the variant is on they are required and shape-checked; when it
is off, giving them is an error (a weight is never silently ignored).

A model that predicts classes (a checkpoint's classification head, the shapes model's) also has
`head`, a `HeadParams`: how the output rows are pooled and the weights that turn the
pooled row into logits (`encoder_core.pipeline.head.predict`). Keys `params/head/{name}`, the
pooling as a 0-d string `params/head/pool`. Random weights have none.
"""

from __future__ import annotations

import sys
import zlib
from dataclasses import dataclass, fields
from os import PathLike
from typing import IO

import numpy as np

from .config import EncoderConfig

LAYER_WEIGHTS = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")
LAYER_VECTORS = ("gamma_1", "beta_1", "b_1", "b_2", "gamma_2", "beta_2")
LAYER_OPTIONAL = ("b_Q", "b_K", "b_V", "b_O", "ls_1", "ls_2")  # None unless the variant is on
ENCODER_OPTIONAL = ("b_E", "cls", "dist", "registers", "pos_embed", "norm_gamma", "norm_beta")
OPTIONAL_SWITCH = {
    "b_E": "patch_bias", "cls": "cls_token", "dist": "dist_token", "registers": "n_registers",
    "pos_embed": "position='learned'", "norm_gamma": "final_norm", "norm_beta": "final_norm",
    "b_Q": "qkv_bias", "b_K": "qkv_bias", "b_V": "qkv_bias", "b_O": "proj_bias",
    "ls_1": "layer_scale", "ls_2": "layer_scale",
}  # fmt: skip
NORMAL_STD = 0.02  # learned cls / dist / registers / pos_embed ~ N(0, 0.02²), as timm
LAYER_SCALE_INIT = 0.1  # ls_1, ls_2 of random weights (CaiT's 0.1; timm's default is 1e-5)


class ParamsError(ValueError):
    """Parameters that do not fit the configuration, or a file that holds none."""


POOLS = ("token", "token_dist", "avg", "token_avg")
"""How a head reads the encoder's output rows (S = seq_len, n = n_prefix, d = d_model):
token       the [CLS] row, output[0]                                  (timm, HF ViT, torchvision)
token_dist  output[0]·W_head and output[1]·W_dist, averaged           (DeiT distilled, eval)
avg         the mean of the patch rows, output[n:]                    (timm global_pool="avg")
token_avg   [output[0] ‖ mean of output[n:]], 2·d wide                (HF DINOv2's classifier)"""
HEAD_ARRAYS = ("W_head", "b_head", "W_dist", "b_dist", "fc_norm_gamma", "fc_norm_beta", "W_pre",
               "b_pre")


@dataclass(frozen=True)
class HeadParams:
    """A classification head: pooled = pool(output); with fc_norm, pooled = LN(pooled); with
    pre-logits, pooled = tanh(pooled · W_pre + b_pre); logits = pooled · W_head + b_head."""

    pool: str  # one of POOLS
    W_head: np.ndarray  # [d_in, n_classes]; d_in = d_model (2·d_model: token_avg; d_rep: W_pre)
    b_head: np.ndarray  # [n_classes]
    W_dist: np.ndarray | None = None  # [d_in, n_classes] DeiT's [DIST]-row head (token_dist)
    b_dist: np.ndarray | None = None  # [n_classes]
    fc_norm_gamma: np.ndarray | None = None  # [d_pool] LayerNorm of the pooled row (timm fc_norm)
    fc_norm_beta: np.ndarray | None = None  # [d_pool]
    W_pre: np.ndarray | None = None  # [d_pool, d_rep] pre-logits, then tanh (torchvision, Google)
    b_pre: np.ndarray | None = None  # [d_rep]

    @property
    def n_classes(self) -> int:
        return int(self.W_head.shape[-1])


def head_problems(head: HeadParams, cfg: EncoderConfig) -> list[str]:
    """What does not fit: the pooling against cfg's prefix tokens, every shape, the pairs that
    go together. [] when the head fits."""
    if head.pool not in POOLS:
        return [f"head pooling {head.pool!r} is not one of {', '.join(POOLS)}"]
    d = cfg.d_model
    problems = []
    if head.pool != "avg" and not cfg.cls_token:
        problems.append(f"head pooling {head.pool!r} reads the [CLS] row, which this model lacks")
    if head.pool == "token_dist" and not cfg.dist_token:
        problems.append("a second (distillation) head needs the distillation token")
    pairs = (("W_dist", "b_dist"), ("fc_norm_gamma", "fc_norm_beta"), ("W_pre", "b_pre"))
    for a, b in pairs:
        if (getattr(head, a) is None) != (getattr(head, b) is None):
            problems.append(f"head {a} and {b} go together: one is missing")
    if (head.W_dist is not None) != (head.pool == "token_dist"):
        problems.append("W_dist is the head of the [DIST] row: it comes with pooling token_dist "
                        "and only with it")
    d_pool = 2 * d if head.pool == "token_avg" else d
    W_head = np.asarray(head.W_head)
    n = W_head.shape[-1] if W_head.ndim == 2 else 0
    d_in = d_pool if head.W_pre is None else np.shape(head.W_pre)[-1]
    want = {"W_head": (d_in, n), "b_head": (n,), "W_dist": (d_in, n), "b_dist": (n,),
            "fc_norm_gamma": (d_pool,), "fc_norm_beta": (d_pool,), "W_pre": (d_pool, d_in),
            "b_pre": (d_in,)}
    if W_head.ndim != 2 or n < 1:
        problems.append(f"W_head has shape {W_head.shape}: it must be [d_in, n_classes], "
                        "n_classes ≥ 1")
    for name in HEAD_ARRAYS:
        a = getattr(head, name)
        if a is not None and np.shape(a) != want[name]:
            problems.append(f"head {name} has shape {np.shape(a)}, expected {want[name]}")
    return problems


def freeze_head(head: HeadParams) -> HeadParams:
    """The head with every array a float32, C-contiguous, read-only private copy."""
    def ro(a: np.ndarray | None) -> np.ndarray | None:
        if a is None:
            return None
        a = np.array(a, dtype=np.float32, order="C")
        a.flags.writeable = False
        return a

    return HeadParams(pool=head.pool, **{name: ro(getattr(head, name)) for name in HEAD_ARRAYS})


@dataclass(frozen=True)
class LayerParams:
    W_Q: np.ndarray  # [d_model, d_model] queries, head h = columns h*d_head:(h+1)*d_head
    W_K: np.ndarray  # [d_model, d_model] keys
    W_V: np.ndarray  # [d_model, d_model] values
    W_O: np.ndarray  # [d_model, d_model] output projection of the concatenated heads
    gamma_1: np.ndarray  # [d_model] scale of the first layer norm
    beta_1: np.ndarray  # [d_model] shift of the first layer norm
    W_1: np.ndarray  # [d_model, d_ff] FFN expansion
    b_1: np.ndarray  # [d_ff]
    W_2: np.ndarray  # [d_ff, d_model] FFN projection back
    b_2: np.ndarray  # [d_model]
    gamma_2: np.ndarray  # [d_model] scale of the second layer norm
    beta_2: np.ndarray  # [d_model] shift of the second layer norm
    # --- optional: None unless the config's variant is on ---------------------
    b_Q: np.ndarray | None = None  # [d_model] query bias (qkv_bias)
    b_K: np.ndarray | None = None  # [d_model] key bias (qkv_bias)
    b_V: np.ndarray | None = None  # [d_model] value bias (qkv_bias)
    b_O: np.ndarray | None = None  # [d_model] bias of the output projection (proj_bias)
    ls_1: np.ndarray | None = None  # [d_model] LayerScale of the attention output (layer_scale)
    ls_2: np.ndarray | None = None  # [d_model] LayerScale of the FFN output (layer_scale)


@dataclass(frozen=True)
class EncoderParams:
    W_E: np.ndarray  # [P·P·C, d_model] input embedding, rows in our patch order (p1, p2, c)
    layers: tuple[LayerParams, ...]  # one per encoder layer
    # --- optional: None unless the config's variant is on ---------------------
    b_E: np.ndarray | None = None  # [d_model] patch-embedding bias (patch_bias)
    cls: np.ndarray | None = None  # [1, d_model] the [CLS] token (cls_token)
    dist: np.ndarray | None = None  # [1, d_model] DeiT's distillation token (dist_token)
    registers: np.ndarray | None = None  # [n_registers, d_model] DINOv2's registers
    pos_embed: np.ndarray | None = None  # [n_pos, d_model] learned positions (position="learned")
    norm_gamma: np.ndarray | None = None  # [d_model] scale of the final LayerNorm (final_norm)
    norm_beta: np.ndarray | None = None  # [d_model] shift of the final LayerNorm (final_norm)
    head: HeadParams | None = None  # the classification head, None without one


def encoder_optional_names(cfg: EncoderConfig) -> tuple[str, ...]:
    """The optional encoder-level parameters `cfg` needs (the others must be None)."""
    on = {"b_E": cfg.patch_bias, "cls": cfg.cls_token, "dist": cfg.dist_token,
          "registers": cfg.n_registers > 0, "pos_embed": cfg.position == "learned",
          "norm_gamma": cfg.final_norm, "norm_beta": cfg.final_norm}
    return tuple(name for name in ENCODER_OPTIONAL if on[name])


def layer_optional_names(cfg: EncoderConfig) -> tuple[str, ...]:
    """The optional per-layer parameters `cfg` needs (the others must be None)."""
    on = {"b_Q": cfg.qkv_bias, "b_K": cfg.qkv_bias, "b_V": cfg.qkv_bias, "b_O": cfg.proj_bias,
          "ls_1": cfg.layer_scale, "ls_2": cfg.layer_scale}
    return tuple(name for name in LAYER_OPTIONAL if on[name])


def expected_shapes(cfg: EncoderConfig) -> dict[str, tuple[int, ...]]:
    """The shape of every parameter `cfg` needs, by name (layer fields without the layer).

    The optional parameters appear only when their variant is on.
    """
    d, d_ff = cfg.d_model, cfg.d_ff
    shapes = {
        "W_E": (cfg.patch_dim, d),
        "W_Q": (d, d), "W_K": (d, d), "W_V": (d, d), "W_O": (d, d),
        "gamma_1": (d,), "beta_1": (d,),
        "W_1": (d, d_ff), "b_1": (d_ff,), "W_2": (d_ff, d), "b_2": (d,),
        "gamma_2": (d,), "beta_2": (d,),
    }  # fmt: skip
    optional = {
        "b_E": (d,), "cls": (1, d), "dist": (1, d), "registers": (cfg.n_registers, d),
        "pos_embed": (cfg.n_pos, d), "norm_gamma": (d,), "norm_beta": (d,),
        "b_Q": (d,), "b_K": (d,), "b_V": (d,), "b_O": (d,), "ls_1": (d,), "ls_2": (d,),
    }  # fmt: skip
    for name in encoder_optional_names(cfg) + layer_optional_names(cfg):
        shapes[name] = optional[name]
    return shapes


def glorot_uniform(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """Glorot/Xavier uniform U(−a, a), a = √(6 / (fan_in + fan_out)). Returns [fan_in, fan_out].

    The numbers are those of `(2 * rng.random(shape, dtype=np.float32) - 1) * a`, bit for bit,
    drawn in fewer passes (`_uniform_float32_times_2`), `DRAW_CHUNK` values at a time: the
    temporaries stay in the CPU's cache and are reused, instead of two fresh arrays the size of
    the weight (a d_model 1024 weight: 16 MB each, most of their cost in page faults)."""
    limit = np.float32(np.sqrt(6.0 / (fan_in + fan_out)))
    if not _fast_uniform(rng):
        return (2 * rng.random((fan_in, fan_out), dtype=np.float32) - 1) * limit
    w = np.empty((fan_in, fan_out), dtype=np.float32)
    flat = w.reshape(-1)
    for start in range(0, flat.size, DRAW_CHUNK):
        part = flat[start:start + DRAW_CHUNK]
        _uniform_float32_times_2(rng, part)  # 2u, u ~ U[0, 1)
        part -= 1
        part *= limit
    return w


DRAW_CHUNK = 1 << 16  # values per pass: even (whole 64-bit outputs), 256 kB of float32


def _fast_uniform(rng: np.random.Generator) -> bool:
    """True when `_uniform_float32_times_2` can read the generator's raw outputs."""
    return isinstance(rng.bit_generator, np.random.PCG64) and sys.byteorder == "little"


def _uniform_float32_times_2(rng: np.random.Generator, out: np.ndarray) -> None:
    """Fill the 1-D float32 `out` with 2·u for u = the next `rng.random(out.size,
    dtype=np.float32)`, the same numbers, about 3× faster (for `_fast_uniform` generators).

    NumPy draws a float32 as (next 32 random bits >> 8) · 2⁻²⁴, and PCG64 hands out each 64-bit
    output as two 32-bit halves, low half first; so the raw 64-bit outputs, viewed as uint32
    (little-endian), shifted and scaled, are that sequence. An odd size uses half of the last
    output, as NumPy does at the end of a draw."""
    n = out.size
    bits = rng.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]  # next_uint32 × n
    bits >>= 8  # 24 random bits
    out[...] = bits  # exact in float32
    out *= np.float32(2.0**-23)  # exact: 2 · bits · 2⁻²⁴


def weight_stream(seed: int, layer: int, name: str) -> np.random.Generator:
    """The random stream of one weight, keyed by (seed, layer, name); layer 0 is W_E."""
    return np.random.default_rng([seed, layer, zlib.crc32(name.encode())])


def normal_init(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """N(0, 0.02²) in float32, timm's init of learned tokens and positions. Returns `shape`."""
    return rng.standard_normal(shape, dtype=np.float32) * np.float32(NORMAL_STD)


def read_only(a: np.ndarray) -> np.ndarray:
    """Make `a` read-only, in place, and the arrays it is a view of, so that no other name can
    change its values either; returns `a`."""
    view = a
    while isinstance(view, np.ndarray):
        view.flags.writeable = False
        view = view.base
    return a


def init_params(cfg: EncoderConfig) -> EncoderParams:
    """Seeded parameters: Glorot-uniform weights, γ = 1, β = 0, zero biases; every array
    float32, C-contiguous and read-only (fresh arrays: no copy needed to freeze them).

    The variants' parameters, when on: cls, dist, registers and pos_embed ~ N(0, 0.02²) (each
    from its own stream, layer 0 like W_E), biases b_E, b_Q, b_K, b_V, b_O zero, the final norm
    γ = 1, β = 0, LayerScale ls_1 = ls_2 = 0.1. A variant switched on or off changes no other
    parameter.
    """
    shapes = expected_shapes(cfg)
    W_E = glorot_uniform(weight_stream(cfg.seed, 0, "W_E"), *shapes["W_E"])
    layers = []
    layer_optional = layer_optional_names(cfg)
    for layer in range(1, cfg.n_layers + 1):
        values = {name: glorot_uniform(weight_stream(cfg.seed, layer, name), *shapes[name])
                  for name in LAYER_WEIGHTS}
        for name in LAYER_VECTORS + layer_optional:
            fill = {"gamma": 1.0, "ls": LAYER_SCALE_INIT}.get(name.split("_")[0], 0.0)
            values[name] = np.full(shapes[name], fill, dtype=np.float32)
        for a in values.values():
            read_only(a)
        layers.append(LayerParams(**values))
    extra = {}
    for name in encoder_optional_names(cfg):
        if name in ("cls", "dist", "registers", "pos_embed"):
            extra[name] = normal_init(weight_stream(cfg.seed, 0, name), shapes[name])
        else:
            fill = 1.0 if name == "norm_gamma" else 0.0
            extra[name] = np.full(shapes[name], fill, dtype=np.float32)
    for a in (W_E, *extra.values()):
        read_only(a)
    return EncoderParams(W_E=W_E, layers=tuple(layers), **extra)


def freeze_params(params: EncoderParams) -> EncoderParams:
    """Make every array float32, C-contiguous and read-only (safe to share across callers)."""
    def ro(a: np.ndarray | None) -> np.ndarray | None:
        if a is None:  # an optional parameter whose variant is off
            return None
        a = np.array(a, dtype=np.float32, order="C")  # a private copy the caller cannot change
        a.flags.writeable = False
        return a

    layers = tuple(LayerParams(**{f.name: ro(getattr(lp, f.name)) for f in fields(LayerParams)})
                   for lp in params.layers)
    top = {f.name: ro(getattr(params, f.name)) for f in fields(EncoderParams)
           if f.name not in ("layers", "head")}
    head = None if params.head is None else freeze_head(params.head)
    return EncoderParams(layers=layers, head=head, **top)


def check_shapes(params: EncoderParams, cfg: EncoderConfig) -> dict[str, np.ndarray]:
    """Check every shape of `params` against `cfg`, leaving dtypes and arrays as they are (the
    trainer's writable float32 or float64 weights); returns `params_to_arrays(params)`.

    Raises ParamsError naming each parameter that does not fit.
    """
    if len(params.layers) != cfg.n_layers:
        raise ParamsError(f"These parameters have {len(params.layers)} layers; "
                          f"the configuration has n_layers = {cfg.n_layers}.")
    arrays = params_to_arrays(params)
    params_from_arrays(arrays, cfg, freeze=False)  # raises ParamsError on a shape mismatch
    return arrays


def check_params(params: EncoderParams, cfg: EncoderConfig) -> EncoderParams:
    """`params` as float32 read-only arrays, after checking every shape against `cfg`.

    Returns the same object when it already is frozen float32 (the usual case: no copy).
    Raises ParamsError naming each parameter that does not fit.
    """
    arrays = check_shapes(params, cfg)
    if all(a.dtype == np.float32 and not a.flags.writeable for k, a in arrays.items()
           if k != HEAD_POOL_KEY):
        return params
    return freeze_params(params)


def params_to_arrays(params: EncoderParams) -> dict[str, np.ndarray]:
    """The flat `.npz` key scheme: `params/W_E`, `params/layer{l}/{name}` (l from 0), and the
    optional ones that are set: `params/{b_E, cls, …}`, `params/layer{l}/{b_Q, …}`."""
    arrays = {"params/W_E": params.W_E}
    for l, lp in enumerate(params.layers):
        for f in fields(LayerParams):
            if getattr(lp, f.name) is not None:
                arrays[f"params/layer{l}/{f.name}"] = getattr(lp, f.name)
    for name in ENCODER_OPTIONAL:
        if getattr(params, name) is not None:
            arrays[f"params/{name}"] = getattr(params, name)
    if params.head is not None:
        arrays[HEAD_POOL_KEY] = np.array(params.head.pool)  # 0-d unicode
        for name in HEAD_ARRAYS:
            if getattr(params.head, name) is not None:
                arrays[f"params/head/{name}"] = getattr(params.head, name)
    return arrays


HEAD_POOL_KEY = "params/head/pool"


def head_from_arrays(arrays: dict[str, np.ndarray] | np.lib.npyio.NpzFile,
                     cfg: EncoderConfig) -> HeadParams | None:
    """The head under `params/head/…`, checked against cfg; None when there is none."""
    if HEAD_POOL_KEY not in arrays:
        if any(k.startswith("params/head/") for k in arrays):
            raise ParamsError(f"These parameters have head weights but no {HEAD_POOL_KEY}.")
        return None
    pool = np.asarray(arrays[HEAD_POOL_KEY])
    if pool.ndim != 0 or pool.dtype.kind != "U":
        raise ParamsError(f"{HEAD_POOL_KEY} must be a 0-d string, got {pool.dtype} {pool.shape}.")
    if "params/head/W_head" not in arrays or "params/head/b_head" not in arrays:
        raise ParamsError("These parameters have a head without params/head/W_head and b_head.")
    head = HeadParams(pool=str(pool), **{
        name: (np.asarray(arrays[f"params/head/{name}"]) if f"params/head/{name}" in arrays
               else None) for name in HEAD_ARRAYS})
    problems = head_problems(head, cfg)
    if problems:
        raise ParamsError(f"The head does not fit the configuration: {'; '.join(problems)}.")
    return head


def params_from_arrays(arrays: dict[str, np.ndarray] | np.lib.npyio.NpzFile,
                       cfg: EncoderConfig, freeze: bool = True) -> EncoderParams:
    """Rebuild EncoderParams from the key scheme, checking every shape against `cfg`.

    An optional parameter is required when its variant is on, and refused when it is off.
    """
    shapes = expected_shapes(cfg)
    problems: list[str] = []
    layer_optional = layer_optional_names(cfg)
    encoder_optional = encoder_optional_names(cfg)

    def take(key: str, name: str) -> np.ndarray:
        if key not in arrays:
            problems.append(f"missing {key}")
            return np.zeros(shapes[name], np.float32)
        a = np.asarray(arrays[key])
        if a.shape != shapes[name]:
            problems.append(f"{key} has shape {a.shape}, the configuration needs {shapes[name]}")
        return a

    def take_optional(key: str, name: str, needed: bool) -> np.ndarray | None:
        if needed:
            return take(key, name)
        if key in arrays:
            problems.append(f"{key} is given but the configuration does not use it "
                            f"({OPTIONAL_SWITCH[name]} is off)")
        return None

    W_E = take("params/W_E", "W_E")
    layers = []
    for l in range(cfg.n_layers):
        values = {name: take(f"params/layer{l}/{name}", name)
                  for name in LAYER_WEIGHTS + LAYER_VECTORS}
        for name in LAYER_OPTIONAL:
            values[name] = take_optional(f"params/layer{l}/{name}", name, name in layer_optional)
        layers.append(LayerParams(**values))
    extra = {name: take_optional(f"params/{name}", name, name in encoder_optional)
             for name in ENCODER_OPTIONAL}
    if problems:
        shown = "; ".join(problems[:5]) + ("; …" if len(problems) > 5 else "")
        raise ParamsError(f"These parameters do not fit the configuration: {shown}.")
    params = EncoderParams(W_E=W_E, layers=tuple(layers), head=head_from_arrays(arrays, cfg),
                           **extra)
    return freeze_params(params) if freeze else params


def save_params(path: str | PathLike | IO[bytes], params: EncoderParams) -> None:
    """Write the parameters to an `.npz` file (plain arrays, no pickle)."""
    np.savez(path, **params_to_arrays(params))


def load_params(path: str | PathLike | IO[bytes], cfg: EncoderConfig) -> EncoderParams:
    """Read parameters written by `save_params` (or the CLI export) and check them against cfg."""
    try:
        with np.load(path, allow_pickle=False) as npz:
            return params_from_arrays({k: npz[k] for k in npz.files if k.startswith("params/")},
                                      cfg)
    except ParamsError:
        raise
    except (OSError, ValueError, EOFError) as err:
        raise ParamsError(f"Cannot read parameters from {path!r}: {err}") from None
