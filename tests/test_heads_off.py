"""Heads switched off (issue 26, item 5; encoder_core/views/heads_off.py): the rerun from a
layer reuses the layers before it and changes nothing when no head is off; a head's slice of
the concat is 0 before W_O, so attn_out loses exactly concat_j·W_O[j]; every head off leaves
b_O on every row; the per-head logit effects are the reruns' logits minus the model's. On the
note's encoder (post-norm, no biases) and on a small timm-layout ViT (pre-norm, [CLS], biases,
final norm, a head). The comparison with timm itself: tests/test_heads_off_parity.py."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params, predict
from encoder_core.checkpoints.load import load_checkpoint
from encoder_core.pipeline.attention import zero_heads
from encoder_core.trace import trace_arrays
from encoder_core.views.heads_off import (
    encode_heads_off,
    head_logit_effects,
    heads_off_change,
    row_change,
)
from encoder_core.views.vit_views import cls_attention
from tests.support.vit_dicts import write_timm_checkpoint

NOTE = EncoderConfig(image_size=32, patch_size=8, d_model=32, n_heads=4, n_layers=3, d_ff=64)


@pytest.fixture(scope="module")
def note_trace():
    image = np.random.default_rng(0).random((32, 32, 1), dtype=np.float32)
    return encode(image, NOTE, init_params(NOTE))


@pytest.fixture(scope="module")
def vit_trace(tmp_path_factory):
    """A timm-layout ViT: d 64, 4 heads (d_head 16), 3 layers, CLS, 4 × 4 patches, a head."""
    path = write_timm_checkpoint(tmp_path_factory.mktemp("ho") / "vit.safetensors",
                                 d=64, P=8, grid=4, L=3, d_ff=96, seed=3)
    cfg, params, _ = load_checkpoint(path, n_heads=4)
    image = np.random.default_rng(1).random((32, 32, 3), dtype=np.float32)
    return encode(image, cfg, params)


@pytest.fixture(params=["note_trace", "vit_trace"])
def trace(request):
    return request.getfixturevalue(request.param)


def test_zero_heads_sets_only_those_columns_to_zero():
    concat = np.arange(2 * 3 * 8, dtype=np.float32).reshape(2, 3, 8) + 1  # [B, S, d], h 4
    out = zero_heads(concat, (1, 3), 4)
    assert np.all(out[..., 2:4] == 0) and np.all(out[..., 6:8] == 0)
    np.testing.assert_array_equal(out[..., [0, 1, 4, 5]], concat[..., [0, 1, 4, 5]])
    assert np.all(concat > 0)  # its argument is left as it was
    with pytest.raises(ValueError, match="do not exist"):
        zero_heads(concat, (4,), 4)


@pytest.mark.parametrize("layer", [0, 1, 2])
def test_switching_no_head_off_gives_the_original_trace_exactly(trace, layer):
    again = encode_heads_off(trace, layer, ())
    before, after = trace_arrays(trace), trace_arrays(again)
    assert sorted(before) == sorted(after)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)


@pytest.mark.parametrize("layer", [1, 2])
def test_a_head_off_in_layer_l_leaves_the_layers_before_it_untouched(trace, layer):
    off = encode_heads_off(trace, layer, (1,))
    for i in range(layer):
        assert off.layers[i] is trace.layers[i]  # reused, not recomputed
    np.testing.assert_array_equal(off.x0, trace.x0)
    assert not np.array_equal(off.layers[layer].attn_out, trace.layers[layer].attn_out)
    assert not np.array_equal(off.output, trace.output)
    # the layer's own attention is computed before the head is switched off
    np.testing.assert_array_equal(off.layers[layer].attn, trace.layers[layer].attn)
    assert all(a.flags.writeable is False for a in trace_arrays(off).values())


def test_a_head_off_removes_exactly_its_share_of_w_o(trace):
    """attn_out' = attn_out − concat[:, j-th slice] · W_O[j-th slice, :] (W_O is linear)."""
    cfg, layer, j = trace.config, 1, 2
    dh = cfg.d_head
    lt, p = trace.layers[layer], trace.params.layers[layer]
    off = encode_heads_off(trace, layer, (j,)).layers[layer]
    share = (lt.concat[:, j * dh:(j + 1) * dh].astype(np.float64)
             @ p.W_O[j * dh:(j + 1) * dh].astype(np.float64))  # [S, d]
    np.testing.assert_allclose(off.attn_out, lt.attn_out - share, rtol=1e-5, atol=1e-5)
    assert np.all(off.concat[:, j * dh:(j + 1) * dh] == 0)
    keep = np.r_[0:j * dh, (j + 1) * dh:cfg.d_model]
    np.testing.assert_array_equal(off.concat[:, keep], lt.concat[:, keep])


