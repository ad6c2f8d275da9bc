"""Direct logit attribution (issue 53; encoder_core/views/logit_attribution.py): the shares sum
to the logit; the residual stream rebuilt in float64 from the parts the shares name is the
trace's last layer; each share is what removing that term from x_L changes in a float64 head
written out with the norms' scales held (tests/support/inside_models.py); post-norm models and
tanh heads are refused with the reason. On every ViT variant at once (LayerScale, every bias,
prefix tokens, learned positions) and each head pooling. timm: tests/test_logit_parity.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from encoder_core import NotDecomposable, logit_attribution, predict, total
from encoder_core.views.logit_attribution import LogitShares
from tests.support.inside_models import (
    HEAD_KINDS,
    N_CLASSES,
    naive_head,
    naive_layer_norm,
    note_model,
    traced,
    vit_model,
)


@pytest.fixture(scope="module", params=HEAD_KINDS)
def vit(request):
    cfg, params = vit_model(request.param)
    return traced(cfg, params), params


def ls(a):
    return 1.0 if a is None else a.astype(np.float64)


def terms(trace, params) -> dict:
    """Every additive term of x_L, float64 [S, d], named by the share it belongs to."""
    cfg = trace.config
    n, S, d, h = cfg.n_prefix, cfg.seq_len, cfg.d_model, cfg.n_heads
    f64 = lambda a: np.asarray(a, np.float64)  # noqa: E731
    on_patches = lambda rows: np.concatenate([np.zeros((n, d)), rows])  # noqa: E731
    out = {"embedding": on_patches(f64(trace.patches) @ f64(params.W_E)),
           "positions": f64(trace.pos),
           "prefix": np.concatenate([f64(trace.tokens[:n]), np.zeros((S - n, d))]),
           "biases": on_patches(np.tile(f64(params.b_E), (S - n, 1)))}
    for l, (lt, p) in enumerate(zip(trace.layers, params.layers, strict=True)):
        dh = d // h
        for j in range(h):
            part = f64(lt.concat[:, j * dh:(j + 1) * dh]) @ f64(p.W_O[j * dh:(j + 1) * dh])
            out[("head", l, j)] = ls(p.ls_1) * part
        out[("ffn", l)] = ls(p.ls_2) * (f64(lt.ffn_hidden) @ f64(p.W_2))
        out["biases"] = out["biases"] + ls(p.ls_1) * f64(p.b_O) + ls(p.ls_2) * f64(p.b_2)
    return out


def held_logit(trace, params, x_L: np.ndarray, target: int) -> float:
    """The logit from x_L with the final norm's σ (and fc_norm's) held at the trace's values."""
    cfg = trace.config
    sigma = np.sqrt(trace.final_ln.var.astype(np.float64) + cfg.ln_eps)
    output = naive_layer_norm(x_L, params.norm_gamma, params.norm_beta, cfg.ln_eps, sigma)
    fc_sigma = None
    if params.head.fc_norm_gamma is not None:
        pooled = np.asarray(trace.output, np.float64)[cfg.n_prefix:].mean(axis=0)
        fc_sigma = np.sqrt(pooled.var() + cfg.ln_eps)
    return float(naive_head(output, params.head, cfg.n_prefix, cfg.ln_eps, fc_sigma)[target])


def share_of(shares: LogitShares, name) -> float:
    if isinstance(name, tuple):
        return float(shares.heads[name[1], name[2]] if name[0] == "head" else shares.ffn[name[1]])
    return float(getattr(shares, name))


@pytest.mark.parametrize("target", [0, N_CLASSES - 1])
def test_the_shares_sum_to_the_logit(vit, target):
    trace, params = vit
    shares = logit_attribution(trace, params, target)
    logit = float(predict(trace, params)[target])
    assert shares.logit == logit and shares.target == target
    assert shares.heads.shape == (trace.config.n_layers, trace.config.n_heads)
    assert shares.ffn.shape == (trace.config.n_layers,)
    assert abs(total(shares) - logit) <= 1e-5 * max(1.0, abs(logit)), (total(shares), logit)
    assert shares.sum() == total(shares)
    assert np.all(shares.heads != 0) and np.all(shares.ffn != 0)


def test_the_named_terms_rebuild_the_last_layers_stream(vit):
    trace, params = vit
    rebuilt = sum(terms(trace, params).values())
    out = trace.layers[-1].out.astype(np.float64)
    assert float(np.abs(rebuilt - out).max() / np.abs(out).max()) <= 1e-5


def test_each_share_is_the_logit_lost_when_its_term_leaves_the_stream(vit):
    """logit(x_L) − logit(x_L − term), σ held: the share, for every part (float64 naive)."""
    trace, params = vit
    parts = terms(trace, params)
    x_L = sum(parts.values())
    target = int(np.argmax(predict(trace, params)))
    shares = logit_attribution(trace, params, target)
    base = held_logit(trace, params, x_L, target)
    assert abs(base - shares.logit) <= 1e-5 * max(1.0, abs(base))
    for name, term in parts.items():
        removed = base - held_logit(trace, params, x_L - term, target)
        assert abs(removed - share_of(shares, name)) <= 1e-6 * max(1.0, abs(base)), name
    # what is left when every term is gone: the head's constants
    assert abs(held_logit(trace, params, 0 * x_L, target) - shares.head_bias) <= 1e-6


def test_the_cls_head_reads_no_patch_embedding_directly():
    """A [CLS]-pooled head reads row 0 only: the patches' embedding reaches it through the
    attention (inside the heads' shares), never directly."""
    cfg, params = vit_model("token")
    shares = logit_attribution(traced(cfg, params), params, 1)
    assert shares.embedding == 0.0 and shares.prefix != 0.0


def test_the_note_encoder_is_post_norm_and_has_no_shares():
    cfg, params = note_model()
    with pytest.raises(NotDecomposable, match="re-normalised after every sub-layer") as err:
        logit_attribution(traced(cfg, params), params, 0)
    assert isinstance(err.value, ValueError)


def test_a_tanh_pre_logits_head_has_no_shares():
    cfg, params = vit_model("pre_logits")
    with pytest.raises(NotDecomposable, match="tanh"):
        logit_attribution(traced(cfg, params), params, 0)


def test_without_a_head_it_says_so(vit):
    trace, params = vit
    with pytest.raises(ValueError, match="no classification head"):
        logit_attribution(trace, dataclasses.replace(params, head=None), 0)


def test_shares_are_frozen(vit):
    trace, params = vit
    shares = logit_attribution(trace, params, 0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        shares.logit = 0.0  # type: ignore[misc]
