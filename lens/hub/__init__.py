"""Named public ViT checkpoints from the Hugging Face Hub: the fixed table, the cache, the download.

A model is named only by one of the fixed ids of `MODELS` (a link or the UI can name no other
model, and a path never comes from a link or an upload). Its two files, `config.json` (the
pixel mean / std and the architecture the loader reads) and `model.safetensors`, go into the
user's Hugging Face cache in the library's own layout:

    $HF_HUB_CACHE/models--timm--<name>/refs/main                       (the commit of `main`)
    $HF_HUB_CACHE/models--timm--<name>/snapshots/<commit>/config.json
    $HF_HUB_CACHE/models--timm--<name>/snapshots/<commit>/model.safetensors

`HF_HUB_CACHE` (default `~/.cache/huggingface/hub`), `HF_ENDPOINT` and `HF_HUB_OFFLINE` are read
when a function is called, not only when the library is imported. No Streamlit here
(`lens/hub/ui.py` draws the controls); `encoder_core` never imports this module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import (
    constants,
    get_hf_file_metadata,
    hf_hub_download,
    hf_hub_url,
    try_to_load_from_cache,
)
from huggingface_hub import errors as hub_errors

CONFIG = "config.json"
WEIGHTS = "model.safetensors"
FILES = (CONFIG, WEIGHTS)  # config.json first: without it a DINO model gets the wrong mean / std
REVISION = "main"
METADATA_TIMEOUT = 10.0  # seconds to wait for the hub's answer about one file (one try)
OFFLINE_HINT = ("To use a model offline, download it elsewhere and start with "
                "scripts/app --checkpoint FILE")

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)


@dataclass(frozen=True)
class HubModel:
    """One named public model: its fixed id, where it lives on the hub, what it is."""

    id: str  # the only name a link or the UI may use, e.g. "dino-vits16"
    repo_id: str  # the Hugging Face repository, e.g. "timm/vit_small_patch16_224.dino"
    name: str  # e.g. "DINO ViT-S/16"
    mb: float  # size of model.safetensors in MB (10⁶ bytes): 4 bytes per float32 parameter
    licence: str  # what it is, in one line: the common text "hub_about_<id>" (lens/texts)


# Sizes: the parameters of the timm model (`create_model(name).state_dict()`, the head included
# when the checkpoint has one) × 4 bytes; the file adds a header of a few kB.
MODELS: dict[str, HubModel] = {m.id: m for m in (
    HubModel("dino-vits16", "timm/vit_small_patch16_224.dino", "DINO ViT-S/16", 86.7,
             "Apache-2.0"),
    HubModel("deit-tiny", "timm/deit_tiny_patch16_224.fb_in1k", "DeiT-Ti/16", 22.9,
             "Apache-2.0"),
    HubModel("vit-small", "timm/vit_small_patch16_224.augreg_in21k_ft_in1k", "ViT-S/16 (AugReg)",
             88.2, "Apache-2.0"),
)}


class DownloadError(Exception):
    """A download that could not be done, in one line a learner understands.

    `reason`: "offline_mode" (HF_HUB_OFFLINE is set), "no_network" (the hub cannot be reached),
    "refused" (the hub answered with an error), "not_found" (no such repository or file),
    "disk" (the file could not be saved). `str()` is the English line; the UI translates
    by `reason` with `model` and `detail` (a host, "HTTP 503", a repository: no words).
    """

    def __init__(self, reason: str, model: HubModel, detail: str = "") -> None:
        self.reason, self.model, self.detail = reason, model, detail
        super().__init__(download_message(reason, model.name, detail))


def download_message(reason: str, name: str, detail: str = "") -> str:
    """The one English line for a DownloadError (lens.i18n has the 中文 ones)."""
    lines = {
        "offline_mode": f"Downloads are switched off (HF_HUB_OFFLINE): {name} is not in the "
                        f"cache. {OFFLINE_HINT}.",
        "no_network": f"No network: {name} could not be downloaded from {detail}. "
                      f"{OFFLINE_HINT}.",
        "refused": f"The model hub refused to send {name} ({detail}). Try again later. "
                   f"{OFFLINE_HINT}.",
        "not_found": f"{name} was not found on the model hub ({detail}). {OFFLINE_HINT}.",
        "disk": f"{name} could not be saved in the cache ({detail}).",
    }
    return lines[reason]


def lookup(model_id: str) -> HubModel:
    """The named model `model_id`; KeyError for any other name."""
    if model_id not in MODELS:
        raise KeyError(f"no named model {model_id!r}: the choices are {', '.join(MODELS)}")
    return MODELS[model_id]


def hub_cache(cache_dir: str | os.PathLike | None = None) -> Path:
    """The cache folder: `cache_dir`, else HF_HUB_CACHE as set now, else the library's own
    (which also honours HF_HOME)."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("HF_HUB_CACHE")
    return Path(os.path.expandvars(os.path.expanduser(env))) if env else Path(
        constants.HF_HUB_CACHE)


def hub_endpoint() -> str:
    """The hub's address: HF_ENDPOINT as set now, else the library's (https://huggingface.co)."""
    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def offline_mode() -> bool:
    """HF_HUB_OFFLINE (or TRANSFORMERS_OFFLINE) is set, now or when the library was imported."""
    env = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return env.strip().upper() in {"1", "ON", "YES", "TRUE"} or bool(constants.HF_HUB_OFFLINE)


