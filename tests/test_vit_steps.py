"""The ViT's own steps written out (encoder_core.views.vit_steps), the pipeline in a ViT's real
order (analysis.pipeline_steps) and a GELU hidden unit (explain.hidden_unit_terms), each checked
against what the encoder computed."""

from __future__ import annotations

import math

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params
from encoder_core.__main__ import english
from encoder_core.params import params_to_arrays
from encoder_core.views.analysis import (
    STEP_IDS,
    VIT_STEP_IDS,
    cosine_similarity,
    parameter_count,
    pipeline_steps,
)
from encoder_core.views.explain import hidden_unit_terms
from encoder_core.views.vit_steps import (
    activation_curve,
    activation_gate,
    pixel_terms,
    similarity_mosaic,
    vit_differences,
)
from tests.support.configs import make_test_image

VIT = EncoderConfig(image_size=64, patch_size=16, channels=3, d_model=64, n_heads=2, d_ff=96,
                    n_layers=2, norm_first=True, cls_token=True, position="learned",
                    patch_bias=True, qkv_bias=True, proj_bias=True, activation="gelu",
                    final_norm=True, pixel_mean=(0.485, 0.456, 0.406),
                    pixel_std=(0.229, 0.224, 0.225))


@pytest.fixture(scope="module")
def vit_trace():
    params = init_params(VIT)
    rng = np.random.default_rng(3)  # non-zero biases, so a missing bias would show
    layers = tuple(p.__class__(**{**p.__dict__, "b_1": rng.standard_normal(VIT.d_ff)
                                  .astype(np.float32)}) for p in params.layers)
    params = params.__class__(**{**params.__dict__, "layers": layers})
    return encode(make_test_image(VIT.image_size, 3, seed=5), VIT, params)


def test_pixel_terms_give_the_pixels_the_encoder_normalised(vit_trace):
    r, c = 17, 40
    terms = pixel_terms(vit_trace.image[r, c], VIT.pixel_mean, VIT.pixel_std)
    np.testing.assert_allclose(terms.value, vit_trace.pixels[r, c], rtol=1e-6, atol=1e-6)
    assert terms.value.dtype == np.float64
    np.testing.assert_array_equal(terms.mean, VIT.pixel_mean)


def test_similarity_mosaic_puts_each_patchs_map_where_the_patch_is():
    G = 3
    sim = np.arange(81, dtype=np.float64).reshape(9, 9)
    m = similarity_mosaic(sim, G)
    assert m.shape == (11, 11)
    p = 1 * G + 2  # the patch in grid row 1, column 2: its tile starts at (4, 8)
    np.testing.assert_array_equal(m[4:7, 8:11], sim[p].reshape(G, G))
    assert np.isnan(m[3]).all() and np.isnan(m[:, 7]).all()  # the gaps
    assert np.isnan(m).sum() == 11 * 11 - 81


def test_similarity_mosaic_of_learned_positions_has_ones_on_each_patch_itself(vit_trace):
    G = VIT.grid_size
    m = similarity_mosaic(cosine_similarity(vit_trace.pe), G, gap=0)
    for p in range(G * G):
        r, c = divmod(p, G)
        assert m[r * G + r, c * G + c] == pytest.approx(1.0)


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh"])
def test_activation_gate_times_the_input_is_the_encoders_activation(activation):
    x, y = activation_curve(activation, n=41)
    assert x[0] == -4.0 and x[-1] == 4.0
    gated = np.array([v * activation_gate(float(v), activation) for v in x])
    np.testing.assert_allclose(gated, y, atol=1e-6)


def test_gelu_is_x_times_phi_and_differs_from_relu_below_zero():
    assert activation_gate(0.0, "gelu") == 0.5
    assert -1.0 * activation_gate(-1.0, "gelu") == pytest.approx(-0.158655254, abs=1e-9)
    x, y = activation_curve("gelu")
    assert y.min() < -0.16 and y[x == 0.0] == 0.0
    with pytest.raises(ValueError):
        activation_gate(1.0, "swish")


def test_a_gelu_hidden_unit_written_out_equals_the_trace(vit_trace):
    layer, p = vit_trace.layers[1], vit_trace.params.layers[1]
    row = VIT.n_prefix + 3  # patch 3: after the CLS row
    for j in range(VIT.d_ff):
        t = hidden_unit_terms(layer.ln_2.out[row], p.W_1, p.b_1, j, "gelu")
        assert t.pre * t.gate == pytest.approx(t.hidden)
        assert t.hidden == pytest.approx(float(layer.ffn_hidden[row, j]), abs=2e-5)
    negatives = [hidden_unit_terms(layer.ln_2.out[row], p.W_1, p.b_1, j, "gelu").hidden
                 for j in range(VIT.d_ff)]
    assert min(negatives) < 0  # GELU lets small negatives through, ReLU would not


def test_the_relu_hidden_unit_is_unchanged():
    t = hidden_unit_terms(np.array([1.0, 2.0]), np.array([[1.0], [-1.0]]), np.array([0.5]), 0)
    assert (t.pre, t.hidden, t.activation) == (-0.5, 0.0, "relu")