def test_every_head_off_leaves_b_o_on_every_row(vit_trace, note_trace):
    cfg = vit_trace.config
    b_O = vit_trace.params.layers[1].b_O
    assert b_O is not None and np.abs(b_O).max() > 0
    out = encode_heads_off(vit_trace, 1, tuple(range(cfg.n_heads))).layers[1].attn_out
    np.testing.assert_array_equal(out, np.broadcast_to(b_O, (cfg.seq_len, cfg.d_model)))
    # the note's W_O has no bias: nothing is left
    h = note_trace.config.n_heads
    assert not encode_heads_off(note_trace, 0, tuple(range(h))).layers[0].attn_out.any()


def test_the_per_head_effects_are_the_reruns_logits_minus_the_models(vit_trace):
    params = vit_trace.params
    logits = predict(vit_trace, params)
    top = int(np.argmax(logits))
    effects = head_logit_effects(vit_trace, 1, top)
    assert effects.shape == (vit_trace.config.n_heads,) and effects.dtype == np.float64
    for j, e in enumerate(effects):
        alone = predict(encode_heads_off(vit_trace, 1, (j,)), params)
        assert e == pytest.approx(float(alone[top]) - float(logits[top]), abs=1e-6)
    assert np.abs(effects).max() > 0


def test_row_change_is_the_mean_absolute_difference_of_each_row():
    a = np.array([[0.0, 1.0], [2.0, 2.0]], np.float32)
    b = np.array([[1.0, -1.0], [2.0, 2.0]], np.float32)
    np.testing.assert_array_equal(row_change(a, b), [1.5, 0.0])


def test_a_layer_or_head_that_does_not_exist_is_refused(note_trace):
    with pytest.raises(ValueError, match="layer 3"):
        encode_heads_off(note_trace, 3, (0,))
    with pytest.raises(ValueError, match="heads"):
        encode_heads_off(note_trace, 0, (7,))


@pytest.mark.parametrize("layer", [0, 2])
def test_the_change_sums_up_the_rerun(vit_trace, layer):
    """heads_off_change (one layer held at a time) says what encode_heads_off's trace says."""
    cfg, params = vit_trace.config, vit_trace.params
    change = heads_off_change(vit_trace, layer, (2, 0))
    full = encode_heads_off(vit_trace, layer, (0, 2))
    assert change.heads_off == (0, 2) and change.layer == layer
    np.testing.assert_array_equal(change.logits, predict(full, params))
    np.testing.assert_array_equal(change.row_change, row_change(vit_trace.output, full.output))
    assert change.row_change.shape == (cfg.seq_len,) and change.row_change.max() > 0
    np.testing.assert_array_equal(change.cls_after, cls_attention(full.layers[-1].attn, 1))
    np.testing.assert_array_equal(change.cls_before, cls_attention(vit_trace.layers[-1].attn, 1))
    assert np.array_equal(change.cls_after, change.cls_before) == (layer == cfg.n_layers - 1)


def test_the_note_encoder_has_no_logits_and_no_cls_rows_to_change(note_trace):
    change = heads_off_change(note_trace, 1, (0,))
    assert change.logits is None and change.cls_before is None and change.cls_after is None
    assert change.row_change.shape == (note_trace.config.seq_len,)
    with pytest.raises(ValueError, match="no classification head"):
        head_logit_effects(note_trace, 0, 0)


def test_the_cost_term_covers_what_the_reruns_hold(vit_trace):
    """encoder_core.cost.heads_off: ~2 layers' arrays beside the trace, whatever the layer
    (one rerun layer and the one before it at a time); tracemalloc's peak within −50 % … +20 %
    of it (the rows of the final norm and a few Python objects besides)."""
    import tracemalloc

    from encoder_core.cost import heads_off

    cfg = vit_trace.config
    top = int(np.argmax(predict(vit_trace, vit_trace.params)))
    predicted = heads_off(cfg).transient
    for run in (lambda: heads_off_change(vit_trace, 0, (1,)),
                lambda: head_logit_effects(vit_trace, 0, top),
                lambda: heads_off_change(vit_trace, cfg.n_layers - 1, (0, 1))):
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        run()
        peak = tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
        assert 0.5 * predicted <= peak <= 1.2 * predicted, (peak, predicted)