def cached_path(model_id: str, cache_dir: str | os.PathLike | None = None) -> Path | None:
    """The cached `model.safetensors` of `model_id` (with `config.json` beside it, both of the
    commit `main` points to), or None. Never touches the network."""
    model = lookup(model_id)
    cache = os.fspath(hub_cache(cache_dir))
    found = [try_to_load_from_cache(model.repo_id, name, cache_dir=cache, revision=REVISION)
             for name in FILES]
    if not all(isinstance(p, str) for p in found):
        return None
    config, weights = (Path(p) for p in found)
    return weights if config.parent == weights.parent else None


def cached_models(cache_dir: str | os.PathLike | None = None) -> dict[str, Path]:
    """model id -> its cached `model.safetensors`, for every named model in the cache."""
    paths = {i: cached_path(i, cache_dir) for i in MODELS}
    return {i: p for i, p in paths.items() if p is not None}


def download(model_id: str, progress: Progress | None = None,
             cache_dir: str | os.PathLike | None = None) -> Path:
    """Download `model_id`'s config.json and model.safetensors into the cache (nothing when
    both are there) and return the path of model.safetensors.

    `progress(done, total)` is called with bytes as they are written (the sizes come from the
    hub's answer first, so `total` is known from the start). One quick question per file
    (no retries) decides whether the hub can be reached before anything is written.
    Raises:
        DownloadError: offline, refused, not found or not saved, with one line to show.
    """
    model = lookup(model_id)
    cache = hub_cache(cache_dir)
    found = cached_path(model_id, cache)
    if found is not None:
        if progress:
            size = found.stat().st_size
            progress(size, size)
        return found
    if offline_mode():
        raise DownloadError("offline_mode", model)
    endpoint = hub_endpoint()
    sizes = [file_size(model, name, endpoint) for name in FILES]
    total = sum(sizes)
    done, path = 0, None
    for name, size in zip(FILES, sizes, strict=True):
        bar = progress_bar(progress, done, total) if progress else None
        try:
            path = hf_hub_download(model.repo_id, name, revision=REVISION, cache_dir=cache,
                                   endpoint=endpoint, etag_timeout=METADATA_TIMEOUT,
                                   tqdm_class=bar)
        except Exception as err:  # the library's and its transport's errors: explained
            raise explain(err, model, endpoint) from err
        done += size
        if progress:
            progress(done, total)
    return Path(path)


def file_size(model: HubModel, name: str, endpoint: str) -> int:
    """The size in bytes of file `name` of `model` on the hub (0 when it does not say): one
    request, no retries, so an unreachable hub fails in a moment. Raises DownloadError."""
    url = hf_hub_url(model.repo_id, name, revision=REVISION, endpoint=endpoint)
    try:
        meta = get_hf_file_metadata(url, timeout=METADATA_TIMEOUT)
    except Exception as err:
        raise explain(err, model, endpoint) from err
    return int(meta.size or 0)


def explain(err: Exception, model: HubModel, endpoint: str) -> DownloadError:
    """The DownloadError a learner reads for an error of huggingface_hub or its transport."""
    host = endpoint.split("://", 1)[-1]
    if isinstance(err, hub_errors.OfflineModeIsEnabled):
        return DownloadError("offline_mode", model)
    if isinstance(err, hub_errors.LocalEntryNotFoundError):  # the library's "could not connect"
        return DownloadError("no_network", model, host)
    status = getattr(getattr(err, "response", None), "status_code", None)
    if isinstance(err, hub_errors.GatedRepoError):  # a login is needed (401 / 403)
        return DownloadError("refused", model, f"HTTP {status}")
    if isinstance(err, hub_errors.RepositoryNotFoundError | hub_errors.RevisionNotFoundError
                  | hub_errors.EntryNotFoundError):
        return DownloadError("not_found", model, model.repo_id)
    if isinstance(err, hub_errors.HfHubHTTPError):
        return DownloadError("refused", model, f"HTTP {status}" if status else type(err).__name__)
    if isinstance(err, OSError) and err.errno is not None:  # disk full, no permission
        return DownloadError("disk", model, err.strerror or type(err).__name__)
    return DownloadError("no_network", model, host)  # the transport's errors: no answer


def progress_bar(report: Progress, offset: int, total: int) -> type:
    """A tqdm stand-in class for `hf_hub_download(tqdm_class=…)` that reports the bytes written
    as `report(offset + n, total)`.

    The library makes one bar per file and calls `update(bytes)` as it writes (plain HTTP and
    Xet alike). `update_transfer` is defined so a Xet download counts the bytes written on this
    one bar, not the network bytes on a second.
    """

    class Bar:
        def __init__(self, *args: object, initial: int = 0, total: int | None = None,
                     **kwargs: object) -> None:
            self.n, self.total = initial, total
            self._tell()

        def update(self, n: int | float = 1) -> None:
            self.n += int(n)
            self._tell()

        def _tell(self) -> None:
            done = offset + max(self.n, 0)
            report(done, max(total, done))

        def update_transfer(self, n: int | float = 1) -> None:
            """Network bytes of a Xet download: the bytes written are the progress."""

        def set_postfix_str(self, *args: object, **kwargs: object) -> None:
            """Speed text of a terminal bar: not shown."""

        set_transfer_postfix_str = set_postfix_str
        refresh = set_postfix_str
        close = set_postfix_str

        def __enter__(self) -> Bar:
            return self

        def __exit__(self, *exc: object) -> None:
            self.close()

    return Bar
