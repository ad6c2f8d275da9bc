"""★ What a ViT looks at, in Chromium, served with `--checkpoint` (the environment variable
`lens.serve` passes on) pointing at the small random timm ViT the tests write (197 tokens):
the page draws every view without error, and the keep-mass slider and the rollout options
change the pictures they belong to (and not the others)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page

from lens.models import CHECKPOINTS_ENV
from tests.support import serverctl  # the one way the app is started
from tests.support.browser_helpers import (
    ARTIFACTS,
    MAIN,
    REPO,
    assert_no_errors,
    choose_radio,
    image_srcs,
    main_images,
    open_app,
    screenshot,
    title,
    wait_for,
    wait_idle,
)

# The page's pictures in their order on the page (the explorer is not an st.image).
DINO, KEPT, ROLLOUT, GRID, NORMS = range(5)
DISCARD = "Discard ratio (the lowest share of weights set to 0)"


@pytest.fixture(scope="module")
def vit_url(vit_checkpoint) -> Iterator[str]:
    """A server of its own, started with the test checkpoint."""
    port = serverctl.free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = ARTIFACTS / "streamlit-server-vit.log"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp, open(log_path, "wb") as log:
        mp.setenv(CHECKPOINTS_ENV, vit_checkpoint)
        proc = serverctl.launch(REPO, port, log)
        try:
            why = serverctl.wait_healthy(proc, url, 60)
            if why:
                pytest.fail(f"{why}; its log:\n{log_path.read_text(errors='replace')}")
            yield url
        finally:
            serverctl.stop(proc)


def changed(page: Page, before: list[str], index: int) -> list[str]:
    """Wait until picture `index` is another one than in `before`; the pictures now."""
    wait_for(lambda: image_srcs(page),
             lambda s: len(s) == len(before) and s[index] != before[index],
             f"picture {index} to change")
    wait_idle(page)
    return image_srcs(page)


def test_the_vit_page_draws_and_its_controls_change_their_pictures(page: Page, vit_url):
    open_app(page, vit_url, "vit", "weights=vit_tiny_test")
    assert title(page) == "What a ViT looks at"
    assert_no_errors(page)
    main_images(page, at_least=5)
    before = image_srcs(page)
    screenshot(page, "vit_page")

    keep = page.get_by_role("slider", name="Keep x % of the mass")
    keep.focus()
    keep.press("ArrowLeft")  # 60 % -> 55 %
    after = changed(page, before, KEPT)
    assert after[DINO] == before[DINO] and after[ROLLOUT] == before[ROLLOUT]

    choose_radio(page, "max", where=page.locator(MAIN))
    again = changed(page, after, ROLLOUT)
    assert again[KEPT] == after[KEPT]

    discard = page.get_by_role("slider", name=DISCARD)
    discard.focus()
    discard.press("ArrowLeft")  # 0.90 -> 0.89
    changed(page, again, ROLLOUT)
    assert_no_errors(page)
