"""lens.hub, entirely offline: a Hugging Face cache built in tmp_path with the library's real
layout, a closed port, offline mode, and a small hub on loopback (http.server in a thread)
answering the two requests the library makes for a file (HEAD, then GET)."""

from __future__ import annotations

import ast
from pathlib import Path

import huggingface_hub
import numpy as np
import pytest

from encoder_core.checkpoints.load import IMAGENET_MEAN, IMAGENET_STD, load_checkpoint
from lens import hub
from lens.i18n import translate
from tests.support.hub_helpers import (
    COMMIT,
    TINY_VIT,
    LocalHub,
    closed_port,
    put_in_cache,
    timm_config,
    vit_bytes,
)
from tests.support.vit_dicts import timm_state_dict

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def weights_bytes(tmp_path_factory) -> bytes:
    """A small random timm ViT (197 tokens), as the bytes of a .safetensors file."""
    return vit_bytes(tmp_path_factory.mktemp("vit"))


@pytest.fixture
def offline_cache(tmp_path, monkeypatch) -> Path:
    """An empty cache the library is pointed at (HF_HUB_CACHE), with HF_HUB_OFFLINE=1."""
    cache = tmp_path / "hub"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


def test_the_named_models_are_a_fixed_table_of_timm_repositories():
    assert set(hub.MODELS) == {"dino-vits16", "deit-tiny", "vit-small"}
    for model_id, m in hub.MODELS.items():
        assert m.id == model_id and m.repo_id.startswith("timm/") and m.mb > 1
        about = [translate(f"hub_about_{m.id}", lang) for lang in ("en", "zh")]
        assert all(about) and about[0] != about[1] and m.licence
    assert hub.lookup("deit-tiny").repo_id == "timm/deit_tiny_patch16_224.fb_in1k"
    for bad in ("../../etc/passwd", "/tmp/x.safetensors", "timm/vit_small_patch16_224.dino", ""):
        with pytest.raises(KeyError):
            hub.lookup(bad)
        with pytest.raises(KeyError):
            hub.cached_path(bad)


def test_an_empty_cache_has_no_model(offline_cache):
    assert hub.cached_path("dino-vits16") is None
    assert hub.cached_models() == {}


def test_a_cached_model_is_found_and_loads_with_its_config(offline_cache, weights_bytes):
    dino = hub.MODELS["dino-vits16"]
    snapshot = put_in_cache(offline_cache, dino.repo_id, {
        "config.json": timm_config(dino, IMAGENET_MEAN, IMAGENET_STD),
        "model.safetensors": weights_bytes})
    path = hub.cached_path("dino-vits16")
    assert path == snapshot / "model.safetensors" and path.read_bytes() == weights_bytes
    assert hub.cached_models() == {"dino-vits16": path}
    cfg, params, info = load_checkpoint(path)
    assert cfg.seq_len == 197 and cfg.n_prefix == 1 and cfg.norm_first
    # the mean / std come from the config.json beside the weights, not from a guess
    assert cfg.pixel_mean == IMAGENET_MEAN and cfg.pixel_std == IMAGENET_STD
    assert info.source("pixel_mean") == "config"
    assert "vit_small_patch16_224" in info.family


