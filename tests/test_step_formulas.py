"""A step's formulas are written once, in its module of `lens.walk` (`formulas(cfg, …)`): the
page draws them with st.latex (KaTeX), its handout sheet between $…$ with matplotlib's
mathtext — so every string must be one both accept. Here: mathtext draws each at the default
settings and at a ViT-like configuration (pre-norm, [CLS], biases, learned positions, GELU,
LayerScale, final norm), the sheet shows exactly the function's output, and each step's page
calls the function. A step whose page shows more formulas beside its layer and query (ffn,
addnorm) has a second function for them (`MORE`), shown by its sheet right after the first."""

from __future__ import annotations

import dataclasses
import sys
from io import BytesIO
from pathlib import Path

import pytest
from matplotlib import mathtext

from encoder_core import EncoderConfig, encode
from lens import model_weights
from lens.context import PageContext
from lens.settings import Settings
from lens.steps import STEPS
from tests.support.configs import SMALL, VIT, make_test_image

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = Settings().normalised()[0].to_config()
VIT_LIKE = EncoderConfig(**{**SMALL, **VIT})
# a step's formulas beyond `formulas(cfg, …)`, page and sheet alike: its function's name
MORE = {"ffn": "sublayer_formulas", "addnorm": "norm_formulas"}


def walk_module(step_id: str):
    """The step's module of lens.walk (where its sheet is)."""
    sheet = next(p.sheet for p in STEPS if p.id == step_id)
    return sys.modules[sheet.__module__]


def more_of(step_id: str, cfg: EncoderConfig) -> list[str]:
    """The step's formulas beyond `formulas` (`MORE`), none for most steps."""
    return getattr(walk_module(step_id), MORE[step_id])(cfg) if step_id in MORE else []


def formulas_of(step_id: str, cfg: EncoderConfig) -> list[str]:
    """The step's formulas as its sheet asks for them (the model's biases from `cfg`)."""
    f = walk_module(step_id).formulas
    if step_id == "qkv":
        return f(cfg, 0, {n: cfg.qkv_bias for n in "QKV"})
    if step_id == "multihead":
        return f(cfg, cfg.proj_bias)
    if step_id == "stack":
        return f(cfg, cfg.final_norm)
    return f(cfg) + more_of(step_id, cfg)


@pytest.mark.parametrize("cfg", [DEFAULT, VIT_LIKE], ids=["defaults", "vit_like"])
@pytest.mark.parametrize("step_id", [p.id for p in STEPS])
def test_mathtext_draws_every_formula_of_every_step(step_id, cfg):
    tex = formulas_of(step_id, cfg)
    assert tex and all(isinstance(t, str) and "$" not in t for t in tex)
    for t in tex:
        mathtext.math_to_image(f"${t}$", BytesIO(), format="png")  # raises on what it lacks


@pytest.mark.parametrize("cfg", [DEFAULT, VIT_LIKE], ids=["defaults", "vit_like"])
def test_each_sheet_shows_its_steps_formulas_first_as_written(cfg):
    image = make_test_image(cfg.image_size, cfg.channels)
    trace = encode(image, cfg, model_weights.random_params(cfg))
    for page in STEPS:
        ctx = PageContext.for_trace(trace, image, page=page.id)
        sheet = page.sheet(ctx)
        if page.id == "ffn" and not cfg.use_ffn:
            continue
        lp = ctx.trace.params.layers[ctx.layer]
        f = walk_module(page.id).formulas
        args = {"qkv": (ctx.head, {"Q": lp.b_Q is not None, "K": lp.b_K is not None,
                                   "V": lp.b_V is not None}),
                "multihead": (lp.b_O is not None,),
                "stack": (ctx.trace.final_ln is not None,)}.get(page.id, ())
        expected = [f"${t}$" for t in f(cfg, *args) + more_of(page.id, cfg)]
        assert list(sheet.formulas[:len(expected)]) == expected, page.id


@pytest.mark.parametrize("step_id", [p.id for p in STEPS])
def test_each_steps_page_draws_the_same_function(step_id):
    source = (ROOT / "pages" / f"{step_id}.py").read_text(encoding="utf-8")
    assert f"from lens.walk import {step_id} as walk" in source
    assert "walk.formulas(" in source
    if step_id in MORE:
        assert f"walk.{MORE[step_id]}(" in source


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
@pytest.mark.parametrize("cfg", [DEFAULT, VIT_LIKE], ids=["defaults", "vit_like"])
def test_mathtext_draws_the_ffn_formulas_with_every_activation(cfg, activation):
    cfg = dataclasses.replace(cfg, activation=activation)
    for t in formulas_of("ffn", cfg):
        mathtext.math_to_image(f"${t}$", BytesIO(), format="png")


@pytest.mark.parametrize("step_id", ["patches", "addnorm", "ffn"])
def test_no_formula_of_these_pages_needs_underbrace(step_id):
    """Their shapes are written under a name with \\underset, as mathtext draws them."""
    source = (ROOT / "pages" / f"{step_id}.py").read_text(encoding="utf-8")
    assert "underbrace" not in source
