"""Five browser sessions on one server at once: each keeps its own image and settings."""

from __future__ import annotations

import asyncio
import io
import threading
import time

import numpy as np
import pytest
from PIL import Image
from playwright.async_api import Page, async_playwright
from playwright.async_api import expect as aexpect

from tests.support.browser_helpers import (
    ADVANCED,
    CHROMIUM,
    CHROMIUM_ARGS,
    D_MODEL,
    IDLE_JS,
    MAIN_IMAGES,
    N_HEADS,
    SHOTS,
    SIDEBAR,
    TIMEOUT_MS,
    VIEWPORT,
    colour_fraction,
    solid_png,
)

pytestmark = pytest.mark.browser

SMALL = "image_size=64&patch_size=16&d_model=32&n_heads=2&n_layers=1&channels=3"
# (colour of the upload, d_model, h) of each session: all different
SESSIONS = [
    ((220, 30, 30), 16, 4),
    ((30, 200, 60), 8, 1),
    ((40, 60, 220), 64, 8),
    ((230, 210, 20), 96, 3),
    ((150, 40, 180), 128, 2),
]


async def idle(page: Page) -> None:
    await page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS, polling=100)
    await page.wait_for_timeout(250)
    await page.wait_for_function(IDLE_JS, timeout=TIMEOUT_MS, polling=100)


async def open_advanced(page: Page) -> None:
    """Unfold the sidebar's "Advanced" expander (the architecture controls) if folded."""
    details = page.locator(f'{SIDEBAR} [data-testid="stExpander"] details').filter(
        has_text=ADVANCED[0].split(":")[0]).first  # not "Download a model" above it
    if await details.get_attribute("open") is None:
        await details.locator("summary").click()
        await aexpect(details).to_have_attribute("open", "", timeout=TIMEOUT_MS)


async def move_slider(page: Page, label: str, target: int) -> None:
    await open_advanced(page)
    thumb = page.get_by_role("slider", name=label)
    for _ in range(40):
        now = int(await thumb.get_attribute("aria-valuetext"))
        if now == target:
            return
        await thumb.focus()
        await thumb.press("ArrowRight" if target > now else "ArrowLeft")
        await aexpect(thumb).not_to_have_attribute("aria-valuetext", str(now),
                                                   timeout=TIMEOUT_MS)
        await idle(page)
    raise AssertionError(f"{label} did not reach {target}")


async def input_embedding_shape(page: Page) -> str:
    table = page.locator('[data-testid="stMain"] [data-testid="stTable"] table')
    rows = await table.first.evaluate("""t => Array.from(t.querySelectorAll('tr'))
        .map(r => Array.from(r.children).map(c => c.textContent.trim()))""")
    return next(r[2] for r in rows if r and r[0] == "input embedding")


async def sample(page: Page, context) -> dict:
    """What the session shows now: controls, shapes, URL, its picture's colours, messages."""
    await open_advanced(page)
    src = await page.locator(MAIN_IMAGES).first.get_attribute("src")
    resp = await context.request.get(src)
    if resp.status == 404:  # a newer rerun has replaced the picture meanwhile
        fractions = [0.0] * len(SESSIONS)
    else:
        assert resp.ok, f"GET {src} answered {resp.status}"
        pair = np.asarray(Image.open(io.BytesIO(await resp.body())).convert("RGB"))
        fractions = [colour_fraction(pair, c) for c, _, _ in SESSIONS]
    return {
        "url": page.url,
        "d_model": await page.get_by_role("slider", name=D_MODEL).get_attribute("aria-valuetext"),
        "h": await page.get_by_role("slider", name=N_HEADS).get_attribute("aria-valuetext"),
        "shape": await input_embedding_shape(page),
        "fractions": fractions,
        "exceptions": await page.locator('[data-testid="stException"]').count(),
        "errors": await page.locator('[data-testid="stAlertContentError"]').all_inner_texts(),
        "alerts": await page.locator('[data-testid="stMain"] [data-testid="stAlert"]')
        .all_inner_texts(),
    }


