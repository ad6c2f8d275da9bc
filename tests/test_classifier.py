"""The shipped trained weights: they classify fresh shapes, their attention sits on the object,
and the file round-trips without pickle. Fresh images come from seeds 0–99 (training used
seeds ≥ 1_000_000, its held-out set 900_000+), so none was seen in training.
"""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pytest

from encoder_core import EncoderConfig, encode, init_params, predict, save_params, softmax
from encoder_core.params import ParamsError
from encoder_core.shapes_model.classifier import (
    DEFAULT_CHECKPOINTS,
    DEFAULT_WEIGHTS,
    Checkpoint,
    ClassifierHead,
    load_checkpoints,
    load_trained,
    localisation_ratio,
    object_patch_mask,
    save_checkpoints,
    save_trained,
)
from encoder_core.shapes_model.dataset import CLASS_NAMES, make_batch

N_ACCURACY = 300  # fresh images for the accuracy check
N_LOCALISATION = 100  # fresh images for the localisation check


@pytest.fixture(scope="module")
def trained():
    return load_trained()


@pytest.fixture(scope="module")
def fresh():
    """300 images never used in training: seeds 0, 1, 2 with 100 images each."""
    parts = [make_batch(seed, 100) for seed in range(N_ACCURACY // 100)]
    return tuple(np.concatenate(arrays) for arrays in zip(*parts, strict=True))


@pytest.fixture(scope="module")
def trained_traces(trained, fresh):
    cfg, params, _ = trained
    return [encode(image, cfg, params) for image in fresh[0]]


def test_shipped_weights_file_is_small():
    assert DEFAULT_WEIGHTS.exists()
    assert DEFAULT_WEIGHTS.stat().st_size < 1_000_000


def test_load_trained_gives_a_valid_config_and_params_encode_accepts(trained, fresh):
    cfg, params, head = trained
    assert EncoderConfig(**cfg.to_dict()) == cfg  # validates
    assert (cfg.image_size, cfg.patch_size, cfg.channels) == (224, 16, 1)
    assert head.class_names == CLASS_NAMES
    trace = encode(fresh[0][0], cfg, params)
    assert trace.output.shape == (cfg.n_tokens, cfg.d_model)


@pytest.mark.slow
def test_shipped_weights_classify_at_least_95_percent_of_300_fresh_images(trained, fresh,
                                                                           trained_traces):
    _, params, _ = trained
    predicted = np.array([predict(t, params).argmax() for t in trained_traces])
    accuracy = np.mean(predicted == fresh[1])
    assert accuracy >= 0.95, f"accuracy {accuracy:.3f}"


def test_the_head_is_part_of_the_weights_and_predict_is_mean_pool_times_W_cls(trained, fresh):
    cfg, params, head = trained
    assert params.head is not None and params.head.pool == "avg"
    assert np.array_equal(params.head.W_head, head.W_cls)
    trace = encode(fresh[0][0], cfg, params)  # one trace, not 300
    logits = predict(trace, params)
    assert logits.dtype == np.float32 and logits.shape == (len(CLASS_NAMES),)
    by_hand = np.float64(trace.output).mean(axis=0) @ head.W_cls + head.b_cls  # [d] · [d, 4]
    np.testing.assert_allclose(logits, by_hand, rtol=1e-5, atol=1e-5)
    probs = softmax(logits)
    assert np.isclose(probs.sum(), 1.0, atol=1e-6) and probs.argmax() == logits.argmax()


def test_every_shipped_checkpoint_carries_its_own_head(trained):
    _, checkpoints = load_checkpoints()
    for c in checkpoints:
        assert c.params.head is not None
        assert np.array_equal(c.params.head.W_head, c.head.W_cls)
        assert np.array_equal(c.params.head.b_head, c.head.b_cls)


def mean_ratio(traces, masks) -> float:
    return float(np.mean([localisation_ratio(t, m) for t, m in zip(traces, masks, strict=True)]))


@pytest.mark.slow
def test_trained_attention_rollout_sits_on_the_object(fresh, trained_traces):
    ratio = mean_ratio(trained_traces[:N_LOCALISATION], fresh[2][:N_LOCALISATION])
    assert ratio >= 3.0, f"mean localisation ratio {ratio:.2f}"


@pytest.mark.slow
def test_random_weights_attention_rollout_does_not_sit_on_the_object(trained, fresh):
    cfg, _, _ = trained
    params = init_params(cfg)
    traces = [encode(image, cfg, params) for image in fresh[0][:N_LOCALISATION]]
    ratio = mean_ratio(traces, fresh[2][:N_LOCALISATION])
    assert ratio < 1.5, f"mean localisation ratio {ratio:.2f}"


def test_object_patch_mask_keeps_patches_with_a_quarter_of_their_pixels():
    mask = np.zeros((32, 32), dtype=bool)
    mask[0:8, 0:8] = True  # patch 0: all of it
    mask[0:2, 8:16] = True  # patch 1: 16 of 64 pixels = 25 %
    mask[8:9, 0:8] = True  # patch 4: 8 of 64 pixels = 12.5 %
    on_object = object_patch_mask(mask, patch_size=8)
    assert on_object.shape == (16,)
    assert np.flatnonzero(on_object).tolist() == [0, 1]


def fake_trace(attns, patch_size):
    """Just what localisation_ratio reads: config.patch_size and layers[l].attn."""
    return SimpleNamespace(config=SimpleNamespace(patch_size=patch_size),
                           layers=[SimpleNamespace(attn=a) for a in attns])


def test_localisation_ratio_is_one_for_uniform_attention():
    N = 16
    uniform = np.full((2, N, N), 1.0 / N)
    mask = np.zeros((32, 32), dtype=bool)
    mask[8:24, 8:24] = True  # 4 of 16 patches
    assert np.isclose(localisation_ratio(fake_trace([uniform, uniform], 8), mask), 1.0)


def test_localisation_ratio_grows_when_attention_goes_to_the_object():
    N = 16
    mask = np.zeros((32, 32), dtype=bool)
    mask[0:8, 0:16] = True  # patches 0 and 1
    focused = np.zeros((2, N, N))
    focused[:, :, :2] = 0.5  # every query looks at patches 0 and 1 only
    ratio = localisation_ratio(fake_trace([focused, focused], 8), mask)
    # R = (½A + ½I)² = ¼I + ¾A here, so m puts ¼·2/16 + ¾ on the object: ratio = 6.25
    assert np.isclose(ratio, (0.25 * 2 / 16 + 0.75) / (2 / 16))


def test_save_and_load_round_trip_without_pickle(trained):
    cfg, params, head = trained
    buffer = io.BytesIO()
    save_trained(buffer, cfg, params, head)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as npz:  # every key loads without pickle
        arrays = {k: npz[k] for k in npz.files}
    assert arrays["config"].ndim == 0 and arrays["class_names"].dtype.kind == "U"
    buffer.seek(0)
    cfg2, params2, head2 = load_trained(buffer)
    assert cfg2 == cfg and head2.class_names == head.class_names
    assert np.array_equal(params2.W_E, params.W_E)
    assert np.array_equal(head2.W_cls, head.W_cls) and np.array_equal(head2.b_cls, head.b_cls)
    for lp, lp2 in zip(params.layers, params2.layers, strict=True):
        assert np.array_equal(lp.W_Q, lp2.W_Q) and np.array_equal(lp.gamma_2, lp2.gamma_2)


def test_load_trained_rejects_a_file_without_a_head(tmp_path):
    cfg = EncoderConfig(image_size=32, patch_size=8, d_model=8, n_heads=2, n_layers=1, d_ff=16)
    path = tmp_path / "encoder_only.npz"
    save_params(path, init_params(cfg))
    with pytest.raises(ParamsError, match="missing"):
        load_trained(path)


def test_classifier_head_rejects_mismatched_shapes():
    with pytest.raises(ParamsError):
        ClassifierHead(np.zeros((8, 3)), np.zeros(4), CLASS_NAMES)


# --- checkpoints: the model at several points of its training ---------------------------------
MAX_ASSETS_BYTES = 5 * 2**20  # everything under assets/ together


def small_checkpoints() -> tuple[EncoderConfig, list[Checkpoint]]:
    cfg = EncoderConfig(image_size=32, patch_size=8, d_model=8, n_heads=2, n_layers=2, d_ff=16)
    rng = np.random.default_rng(0)
    return cfg, [Checkpoint(step=step, params=init_params(cfg.replace(seed=step)),
                            head=ClassifierHead(rng.standard_normal((8, 4)), rng.standard_normal(4),
                                                CLASS_NAMES), accuracy=acc)
                 for step, acc in ((0, 0.25), (10, 0.5), (30, 0.75))]


def test_checkpoints_round_trip_without_pickle_with_every_shape_checked():
    cfg, checkpoints = small_checkpoints()
    buffer = io.BytesIO()
    save_checkpoints(buffer, cfg, checkpoints, held_out_size=100)
    buffer.seek(0)
    with np.load(buffer, allow_pickle=False) as npz:  # every key loads without pickle
        assert npz["steps"].tolist() == [0, 10, 30] and npz["config"].ndim == 0
        assert "step10/params/layer1/W_Q" in npz.files and "step30/W_cls" in npz.files
    buffer.seek(0)
    cfg2, loaded = load_checkpoints(buffer)
    assert cfg2 == cfg
    for c, c2 in zip(checkpoints, loaded, strict=True):
        assert (c2.step, c2.accuracy, c2.head.class_names) == (c.step, c.accuracy, CLASS_NAMES)
        assert np.array_equal(c2.params.W_E, c.params.W_E)
        assert np.array_equal(c2.params.layers[1].W_2, c.params.layers[1].W_2)
        assert np.array_equal(c2.head.W_cls, c.head.W_cls)
        assert np.array_equal(c2.head.b_cls, c.head.b_cls)


def test_checkpoints_with_a_wrong_shape_or_unordered_steps_are_refused(tmp_path):
    cfg, checkpoints = small_checkpoints()
    with pytest.raises(ParamsError, match="increasing"):
        save_checkpoints(tmp_path / "x.npz", cfg, checkpoints[::-1], held_out_size=100)
    path = tmp_path / "wrong.npz"
    save_checkpoints(path, cfg, checkpoints, held_out_size=100)
    with np.load(path, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files}
    arrays["config"] = np.array(arrays["config"].item().replace('"d_model": 8', '"d_model": 16'))
    np.savez(path, **arrays)  # the weights no longer fit the configuration
    with pytest.raises(ParamsError, match="do not fit"):
        load_checkpoints(path)


def test_shipped_checkpoints_go_from_the_initialisation_to_the_shipped_weights(trained):
    cfg, params, head = trained
    ck_cfg, checkpoints = load_checkpoints()
    assert ck_cfg == cfg
    steps = [c.step for c in checkpoints]
    assert steps[0] == 0 and len(steps) >= 6 and steps == sorted(steps)
    first, last = checkpoints[0], checkpoints[-1]
    start = init_params(cfg)  # step 0 is init_params(cfg), as training starts
    assert np.array_equal(first.params.W_E, start.W_E)
    assert np.array_equal(first.params.layers[1].W_O, start.layers[1].W_O)
    assert np.array_equal(last.params.W_E, params.W_E)  # the last is the shipped file
    for lp, lp2 in zip(last.params.layers, params.layers, strict=True):
        assert all(np.array_equal(getattr(lp, k), getattr(lp2, k)) for k in ("W_Q", "W_1"))
    assert np.array_equal(last.head.W_cls, head.W_cls)
    assert first.accuracy < 0.4 and last.accuracy >= 0.98  # chance is 0.25


def test_every_asset_together_is_at_most_5_mb():
    assert DEFAULT_CHECKPOINTS.exists()
    total = sum(p.stat().st_size for p in DEFAULT_WEIGHTS.parent.rglob("*") if p.is_file())
    assert total <= MAX_ASSETS_BYTES, f"{total / 2**20:.2f} MiB"
