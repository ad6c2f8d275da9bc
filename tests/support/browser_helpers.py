"""Helpers for driving Encoder Lens in a real browser: bounded waits, checks, screenshots."""

from __future__ import annotations

import functools
import io
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import Locator, Page, expect

from lens import steps as _steps
from lens.i18n import translate
from tests.support import serverctl  # the one way the app is started
from tests.support.balancer import (  # noqa: F401 (the browser tests import them from here)
    BALANCER_STARTUP_S,
    BALANCER_STOP_S,
    SERVE,
    balancer,
    http_get,
)

REPO = Path(__file__).resolve().parents[2]

ARTIFACTS = REPO / "test-artifacts"
SHOTS = ARTIFACTS / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 2200}
TIMEOUT_MS = 60_000  # every wait is bounded; the machines are slow and shared

# The pages in navigation order, (url path, English title, 中文 title), and the sidebar's
# labels, taken from the app itself so that a renamed page does not break the suite.
STEPS = tuple((p.id, p.title_in("en"), p.title_in("zh")) for p in _steps.STEPS)
EXTRA_PAGES = tuple((p.id, p.title_in("en"), p.title_in("zh"))  # "★ " links
                    for p in _steps.EXTRA_PAGES)
ALL_PAGES = STEPS + EXTRA_PAGES
D_MODEL = translate("d_model", "en")  # "d_model — width of each token vector"
N_HEADS = translate("n_heads", "en")  # "h — number of heads (n_heads)"


