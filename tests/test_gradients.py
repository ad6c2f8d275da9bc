"""`encoder_core.backward`: the gradient of a logit with respect to every field of the trace and
every weight, against central finite differences in float64, for every variant the core runs.

The finite differences run through `forward64`, a forward written here from the formulas in
float64 that can move any one intermediate (a "node") by ε·U and run the rest: the directional
derivative (f(+ε) − f(−ε)) / 2ε must equal Σ grad ⊙ U. A field that is another field's array in
the forward (the layer's out and ln_2.out, output and the last out, …) is that node: its gradient
must be the same. `forward64`'s own trace is checked against `encode` first (the same model).
No torch here: tests/test_gradients_parity.py compares with autograd.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from encoder_core import (
    EncoderConfig,
    encode,
    encode_batch,
    init_params,
    patchify,
    positional_encoding,
)
from encoder_core.gradients import backward
from encoder_core.params import HeadParams, params_from_arrays, params_to_arrays
from encoder_core.pipeline.head import head_logits, head_rows
from encoder_core.trace import EncoderTrace, LayerNormTrace, LayerTrace, trace_arrays
from tests.support.configs import VIT, make_test_image, perturb_every_parameter

BASE = dict(image_size=12, patch_size=4, channels=1, d_model=8, n_heads=2, n_layers=2, d_ff=16,
            seed=5)
CASES = {
    "note": ({}, "avg", ()),
    "note_no_ffn_no_pe": (dict(use_ffn=False, use_pe=False, scale="d_model"), "avg",
                          ("fc_norm",)),
    "vit_every_variant": (VIT, "token_dist", ()),
    "pre_logits_tanh_gelu": (dict(norm_first=True, cls_token=True, position="learned",
                                  pos_prefix=False, activation="gelu_tanh", qkv_bias=True,
                                  channels=3), "token", ("pre",)),
    "dinov2_registers": (dict(norm_first=True, cls_token=True, n_registers=2,
                              position="learned", patch_bias=True, qkv_bias=True,
                              proj_bias=True, activation="gelu", final_norm=True,
                              layer_scale=True), "token_avg", ()),
    "pre_norm_no_ffn": (dict(norm_first=True, cls_token=True, use_ffn=False, scale="none"),
                        "token", ()),
    "registers_no_cls_fc_norm": (dict(norm_first=True, n_registers=1, final_norm=True), "avg",
                                 ("fc_norm",)),
}
EPS = 1e-6  # the finite-difference step along a random direction
TOLERANCE = 1e-6  # |numeric − analytic| ≤ TOLERANCE · (|analytic| + the target's scale)
TARGET = 2


def random_head(cfg: EncoderConfig, pool: str, extras: tuple[str, ...], n_classes: int = 5,
                seed: int = 0) -> HeadParams:
    """A head with random weights: fc_norm and a pre-logits layer when asked."""
    rng = np.random.default_rng(seed)
    d_pool = 2 * cfg.d_model if pool == "token_avg" else cfg.d_model
    d_in = 6 if "pre" in extras else d_pool

    def r(*shape: int) -> np.ndarray:
        return rng.normal(0, 0.5, shape).astype(np.float32)

    parts = {}
    if pool == "token_dist":
        parts |= dict(W_dist=r(d_in, n_classes), b_dist=r(n_classes))
    if "fc_norm" in extras:
        parts |= dict(fc_norm_gamma=1 + r(d_pool), fc_norm_beta=r(d_pool))
    if "pre" in extras:
        parts |= dict(W_pre=r(d_pool, d_in), b_pre=r(d_in))
    return HeadParams(pool=pool, W_head=r(d_in, n_classes), b_head=r(n_classes), **parts)


def problem(case: str):
    changes, pool, extras = CASES[case]
    cfg = EncoderConfig(**{**BASE, **changes})
    params = perturb_every_parameter(init_params(cfg), seed=zlib.crc32(case.encode()))
    params = replace(params, head=random_head(cfg, pool, extras))
    image = make_test_image(cfg.image_size, cfg.channels).astype(np.float64)
    return cfg, params, image


# --- a float64 forward whose every node can be moved -----------------------------------------

def f64(a):
    return None if a is None else np.asarray(a, dtype=np.float64)


def activation(name: str, z: np.ndarray) -> np.ndarray:
    if name == "relu":
        return np.maximum(z, 0)
    if name == "gelu":
        return 0.5 * z * (1 + np.vectorize(math.erf)(z / math.sqrt(2)))
    return 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))


def heads_of(x: np.ndarray, h: int) -> np.ndarray:
    """[S, d] -> [h, S, d_head]"""
    return x.reshape(x.shape[0], h, -1).transpose(1, 0, 2)


def forward64(image, cfg, params, move=lambda name, a: a):
    """The encoder and head in float64; `move(name, value)` may change each node as it is made.
    Returns (logits [n_classes], {name: value} of every node)."""
    kept = {}

    def node(name, value):
        kept[name] = value = move(name, value)
        return value

    n, N, d = cfg.n_prefix, cfg.n_tokens, cfg.d_model
    image = node("image", np.array(image, dtype=np.float64))
    pixels = image
    if cfg.normalises_pixels:
        pixels = node("pixels", (image - np.array(cfg.pixel_mean)) / np.array(cfg.pixel_std))
    patches = node("patches", patchify(pixels, cfg.patch_size))
    embedded = patches @ f64(params.W_E)
    if params.b_E is not None:
        embedded = embedded + f64(params.b_E)
    embedded = node("embedded", embedded)
    pos_embed = f64(params.pos_embed)
    pe = node("pe", pos_embed[-N:] if cfg.position == "learned"
              else positional_encoding(N, d, np.float64))
    tokens = embedded
    if n:
        prefix = [f64(t) for t in (params.cls, params.dist, params.registers) if t is not None]
        tokens = node("tokens", np.concatenate([*prefix, embedded]))
    pos = pe
    if n or not cfg.use_pe:
        pos = np.zeros((n + N, d))
        if cfg.use_pe:
            pos[n:] = pe
            if cfg.position == "learned":
                rows = cfg.n_pos - N  # cls and dist when pos_prefix
                pos[:rows] = pos_embed[:rows]
        pos = node("pos", pos)
    x = node("x0", tokens + pos if cfg.use_pe else tokens.copy())
    for l, p in enumerate(params.layers):
        x = layer64(x, p, cfg, lambda name, v, l=l: node(f"layer{l}/{name}", v))
    if cfg.final_norm:
        x = norm64(x, params.norm_gamma, params.norm_beta, cfg.ln_eps,
                   lambda name, v: node(f"final_ln/{name}", v))
    rows = head_rows(x, params.head, n, cfg.ln_eps)  # the core's head, in float64
    return head_logits(rows, params.head).mean(axis=0), kept


def norm64(x, gamma, beta, eps, node):
    mean = node("mean", x.mean(axis=-1))
    centred = x - mean[:, None]
    var = node("var", (centred**2).mean(axis=-1))
    normed = node("normed", centred / np.sqrt(var + eps)[:, None])
    return node("out", f64(gamma) * normed + f64(beta))


def layer64(x, p, cfg, node):
    """One layer from its formulas; returns its out."""
    def lin(v, W, b):
        return v @ f64(W) + (0 if b is None else f64(b))

    def ls(name):
        v = getattr(p, name)
        return 1.0 if v is None else f64(v)

    h, eps = cfg.n_heads, cfg.ln_eps
    a_in = x
    if cfg.norm_first:
        a_in = norm64(x, p.gamma_1, p.beta_1, eps, lambda k, v: node(f"ln_1/{k}", v))
    q = node("q", heads_of(lin(a_in, p.W_Q, p.b_Q), h))
    k = node("k", heads_of(lin(a_in, p.W_K, p.b_K), h))
    v = node("v", heads_of(lin(a_in, p.W_V, p.b_V), h))
    scores = node("scores", q @ k.transpose(0, 2, 1) / cfg.score_scale)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    attn = node("attn", e / e.sum(axis=-1, keepdims=True))
    heads = node("heads", attn @ v)
    concat = node("concat", heads.transpose(1, 0, 2).reshape(x.shape))
    attn_out = node("attn_out", lin(concat, p.W_O, p.b_O))
    resid_1 = node("resid_1", x + ls("ls_1") * attn_out)
    if cfg.norm_first:
        out = resid_1
    else:
        out = norm64(resid_1, p.gamma_1, p.beta_1, eps, lambda k, v: node(f"ln_1/{k}", v))
    if not cfg.use_ffn:
        return out
    if cfg.norm_first:
        ffn_in = norm64(resid_1, p.gamma_2, p.beta_2, eps, lambda k, v: node(f"ln_2/{k}", v))
    else:
        ffn_in = out
    hidden = node("ffn_hidden", activation(cfg.activation, lin(ffn_in, p.W_1, p.b_1)))
    ffn_out = node("ffn_out", lin(hidden, p.W_2, p.b_2))
    resid_2 = node("resid_2", out + ls("ls_2") * ffn_out)  # out: resid_1 or ln_1.out
    if cfg.norm_first:
        return resid_2
    return norm64(resid_2, p.gamma_2, p.beta_2, eps, lambda k, v: node(f"ln_2/{k}", v))


def aliases(cfg: EncoderConfig) -> dict[str, str]:
    """Trace fields that are another node's array: field -> that node's name in forward64."""
    a = {}
    if not cfg.normalises_pixels:
        a["pixels"] = "image"
    if not cfg.n_prefix:
        a["tokens"] = "embedded"
        if cfg.use_pe:
            a["pos"] = "pe"
    for l in range(cfg.n_layers):
        last = ("resid_2" if cfg.use_ffn else "resid_1") if cfg.norm_first else (
            "ln_2/out" if cfg.use_ffn else "ln_1/out")
        a[f"layer{l}/out"] = f"layer{l}/{last}"
    a["output"] = "final_ln/out" if cfg.final_norm else a[f"layer{cfg.n_layers - 1}/out"]
    return a


def trace64(kept: dict[str, np.ndarray], cfg, params) -> EncoderTrace:
    """forward64's nodes as an EncoderTrace (float64)."""
    names = aliases(cfg)

    def get(name):
        return kept[names.get(name, name)]

    def ln(prefix):
        if f"{prefix}/mean" not in kept:
            return None
        return LayerNormTrace(**{f: kept[f"{prefix}/{f}"] for f in ("mean", "var", "normed",
                                                                     "out")})

    layers = []
    for l in range(cfg.n_layers):
        fields = {f: kept.get(f"layer{l}/{f}") for f in (
            "q", "k", "v", "scores", "attn", "heads", "concat", "attn_out", "resid_1",
            "ffn_hidden", "ffn_out", "resid_2")}
        layers.append(LayerTrace(**fields, ln_1=ln(f"layer{l}/ln_1"), ln_2=ln(f"layer{l}/ln_2"),
                                 out=get(f"layer{l}/out")))
    top = {f: get(f) for f in ("image", "pixels", "patches", "embedded", "pe", "tokens", "pos",
                               "x0", "output")}
    return EncoderTrace(config=cfg, params=params, layers=tuple(layers),
                        final_ln=ln("final_ln"), **top)


