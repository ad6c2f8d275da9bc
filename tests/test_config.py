"""The settings (encoder_core/config.py): derived sizes, and every impossible setting refused
with a message that says what to change."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pytest

from encoder_core import ConfigError, EncoderConfig
from tests.support.configs import SMALL


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)
    with pytest.raises(ValueError):
        EncoderConfig(image_size=225)


def test_default_config_is_valid_with_documented_derived_sizes():
    cfg = EncoderConfig()
    assert cfg.grid_size == 14 and cfg.n_tokens == 196 and cfg.patch_dim == 256
    assert cfg.d_head == 64 and cfg.score_scale == pytest.approx(8.0)
    assert cfg.attention_bytes == 6 * 8 * 196**2 * 2 * 4


def test_image_size_not_a_multiple_of_patch_size_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)image_size.*multiple.*patch_size"):
        EncoderConfig(image_size=225, patch_size=16)


def test_d_model_not_divisible_by_n_heads_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)d_model.*divisible.*n_heads") as info:
        EncoderConfig(d_model=512, n_heads=6)
    assert "512" in str(info.value) and "6" in str(info.value)


def test_odd_d_model_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)d_model.*even") as info:
        EncoderConfig(d_model=511, n_heads=1)
    assert "511" in str(info.value)


NON_POSITIVE_FIELDS = ("image_size", "patch_size", "channels", "d_model", "n_heads", "n_layers",
                       "d_ff")  # fmt: skip


@pytest.mark.parametrize("value", [0, -1])
@pytest.mark.parametrize("field", NON_POSITIVE_FIELDS)
def test_non_positive_values_raise_config_error(field, value):
    with pytest.raises(ConfigError, match=rf"{field}.*positive") as info:
        EncoderConfig(**{field: value})
    assert str(value) in str(info.value)


def test_non_positive_ln_eps_raises_config_error():
    for eps in (0.0, -1e-5):
        with pytest.raises(ConfigError, match="ln_eps"):
            EncoderConfig(ln_eps=eps)


def test_more_than_1024_tokens_raises_config_error():
    with pytest.raises(ConfigError, match=r"4096 tokens.*1024"):
        EncoderConfig(image_size=512, patch_size=8)


def test_exactly_1024_tokens_is_allowed():
    cfg = EncoderConfig(image_size=256, patch_size=8, n_layers=1, n_heads=1)
    assert cfg.n_tokens == 1024


def test_attention_bytes_is_layers_heads_tokens_squared_times_8():
    cfg = EncoderConfig(image_size=256, patch_size=8, d_model=512, n_heads=16, n_layers=8)
    assert cfg.n_tokens == 1024
    assert cfg.attention_bytes == 8 * 16 * 1024**2 * 2 * 4 == 2**30  # exactly 1 GiB: allowed
    small = EncoderConfig(**SMALL)
    assert small.attention_bytes == 3 * 4 * 16**2 * 2 * 4


def test_attention_memory_over_1_gib_raises_config_error():
    with pytest.raises(ConfigError, match=r"(?i)attention.*GiB") as info:
        EncoderConfig(image_size=256, patch_size=8, d_model=512, n_heads=64, n_layers=8)
    # 8 · 64 · 1024² · 2 · 4 bytes = 4 GiB
    assert re.search(r"\b4(\.0+)? GiB", str(info.value)), str(info.value)


def test_bad_scale_string_raises_config_error():
    with pytest.raises(ConfigError, match=r"scale.*d_k.*d_model.*none.*'sqrt'"):
        EncoderConfig(scale="sqrt")


def test_replace_validates_like_a_new_config():
    cfg = EncoderConfig(**SMALL)
    assert cfg.replace(n_heads=8).n_heads == 8
    assert cfg.n_heads == 4  # frozen: replace made a copy
    with pytest.raises(ConfigError):
        cfg.replace(n_heads=5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.n_heads = 8


# --- the Vision Transformer variants (issue 11) ---------------------------------------------

VARIANT_DEFAULTS = dict(
    norm_first=False, cls_token=False, dist_token=False, n_registers=0, position="sinusoidal",
    pos_prefix=True, patch_bias=False, qkv_bias=False, proj_bias=False, activation="relu",
    final_norm=False, layer_scale=False, pixel_mean=(), pixel_std=(),
)  # fmt: skip


def test_every_variant_is_off_by_default_and_the_sequence_is_the_patches():
    cfg = EncoderConfig()
    assert {name: getattr(cfg, name) for name in VARIANT_DEFAULTS} == VARIANT_DEFAULTS
    assert cfg.n_prefix == 0 and cfg.seq_len == cfg.n_tokens == 196 and cfg.n_pos == 196
    assert not cfg.normalises_pixels


@pytest.mark.parametrize(
    ("changes", "n_prefix", "n_pos"),
    [
        (dict(cls_token=True), 1, 17),
        (dict(cls_token=True, dist_token=True), 2, 18),
        (dict(cls_token=True, dist_token=True, pos_prefix=False), 2, 16),
        (dict(cls_token=True, n_registers=4), 5, 17),  # registers never get a position row
        (dict(n_registers=3), 3, 16),
    ],
)
def test_prefix_tokens_count_in_seq_len_but_not_in_n_tokens(changes, n_prefix, n_pos):
    cfg = EncoderConfig(**{**SMALL, **changes})
    assert cfg.n_tokens == 16  # the patches, always
    assert cfg.n_prefix == n_prefix and cfg.seq_len == 16 + n_prefix and cfg.n_pos == n_pos
    assert cfg.attention_bytes == cfg.n_layers * cfg.n_heads * (16 + n_prefix) ** 2 * 2 * 4


def test_seq_len_with_prefix_over_1024_raises_config_error():
    patches_only = EncoderConfig(image_size=256, patch_size=8, n_layers=1, n_heads=1)
    assert patches_only.seq_len == 1024
    with pytest.raises(ConfigError, match=r"1025 tokens \(1024 patches \+ 1 prefix\).*1024"):
        patches_only.replace(cls_token=True)


@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        (dict(dist_token=True), r"dist_token needs cls_token"),
        (dict(n_registers=-1), r"n_registers.*≥ 0.*-1"),
        (dict(n_registers=1.5), r"n_registers.*1\.5"),
        (dict(position="rope"), r"position.*sinusoidal.*learned.*'rope'"),
        (dict(activation="swish"), r"activation.*relu.*gelu.*gelu_tanh.*'swish'"),
        (dict(pixel_mean=(0.5,)), r"pixel_mean and pixel_std go together"),
        (dict(pixel_mean=(0.5, 0.5), pixel_std=(0.5, 0.5)),
         r"pixel_mean has 2 values.*channels = 1"),
        (dict(channels=3, pixel_mean=(0.5,) * 3, pixel_std=(0.5, 0.0, 0.5)),
         r"pixel_std must be positive"),
        (dict(pixel_mean=(float("nan"),), pixel_std=(1.0,)), r"pixel_mean.*finite"),
        (dict(pixel_mean="0.5", pixel_std=(1.0,)), r"pixel_mean.*tuple"),
        (dict(cls_token=1), r"cls_token must be True or False"),
        (dict(d_model=33, n_heads=3), r"d_model must be even"),  # sinusoidal needs pairs
    ],
)
def test_impossible_variant_combinations_raise_config_error(changes, pattern):
    with pytest.raises(ConfigError, match=pattern):
        EncoderConfig(**{**SMALL, **changes})


def test_odd_d_model_is_allowed_with_learned_positions():
    cfg = EncoderConfig(**{**SMALL, "d_model": 33, "n_heads": 3, "position": "learned"})
    assert cfg.d_model == 33


def test_pixel_statistics_from_json_lists_or_numpy_become_tuples_of_floats():
    cfg = EncoderConfig(**{**SMALL, "channels": 3, "pixel_mean": [0.485, 0.456, 0.406],
                           "pixel_std": np.array([0.229, 0.224, 0.225], np.float32).tolist()})
    assert isinstance(cfg.pixel_mean, tuple) and isinstance(cfg.pixel_std, tuple)
    assert cfg.normalises_pixels and hash(cfg) == hash(cfg.replace())
    again = EncoderConfig(**json.loads(json.dumps(cfg.to_dict())))
    assert again == cfg
    as_numpy = cfg.replace(pixel_mean=tuple(np.float32(v) for v in (0.5, 0.5, 0.5)))
    assert all(type(v) is float for v in as_numpy.pixel_mean)
