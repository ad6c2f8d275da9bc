"""The sidebar's trace export downloads an .npz that NumPy loads without pickle."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from playwright.sync_api import expect

from tests.support.browser_helpers import (
    assert_no_errors,
    main_images,
    open_app,
    sidebar,
    wait_idle,
)

pytestmark = pytest.mark.browser

SMALL = "image_size=64&patch_size=16&d_model=32&n_heads=2&n_layers=2&use_ffn=1"


def test_trace_download_is_a_loadable_npz(page, app_url, tmp_path):
    open_app(page, app_url, "scores", SMALL)
    sb = sidebar(page)
    sb.get_by_role("button", name="Prepare the trace (.npz)").click()
    download_button = sb.get_by_role("button", name=re.compile(r"^Download trace\.npz"))
    expect(download_button).to_be_visible()
    wait_idle(page)
    with page.expect_download() as info:
        download_button.click()
    download = info.value
    assert download.suggested_filename == "trace.npz"
    path = tmp_path / "trace.npz"
    download.save_as(path)
    size_mb = float(re.search(r"\(([\d.]+) MB\)", download_button.inner_text()).group(1))
    assert abs(path.stat().st_size / 2**20 - size_mb) < 0.06, "the label's size is not the file's"

    with np.load(path, allow_pickle=False) as npz:
        keys = set(npz.files)
        config = json.loads(str(npz["config"]))
        assert npz["patches"].shape == (16, 256)  # (64/16)² patches of 16·16·1 values
        assert npz["output"].shape == (16, 32)
        assert npz["image"].shape[:2] == (64, 64)
        assert np.isfinite(npz["output"]).all()
    assert {"patches", "embedded", "pe", "x0", "output", "image", "config"} <= keys
    assert any(k.startswith("layer1/") for k in keys), sorted(keys)[:20]
    assert not any(k.startswith("layer2/") for k in keys)
    assert any(k.startswith("params/") for k in keys)
    assert config["d_model"] == 32 and config["n_heads"] == 2 and config["n_layers"] == 2
    assert config["image_size"] == 64 and config["patch_size"] == 16
    assert_no_errors(page)


def test_a_pictures_download_button_gives_that_png(page, app_url, tmp_path):
    """'Download PNG' under a picture downloads the picture shown above it, byte for byte."""
    open_app(page, app_url, "multihead")
    main_images(page)  # every picture loaded: the page's run has ended
    button = page.locator('[data-testid="stMain"] [data-testid="stDownloadButton"]').first
    expect(button).to_be_visible()
    picture = button.locator("xpath=preceding::img[1]")
    for _ in range(3):  # a rerun between reading the picture and pressing the button (the
        #               explorer's first commit) redraws both: read them again
        shown = picture.evaluate("img => img.src")
        with page.expect_download() as info:
            button.get_by_role("button").click()
        download = info.value
        if picture.evaluate("img => img.src") == shown:
            break
        wait_idle(page)
    assert download.suggested_filename.endswith(".png")
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert data == page.context.request.get(shown).body()  # the picture above it
    assert_no_errors(page)
