"""Checkpoints without guessing, end to end (issue 40, item 4): the launcher scripts/app runs
(`python -m lens.serve`) started with `--checkpoint FILE --n-heads 2` on a one-channel
torchvision ViT of no standard size, whose config.json gives `num_heads` alone: the browser
finds the model with its 2 heads, and on the ViT page, beside its prediction, the notice that
the pixel normalisation is a guess and how to fix it — in English and 中文."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import expect

from benchmarks.load import started_server
from tests.support.browser_helpers import MAIN, SIDEBAR, assert_no_errors, open_app, screenshot
from tests.test_checkpoint_options import torchvision_file

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[str]:
    """The launcher with two torchvision files: `--n-heads 2` for the one without a
    config.json, and one with `{"num_heads": 2}` beside it (the issue's guessed case)."""
    root = tmp_path_factory.mktemp("tv")
    bare = torchvision_file(root / "bare")
    guessed = torchvision_file(root / "guessed", "mnist_vit.safetensors",
                               config={"num_heads": 2})
    log = root / "serve.log"
    with started_server(["--checkpoint", bare, "--n-heads", "2", "--checkpoint", guessed],
                        log, env={"ENCODER_LENS_WARM_PAGES": ""}) as (url, _proc):
        yield url
    assert "checkpoint not loaded" not in log.read_text(), log.read_text()


@pytest.mark.parametrize("lang, notice", [("en", "The pixel normalisation is a guess."),
                                          ("zh", "像素归一化是猜的。")])
@pytest.mark.parametrize("weights", ["vit_weights", "mnist_vit"])
def test_the_head_count_is_taken_and_the_guess_is_said_beside_the_prediction(
        page, served, lang, notice, weights):
    open_app(page, served, "vit", f"weights={weights}&lang={lang}")
    assert_no_errors(page)
    expect(page.locator(SIDEBAR)).to_contain_text("h 2, 2 layers")
    warning = page.locator(f'{MAIN} [data-testid="stAlertContentWarning"]',
                           has_text=notice)
    expect(warning).to_have_count(1)
    expect(warning).to_contain_text('"pretrained_cfg"')
    example = json.loads(warning.locator("code").last.inner_text())
    assert example["pretrained_cfg"]["mean"] and example["pretrained_cfg"]["std"]
    warning.scroll_into_view_if_needed()
    screenshot(page, f"checkpoint-guessed-normalisation-{weights}-{lang}")
