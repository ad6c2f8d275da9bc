"""The settings (encoder_core/config.py): derived sizes, and every impossible setting refused
with a message that says what to change."""

from __future__ import annotations

import dataclasses
import re

import pytest
from configs import SMALL

from encoder_core import ConfigError, EncoderConfig


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
