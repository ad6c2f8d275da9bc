"""Layer normalisation (encoder_core/pipeline/norm.py): μ, σ², x̂ and γ ⊙ x̂ + β of every row."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import layer_norm


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


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_on_a_batch_normalises_each_item_and_keeps_the_dtype(dtype):
    rng = np.random.default_rng(0)
    x = (3 * rng.standard_normal((2, 5, 8)) + 1).astype(dtype)  # [B, N, d]
    gamma, beta = rng.standard_normal((2, 8)).astype(np.float32)  # float32, as encode's params
    ln = layer_norm(x, gamma, beta, 1e-5)
    assert ln.mean.shape == ln.var.shape == (2, 5)
    assert ln.normed.shape == ln.out.shape == (2, 5, 8)
    for name in ("mean", "var", "normed", "out"):
        assert getattr(ln, name).dtype == dtype, name
        for b in range(2):
            np.testing.assert_array_equal(getattr(ln, name)[b],
                                          getattr(layer_norm(x[b], gamma, beta, 1e-5), name))
    if dtype == np.float64:  # ε is not rounded through float32
        x64 = x.astype(np.float64)
        expected = (x64 - x64.mean(-1, keepdims=True)) / np.sqrt(x64.var(-1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(ln.normed, expected, rtol=1e-12)
