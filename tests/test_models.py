"""The model registry: checkpoints given when the server starts, named in links by id only."""

from __future__ import annotations

import os

import pytest

from lens import model_weights
from lens.models import CHECKPOINTS_ENV, checkpoint_paths, describe, load_models, model_id
from lens.serve import split_checkpoints
from lens.settings import Settings
from tests.support.apptest_helpers import assert_clean, new_app


def test_model_ids_are_link_safe_unique_and_never_the_note_encoders():
    assert model_id("/x/ViT-S 16.safetensors") == "vit-s_16"
    assert model_id("/x/dino-vits16/model.safetensors") == "dino-vits16"
    assert model_id("/x/a.npz", taken={"a"}) == "a-2"
    assert model_id("/x/trained.npz") == "trained-checkpoint"
    assert model_id("/x/$$$.pth") == "model"


def test_paths_come_from_the_environment_and_the_command_line(tmp_path):
    env = {CHECKPOINTS_ENV: os.pathsep.join(["/a/b.safetensors", "", "/c"])}
    assert checkpoint_paths(env) == ["/a/b.safetensors", "/c"]
    assert split_checkpoints(["--checkpoint", "a", "--server.port", "1", "--checkpoint=b"]) == (
        ["a", "b"], {}, ["--server.port", "1"])


def test_a_file_that_does_not_load_is_reported_and_the_others_are_kept(tmp_path, vit_checkpoint):
    bad = tmp_path / "broken.safetensors"
    bad.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00{nonsense")
    models, problems = load_models([bad, vit_checkpoint], named={"named-vit": vit_checkpoint})
    assert list(models) == ["vit_tiny_test", "named-vit"]
    assert len(problems) == 1 and problems[0].startswith(str(bad))
    m = models["vit_tiny_test"]
    assert (m.cfg.seq_len, m.cfg.n_heads, m.cfg.norm_first) == (197, 2, True)
    assert "d_model 128, h 2, 2 layers" in describe(m) and "CLS token" in describe(m)


@pytest.mark.parametrize("raw", ["../../etc/passwd", "/tmp/x.pth", "a b", "X" * 80])
def test_a_link_never_names_a_path(raw):
    settings, notices = Settings.from_url({"weights": raw}, {"vit_tiny_test": None})
    assert settings.weights == "random" and notices[0].why == "not_an_option"


def test_a_link_names_a_loaded_model_by_id_and_it_locks_the_architecture(with_checkpoint):
    models = model_weights.model_architectures()
    settings, notices = Settings.from_url({"weights": "vit_tiny_test", "d_model": "64"}, models)
    assert settings.weights == "vit_tiny_test" and settings.d_model == 128
    assert [(n.key, n.why) for n in notices] == [("d_model", "locked")]
    absent, notices = Settings.from_url({"weights": "dino-vits16"}, models)
    assert absent.weights == "random" and notices[0].detail == {"name": "dino-vits16"}


def test_the_app_runs_a_loaded_checkpoint_and_says_what_it_is(with_checkpoint):
    at = new_app(weights="vit_tiny_test")
    at.run()
    assert_clean(at)
    assert at.session_state["weights"] == "vit_tiny_test"
    info = " ".join(i.value for i in at.sidebar.info)
    assert "pre-norm" in info and "CLS token" in info
    assert at.sidebar.select_slider(key="d_model").disabled


def test_a_checkpoint_that_fails_to_load_is_one_warning_and_the_app_runs(monkeypatch, tmp_path):
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not a zip")
    monkeypatch.setenv(CHECKPOINTS_ENV, str(bad))
    model_weights.clear_models()
    try:
        at = new_app()
        at.run()
        assert_clean(at)
        assert any("broken.npz" in w.value for w in at.sidebar.warning)
    finally:
        model_weights.clear_models()


def test_the_launcher_refuses_a_checkpoint_that_is_not_there(tmp_path, capsys):
    from lens.serve import main

    assert main(["--checkpoint", str(tmp_path / "absent.safetensors")]) == 2
    assert "no such checkpoint" in capsys.readouterr().err


def test_a_downloaded_named_model_is_in_the_choice_by_its_own_name(monkeypatch, tmp_path):
    from lens import hub
    from tests.support.hub_helpers import put_in_cache, timm_config, vit_bytes

    dino = hub.MODELS["dino-vits16"]
    put_in_cache(tmp_path / "hub", dino.repo_id, {
        "model.safetensors": vit_bytes(tmp_path),
        "config.json": timm_config(dino, (0.485, 0.456, 0.406), (0.229, 0.224, 0.225))})
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv(CHECKPOINTS_ENV, raising=False)
    model_weights.clear_models()
    try:
        assert model_weights.checkpoint_models()["dino-vits16"].name == dino.name
        at = new_app(weights="dino-vits16")
        at.run()
        assert_clean(at)
        assert at.session_state["weights"] == "dino-vits16"
        assert dino.name in " ".join(c.value for c in at.caption)  # the weights caption
    finally:
        model_weights.clear_models()
