"""Fixtures for the real-browser tests: one Streamlit server per session, Debian's Chromium.

The server runs `app.py` from the repository root on a free loopback port; every test gets a
fresh browser context (a fresh Streamlit session). A failing test leaves a screenshot in
test-artifacts/screenshots/FAILED-<test>.png and the server's log is kept in
test-artifacts/streamlit-server.log (streamlit-server-gw1.log, … for pytest-xdist's
other workers).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import expect as async_expect
from playwright.sync_api import Browser, BrowserContext, Page, Playwright, expect, sync_playwright

from tests.support.browser_helpers import (
    CHROMIUM,
    CHROMIUM_ARGS,
    TIMEOUT_MS,
    VIEWPORT,
    app_server,
    per_worker,
    screenshot,
)

REPO = Path(__file__).resolve().parents[2]

STARTUP_S = 60  # bounded wait for /_stcore/health

expect.set_options(timeout=TIMEOUT_MS)
async_expect.set_options(timeout=TIMEOUT_MS)  # the asyncio API's expect has its own (5 s)


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Start `streamlit run app.py` on a free port, yield its base URL, stop it afterwards
    (one per pytest-xdist worker, each with its own log)."""
    with app_server(per_worker("streamlit-server.log")) as url:
        yield url


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as p:
        yield p


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    """Debian's headless Chromium (never a browser downloaded by Playwright)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's Chromium. "
                    "Install it once with:  apt-get update && apt-get install -y chromium "
                    "(or run scripts/test as root, which does it)", pytrace=False)
    b = playwright_instance.chromium.launch(executable_path=CHROMIUM, headless=True,
                                            args=CHROMIUM_ARGS)
    yield b
    b.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Remember each phase's report on the item, so fixtures can see a failure."""
    rep = yield
    setattr(item, f"rep_{rep.when}", rep)
    return rep


def _failed(request: pytest.FixtureRequest) -> bool:
    rep = getattr(request.node, "rep_call", None)
    return rep is not None and rep.failed


@pytest.fixture
def context(browser: Browser) -> Iterator[BrowserContext]:
    ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    ctx.set_default_timeout(TIMEOUT_MS)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page in a fresh context (a new Streamlit session); screenshotted on failure."""
    p = context.new_page()
    yield p
    if _failed(request) and not p.is_closed():
        screenshot(p, f"FAILED-{request.node.name}")


@pytest.fixture(scope="module")
def shared_page(browser: Browser, app_url: str) -> Iterator[Page]:
    """One page kept across a module's tests (walking the pages without reloading)."""
    ctx = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    ctx.set_default_timeout(TIMEOUT_MS)
    p = ctx.new_page()
    yield p
    ctx.close()
