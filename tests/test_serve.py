"""lens.serve: the production launcher serves the app, and its page warm-up client runs a page
to the end over the server's websocket (and reports a page that does not exist)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from benchmarks import load
from lens import serve
from tests.support.run_async import run_async

ROOT = Path(__file__).resolve().parent.parent
WARM_WAIT_S = 180  # bounded wait for the launcher's warm-up to finish


def warm_done(text: str) -> bool:
    """The launcher has warmed (or failed to warm) its last page."""
    return f"the page '{serve.WARM_PAGES[-1]}'" in text


@pytest.mark.slow
def test_the_launcher_serves_and_warms_the_first_page_and_a_page_runs_over_the_websocket():
    log = ROOT / "test-artifacts" / "lens-serve.log"
    log.parent.mkdir(exist_ok=True)
    with load.started_server([], log) as (url, _proc):  # python -m lens.serve, until idle
        assert run_async(serve.run_page(url, serve.WARM_PAGES[0])) is True
        assert run_async(serve.run_page(url, "no_such_page")) is False
        # the warm-up goes on in the background: a loaded machine (two test workers) is still
        # warming when the page runs above are done; stopping then fails the later warm-ups
        deadline = time.monotonic() + WARM_WAIT_S
        while time.monotonic() < deadline and not warm_done(log.read_text()):
            time.sleep(0.5)
    text = log.read_text()
    assert f"lens.serve: warmed the page '{serve.WARM_PAGES[0]}'" in text, text
    assert "lens.serve: warming" not in text, text  # no warm-up failed