def test_a_vit_pipeline_runs_in_its_real_order_with_its_real_terms():
    steps = pipeline_steps(VIT)
    ids = [s.id for s in steps]
    assert ids == [i for i in VIT_STEP_IDS]
    by = {s.id: s for s in steps}
    assert "(image − mean) / std" in english(by["normalise"].formula)
    normalise = english(by["normalise"].formula)
    assert "0.485" in normalise and "0.229" in normalise
    assert english(by["embedding"].formula) == "X = patches · W_E + b_E"
    assert english(by["prefix"].formula) == "tokens = [CLS; X]"
    assert by["prefix"].n_params == VIT.d_model
    assert english(by["prefix"].shape).endswith(f"= {VIT.seq_len} × {VIT.d_model}")
    assert english(by["positional"].formula) == "x0 = tokens + pos_embed"
    assert english(by["qkv"].formula) == "Q, K, V = LN_1(x) · W_Q, W_K, W_V + b_Q, b_K, b_V"
    assert "x not normalised" in english(by["add_1"].formula)
    assert english(by["ffn"].formula).startswith("GELU(LN_2(x) · W_1 + b_1)")
    assert "CLS row" in english(by["output"].shape)
    assert ids.index("ln_1") < ids.index("qkv") < ids.index("add_1") < ids.index("ln_2")
    assert ids.index("final_norm") == len(ids) - 2


def test_layer_scale_appears_in_the_residual_adds_and_their_parameters():
    cfg = VIT.replace(layer_scale=True)
    by = {s.id: s for s in pipeline_steps(cfg)}
    assert "ls_1 ⊙ attn_out" in english(by["add_1"].formula)
    assert "ls_2 ⊙ FFN" in english(by["add_2"].formula)
    assert by["add_1"].n_params == cfg.d_model


@pytest.mark.parametrize("changes", [{}, dict(layer_scale=True), dict(use_ffn=False),
                                     dict(dist_token=True, n_registers=2),
                                     dict(norm_first=False)])
def test_the_vit_pipeline_counts_every_parameter_once(changes):
    cfg = VIT.replace(**changes)
    arrays = params_to_arrays(init_params(cfg))
    unused = () if cfg.use_ffn else ("W_1", "b_1", "W_2", "b_2", "gamma_2", "beta_2", "ls_2")
    used = sum(a.size for k, a in arrays.items() if k.rsplit("/", 1)[-1] not in unused)
    assert parameter_count(cfg) == used
    ids = [s.id for s in pipeline_steps(cfg)]
    order = ("normalise", "patches", "embedding", "prefix", "positional", "ln_1", "qkv",
             "scores", "softmax", "heads", "concat", "add_1", "addnorm_1", "ln_2", "ffn",
             "add_2", "addnorm_2", "final_norm", "output")  # every id, in pipeline order
    assert sorted(ids, key=order.index) == ids and len(set(ids)) == len(ids)
    assert ("ln_1" in ids) == cfg.norm_first == ("addnorm_1" not in ids)


def test_the_notes_encoder_has_no_vit_step_and_no_difference():
    cfg = EncoderConfig()
    assert [s.id for s in pipeline_steps(cfg)] == list(STEP_IDS)
    assert vit_differences(cfg) == []


def test_vit_differences_name_what_the_config_switches_on():
    assert vit_differences(VIT) == ["pixels", "patch_bias", "cls", "learned", "pre_norm",
                                    "qkv_bias", "proj_bias", "gelu", "final_norm"]
    assert "gelu" not in vit_differences(VIT.replace(use_ffn=False))
    assert "layer_scale" in vit_differences(VIT.replace(layer_scale=True))
    assert math.isclose(activation_gate(1.0, "gelu_tanh"), activation_gate(1.0, "gelu"),
                        rel_tol=1e-3)


def test_the_position_mosaic_picture_keeps_every_cell_and_outlines_the_query_tile():
    import io

    import matplotlib
    from matplotlib.colors import Normalize
    from PIL import Image

    from lens import figures
    from lens.figures.mosaic import GAP_COLOUR

    G = 16  # 16 · 17 − 1 = 271 cells a side: more than a heatmap shows unaveraged
    sim = np.random.default_rng(0).uniform(-1, 1, (G * G, G * G))
    m = similarity_mosaic(sim, G)
    pic = figures.position_mosaic_picture(m, G, "cos", "column", "row", query=G + 2)
    (panel,) = pic.panels
    assert panel.cells.shape[:2] == m.shape  # no block average
    (rect,) = panel.rects
    assert (rect.x, rect.y, rect.w, rect.h) == (2 * 17 - 0.5, 1 * 17 - 0.5, G, G)
    assert [label for _, label in panel.xticks][:3] == ["0", "2", "4"]
    rgb = np.asarray(Image.open(io.BytesIO(figures.png(pic))).convert("RGB"))

    def at(i: int, j: int) -> tuple[int, ...]:
        x, y = panel.to_px(j, i)
        return tuple(int(v) for v in rgb[int(y), int(x)])

    assert at(16, 5) == GAP_COLOUR  # the NaN row between the first two tile rows
    want = matplotlib.colormaps["RdBu_r"](Normalize(-1, 1)(m[40, 60]), bytes=True)[:3]
    assert max(abs(a - b) for a, b in zip(at(40, 60), want, strict=True)) <= 1


def test_pixel_stats_guess_says_when_the_statistics_were_not_in_the_checkpoint(vit_checkpoint):
    from encoder_core.checkpoints.load import load_checkpoint
    from encoder_core.views.vit_steps import pixel_stats_guess

    _, _, info = load_checkpoint(vit_checkpoint)  # a timm file: no preprocessor config
    assert "0.5/0.5" in pixel_stats_guess(info)
    assert pixel_stats_guess(None) == ""
    read = info.__class__(**{**info.__dict__, "settings": tuple(
        s.__class__(s.name, s.value, "config", "preprocessor_config.json")
        if s.name == "pixel_mean" else s for s in info.settings)})
    assert pixel_stats_guess(read) == ""
