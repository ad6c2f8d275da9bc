"""Shared helpers for the encoder tests: a deterministic, non-trivial test image, and a trace at
each of the small configurations of `configs.TRACE_CONFIGS`."""

from __future__ import annotations

import os
import tempfile

import pytest

from encoder_core import EncoderConfig, encode
from tests.support.configs import SMALL, TRACE_CONFIGS, make_test_image  # tests/ is on the path

# A live class's store (lens/classroom/store.py) in a folder of this test run, not the
# repository's data/: the app's pages and every server a test starts (it inherits the
# environment) open it there; one folder per pytest-xdist worker (a worker inherits the run's
# environment: two workers would otherwise share one class store).
os.environ.setdefault("ENCODER_LENS_DATA", tempfile.mkdtemp(prefix="encoder-lens-data-"))
if WORKER := os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ["ENCODER_LENS_DATA"] = tempfile.mkdtemp(prefix=f"encoder-lens-data-{WORKER}-")


def pytest_sessionstart(session: pytest.Session) -> None:
    """The browser tests' screenshots of this run only: last run's (and its FAILED-*) are
    removed first — once, by the run, not by each pytest-xdist worker (a late worker would
    remove what an early one took)."""
    if hasattr(session.config, "workerinput"):
        return
    from tests.support.browser_helpers import SHOTS

    SHOTS.mkdir(parents=True, exist_ok=True)
    for old in SHOTS.glob("*.png"):
        old.unlink()


@pytest.fixture(scope="session")
def make_image():
    """The factory `make_test_image(size, channels=1, seed=1234)` as a fixture."""
    return make_test_image


@pytest.fixture(scope="module", params=TRACE_CONFIGS.values(), ids=TRACE_CONFIGS.keys())
def trace(request, make_image):
    """`encode` at SMALL with each change of TRACE_CONFIGS: four small, different traces."""
    cfg = EncoderConfig(**{**SMALL, **request.param})
    return encode(make_image(cfg.image_size, cfg.channels, seed=cfg.seed + 11), cfg)


@pytest.fixture(scope="session")
def vit_checkpoint(tmp_path_factory) -> str:
    """A small random timm ViT (197 tokens: CLS + 14 × 14 patches), as a .safetensors file;
    its model id in the app is "vit_tiny_test"."""
    from tests.support.vit_dicts import SMALL_VIT, write_timm_checkpoint

    folder = tmp_path_factory.mktemp("checkpoints")
    return write_timm_checkpoint(folder / "vit_tiny_test.safetensors", **SMALL_VIT)


@pytest.fixture
def serve_checkpoints(monkeypatch):
    """A function that makes the app load these checkpoint files (as `scripts/app --checkpoint`
    does) from now on in this test; the registry is re-read, and again after the test."""
    from lens import model_weights
    from lens.models import CHECKPOINTS_ENV

    def serve(*paths: str) -> None:
        monkeypatch.setenv(CHECKPOINTS_ENV, os.pathsep.join(map(str, paths)))
        model_weights.clear_models()

    yield serve
    model_weights.clear_models()


@pytest.fixture
def with_checkpoint(serve_checkpoints, vit_checkpoint) -> str:
    """The app with the small random ViT (`vit_checkpoint`, id "vit_tiny_test") loaded."""
    serve_checkpoints(vit_checkpoint)
    return vit_checkpoint


# --- failures that stay readable in CI's log --------------------------------------------------

LONG_BYTES = 200  # a comparison of longer byte strings is summed up, not dumped


def pytest_assertrepr_compare(op: str, left: object, right: object) -> list[str] | None:
    """`a == b` of two long byte strings (a PNG, a font): their lengths and where they first
    differ, not a dump of both — in CI (where pytest prints every diff in full) a dump of two
    pictures buried the name of the failing test under 150 lines of bytes."""
    if not (op == "==" and isinstance(left, bytes | bytearray) and isinstance(right,
                                                                            bytes | bytearray)):
        return None
    if max(len(left), len(right)) <= LONG_BYTES:
        return None
    at = next((i for i, (a, b) in enumerate(zip(left, right, strict=False)) if a != b),
              min(len(left), len(right)))
    return [f"two byte strings differ: {len(left):,} bytes == {len(right):,} bytes",
            f"first difference at byte {at:,}: {left[at:at + 16]!r} vs {right[at:at + 16]!r}"]

