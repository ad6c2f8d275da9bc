"""Two Streamlit replicas behind HAProxy (`scripts/serve --replicas 2`), driven in Chromium.

Two browser sessions (two contexts: two cookie jars) open the app through the balancer one
after the other while both stay open. Each session opens the overview (the first also goes to
the next step) and uploads its own picture (reruns), while every HTTP response, and the
handshake of its websocket, is recorded with the `X-Replica` header the balancer adds. Checked:
the sessions land on different replicas; every rerun, websocket, upload and `/media/…` picture
of a session is served by the replica its `SERVERID` cookie names; a picture is only on that
replica (the other one answers 404: this is why stickiness is needed); the walk shows the
expected titles and no exception. Stopping `scripts/serve` (TERM to the script alone) leaves
no process behind.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser_helpers import (
    ARTIFACTS,
    MAIN,
    STEPS,
    TIMEOUT_MS,
    VIEWPORT,
    balancer,
    checker_png,
    http_get,
    image_srcs,
    main_images,
    screenshot,
    server_cookie,
    title,
    upload,
    wait_for,
    wait_idle,
    wait_url,
)

pytestmark = pytest.mark.browser

RUN_DIR = ARTIFACTS / "serve"
# each session its own image size: a /media/ file's name is a hash of its content, so equal
# pictures in two sessions would exist on both replicas
SMALL = {"a": "image_size=64&patch_size=16&d_model=32&n_heads=2&n_layers=1&channels=3",
         "b": "image_size=96&patch_size=16&d_model=32&n_heads=2&n_layers=1&channels=3"}
NEXT = "Next step →"
# each session uploads its own picture (a rerun; the upload must reach the session's replica)
UPLOADS = {"a": checker_png((220, 30, 30), (250, 250, 250)),
           "b": checker_png((30, 60, 220), (20, 20, 20))}
REPLICAS = {"r1", "r2"}


@pytest.fixture(scope="module")
def balancer_url() -> Iterator[str]:
    """`scripts/serve --replicas 2` on a free port; TERM to the script must leave no process
    (`tests.support.browser_helpers.balancer`)."""
    with balancer(RUN_DIR, "serve.log") as url:
        yield url


@dataclass
class Session:
    """What one browser session saw through the balancer."""
    cookie: str = ""  # SERVERID after the first page
    cookie_at_end: str = ""
    document_replica: str = ""  # X-Replica of the first HTML response
    titles: list[str] = field(default_factory=list)  # after opening, (Next,) the upload
    exceptions: int = 0
    responses: list[tuple[str, int, str]] = field(default_factory=list)  # url, status, replica
    websockets: list[str] = field(default_factory=list)  # X-Replica of each handshake
    media_before: set[str] = field(default_factory=set)  # /media/ srcs before the rerun
    media_after: set[str] = field(default_factory=set)  # … after it
    media_url: str = ""  # one picture shown at the end

    def under(self, prefix: str) -> list[tuple[str, int, str]]:
        return [r for r in self.responses if urlparse(r[0]).path.startswith(prefix)]


def _media_srcs(page) -> set[str]:
    return {s for s in image_srcs(page) if "/media/" in s}


def _walk(browser: Browser, url: str, name: str, keep: list, next_step: bool) -> Session:
    """Open the overview, go to the next step (with `next_step`), upload a picture; record
    everything."""
    s = Session()
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(TIMEOUT_MS)
    keep.append(context)  # stays open (its websocket too) while the other session starts
    page = context.new_page()
    page.on("response", lambda r: s.responses.append(
        (r.url, r.status, r.headers.get("x-replica", ""))))
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.on("Network.webSocketHandshakeResponseReceived", lambda e: s.websockets.append(
        {k.lower(): v for k, v in e["response"]["headers"].items()}.get("x-replica", "")))
    try:
        first = page.goto(f"{url}/overview?{SMALL[name]}")
        s.document_replica = first.headers.get("x-replica", "") if first else ""
        wait_idle(page)
        main_images(page, at_least=1)
        s.cookie = server_cookie(context)
        s.titles.append(title(page))
        if next_step:
            page.locator(MAIN).get_by_role("button", name=NEXT).first.click()  # a rerun
            expect(page.locator(f"{MAIN} h1").first).to_have_text(
                re.compile(f"^{STEPS[1][1]}"))
            wait_idle(page)
            wait_url(page, f"/{STEPS[1][0]}?")
            main_images(page, at_least=3)
            s.titles.append(title(page))
        s.media_before = _media_srcs(page)
        upload(page, f"{name}.png", UPLOADS[name])  # more reruns: every picture changes
        s.media_after = wait_for(lambda: _media_srcs(page),
                                 lambda m: bool(m) and not m & s.media_before,
                                 "new pictures after the upload")
        main_images(page, at_least=1)
        s.titles.append(title(page))
        s.media_url = sorted(s.media_after)[0]
        s.exceptions = page.locator('[data-testid="stException"]').count()
        s.cookie_at_end = server_cookie(context)
        screenshot(page, f"replicas_{name}")
    except Exception:
        screenshot(page, f"FAILED-replicas_{name}")
        raise
    return s


@pytest.fixture(scope="module")
def sessions(browser: Browser, balancer_url: str) -> Iterator[list[Session]]:
    contexts: list = []
    try:
        # a walks to the next step (the end-to-end check); b only opens a page and uploads,
        # to keep the test short on a loaded machine
        yield [_walk(browser, balancer_url, "a", contexts, next_step=True),
               _walk(browser, balancer_url, "b", contexts, next_step=False)]
    finally:
        for c in contexts:
            c.close()


def test_two_new_sessions_land_on_different_replicas(sessions):
    a, b = sessions
    assert {a.cookie, b.cookie} == REPLICAS, (a.cookie, b.cookie)
    for s in sessions:
        assert s.document_replica == s.cookie, (s.document_replica, s.cookie)


def test_each_session_reruns_and_media_stay_on_its_replica(sessions, balancer_url):
    for s in sessions:
        where = f"session on {s.cookie}"
        assert s.cookie_at_end == s.cookie, where
        # its websocket (every rerun travels on it) was opened on its replica, and only there
        assert s.websockets and set(s.websockets) == {s.cookie}, (where, s.websockets)
        media = s.under("/media/")
        seen = {urlparse(u).path for u, _, _ in media}
        # pictures of the first page, of the next page and of the rerun were all fetched …
        for shown in (s.media_before, s.media_after):
            assert {urlparse(u).path for u in shown} <= seen, (where, shown, seen)
        # … each from the session's replica, successfully
        assert all(st == 200 and rep == s.cookie for _, st, rep in media), (where, media)
        # the uploaded file went to the session's replica (it is kept in that process)
        uploads = s.under("/_stcore/upload_file/")
        assert uploads and all(st < 400 and rep == s.cookie for _, st, rep in uploads), (
            where, uploads)
        # every request that reached a replica (not a cached answer) names the same one
        routed = {rep for _, _, rep in s.responses if rep}
        assert routed == {s.cookie}, (where, routed)
    # a picture lives only in the process of its session: the other replica does not have it
    a, b = sessions
    for owner, other in ((a, b), (b, a)):
        assert http_get(owner.media_url, f"SERVERID={owner.cookie}") == (200, owner.cookie)
        assert http_get(owner.media_url, f"SERVERID={other.cookie}") == (404, other.cookie)


def test_a_page_walks_end_to_end_through_the_balancer(sessions):
    overview, patches = STEPS[0][1], STEPS[1][1]
    a, b = sessions
    assert len(a.titles) == 3, a.titles
    opened, after_next, after_upload = a.titles
    assert opened.startswith(overview), a.titles
    assert after_next.startswith(patches), a.titles
    assert after_upload.startswith(patches), a.titles  # the reruns stay on the page
    assert len(b.titles) == 2 and all(t.startswith(overview) for t in b.titles), b.titles
    for s in sessions:
        assert s.exceptions == 0, s.cookie