def numeric_derivative(image, cfg, params, name, direction) -> float:
    """(f(node + εU) − f(node − εU)) / 2ε for the target logit."""
    def at(sign):
        def move(node, value):
            return value + sign * EPS * direction if node == name else value
        return forward64(image, cfg, params, move)[0][TARGET]
    return (at(1) - at(-1)) / (2 * EPS)


@pytest.fixture(scope="module", params=sorted(CASES))
def solved(request):
    cfg, params, image = problem(request.param)
    logits, kept = forward64(image, cfg, params)
    trace = trace64(kept, cfg, params)
    grads = backward(trace, params, TARGET)
    return SimpleNamespace(cfg=cfg, params=params, image=image, kept=kept, trace=trace,
                           grads=grads, logits=logits)


def test_the_float64_forward_of_these_tests_is_the_encoder(solved):
    """forward64 is the model `encode` runs (float32 against float64)."""
    s = solved
    ours = trace_arrays(encode(s.image.astype(np.float32), s.cfg, s.params))
    theirs = trace_arrays(s.trace)
    assert sorted(ours) == sorted(theirs)
    for key, value in theirs.items():
        scale = max(np.abs(value).max(), 1e-3)
        assert np.abs(ours[key] - value).max() <= 1e-4 * scale, key


def test_every_field_has_a_gradient_of_its_own_shape_and_dtype(solved):
    grads, trace = trace_arrays(solved.grads), trace_arrays(solved.trace)
    assert sorted(grads) == sorted(trace)
    for key, value in trace.items():
        assert grads[key].shape == value.shape and grads[key].dtype == np.float64, key
    assert solved.grads.image.shape == solved.image.shape


