"""Every gradient the page "How it learns" shows (`encoder_core.views.learning`, the core's
backward seeded with the loss) equals PyTorch autograd's on the same model — the shipped shapes
model, written here in torch from its own weights, on a generated shape — ≤ 1e-4 of each
tensor's largest value: dL/dlogits, dL/dpooled, every layer's dL/dscores, dL/dattn, the
residuals, the LayerNorm outputs, the FFN's hidden units and output, dL/dx0, and every
weight's gradient; and the two rows the page writes out (the softmax Jacobian's product, one
row's LayerNorm backward) equal autograd's rows."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core.views.learning import (
    layer_norm_row_backward,
    loss_gradients,
    scores_row_gradient,
    softmax_row_backward,
)
from tests.support.learning import TOLERANCE, relative_error, shapes_case

pytestmark = pytest.mark.parity  # imports torch: not in the fast lane

@pytest.fixture(scope="module")
def shapes():
    return shapes_case()


def torch_pass(trace, params, label):
    """The shapes model's forward in torch (post-norm, ReLU, no biases on Q/K/V/W_O, mean pool)
    from the trace's patches and positions, every node shown by the page retained."""
    from tests.support.torch_shim import torch  # noqa: PLC0415  (test-only)

    cfg = trace.config
    t = lambda a: torch.tensor(np.asarray(a, np.float64), requires_grad=True)  # noqa: E731
    kept = {"W_E": t(params.W_E)}
    h, d = cfg.n_heads, cfg.d_model
    s = cfg.score_scale
    x = torch.tensor(trace.patches, dtype=torch.float64) @ kept["W_E"]
    x = x + torch.tensor(trace.pe, dtype=torch.float64)
    x.retain_grad()
    kept["x0"] = x

    def ln(z, g, b):
        mu = z.mean(-1, keepdim=True)
        var = ((z - mu) ** 2).mean(-1, keepdim=True)
        return g * (z - mu) / torch.sqrt(var + cfg.ln_eps) + b

    for l, p in enumerate(params.layers):
        w = {k: t(getattr(p, k)) for k in ("W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1",
                                           "W_1", "b_1", "W_2", "b_2", "gamma_2", "beta_2")}
        kept.update({f"layer{l}/{k}": v for k, v in w.items()})
        S = x.shape[0]
        q, k, v = ((x @ w[n]).reshape(S, h, d // h).transpose(0, 1) for n in ("W_Q", "W_K", "W_V"))
        scores = q @ k.transpose(1, 2) / s
        scores.retain_grad()
        attn = torch.softmax(scores, -1)
        attn.retain_grad()
        concat = (attn @ v).transpose(0, 1).reshape(S, d)
        resid_1 = x + concat @ w["W_O"]
        resid_1.retain_grad()
        ln_1 = ln(resid_1, w["gamma_1"], w["beta_1"])
        ln_1.retain_grad()
        hidden = torch.relu(ln_1 @ w["W_1"] + w["b_1"])
        hidden.retain_grad()
        ffn_out = hidden @ w["W_2"] + w["b_2"]
        ffn_out.retain_grad()
        resid_2 = ln_1 + ffn_out
        resid_2.retain_grad()
        x = ln(resid_2, w["gamma_2"], w["beta_2"])
        x.retain_grad()
        kept |= {f"{l}/scores": scores, f"{l}/attn": attn, f"{l}/resid_1": resid_1,
                 f"{l}/ln_1": ln_1, f"{l}/hidden": hidden, f"{l}/ffn_out": ffn_out,
                 f"{l}/resid_2": resid_2, f"{l}/out": x}
    pooled = x.mean(0)
    pooled.retain_grad()
    kept["pooled"] = pooled
    W_cls, b_cls = t(params.head.W_head), t(params.head.b_head)
    logits = pooled @ W_cls + b_cls
    logits.retain_grad()
    kept |= {"logits": logits, "W_cls": W_cls, "b_cls": b_cls}
    loss = torch.nn.functional.cross_entropy(logits[None], torch.tensor([label]))
    loss.backward()
    return loss.item(), {k: v.grad.numpy() for k, v in kept.items()}


def test_every_gradient_the_page_shows_equals_autograds(shapes):
    cfg, params, sample, trace = shapes
    lg = loss_gradients(trace, params, sample.label)
    loss, theirs = torch_pass(trace, params, sample.label)
    assert abs(lg.loss - loss) <= 1e-4 * max(1.0, abs(loss))
    g = lg.grads
    ours = {"logits": lg.d_logits, "pooled": lg.d_pooled, "x0": g.x0, "W_E": g.params.W_E,
            "W_cls": g.params.head.W_head, "b_cls": g.params.head.b_head}
    for l, (gl, gp) in enumerate(zip(g.layers, g.params.layers, strict=True)):
        ours |= {f"{l}/scores": gl.scores, f"{l}/attn": gl.attn, f"{l}/resid_1": gl.resid_1,
                 f"{l}/ln_1": gl.ln_1.out, f"{l}/hidden": gl.ffn_hidden,
                 f"{l}/ffn_out": gl.ffn_out, f"{l}/resid_2": gl.resid_2, f"{l}/out": gl.out}
        ours |= {f"layer{l}/{k}": getattr(gp, k) for k in (
            "W_Q", "W_K", "W_V", "W_O", "gamma_1", "beta_1", "W_1", "b_1", "W_2", "b_2",
            "gamma_2", "beta_2")}
    errors = {k: relative_error(ours[k], theirs[k]) for k in theirs}
    assert max(errors.values()) <= TOLERANCE, {k: e for k, e in errors.items() if e > TOLERANCE}
    assert set(errors) == set(ours)


def test_the_one_row_pieces_equal_autograds(shapes):
    """The softmax Jacobian's product and the one-row LayerNorm backward, on the rows the page
    shows, against autograd's dL/dscores and dL/dresid."""
    cfg, params, sample, trace = shapes
    lg = loss_gradients(trace, params, sample.label)
    _, theirs = torch_pass(trace, params, sample.label)
    for l in range(cfg.n_layers):
        for head, query in ((0, 0), (cfg.n_heads - 1, 100)):
            row = scores_row_gradient(trace.layers[l].attn[head, query],
                                      lg.grads.layers[l].attn[head, query])
            assert relative_error(row, theirs[f"{l}/scores"][head, query]) <= TOLERANCE
            pieces = softmax_row_backward(trace.layers[l].attn[head, query],
                                          lg.grads.layers[l].attn[head, query])
            assert np.array_equal(pieces.d_scores, row)
            assert np.allclose(pieces.d_scores, pieces.a * (pieces.d_attn - pieces.weighted))
        ln = layer_norm_row_backward(trace.layers[l].resid_2[7], params.layers[l].gamma_2,
                                     cfg.ln_eps, lg.grads.layers[l].out[7])
        assert relative_error(ln.dx, theirs[f"{l}/resid_2"][7]) <= TOLERANCE