# Watches the app's script runs from now on: window.__states collects each change of its
# data-test-script-state ("running", "notRunning", …) — none while the browser repaints alone.
WATCH_RUNS_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  window.__states = [];
  window.__watch = new MutationObserver(() =>
    window.__states.push(app.getAttribute('data-test-script-state')));
  window.__watch.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
}"""


@functools.cache
def default_trace():
    """The trace of the built-in photo at the default settings with the random weights, as the
    app computes it (what a browser test compares the page's numbers with)."""
    from encoder_core import encode
    from lens import images, model_weights
    from lens.settings import Settings

    cfg = Settings().normalised()[0].to_config()
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return encode(image, cfg, model_weights.random_params(cfg))


def nav_label(i: int, lang: str = "en") -> str:
    """The sidebar link's text of page i of ALL_PAGES: '3. Input embedding', '★ Compare…'."""
    _, en, zh = ALL_PAGES[i]
    name = zh if lang == "zh" else en
    return f"{i + 1}. {name}" if i < len(STEPS) else f"★ {name}"


MAIN = '[data-testid="stMain"]'
SIDEBAR = '[data-testid="stSidebar"]'
MAIN_IMAGES = f'{MAIN} [data-testid="stImage"] img'

IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  if (document.querySelector('[data-testid="stSpinner"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  if (document.querySelector('[data-testid="stException"]')) return true;  // fail fast
  const h1 = document.querySelector('[data-testid="stMain"] h1');
  return !!(h1 && h1.offsetParent !== null && h1.textContent.trim());
}"""

T = TypeVar("T")


def wait_idle(page: Page, timeout: int = TIMEOUT_MS) -> None:
    """Wait (bounded) until the script has finished, no spinner or stale element is left and
    the page's title is visible — checked twice, a quarter second apart, to ride out the gap
    between a click and the rerun it starts."""
    page.wait_for_function(IDLE_JS, timeout=timeout, polling=100)
    page.wait_for_timeout(250)
    page.wait_for_function(IDLE_JS, timeout=timeout, polling=100)


def wait_for(get: Callable[[], T], ok: Callable[[T], bool], what: str,
             timeout: float = TIMEOUT_MS / 1000) -> T:
    """Poll `get()` until `ok(value)`; fail with `what` and the last value after `timeout` s."""
    deadline = time.monotonic() + timeout
    value = get()
    while not ok(value):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}; "
                                 f"last value: {value!r}")
        time.sleep(0.2)
        value = get()
    return value


def steady_box(target: Locator, settle_ms: int = 250,
               timeout: float = TIMEOUT_MS / 1000) -> dict:
    """`target`'s bounding box once it has stopped moving (the same in two reads `settle_ms`
    apart): a point computed from it stays on the patch meant while the layout settles (at a
    tablet's width the sidebar closes after the first paint, moving the main column)."""
    deadline = time.monotonic() + timeout
    box = target.bounding_box()
    while True:
        target.page.wait_for_timeout(settle_ms)
        now = target.bounding_box()
        if now is not None and now == box:
            return now
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for the picture to "
                                 f"stop moving; last box: {now!r}")
        box = now


def address(page: Page) -> str:
    """The address bar's URL, read in the page. Not `page.url`: the sync API updates that only
    while it waits on the browser, so a loop that polls it between `time.sleep`s can read the
    same stale value for ever (the app changes the address with history.replaceState)."""
    return page.evaluate("location.href")


def wait_url(page: Page, *parts: str, timeout: float = TIMEOUT_MS / 1000) -> str:
    """Wait until the page's URL contains every one of `parts` (the app mirrors its settings
    there at the end of a rerun); return it."""
    return wait_for(lambda: address(page), lambda u: all(p in u for p in parts),
                    f"the URL to contain {parts}", timeout=timeout)


def open_app(page: Page, base_url: str, path: str = "", query: str = "",
             first_visit: bool = False) -> None:
    """Open the app at `path` with the link's `query`, which says lesson=0 unless it says
    otherwise: the walk's first page has its choice made (`first_visit`: a link without any
    setting, the choice offered alone)."""
    if not first_visit and "lesson=" not in query:
        query = "&".join(q for q in (query, "lesson=0") if q)
    page.goto(f"{base_url}/{path}" + (f"?{query}" if query else ""))
    wait_idle(page)


def assert_no_errors(page: Page, expect_error: bool = False) -> None:
    """No traceback block ever; no error message unless one is expected."""
    exc = page.locator('[data-testid="stException"]')
    assert exc.count() == 0, f"an exception block is shown: {exc.all_inner_texts()}"
    if not expect_error:
        err = page.locator('[data-testid="stAlertContentError"]')
        assert err.count() == 0, f"an error message is shown: {err.all_inner_texts()}"


def title(page: Page) -> str:
    return page.locator(f"{MAIN} h1").first.inner_text().strip()


def main_images(page: Page, at_least: int = 1) -> list[dict]:
    """Wait until the main area shows ≥ `at_least` images, all loaded with non-zero size;
    return their [{src, w, h}]."""
    js = """([sel, n]) => {
      const imgs = Array.from(document.querySelectorAll(sel));
      return imgs.length >= n && imgs.every(i => i.complete && i.naturalWidth > 0);
    }"""
    try:
        page.wait_for_function(js, arg=[MAIN_IMAGES, at_least], timeout=TIMEOUT_MS, polling=200)
    except Exception as exc:  # re-raised as a plain assertion naming what was seen
        seen = image_info(page)
        raise AssertionError(f"expected ≥ {at_least} loaded images in the main area of "
                             f"{title_or_url(page)}, saw {len(seen)}: {seen}") from exc
    return image_info(page)


def image_info(page: Page) -> list[dict]:
    return page.locator(MAIN_IMAGES).evaluate_all(
        "els => els.map(e => ({src: e.src, w: e.naturalWidth, h: e.naturalHeight}))")


def image_srcs(page: Page) -> list[str]:
    return [i["src"] for i in image_info(page)]


def title_or_url(page: Page) -> str:
    h1 = page.locator(f"{MAIN} h1")
    return repr(h1.first.inner_text()) if h1.count() else page.url


def fetch_png(page: Page, src: str) -> np.ndarray | None:
    """The picture behind an <img src> as an RGB uint8 array (fetched in the page's context);
    None when the server has already dropped it (a newer rerun replaced the media file)."""
    resp = page.context.request.get(src)
    if resp.status == 404:
        return None
    assert resp.ok, f"GET {src} answered {resp.status}"
    return np.asarray(Image.open(io.BytesIO(resp.body())).convert("RGB"))


def colour_fraction(rgb: np.ndarray, colour: Sequence[int], tol: int = 6) -> float:
    """Fraction of the pixels within `tol` of `colour` on every channel."""
    diff = np.abs(rgb.astype(np.int16) - np.asarray(colour, dtype=np.int16))
    return float((diff.max(axis=-1) <= tol).mean())


def screenshot(page: Page, name: str) -> Path:
    """Save the whole main pane (it scrolls inside itself): grow the viewport to its height."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.png"
    size = page.viewport_size or VIEWPORT
    height = page.evaluate("""() => {
      const m = document.querySelector('[data-testid="stMain"]');
      const s = document.querySelector('[data-testid="stSidebarContent"]');
      return Math.max(m ? m.scrollHeight : 0, s ? s.scrollHeight : 0, window.innerHeight);
    }""")
    tall = min(max(int(height) + 40, size["height"]), 12_000)
    try:
        if tall > size["height"]:
            page.set_viewport_size({"width": size["width"], "height": tall})
            page.wait_for_timeout(300)
        page.screenshot(path=str(path))
    finally:
        page.set_viewport_size(size)
    return path


# --- controls ---------------------------------------------------------------------------------
def sidebar(page: Page) -> Locator:
    return page.locator(SIDEBAR)


# the sidebar's folded architecture controls, in both languages
ADVANCED = (translate("advanced", "en"), translate("advanced", "zh"))


def open_advanced(page: Page) -> None:
    """Unfold the sidebar's "Advanced" expander (the architecture controls) if it is folded."""
    details = sidebar(page).locator('[data-testid="stExpander"] details').filter(
        has_text=re.compile("|".join(re.escape(a.split(":")[0]) for a in ADVANCED))).first
    if details.get_attribute("open") is None:
        details.locator("summary").click()
        expect(details).to_have_attribute("open", "")


def slider_value(page: Page, label: str) -> str:
    open_advanced(page)
    return page.get_by_role("slider", name=label).get_attribute("aria-valuetext") or ""


def set_select_slider(page: Page, label: str, target: float, max_steps: int = 40) -> None:
    """Move a numeric (select) slider by keyboard, one step at a time (waiting for each rerun),
    until it shows `target`."""
    open_advanced(page)
    thumb = page.get_by_role("slider", name=label)
    for _ in range(max_steps):
        now = slider_value(page, label)
        if float(now) == float(target):
            return
        thumb.focus()
        thumb.press("ArrowRight" if float(target) > float(now) else "ArrowLeft")
        wait_for(lambda: slider_value(page, label), lambda v, n=now: v != n,
                 f"slider {label!r} to move from {now}")
        wait_idle(page)
    expect(thumb).to_have_attribute("aria-valuetext", str(target))


def choose_radio(page: Page, option: str, where: Locator | None = None) -> None:
    """Click a radio option by its visible label (in the sidebar unless told)."""
    where = where or sidebar(page)
    where.locator('[data-testid="stRadio"] label').filter(has_text=option).first.click()
    wait_idle(page)


def upload(page: Page, name: str, data: bytes, mime: str = "image/png",
           wait: bool = True) -> None:
    """Upload through the real file input in the sidebar (choosing 'Upload your own' first);
    return once the uploader names the file (and, with `wait`, the rerun has finished)."""
    dropzone = sidebar(page).locator('[data-testid="stFileUploaderDropzoneInput"]')
    if dropzone.count() == 0:
        choose_radio(page, "Upload your own")
    dropzone.set_input_files(files=[{"name": name, "mimeType": mime, "buffer": data}])
    expect(sidebar(page).locator('[data-testid="stFileUploader"]')
           .get_by_text(name, exact=True)).to_be_visible()
    if wait:
        wait_idle(page)


def png_bytes(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, format="PNG")
    return buf.getvalue()


def solid_png(colour: Sequence[int], size: int = 96) -> bytes:
    return png_bytes(np.full((size, size, 3), colour, dtype=np.uint8))


def checker_png(a: Sequence[int], b: Sequence[int], size: int = 240, square: int = 40) -> bytes:
    """A two-colour checkerboard: a pattern no photograph has."""
    y, x = np.mgrid[0:size, 0:size]
    mask = ((y // square + x // square) % 2 == 0)[..., None]
    return png_bytes(np.where(mask, np.asarray(a, np.uint8), np.asarray(b, np.uint8)))


# --- reading the page -------------------------------------------------------------------------
def pipeline_rows(page: Page) -> dict[str, list[str]]:
    """The overview's pipeline table (a static st.table), row by row: step -> its cells."""
    table = page.locator(f'{MAIN} [data-testid="stTable"] table').first
    expect(table.locator("tbody tr").first).to_be_attached()
    rows = table.evaluate("""t => Array.from(t.querySelectorAll('tr'))
        .map(r => Array.from(r.children).map(c => c.textContent.trim()))""")
    return {r[0]: r[1:] for r in rows if r}


def shape_of(page: Page, step: str) -> str:
    """The 'shapes' cell of one pipeline step on the overview."""
    rows = pipeline_rows(page)
    header = rows["step"]
    assert step in rows, f"no pipeline row {step!r}: {list(rows)}"
    return rows[step][header.index("shapes")]


def nav_links(page: Page) -> Locator:
    """The app's navigation (Streamlit's own, listed by app.py): links at the top of the
    sidebar, in the note's order."""
    return sidebar(page).locator('[data-testid="stSidebarNavLink"]')


def go_to_step(page: Page, step: str) -> None:
    """Open a step by clicking its navigation link (a client-side page switch)."""
    idx = [s[0] for s in ALL_PAGES].index(step)
    link = nav_links(page).nth(idx)
    expect(link).to_have_attribute("href", re.compile(f"/{step}$"))
    link.click()
    _, en, zh = ALL_PAGES[idx]
    heading = page.locator(f"{MAIN} h1").filter(has_text=re.compile(
        f"^({re.escape(en)}|{re.escape(zh)})"))
    expect(heading.or_(page.locator('[data-testid="stException"]')).first).to_be_visible()
    assert_no_errors(page, expect_error=True)  # a traceback: say so, not "no title"
    expect(heading.first).to_be_visible()
    wait_idle(page)


def per_worker(log_name: str) -> str:
    """`log_name` for pytest-xdist's first worker (or a run without workers); with the worker's
    name added for the others (`streamlit-server-gw1.log`): each server keeps its own log."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    if worker == "gw0":
        return log_name
    stem, dot, ext = log_name.rpartition(".")
    return f"{stem}-{worker}{dot}{ext}"


@contextmanager
def app_server(log_name: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """This repository's app on a free loopback port for a browser test, with `env` added to
    its environment; yields its base URL, always stops it. Its log: test-artifacts/<log_name>;
    a server that never gets healthy fails the test with that log."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    log_path = ARTIFACTS / log_name
    port = serverctl.free_port()
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "wb") as log, pytest.MonkeyPatch.context() as mp:
        for key, value in (env or {}).items():
            mp.setenv(key, value)
        proc = serverctl.launch(REPO, port, log)  # inherits the environment
        try:
            why = serverctl.wait_healthy(proc, url, serverctl.STARTUP_S)
            if why:
                pytest.fail(f"{why}; its log:\n{log_path.read_text(errors='replace')}")
            yield url
        finally:
            serverctl.stop(proc)


# --- several replicas behind HAProxy (`scripts/serve`): tests/support/balancer.py -----------
def server_cookie(context) -> str:  # noqa: ANN001 (a Playwright BrowserContext)
    """The SERVERID cookie HAProxy set in this browser context: the replica it sticks to."""
    return next((c["value"] for c in context.cookies() if c["name"] == "SERVERID"), "")


# The picker's zoom on a touch screen (lens/explorer_web/explorer.js): a tap on small patches
# opens ZOOM_SIDE × ZOOM_SIDE of them drawn large over the picture; a tap there chooses.
ZOOM = "[data-testid='el-zoom']"
ZOOM_SIDE = 5


def tap_in_zoom(root, r: int, c: int, grid: int) -> None:
    """Tap patch (r, c) in the open zoom of the explorer `root` (a locator of its
    [data-testid=el-explorer]); (r, c) must be among the zoom's patches."""
    zoom = root.locator(ZOOM)
    expect(zoom).to_be_visible()
    r0, c0 = divmod(int(root.evaluate("e => e.dataset.zoom")), grid)
    assert 0 <= r - r0 < ZOOM_SIDE and 0 <= c - c0 < ZOOM_SIDE, (r, c, r0, c0)
    box = steady_box(zoom)
    zoom.tap(position={"x": (c - c0 + 0.5) / ZOOM_SIDE * box["width"],
                       "y": (r - r0 + 0.5) / ZOOM_SIDE * box["height"]})