def test_every_node_gradient_matches_finite_differences(solved):
    s = solved
    grads = trace_arrays(s.grads) | {"image": s.grads.image}
    names = aliases(s.cfg)
    nodes = {names.get(key, key) for key in grads}
    assert nodes <= set(s.kept) | {"pe", "pos"}
    rng = np.random.default_rng(1)
    scale = abs(s.logits[TARGET]) + 1
    failures = {}
    for key in sorted(grads):
        node = names.get(key, key)
        if node not in s.kept:  # pe, pos with PE off: never read, so d/d = 0
            assert not grads[key].any(), key
            continue
        direction = rng.normal(size=s.kept[node].shape)
        numeric = numeric_derivative(s.image, s.cfg, s.params, node, direction)
        analytic = float((grads[key] * direction).sum())
        if abs(numeric - analytic) > TOLERANCE * (abs(analytic) + scale):
            failures[key] = (numeric, analytic)
    assert failures == {}


def test_every_weight_gradient_matches_finite_differences(solved):
    s = solved
    arrays = {k: v for k, v in params_to_arrays(s.params).items() if k != "params/head/pool"}
    grads = params_to_arrays(s.grads.params)
    assert sorted(grads) == sorted(params_to_arrays(s.params))
    rng = np.random.default_rng(2)
    scale = abs(s.logits[TARGET]) + 1
    failures = {}
    for key, value in sorted(arrays.items()):
        direction = rng.normal(size=value.shape)

        def at(sign, key=key, value=value, direction=direction):
            moved = dict(arrays) | {key: value + sign * EPS * direction,
                                    "params/head/pool": np.array(s.params.head.pool)}
            return forward64(s.image, s.cfg, params_from_arrays(moved, s.cfg, freeze=False))[0]

        numeric = (at(1)[TARGET] - at(-1)[TARGET]) / (2 * EPS)
        analytic = float((grads[key] * direction).sum())
        assert grads[key].shape == value.shape, key
        if abs(numeric - analytic) > TOLERANCE * (abs(analytic) + scale):
            failures[key] = (numeric, analytic)
    assert failures == {}