def shows_own(i: int, seen: dict) -> bool:
    _, d_model, h = SESSIONS[i]
    return ((seen["d_model"], seen["h"]) == (str(d_model), str(h))
            and seen["shape"] == f"(16 × 768) · (768 × {d_model}) = 16 × {d_model}"
            and f"d_model={d_model}&n_heads={h}&" in seen["url"]
            and seen["fractions"][i] > 0.05)


async def one_session(browser, base: str, i: int, start: asyncio.Barrier) -> dict:
    colour, d_model, h = SESSIONS[i]
    context = await browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        page = await context.new_page()
        console: list[str] = []  # the frontend's messages (reconnects…), shown on failure
        page.on("console", lambda m: console.append(f"{m.type}: {m.text}"[:300]))
        await page.goto(f"{base}/overview?{SMALL}")
        await idle(page)
        await start.wait()  # every session uploads and moves its sliders at the same time
        sb = page.locator('[data-testid="stSidebar"]')
        await sb.locator('[data-testid="stRadio"] label').filter(
            has_text="Upload your own").first.click()
        await idle(page)
        await sb.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            files=[{"name": f"colour{i}.png", "mimeType": "image/png",
                    "buffer": solid_png(colour)}])
        await aexpect(sb.get_by_text(f"colour{i}.png", exact=True)).to_be_visible()
        await idle(page)
        await move_slider(page, D_MODEL, d_model)
        await move_slider(page, N_HEADS, h)
        # Streamlit catches up with a burst of input a little later on a loaded machine:
        # sample until the session shows its own state (bounded); no sample, ever, may show
        # another session's picture
        foreign: list[list[float]] = []
        deadline = time.monotonic() + TIMEOUT_MS / 1000
        while True:
            await idle(page)
            seen = await sample(page, context)
            if max(f for j, f in enumerate(seen["fractions"]) if j != i) >= 0.001:
                foreign.append(seen["fractions"])
            if shows_own(i, seen) or time.monotonic() > deadline:
                break
            await page.wait_for_timeout(500)
        seen["foreign"] = foreign
        seen["console"] = [c for c in console if "LaTeX-incompatible" not in c]
        seen["png"] = await page.screenshot()
        return seen
    finally:
        await context.close()


async def all_sessions(base: str) -> list:
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                          args=CHROMIUM_ARGS)
        try:
            start = asyncio.Barrier(len(SESSIONS))
            return await asyncio.gather(
                *(one_session(browser, base, i, start) for i in range(len(SESSIONS))),
                return_exceptions=True)
        finally:
            await browser.close()


def test_five_sessions_at_once_keep_their_own_image_and_settings(app_url, browser):
    """`browser` only checks that Chromium is there; the sessions use their own instance."""
    # run the async API in its own thread: the sync API's loop lives in this one
    out: dict = {}

    def run() -> None:
        try:
            out["results"] = asyncio.run(all_sessions(app_url))
        except BaseException as exc:  # handed to the test thread and raised there
            out["error"] = exc

    worker = threading.Thread(target=run, name="five-sessions")
    worker.start()
    worker.join(timeout=300)
    assert not worker.is_alive(), "the five sessions did not finish within 300 s"
    if "error" in out:
        raise out["error"]
    results = out["results"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    for i, r in enumerate(results):
        if isinstance(r, BaseException):
            raise AssertionError(f"session {i} failed: {r!r}") from r
        (SHOTS / f"concurrent_session_{i}.png").write_bytes(r["png"])
    for i, r in enumerate(results):
        colour, d_model, h = SESSIONS[i]
        where = (f"session {i} ({colour}, d_model {d_model}, h {h}; messages shown: "
                 f"{r['alerts']}; browser console: {r['console'][-10:]})")
        assert not r["foreign"], f"{where} showed another session's picture: {r['foreign']}"
        assert r["exceptions"] == 0 and not r["errors"], f"{where}: {r['errors']}"
        assert (r["d_model"], r["h"]) == (str(d_model), str(h)), where
        assert r["shape"] == f"(16 × 768) · (768 × {d_model}) = 16 × {d_model}", where
        assert f"d_model={d_model}&n_heads={h}&" in r["url"], f"{where}: {r['url']}"
        assert r["fractions"][i] > 0.05, f"{where} does not show its image: {r['fractions']}"
