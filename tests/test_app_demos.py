"""AppTest: the demonstrations that showed nothing on random weights (issue 22, item 10) show
their point. Add & Norm: the trained model's γ and β beside the flat random ones, and the rows'
μ and σ² before and after normalising on one axis. Scores: the divisor at every head width (the
unscaled softmax saturates, the scaled one does not) and the trained model, where √d_k and
√d_model differ. The token-norm map: its colour scale is the norms' own range, not 0 … max.

Each test reads what the page hands to `widgets.picture` (the arrays and the texts drawn) and
compares it with the shipped weights or the trace, computed here again."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from encoder_core.views.vit_views import on_grid, patch_values, token_norms
from lens import figures, model_weights, widgets
from tests.support.apptest_helpers import assert_clean, new_app, open_page

ENTROPY = re.compile(r"H = ([0-9.]+) nats")


class Shown(dict):
    """Every picture a page draws, by its key: (figure function, args, kwargs); `trace` is
    the trace the page drew them from (not one found in the process's cache, which other
    tests in this worker fill with traces of other images under the same weights)."""

    trace = None


@pytest.fixture
def shown(monkeypatch) -> Shown:
    calls = Shown()
    real = widgets.picture

    def spy(ctx, draw, *args, key, **kwargs):
        calls[key] = (draw, args, {k: v for k, v in kwargs.items() if k not in ("where",
                                                                                "caption")})
        calls.trace = ctx.trace
        return real(ctx, draw, *args, key=key, **kwargs)

    monkeypatch.setattr(widgets, "picture", spy)
    return calls


def page(page_id: str, **query: str):
    at = open_page(new_app(**query), page_id)
    assert_clean(at)
    return at


def text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def trained_layers():
    trained = model_weights.trained_model()
    assert trained is not None, "the shipped trained weights are part of the package"
    return trained[1].layers


# --- Add & Norm --------------------------------------------------------------------------------

def test_add_norm_draws_the_trained_gamma_and_beta_beside_the_flat_random_ones(shown):
    at = page("addnorm")
    draw, (random_values, *_), _ = shown["gamma_beta"]
    assert np.all(random_values[0] == 1) and np.all(random_values[1] == 0)  # the flat ones
    draw, (values, titles, *_), _ = shown["gamma_beta_trained"]
    assert draw is figures.bars
    gamma, beta = values
    trained = trained_layers()[0]
    np.testing.assert_array_equal(gamma, trained.gamma_1)  # the shipped weights, live
    np.testing.assert_array_equal(beta, trained.beta_1)
    assert np.ptp(gamma) > 0.2 and np.abs(gamma - 1).max() > 0.1  # not a solid block
    assert np.abs(beta).max() > 0.02  # not an empty box
    assert titles == [f"gamma_1 = γ  [{gamma.size}]", f"beta_1 = β  [{beta.size}]"]
    said = text(at)  # the sentence says the range it shows
    assert f"γ now runs from {gamma.min():.2f} to {gamma.max():.2f}" in said
    assert f"β from {beta.min():.2f} to {beta.max():.2f}" in said


def test_add_norm_beside_the_trained_gamma_is_the_one_click_to_the_trained_model(shown):
    from lens.sections.meaning import SHOW_TRAINED

    at = page("addnorm")
    at.button(key=SHOW_TRAINED).click().run()
    assert_clean(at)
    assert at.session_state["weights"] == "trained"
    shown.clear()
    at.run()
    assert "gamma_beta_trained" not in shown  # the page's own γ is the trained one now
    _, (values, *_), _ = shown["gamma_beta"]
    np.testing.assert_array_equal(values[0], trained_layers()[0].gamma_1)


def test_add_norm_shows_the_rows_moments_before_and_after_on_one_axis(shown):
    at = page("addnorm")
    draw, (x, ys, labels, *_), _ = shown["moments_both"]
    assert draw is figures.lines
    mean_0, var_0, mean_1, var_1 = ys
    assert len(x) == len(mean_0) == 196
    # before: what the trace's LayerNorm computed; the spread the heatmaps hide
    trace = shown.trace
    assert trace.config.d_model == 512
    np.testing.assert_allclose(mean_0, trace.layers[0].ln_1.mean, atol=1e-5)
    np.testing.assert_allclose(var_0, trace.layers[0].ln_1.var, rtol=1e-4)
    assert np.ptp(var_0) > 0.3 and mean_0.min() > 0.1
    # after: every row at μ = 0, σ² = 1
    assert np.abs(mean_1).max() < 1e-5 and np.abs(var_1 - 1).max() < 1e-3
    assert labels == ["μ of resid_1", "σ² of resid_1", "μ of ln_1.normed", "σ² of ln_1.normed"]
    assert f"the variances from {var_0.min():.2f} to {var_0.max():.2f}" in text(at)


# --- Scores: why divide by s, and by which s -----------------------------------------------------

def test_the_divisor_sweep_shows_the_unscaled_softmax_saturate_and_the_scaled_one_not(shown):
    at = page("scores")
    draw, (values, titles, *_), kwargs = shown["scaling_sweep"]
    assert draw is figures.bar_panels
    none, scaled = values
    widths = [int(t) for t in kwargs["tick_labels"]]
    assert widths[0] == 1 and widths[-1] == 1024 and widths == sorted(widths)
    assert widths[kwargs["highlight"]] == 64  # this model's d_k, in orange
    ln_n = math.log(196)
    assert none[0] > ln_n - 0.5 and none[-1] < 0.3  # from nearly uniform to nearly one-hot
    assert np.all(np.diff(none) < 0)
    assert np.all(scaled > ln_n - 0.6) and np.ptp(scaled[1:]) < 0.2  # the same at every d_k
    at_64 = widths.index(64)
    assert f"(entropy {none[at_64]:.2f} nats)" in text(at)


def row_entropies(titles: list[str]) -> list[float]:
    """The row entropies written in the three panel titles (√d_k, √d_model, none)."""
    return [float(ENTROPY.search(t).group(1)) for t in titles]


def test_scores_show_the_trained_model_where_the_note_and_the_paper_differ(shown):
    at = page("scores")
    _, (_, random_titles, *_), _ = shown["scaling"]
    r_dk, r_dm, _ = row_entropies(random_titles)
    assert abs(r_dm - r_dk) < 0.2  # random weights: the two scalings alike (the issue)
    draw, (values, titles, *_), _ = shown["scaling_trained"]
    assert draw is figures.bar_panels and values.shape == (3, 196)
    np.testing.assert_allclose(values.sum(axis=-1), 1, atol=1e-5)
    t_dk, t_dm, t_none = row_entropies(titles)
    assert t_dm - t_dk > 0.5  # trained: √d_model flattens the row visibly …
    assert t_none < t_dk  # … and no divisor sharpens it
    assert "computed live from its shipped weights" in text(at)


def test_with_trained_weights_the_scores_page_shows_no_second_trained_model(shown):
    page("scores", weights="trained", source="sample")
    assert "scaling_trained" not in shown and "scaling_sweep" in shown


def test_the_demos_are_in_chinese_too(shown):
    at = page("scores", lang="zh")
    assert "在形状上训练的模型" in " ".join(m.value for m in at.markdown)
    _, (_, titles, *_), _ = shown["scaling_sweep"]
    assert titles == ["÷ 1（不缩放）：d_k 越大越饱和", "÷ √d_k（论文）：每个 d_k 下同样分散"]
    at = page("addnorm", lang="zh")
    _, (_, _, labels, *_), _ = shown["moments_both"]
    assert labels[0] == "resid_1 的 μ"


# --- the token-norm map --------------------------------------------------------------------------

def test_the_token_norm_colour_scale_is_the_norms_own_range(with_checkpoint, shown):
    at = page("vit", weights="vit_tiny_test")
    draw, args, kwargs = shown["vit_norms"]
    assert draw is figures.heatmap and kwargs["signed"] is False
    grid = args[0]
    trace = shown.trace
    cfg = trace.config
    want = on_grid(patch_values(token_norms(trace.layers[-1].out), cfg.n_prefix),
                   cfg.grid_size)
    np.testing.assert_allclose(grid, want)
    bar = figures.heatmap_picture(*args, **kwargs).colourbar
    assert bar.vmin == pytest.approx(want.min(), rel=1e-6)  # not 0
    assert bar.vmax == pytest.approx(want.max(), rel=1e-6)
    assert bar.vmin > 0.5 * bar.vmax  # these norms sit far from 0: from 0 they'd be one colour
    assert f"smallest patch norm, {want.min():.2f}, to the largest, {want.max():.2f}" in " ".join(
        c.value for c in at.caption)