def test_a_field_that_is_another_fields_array_has_the_same_gradient(solved):
    grads = trace_arrays(solved.grads) | {"image": solved.grads.image}
    for field, node in aliases(solved.cfg).items():
        np.testing.assert_array_equal(grads[field], grads[node], err_msg=field)


def test_without_the_weights_the_fields_gradients_are_the_same(solved):
    lean = backward(solved.trace, solved.params, TARGET, weights=False)
    assert lean.params is None and solved.grads.params is not None
    full = trace_arrays(solved.grads)
    for key, value in trace_arrays(lean).items():
        np.testing.assert_array_equal(value, full[key], err_msg=key)


def test_a_loss_seed_and_a_class_index_agree_and_bad_targets_are_refused(solved):
    s = solved
    seed = np.zeros(s.params.head.n_classes)
    seed[TARGET] = 1
    by_seed = backward(s.trace, s.params, seed, weights=False)
    np.testing.assert_array_equal(by_seed.layers[0].attn, s.grads.layers[0].attn)
    with pytest.raises(ValueError, match="does not exist"):
        backward(s.trace, s.params, s.params.head.n_classes)
    with pytest.raises(ValueError, match="d logits has shape"):
        backward(s.trace, s.params, np.zeros(3))


@pytest.mark.parametrize("case", ["note", "vit_every_variant", "dinov2_registers"])
def test_a_batch_gives_each_images_gradients_and_the_weights_summed_over_it(case):
    """`backward` on `encode_batch`'s trace (the trainer's) in float64: every field's gradient
    of image b is that of the batch of image b alone, and each weight's is their sum."""
    cfg, params, image = problem(case)
    arrays = {k: v if k == "params/head/pool" else v.astype(np.float64)
              for k, v in params_to_arrays(params).items()}
    params = params_from_arrays(arrays, cfg, freeze=False)  # float64, as the trace
    images = np.stack([image, image[::-1], image.transpose(1, 0, 2)])  # [3, S, S, C]
    seed = np.random.default_rng(3).normal(size=(3, params.head.n_classes))  # d loss / d logits
    batch = backward(encode_batch(images, cfg, params), params, seed)
    singles = [backward(encode_batch(images[b:b + 1], cfg, params), params, seed[b:b + 1])
               for b in range(3)]
    fields = trace_arrays(batch) | {"image": batch.image}
    for key, value in fields.items():
        one = [trace_arrays(s) | {"image": s.image} for s in singles]
        for b in range(3):
            np.testing.assert_allclose(value[b], one[b][key][0], rtol=1e-9, atol=1e-12,
                                       err_msg=f"{key}[{b}]")
    for key, value in params_to_arrays(batch.params).items():
        if key == "params/head/pool":
            continue
        total = sum(params_to_arrays(s.params)[key] for s in singles)
        assert value.dtype == np.float64, key
        np.testing.assert_allclose(value, total, rtol=1e-9, atol=1e-12, err_msg=key)