def test_each_model_gets_the_statistics_of_its_own_config(offline_cache, weights_bytes):
    vit = hub.MODELS["vit-small"]
    put_in_cache(offline_cache, vit.repo_id, {
        "config.json": timm_config(vit, (0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
        "model.safetensors": weights_bytes})
    cfg, _, info = load_checkpoint(hub.cached_path("vit-small"))
    assert cfg.pixel_mean == (0.5, 0.5, 0.5) and info.source("pixel_std") == "config"
    assert set(hub.cached_models()) == {"vit-small"}


def test_weights_without_their_config_are_not_a_cached_model(offline_cache, weights_bytes):
    """Without config.json a DINO model would run with 0.5 / 0.5 instead of ImageNet's
    statistics: the pair is cached or the model is not."""
    dino = hub.MODELS["dino-vits16"]
    put_in_cache(offline_cache, dino.repo_id, {"model.safetensors": weights_bytes})
    assert hub.cached_path("dino-vits16") is None


def test_download_of_a_cached_model_needs_no_network(offline_cache, weights_bytes):
    deit = hub.MODELS["deit-tiny"]
    snapshot = put_in_cache(offline_cache, deit.repo_id, {
        "config.json": timm_config(deit, IMAGENET_MEAN, IMAGENET_STD),
        "model.safetensors": weights_bytes})
    calls = []
    assert hub.download("deit-tiny", progress=lambda *a: calls.append(a)) == (
        snapshot / "model.safetensors")
    assert calls == [(len(weights_bytes), len(weights_bytes))]


def test_offline_mode_says_so_in_one_line(offline_cache):
    with pytest.raises(hub.DownloadError) as caught:
        hub.download("dino-vits16")
    message = str(caught.value)
    assert caught.value.reason == "offline_mode" and "\n" not in message
    assert "scripts/app --checkpoint FILE" in message and "DINO ViT-S/16" in message
    assert list(offline_cache.iterdir()) == []  # nothing written


def test_no_network_fails_at_once_in_one_line(tmp_path, monkeypatch):
    """A closed port on loopback: DownloadError "No network: …" after one try (the library on
    its own would retry five times over about 23 s); nothing is left in the cache."""
    sleeps = []
    monkeypatch.setattr("huggingface_hub.utils._http.time.sleep", sleeps.append)
    monkeypatch.setattr("huggingface_hub.file_download.time.sleep", sleeps.append)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{closed_port()}")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    cache = tmp_path / "hub"
    with pytest.raises(hub.DownloadError) as caught:
        hub.download("deit-tiny", cache_dir=cache)
    message = str(caught.value)
    assert caught.value.reason == "no_network" and message.startswith("No network: DeiT-Ti/16")
    assert "\n" not in message and "scripts/app --checkpoint FILE" in message
    assert sleeps == []  # not one retry
    assert not cache.exists() or not any(cache.rglob("*.safetensors"))


@pytest.fixture
def online(monkeypatch):
    """Online mode whatever the environment says (the endpoint is set by each test)."""
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)


def test_download_reports_byte_progress_and_fills_the_cache(tmp_path, monkeypatch, online,
                                                           weights_bytes):
    dino = hub.MODELS["dino-vits16"]
    config = timm_config(dino, IMAGENET_MEAN, IMAGENET_STD)
    files = {(dino.repo_id, "config.json"): config,
             (dino.repo_id, "model.safetensors"): weights_bytes}
    chunk = 64 * 1024  # the library's chunk is 10 MB: smaller here, to see many steps
    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", chunk)
    cache = tmp_path / "hub"
    calls = []
    with LocalHub(files) as local:
        monkeypatch.setenv("HF_ENDPOINT", local.url)
        path = hub.download("dino-vits16", progress=lambda d, t: calls.append((d, t)),
                            cache_dir=cache)
    total = len(config) + len(weights_bytes)
    assert {t for _, t in calls} == {total}  # the total is known from the first call
    done = [d for d, _ in calls]
    assert done == sorted(done) and done[-1] == total
    assert len(set(done)) >= len(weights_bytes) // chunk  # a step per chunk written
    assert len(config) in done  # the config, then the weights
    assert ("GET", f"/{dino.repo_id}/resolve/main/model.safetensors") in local.requests
    assert path == cache / "models--timm--vit_small_patch16_224.dino" / "snapshots" / COMMIT / (
        "model.safetensors")
    assert path.read_bytes() == weights_bytes
    assert hub.cached_path("dino-vits16", cache) == path
    cfg, params, _ = load_checkpoint(path)
    assert cfg.pixel_mean == IMAGENET_MEAN and cfg.seq_len == 197
    np.testing.assert_array_equal(params.cls, timm_state_dict(**TINY_VIT)["cls_token"][0])


def test_a_missing_file_is_not_found(tmp_path, monkeypatch, online, weights_bytes):
    vit = hub.MODELS["vit-small"]
    with LocalHub({(vit.repo_id, "model.safetensors"): weights_bytes}) as local:
        monkeypatch.setenv("HF_ENDPOINT", local.url)
        with pytest.raises(hub.DownloadError) as caught:
            hub.download("vit-small", cache_dir=tmp_path / "hub")
    assert caught.value.reason == "not_found" and vit.repo_id in str(caught.value)
    assert hub.cached_path("vit-small", tmp_path / "hub") is None


def test_a_refusal_is_said_with_its_status(tmp_path, monkeypatch, online, weights_bytes):
    deit = hub.MODELS["deit-tiny"]
    with LocalHub({(deit.repo_id, "model.safetensors"): weights_bytes}, status=503) as local:
        monkeypatch.setenv("HF_ENDPOINT", local.url)
        with pytest.raises(hub.DownloadError) as caught:
            hub.download("deit-tiny", cache_dir=tmp_path / "hub")
    assert caught.value.reason == "refused" and "HTTP 503" in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_core_never_imports_the_hub_library_and_the_hub_never_streamlit():
    for path in (ROOT / "encoder_core").rglob("*.py"):
        assert "huggingface_hub" not in path.read_text(encoding="utf-8"), path
    text = (ROOT / "lens" / "hub" / "__init__.py").read_text(encoding="utf-8")
    nodes = list(ast.walk(ast.parse(text)))
    imported = {a.name.split(".")[0] for n in nodes if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in nodes
                 if isinstance(n, ast.ImportFrom) and n.module}
    assert "huggingface_hub" in imported and "streamlit" not in imported


def test_the_progress_class_follows_a_xet_download_too():
    """The hub serves these repositories from Xet storage: with hf_xet installed the library
    reports through `XetDownloadProgressReporter` (internal to huggingface_hub: this test
    follows it), which must count the bytes written on our one bar, not the network bytes."""
    from types import SimpleNamespace

    from huggingface_hub.utils._xet_progress_reporting import XetDownloadProgressReporter

    calls = []
    made = []
    base = hub.progress_bar(lambda d, t: calls.append((d, t)), 100, 1100)

    class Bar(base):
        def __init__(self, *args, **kwargs):
            made.append(self)
            super().__init__(*args, **kwargs)

    with XetDownloadProgressReporter(reconstruction_desc="model.safetensors", total=1000,
                                     log_level=0, tqdm_class=Bar) as reporter:
        for written, received in ((0, 300), (400, 700), (1000, 800)):
            reporter.update_progress(SimpleNamespace(
                total_bytes_completed=written, total_transfer_bytes_completed=received,
                total_bytes=1000, total_bytes_completion_rate=1e6,
                total_transfer_bytes_completion_rate=1e6))
    assert len(made) == 1  # one bar: the written bytes
    assert calls == [(100, 1100), (500, 1100), (1100, 1100)]
