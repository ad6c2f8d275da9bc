"""lens.settings on its own (no Streamlit): defaults, the link codec, the rules that keep a
combination possible, the fields a model locks, and a notice for every value changed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from encoder_core import EncoderConfig
from encoder_core.config import MAX_ATTENTION_BYTES, valid_head_counts, valid_patch_sizes
from lens.settings import (
    ARCHITECTURE,
    CHOICES,
    D_MODELS,
    DEFAULTS,
    FINAL_STEP,
    IMAGE_SIZES,
    MAX_LAYERS,
    OPTIONS,
    RANGES,
    SWITCHES,
    URL_KEYS,
    Settings,
    _decode,
)

TRAINED = EncoderConfig(image_size=224, patch_size=16, channels=1, d_model=64, n_heads=4,
                        n_layers=2, d_ff=128)
MODELS = {"trained": TRAINED}
CHECKPOINTS = (0, 500, 1000, 6000)  # training steps shipped; the last is the final weights

# One value per field that differs from the default and is possible with the other defaults.
OTHER_VALUES = {"lang": "zh", "source": "sample", "weights": "trained", "train_step": 500,
                "channels": 3,
                "image_size": 256, "patch_size": 32, "d_model": 256, "n_heads": 4,
                "n_layers": 3, "use_ffn": False, "scale": "d_model", "use_pe": False,
                "seed": 12345, "sample_seed": 9, "layer": 1, "head": 2, "query": 17,
                "lesson": True}


def test_the_defaults_are_the_notes_and_give_the_default_encoder_config():
    assert DEFAULTS.to_config() == EncoderConfig()
    assert DEFAULTS.d_ff == 4 * DEFAULTS.d_model
    assert set(OTHER_VALUES) == set(URL_KEYS)


@pytest.mark.parametrize("key", URL_KEYS)
def test_every_field_survives_a_round_trip_through_a_link(key):
    value = OTHER_VALUES[key]
    models = MODELS if key in ("weights", "source", "train_step") else {}
    changes = {key: value, **({"weights": "trained"} if key == "train_step" else {})}
    original, _ = Settings(**changes).normalised(models, CHECKPOINTS)  # trained: its arch.
    restored, notices = Settings.from_url(original.to_url(), models, CHECKPOINTS)
    assert notices == []
    assert getattr(restored, key) == value
    assert restored.to_url() == original.to_url()


def test_a_link_with_every_field_changed_restores_them_all():
    original = Settings(**{k: v for k, v in OTHER_VALUES.items() if k != "weights"})
    assert original.normalised(MODELS)[0] == original
    restored, notices = Settings.from_url(original.to_url(), MODELS)
    assert notices == []
    assert restored == original


@pytest.mark.parametrize("key", [*CHOICES, *SWITCHES])
def test_a_malformed_choice_or_switch_falls_back_to_its_default_with_a_notice(key):
    s, notices = Settings.from_url({key: "banana"}, MODELS)
    assert getattr(s, key) == getattr(DEFAULTS, key)
    (n,) = notices
    assert (n.key, n.given, n.used) == (key, "banana", Settings.to_url(DEFAULTS)[key])
    assert n.why in ("not_an_option", "not_a_switch")


@pytest.mark.parametrize("key", [*OPTIONS, *RANGES])
def test_a_value_that_is_not_a_number_falls_back_to_the_default_with_a_notice(key):
    s, notices = Settings.from_url({key: "twelve"}, MODELS)
    assert getattr(s, key) == getattr(DEFAULTS.normalised()[0], key)  # query: the centre
    assert [(n.key, n.given, n.why) for n in notices] == [(key, "twelve", "not_a_number")]
    assert notices[0].used == str(getattr(s, key))


@pytest.mark.parametrize("image_size, patch_size, centre", [
    (224, 16, 7 * 14 + 7), (224, 32, 3 * 7 + 3), (64, 16, 2 * 4 + 2), (512, 16, 16 * 32 + 16)])
def test_the_default_query_is_the_centre_patch_of_the_grid(image_size, patch_size, centre):
    s, notices = Settings(image_size=image_size, patch_size=patch_size).normalised()
    assert s.query == centre and notices == []
    linked, _ = Settings.from_url({"image_size": str(image_size),
                                   "patch_size": str(patch_size)})
    assert linked.query == centre
    explicit, notices = Settings.from_url({"query": "3"})  # a link's own query is kept
    assert explicit.query == 3 and notices == []


@pytest.mark.parametrize("query, key, used, why", [
    ({"n_layers": "13"}, "n_layers", 12, "out_of_range"),  # was an uncaught widget error
    ({"n_layers": "0"}, "n_layers", 1, "out_of_range"),
    ({"d_model": "200"}, "d_model", 192, "not_allowed"),  # was silently 8
    ({"image_size": "100"}, "image_size", 96, "not_allowed"),  # was silently 32
    ({"channels": "2"}, "channels", 1, "not_allowed"),
    ({"query": "999999"}, "query", 195, "out_of_range"),  # was clamped without a word
    ({"query": "-4"}, "query", 0, "out_of_range"),
    ({"seed": "3.5"}, "seed", 4, "out_of_range"),
    ({"patch_size": "15"}, "patch_size", 14, "patch_divide"),  # a tie goes to the smaller
    ({"n_heads": "7"}, "n_heads", 8, "heads_divide"),
    ({"layer": "6"}, "layer", 5, "out_of_range"),
    ({"head": "8", "n_heads": "4"}, "head", 3, "out_of_range"),
])
def test_a_number_outside_its_control_becomes_the_nearest_allowed_value(query, key, used, why):
    s, notices = Settings.from_url(query)
    assert getattr(s, key) == used
    n = next(n for n in notices if n.key == key)
    assert (n.used, n.why) == (str(used), why)
    assert n.given == query[key]


def test_too_many_heads_for_the_memory_limit_says_so_instead_of_not_valid():
    s, notices = Settings.from_url({"image_size": "512", "n_heads": "16", "n_layers": "12"})
    (n,) = notices
    assert (n.key, n.given, n.why) == ("n_heads", "16", "heads_memory")
    assert n.detail["gib"] == 1.5 and n.detail["limit"] == MAX_ATTENTION_BYTES / 2**30
    assert s.n_heads == 8 and s.to_config().attention_bytes <= MAX_ATTENTION_BYTES


def test_an_uploaded_image_cannot_come_from_a_link():
    s, notices = Settings.from_url({"source": "upload"})
    assert s.source == "default"
    assert [n.why for n in notices] == ["upload_lost"]


def test_a_model_that_fixes_the_architecture_locks_it_and_d_ff_is_the_models():
    s, notices = Settings.from_url({"weights": "trained", "d_model": "512", "n_heads": "8"},
                                   MODELS)
    assert s.locked == ARCHITECTURE
    assert (s.d_model, s.n_heads, s.n_layers, s.d_ff) == (64, 4, 2, 128)  # not 4·64
    assert {n.key for n in notices if n.why == "locked"} == {"d_model", "n_heads"}
    cfg = s.replace(scale="none", use_pe=False).to_config()
    assert cfg == TRAINED.replace(scale="none", use_pe=False)


def test_trained_weights_that_are_not_installed_fall_back_to_random_with_a_notice():
    s, notices = Settings.from_url({"weights": "trained", "source": "sample"}, {})
    assert (s.weights, s.source, s.locked) == ("random", "default", ())
    assert [(n.key, n.why) for n in notices] == [("weights", "no_model"), ("source", "no_model")]


def test_the_default_training_step_is_the_final_weights_and_a_shipped_step_is_kept():
    assert DEFAULTS.train_step == FINAL_STEP
    s, notices = Settings.from_url({"weights": "trained"}, MODELS, CHECKPOINTS)
    assert (s.train_step, notices) == (FINAL_STEP, [])
    for step in CHECKPOINTS[:-1]:
        s, notices = Settings.from_url({"weights": "trained", "train_step": str(step)}, MODELS,
                                       CHECKPOINTS)
        assert (s.train_step, notices) == (step, [])


@pytest.mark.parametrize("given, used", [("700", 500), ("3", 0), ("5000", FINAL_STEP),
                                         ("6000", FINAL_STEP), ("99999", FINAL_STEP)])
def test_a_training_step_that_is_not_shipped_becomes_the_nearest_one_with_a_notice(given, used):
    s, notices = Settings.from_url({"weights": "trained", "train_step": given}, MODELS,
                                   CHECKPOINTS)
    assert s.train_step == used
    (n,) = notices
    assert (n.key, n.given, n.used, n.why) == ("train_step", given, str(used), "no_checkpoint")
    assert n.detail["steps"] == "0, 500, 1000, -1" and n.detail["final"] == 6000


def test_without_shipped_checkpoints_only_the_final_weights_are_possible():
    s, notices = Settings.from_url({"weights": "trained", "train_step": "500"}, MODELS)
    assert s.train_step == FINAL_STEP
    assert [(n.key, n.why) for n in notices] == [("train_step", "no_checkpoint")]


def test_random_weights_derive_d_ff_from_d_model():
    for d in D_MODELS:
        assert Settings(d_model=d, n_heads=1).to_config().d_ff == 4 * d


def test_normalised_settings_always_give_a_valid_config():
    for size in IMAGE_SIZES:
        for d in (8, 96, 1024):
            s, _ = Settings(image_size=size, patch_size=3, d_model=d, n_heads=64,
                            n_layers=MAX_LAYERS, query=10**6).normalised()
            cfg = s.to_config()
            assert s.patch_size in valid_patch_sizes(size)
            assert s.n_heads in valid_head_counts(cfg.replace(n_heads=1))
            assert s.query == cfg.n_tokens - 1


# --- any text at any key: no exception, and a notice for every value not used as given --------
link_text = st.one_of(st.text(max_size=12), st.integers(-10**12, 10**12).map(str),
                      st.floats(allow_nan=True, allow_infinity=True).map(str),
                      st.sampled_from(["1", "0", "true", "off", "d_k", "zh", "sample", "trained",
                                       "16", "64", "512", "1e3", " 8 ", "08", ""]))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.sampled_from(URL_KEYS), link_text, max_size=len(URL_KEYS)),
       st.booleans())
def test_any_link_gives_possible_settings_and_a_notice_for_every_changed_value(query, trained):
    s, notices = Settings.from_url(query, *((MODELS, CHECKPOINTS) if trained else ({}, ())))
    s.to_config()  # possible: no ConfigError
    noticed = {n.key for n in notices}
    for key, raw in query.items():
        if key in noticed:
            continue
        value, notice = _decode(key, raw)
        assert notice is None and getattr(s, key) == value, (key, raw, getattr(s, key))
    last = {n.key: n for n in notices}  # a value may be adjusted twice (decoded, then fitted)
    for key, n in last.items():  # each names the key, the value given and the value used
        assert key in URL_KEYS and n.why and n.given is not None
        assert n.used == s.to_url()[key], (n, s.to_url()[key])
