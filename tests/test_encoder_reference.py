"""`encoder_core.encode` against the naive float64 loop reference in `reference.py`, field by field.

Every field of the trace is compared with

    relative error  ‖a − r‖ / ‖r‖        ≤ 1e-5
    max error       max|a − r|           ≤ 1e-4 · max|r|

(for an all-zero reference: max|a| ≤ 1e-6), at the default configuration on a 224 × 224 test
image and at several small configurations that switch one thing each.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.params import EncoderParams, LayerParams
from tests.support.configs import VIT, perturb_every_parameter
from tests.support.reference import reference_encode

REL_TOL = 1e-5
MAX_TOL = 1e-4
ZERO_TOL = 1e-6

TOP_FIELDS = ("pixels", "patches", "embedded", "pe", "tokens", "pos", "x0")
ATTENTION_FIELDS = (
    "q", "k", "v", "scores", "attn", "heads", "concat", "attn_out", "resid_1",
)  # fmt: skip
LN_FIELDS = ("mean", "var", "normed", "out")
FFN_ARRAY_FIELDS = ("ffn_hidden", "ffn_out", "resid_2")


def assert_close(name: str, a: np.ndarray, r: np.ndarray) -> None:
    """Fail, naming the field and both figures, unless `a` (float32) matches `r` (float64)."""
    assert a is not None, f"{name}: encoder_core gave None, the reference has shape {r.shape}"
    assert a.shape == r.shape, f"{name}: shape {a.shape} != reference shape {r.shape}"
    assert a.dtype == np.float32, f"{name}: dtype {a.dtype}, expected float32"
    a64 = np.asarray(a, dtype=np.float64)
    assert np.all(np.isfinite(a64)), f"{name}: non-finite values"
    r_max = float(np.max(np.abs(r))) if r.size else 0.0
    if r_max == 0.0:
        a_max = float(np.max(np.abs(a64))) if a.size else 0.0
        assert a_max <= ZERO_TOL, f"{name}: reference is all zero but max|a| = {a_max:.3e}"
        return
    diff = a64 - r
    rel = float(np.linalg.norm(diff) / np.linalg.norm(r))
    max_err = float(np.max(np.abs(diff)))
    assert rel <= REL_TOL and max_err <= MAX_TOL * r_max, (
        f"{name}: relative error {rel:.3e} (limit {REL_TOL:.0e}), "
        f"max|a - r| = {max_err:.3e} (limit {MAX_TOL:.0e} * max|r| = {MAX_TOL * r_max:.3e})"
    )


def compare_traces(trace, ref, cfg: EncoderConfig) -> list[str]:
    """Every field of `trace` against `ref`; returns the failures (empty when all agree)."""
    failures: list[str] = []
    checked: list[str] = []

    def check(name: str, a, r) -> None:
        checked.append(name)
        try:
            assert_close(name, a, r)
        except AssertionError as exc:
            failures.append(str(exc))

    for name in TOP_FIELDS:
        check(name, getattr(trace, name), getattr(ref, name))
    if len(trace.layers) != cfg.n_layers:
        failures.append(f"layers: {len(trace.layers)} layer traces for n_layers={cfg.n_layers}")
    for l, (lt, lr) in enumerate(zip(trace.layers, ref.layers, strict=False)):
        for name in ATTENTION_FIELDS:
            check(f"layers[{l}].{name}", getattr(lt, name), getattr(lr, name))
        for name in LN_FIELDS:
            check(f"layers[{l}].ln_1.{name}", getattr(lt.ln_1, name), getattr(lr.ln_1, name))
        if cfg.use_ffn:
            for name in FFN_ARRAY_FIELDS:
                check(f"layers[{l}].{name}", getattr(lt, name), getattr(lr, name))
            if lt.ln_2 is None:
                failures.append(f"layers[{l}].ln_2: None although use_ffn=True")
            else:
                for name in LN_FIELDS:
                    check(
                        f"layers[{l}].ln_2.{name}", getattr(lt.ln_2, name), getattr(lr.ln_2, name)
                    )
        else:
            for name in (*FFN_ARRAY_FIELDS, "ln_2"):
                if getattr(lt, name) is not None:
                    failures.append(f"layers[{l}].{name}: not None although use_ffn=False")
        check(f"layers[{l}].out", lt.out, lr.out)
    if cfg.final_norm:
        if trace.final_ln is None:
            failures.append("final_ln: None although final_norm=True")
        else:
            for name in LN_FIELDS:
                check(f"final_ln.{name}", getattr(trace.final_ln, name),
                      getattr(ref.final_ln, name))
    elif trace.final_ln is not None:
        failures.append("final_ln: not None although final_norm=False")
    check("output", trace.output, ref.output)
    # The comparison itself must have covered every field.
    n_layer_fields = len(ATTENTION_FIELDS) + len(LN_FIELDS) + 1
    if cfg.use_ffn:
        n_layer_fields += len(FFN_ARRAY_FIELDS) + len(LN_FIELDS)
    n_final = len(LN_FIELDS) if cfg.final_norm and trace.final_ln is not None else 0
    assert len(checked) == len(TOP_FIELDS) + 1 + cfg.n_layers * n_layer_fields + n_final
    return failures


def run_and_compare(image: np.ndarray, cfg: EncoderConfig, params: EncoderParams) -> None:
    trace = encode(image, cfg, params=params)
    ref = reference_encode(image, cfg, params)
    failures = compare_traces(trace, ref, cfg)
    assert not failures, f"{len(failures)} field(s) disagree for {cfg}:\n" + "\n".join(failures)


def perturbed_params(cfg: EncoderConfig, seed: int = 99) -> EncoderParams:
    """init_params with random γ, β and biases, so their wiring is exercised (init has 1/0/0)."""
    rng = np.random.default_rng(seed)
    base = init_params(cfg)
    layers = []
    for lp in base.layers:
        changes = {
            "gamma_1": rng.uniform(0.5, 1.5, cfg.d_model),
            "beta_1": rng.normal(0.0, 0.3, cfg.d_model),
            "b_1": rng.normal(0.0, 0.3, cfg.d_ff),
            "b_2": rng.normal(0.0, 0.3, cfg.d_model),
            "gamma_2": rng.uniform(0.5, 1.5, cfg.d_model),
            "beta_2": rng.normal(0.0, 0.3, cfg.d_model),
        }
        changes = {k: np.asarray(v, dtype=np.float32) for k, v in changes.items()}
        layers.append(dataclasses.replace(lp, **changes))
    return EncoderParams(W_E=base.W_E, layers=tuple(layers))


# --- the default configuration ------------------------------------------------------------


@pytest.mark.slow
def test_default_config_matches_reference(make_image):
    cfg = EncoderConfig()
    assert (cfg.image_size, cfg.patch_size, cfg.channels) == (224, 16, 1)
    assert (cfg.d_model, cfg.n_heads, cfg.n_layers, cfg.d_ff) == (512, 8, 6, 2048)
    image = make_image(cfg.image_size, cfg.channels)
    run_and_compare(image, cfg, init_params(cfg))


def test_default_params_are_init_params(make_image):
    """encode(image, cfg) without params uses init_params(cfg) (checked on a small config)."""
    cfg = EncoderConfig(image_size=32, patch_size=8, d_model=32, n_heads=4, n_layers=2, d_ff=64)
    image = make_image(cfg.image_size, cfg.channels)
    trace = encode(image, cfg)
    expected = init_params(cfg)
    np.testing.assert_array_equal(trace.params.W_E, expected.W_E)
    for got, want in zip(trace.params.layers, expected.layers, strict=True):
        for f in dataclasses.fields(LayerParams):
            np.testing.assert_array_equal(getattr(got, f.name), getattr(want, f.name))
    failures = compare_traces(trace, reference_encode(image, cfg, expected), cfg)
    assert not failures, "\n".join(failures)


# --- small configurations, one switch each ---------------------------------------------------

SMALL = dict(image_size=32, patch_size=8, channels=1, d_model=32, n_heads=4, n_layers=2, d_ff=64)

SMALL_CASES = {
    "baseline": {},
    "one_head": dict(n_heads=1),
    "rgb": dict(channels=3),
    "rgb_64_tokens": dict(channels=3, image_size=32, patch_size=4, d_model=64, d_ff=128),
    "scale_d_k": dict(scale="d_k"),
    "scale_d_model": dict(scale="d_model"),
    "scale_none": dict(scale="none"),
    "no_ffn": dict(use_ffn=False),
    "no_ffn_rgb_scale_none": dict(use_ffn=False, channels=3, scale="none"),
    "many_heads_layers": dict(d_model=64, n_heads=16, n_layers=5, d_ff=96),
    "eight_heads_four_layers": dict(d_model=64, n_heads=8, n_layers=4, d_ff=256),
    "one_layer": dict(n_layers=1),
    "seed_7": dict(seed=7),
    "seed_12345": dict(seed=12345, n_heads=2),
    "eps_1e-3": dict(ln_eps=1e-3),
    "odd_grid": dict(image_size=36, patch_size=6, d_model=48, n_heads=6),
}


@pytest.mark.parametrize("changes", SMALL_CASES.values(), ids=SMALL_CASES.keys())
def test_small_config_matches_reference(make_image, changes):
    cfg = EncoderConfig(**{**SMALL, **changes})
    assert cfg.n_tokens <= 64 and cfg.d_model <= 64
    image = make_image(cfg.image_size, cfg.channels, seed=cfg.seed + 1)
    run_and_compare(image, cfg, init_params(cfg))


@pytest.mark.parametrize(
    "changes",
    [{}, dict(channels=3, scale="d_model"), dict(use_ffn=False, n_heads=1)],
    ids=["baseline", "rgb_d_model", "no_ffn_one_head"],
)
def test_small_config_with_random_gammas_betas_biases_matches_reference(make_image, changes):
    cfg = EncoderConfig(**{**SMALL, **changes})
    image = make_image(cfg.image_size, cfg.channels, seed=5)
    run_and_compare(image, cfg, perturbed_params(cfg))


# --- the Vision Transformer variants (issue 11), every parameter perturbed --------------------

VARIANT_CASES = {
    "vit_everything": VIT,
    "timm_vit": dict(channels=3, norm_first=True, cls_token=True, position="learned",
                     patch_bias=True, qkv_bias=True, proj_bias=True, activation="gelu",
                     final_norm=True, ln_eps=1e-6, pixel_mean=(0.5,) * 3, pixel_std=(0.5,) * 3),
    "deit_distilled": dict(channels=3, norm_first=True, cls_token=True, dist_token=True,
                           position="learned", patch_bias=True, qkv_bias=True, proj_bias=True,
                           activation="gelu", final_norm=True, ln_eps=1e-6),
    "dinov2_registers": dict(norm_first=True, cls_token=True, n_registers=4, position="learned",
                             patch_bias=True, qkv_bias=True, proj_bias=True, activation="gelu",
                             final_norm=True, layer_scale=True, ln_eps=1e-6),
    "no_embed_class": dict(norm_first=True, cls_token=True, dist_token=True, n_registers=2,
                           position="learned", pos_prefix=False, activation="gelu"),
    "hf_gelu_tanh": dict(norm_first=True, cls_token=True, position="learned",
                         activation="gelu_tanh", qkv_bias=True, ln_eps=1e-12),
    "post_norm_gelu_tanh": dict(activation="gelu_tanh"),
    "post_norm_gelu_biases": dict(activation="gelu", patch_bias=True, qkv_bias=True,
                                  proj_bias=True),
    "post_norm_layer_scale_final_norm": dict(layer_scale=True, final_norm=True),
    "post_norm_cls_sinusoidal": dict(cls_token=True),
    "registers_without_pe": dict(n_registers=3, use_pe=False, norm_first=True),
    "learned_without_pe": dict(cls_token=True, position="learned", use_pe=False),
    "pre_norm_no_ffn_layer_scale": dict(norm_first=True, use_ffn=False, layer_scale=True,
                                        cls_token=True),
    "pre_norm_scale_none_one_head": dict(norm_first=True, scale="none", n_heads=1),
    "grey_pixel_statistics": dict(pixel_mean=(0.5,), pixel_std=(0.25,)),
    "odd_d_model_learned": dict(d_model=33, n_heads=3, position="learned", norm_first=True,
                                cls_token=True, activation="gelu"),
}


@pytest.mark.parametrize("changes", VARIANT_CASES.values(), ids=VARIANT_CASES.keys())
def test_variant_config_with_every_parameter_perturbed_matches_reference(make_image, changes):
    cfg = EncoderConfig(**{**SMALL, **changes})
    params = perturb_every_parameter(init_params(cfg), seed=len(str(changes)))
    image = make_image(cfg.image_size, cfg.channels, seed=11)
    run_and_compare(image, cfg, params)


def test_the_comparison_sees_a_missing_variant_term(make_image):
    """The reference really reads the variants: without a bias the traces differ."""
    cfg = EncoderConfig(**{**SMALL, **VIT})
    params = perturb_every_parameter(init_params(cfg))
    image = make_image(cfg.image_size, cfg.channels, seed=11)
    trace = encode(image, cfg, params)
    no_b_O = dataclasses.replace(params, layers=tuple(
        dataclasses.replace(lp, b_O=np.zeros_like(lp.b_O)) for lp in params.layers))
    failures = compare_traces(trace, reference_encode(image, cfg, no_b_O), cfg)
    assert any("attn_out" in f for f in failures), failures
    assert not any(f.startswith(("pixels", "patches", "tokens", "layers[0].q")) for f in failures)


# --- the comparison helper itself must be able to fail --------------------------------------


def test_assert_close_detects_a_wrong_field():
    r = np.linspace(-1.0, 1.0, 100).reshape(10, 10)
    assert_close("same", r.astype(np.float32), r)
    wrong = r.astype(np.float32).copy()
    wrong[3, 4] += 1e-3
    with pytest.raises(AssertionError, match=r"wrong: relative error .* max\|a - r\|"):
        assert_close("wrong", wrong, r)
    with pytest.raises(AssertionError, match="all zero"):
        assert_close("zero", np.full((2, 2), 1e-3, dtype=np.float32), np.zeros((2, 2)))
    assert_close("zero_ok", np.zeros((2, 2), dtype=np.float32), np.zeros((2, 2)))
    with pytest.raises(AssertionError, match="shape"):
        assert_close("shape", np.zeros((2, 3), dtype=np.float32), np.zeros((3, 2)))
