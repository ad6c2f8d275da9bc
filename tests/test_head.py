"""encoder_core.pipeline.head: predict pools the output rows as each family does and applies the
head, checked against a loop written from the definitions in float64 (the fast lane's check; the
parity tests compare with timm, Hugging Face and torchvision themselves)."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from encoder_core import EncoderConfig, HeadParams, ParamsError, predict, top_classes
from encoder_core.params import check_params, head_problems, init_params

D, N_CLASSES = 8, 5
VIT = EncoderConfig(image_size=16, patch_size=4, d_model=D, n_heads=2, n_layers=1, d_ff=16,
                    norm_first=True, cls_token=True, dist_token=True, n_registers=2,
                    position="learned", final_norm=True, ln_eps=1e-6)


def rnd(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape).astype(np.float32)


def reference(output: np.ndarray, head: HeadParams, n_prefix: int, eps: float) -> np.ndarray:
    """The logits, one class and one feature at a time, in float64."""
    out = output.astype(np.float64)
    S, d = out.shape
    mean = [sum(out[i, k] for i in range(n_prefix, S)) / (S - n_prefix) for k in range(d)]
    rows = {"token": [list(out[0])], "token_dist": [list(out[0]), list(out[1])],
            "avg": [mean], "token_avg": [list(out[0]) + mean]}[head.pool]
    logits = np.zeros(head.n_classes)
    for r, row in enumerate(rows):
        x = np.array(row)
        if head.fc_norm_gamma is not None:
            mu = sum(x) / len(x)
            var = sum((v - mu) ** 2 for v in x) / len(x)
            x = np.array([(v - mu) / np.sqrt(var + eps) * g + b for v, g, b
                          in zip(x, head.fc_norm_gamma, head.fc_norm_beta, strict=True)])
        if head.W_pre is not None:
            x = np.array([np.tanh(sum(x[i] * head.W_pre[i, j] for i in range(len(x)))
                                  + head.b_pre[j]) for j in range(head.W_pre.shape[1])])
        W, b = (head.W_head, head.b_head) if r == 0 else (head.W_dist, head.b_dist)
        for c in range(head.n_classes):
            logits[c] += (sum(x[i] * W[i, c] for i in range(len(x))) + b[c]) / len(rows)
    return logits


HEADS = {
    "token": HeadParams("token", rnd(D, N_CLASSES), rnd(N_CLASSES)),
    "token + pre-logits tanh": HeadParams("token", rnd(6, N_CLASSES), rnd(N_CLASSES),
                                          W_pre=rnd(D, 6), b_pre=rnd(6)),
    "token_dist": HeadParams("token_dist", rnd(D, N_CLASSES), rnd(N_CLASSES),
                             W_dist=rnd(D, N_CLASSES, seed=1), b_dist=rnd(N_CLASSES, seed=1)),
    "avg + fc_norm": HeadParams("avg", rnd(D, N_CLASSES), rnd(N_CLASSES),
                                fc_norm_gamma=1 + rnd(D), fc_norm_beta=rnd(D, seed=2)),
    "token_avg": HeadParams("token_avg", rnd(2 * D, N_CLASSES), rnd(N_CLASSES)),
}


@pytest.mark.parametrize("name", sorted(HEADS))
def test_predict_is_the_pooled_rows_times_the_head(name):
    head = HEADS[name]
    output = rnd(VIT.seq_len, D, seed=3) * 3
    trace = SimpleNamespace(config=VIT, output=output)  # predict reads these two
    params = check_params(replace(init_params(VIT), head=head), VIT)
    logits = predict(trace, params)
    assert logits.dtype == np.float32 and logits.shape == (N_CLASSES,)
    np.testing.assert_allclose(logits, reference(output, head, VIT.n_prefix, VIT.ln_eps),
                               rtol=1e-5, atol=1e-5)


def test_the_patch_mean_leaves_the_prefix_rows_out():
    """Moving a register row changes nothing for avg; moving a patch row changes the logits."""
    head = HEADS["avg + fc_norm"]
    params = check_params(replace(init_params(VIT), head=head), VIT)
    output = rnd(VIT.seq_len, D, seed=4)
    base = predict(SimpleNamespace(config=VIT, output=output), params)
    moved = output.copy()
    moved[3] += 5  # a register (rows 0 CLS, 1 DIST, 2–3 registers)
    np.testing.assert_array_equal(predict(SimpleNamespace(config=VIT, output=moved), params), base)
    moved[4] += rnd(D, seed=9) * 5  # patch 0 (not a constant: fc_norm would remove it)
    assert not np.allclose(predict(SimpleNamespace(config=VIT, output=moved), params), base)


def test_a_head_that_does_not_fit_is_named():
    cfg = VIT.replace(cls_token=False, dist_token=False, n_registers=0)
    assert any("[CLS] row" in p for p in head_problems(HEADS["token"], cfg))
    assert any("distillation token" in p for p in head_problems(HEADS["token_dist"],
                                                                  VIT.replace(dist_token=False)))
    wide = replace(HEADS["token"], W_head=rnd(D + 1, N_CLASSES))
    assert any("W_head has shape (9, 5), expected (8, 5)" in p for p in head_problems(wide, VIT))
    with pytest.raises(ParamsError, match="head does not fit"):
        from encoder_core.params import head_from_arrays, params_to_arrays

        head_from_arrays(params_to_arrays(replace(init_params(VIT), head=wide)), VIT)
    with pytest.raises(ParamsError, match="no classification head"):
        predict(SimpleNamespace(config=VIT, output=rnd(VIT.seq_len, D)), init_params(VIT))


def test_a_head_round_trips_through_the_npz_key_scheme(tmp_path):
    from encoder_core import load_params, save_params

    params = replace(init_params(VIT), head=HEADS["token_dist"])
    save_params(tmp_path / "p.npz", params)
    again = load_params(tmp_path / "p.npz", VIT)
    assert again.head.pool == "token_dist" and again.head.fc_norm_gamma is None
    np.testing.assert_array_equal(again.head.W_dist, HEADS["token_dist"].W_dist)
    assert not again.head.W_head.flags.writeable


def test_top_classes_are_the_most_probable_first():
    classes, probs = top_classes(np.array([0.0, 3.0, 1.0, 3.0, -2.0], np.float32), k=3)
    assert classes.tolist() == [1, 3, 2]  # a tie: the lower index first
    e = np.exp([0.0, 3.0, 1.0, 3.0, -2.0])
    np.testing.assert_allclose(probs, e[[1, 3, 2]] / e.sum())


@pytest.mark.parametrize("name", ["token", "token_dist", "avg + fc_norm"])
def test_the_logits_arithmetic_adds_up_to_the_predicted_logit(name):
    from encoder_core.views.explain import logit_terms

    head = HEADS[name]
    params = check_params(replace(init_params(VIT), head=head), VIT)
    output = rnd(VIT.seq_len, D, seed=6) * 2
    trace = SimpleNamespace(config=VIT, output=output)
    logits = predict(trace, params)
    for c in range(N_CLASSES):
        t = logit_terms(trace, params, c)
        assert len(t.rows) == (2 if name == "token_dist" else 1)
        sums = [row.total + b for row, b in zip(t.rows, t.biases, strict=True)]
        np.testing.assert_allclose(sums, t.stored, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.mean(sums), logits[c], rtol=1e-5, atol=1e-6)
        assert t.logit == float(logits[c])
    np.testing.assert_array_equal(logit_terms(trace, params, 0).rows[0].a[:D] if name == "token"
                                  else 0, output[0] if name == "token" else 0)  # row = [CLS]
