"""Layer normalisation (encoder_core/norm.py): μ, σ², x̂ and γ ⊙ x̂ + β of every row."""

from __future__ import annotations

import numpy as np


def layer_norms(trace):
    """(name, LayerNormTrace) of every layer norm in the trace."""
    for l, layer in enumerate(trace.layers):
        yield f"layers[{l}].ln_1", layer.ln_1
        if layer.ln_2 is not None:
            yield f"layers[{l}].ln_2", layer.ln_2


def test_layer_norm_normed_rows_have_mean_zero(trace):
    for name, ln in layer_norms(trace):
        means = ln.normed.astype(np.float64).mean(axis=-1)
        assert np.max(np.abs(means)) <= 1e-5, f"{name}.normed row means up to {means.max():.2e}"


def test_layer_norm_normed_variance_is_var_over_var_plus_eps(trace):
    eps = trace.config.ln_eps
    for name, ln in layer_norms(trace):
        var = ln.var.astype(np.float64)
        assert np.all(var >= 0), f"{name}.var is negative"
        expected = var / (var + eps)
        got = ln.normed.astype(np.float64).var(axis=-1)
        np.testing.assert_allclose(got, expected, rtol=1e-4, err_msg=f"{name}.normed variance")


def test_layer_norm_mean_and_var_are_those_of_its_input(trace):
    d = trace.config.d_model
    for l, layer in enumerate(trace.layers):
        pairs = [("ln_1", layer.ln_1, layer.resid_1), ("ln_2", layer.ln_2, layer.resid_2)]
        for name, ln, x in pairs:
            if ln is None:
                continue
            x = x.astype(np.float64)
            mu = x.sum(axis=-1) / d
            np.testing.assert_allclose(ln.mean, mu, rtol=1e-4, atol=1e-6)
            np.testing.assert_allclose(
                ln.var, ((x - mu[:, None]) ** 2).sum(axis=-1) / d, rtol=1e-4,
                err_msg=f"layers[{l}].{name}.var (population variance, divide by d_model)",
            )  # fmt: skip


def test_layer_norm_out_is_gamma_normed_plus_beta(trace):
    for layer, lp in zip(trace.layers, trace.params.layers, strict=True):
        expected = lp.gamma_1.astype(np.float64) * layer.ln_1.normed + lp.beta_1
        np.testing.assert_allclose(layer.ln_1.out, expected, rtol=1e-6, atol=1e-6)
        if layer.ln_2 is not None:
            expected = lp.gamma_2.astype(np.float64) * layer.ln_2.normed + lp.beta_2
            np.testing.assert_allclose(layer.ln_2.out, expected, rtol=1e-6, atol=1e-6)
