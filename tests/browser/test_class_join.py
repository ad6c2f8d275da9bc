"""Joining a class no one can block (issue 51), through `scripts/app` on a free loopback port
with a fresh SQLite store (ENCODER_LENS_DATA in a temporary folder): every browser here comes
from 127.0.0.1, one address, as a lecture hall behind one NAT does.

- Chromium: one browser types a wrong code twelve times (each try past its allowance waits
  `rules.join_delay` and is refused as "no class"), then a new browser opening the join link
  joins within `MAX_DELAY_S`; the first browser then joins too with the right code (after its
  own wait: slowed, never refused).
- 60 students as protocol clients (`benchmarks.classroom.Tab`: Streamlit's websocket protocol,
  no browser), each opening the join link and pressing Join, some after a typo of their own:
  every one of them joins.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect
from sqlalchemy import select

from benchmarks.classroom import Tab, _state
from lens.classroom.database import wrong_codes
from lens.classroom.rules import MAX_DELAY_S
from lens.classroom.store import Store
from lens.i18n import translate
from tests.support import serverctl
from tests.support.browser_helpers import ARTIFACTS, TIMEOUT_MS, VIEWPORT, wait_for, wait_idle
from tests.support.run_async import run_async

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
WRONG = 12  # wrong codes typed from 127.0.0.1 by one browser
STUDENTS = 60  # protocol clients from that address


@pytest.fixture(scope="module")
def app(tmp_path_factory) -> Iterator[tuple[str, Store]]:
    """scripts/app on a free port, its store in a folder of its own: (base URL, the store)."""
    data = tmp_path_factory.mktemp("join-data")
    port = serverctl.free_port()
    url = f"http://127.0.0.1:{port}"
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / "class-join-app.log", "wb") as log:
        proc = subprocess.Popen(
            ["scripts/app", "--server.headless", "true", "--server.address", "127.0.0.1",
             "--server.port", str(port), "--browser.gatherUsageStats", "false"],
            cwd=REPO, env={**os.environ, "ENCODER_LENS_DATA": str(data),
                           "PYTHONUNBUFFERED": "1"},
            stdout=log, stderr=subprocess.STDOUT)
        try:
            why = serverctl.wait_healthy(proc, url, 120)
            if why:
                pytest.fail(why)
            store = Store(f"sqlite:///{data / 'classes.sqlite'}")
            yield url, store
            store.close()
        finally:
            serverctl.stop(proc)


def wrong_count(store: Store) -> int:
    """The wrong codes counted against the address every browser here comes from (127.0.0.1:
    Streamlit gives a loopback connection no address, `member.client_from` calls it
    "unknown"; every browser session's own count is "browser:…")."""
    with store.engine.connect() as conn:
        rows = conn.execute(select(wrong_codes.c.client, wrong_codes.c.count)).all()
    return sum(r.count for r in rows if not r.client.startswith("browser:"))


def students_of(store: Store, code: str, key: str) -> int:
    return len(store.nicknames(code, key))


def test_twelve_wrong_codes_slow_one_browser_and_a_new_browser_joins_at_once(app,
                                                                              browser: Browser):
    url, store = app
    code, key = store.create_class({}, "overview")
    typo = browser.new_context(viewport=VIEWPORT)
    typo.set_default_timeout(TIMEOUT_MS)
    page = typo.new_page()
    page.goto(f"{url}/class")
    wait_idle(page)
    box = page.locator(".st-key-class_code_input input")
    box.fill("WRONG123")
    box.press("Enter")
    wait_idle(page)
    no_class = translate("join_no_class", "en", "class")
    waits = []
    for k in range(WRONG):
        t0 = time.monotonic()
        page.locator(".st-key-class_join_button button").click()
        wait_for(lambda k=k: wrong_count(store), lambda n, k=k: n == k + 1,
                 f"wrong code {k + 1} counted", timeout=60)
        waits.append(time.monotonic() - t0)
        wait_idle(page)
        expect(page.get_by_text(no_class)).to_be_visible()
    print("WRONG_TRIES s:", " ".join(f"{w:.1f}" for w in waits))
    assert wrong_count(store) == WRONG  # every try counted, none refused unseen
    assert waits[-1] >= MAX_DELAY_S - 0.5 > waits[0]  # the last tries were slowed

    late = browser.new_context(viewport={"width": 390, "height": 844})
    late.set_default_timeout(TIMEOUT_MS)
    phone = late.new_page()
    phone.goto(f"{url}/class?class={code}")
    wait_idle(phone)
    expect(phone.locator(".st-key-class_code_input input")).to_have_value(code)
    t0 = time.monotonic()
    phone.locator(".st-key-class_join_button button").click()
    wait_for(lambda: students_of(store, code, key), lambda n: n == 1, "the new browser joined",
             timeout=60)
    joined_s = time.monotonic() - t0
    print(f"NEW_BROWSER_JOINED_S {joined_s:.2f}")
    assert joined_s <= MAX_DELAY_S
    wait_idle(phone)
    phone.screenshot(path=str(ARTIFACTS / "class-join-phone.png"))

    box.fill(code)  # the browser that typed the twelve: the right code now joins, slowed
    box.press("Enter")
    wait_idle(page)
    page.locator(".st-key-class_join_button button").click()
    wait_for(lambda: students_of(store, code, key), lambda n: n == 2,
             "the typing browser joined", timeout=60)
    typo.close()
    late.close()


async def join_by_link(tab: Tab, code: str, typo: bool) -> None:
    """Open the join link and press Join (after a wrong code of one's own, with `typo`)."""
    await tab.open()
    if typo:
        ident = tab.widget_ids["class_code_input"]
        widget = tab.values.setdefault(ident, _state(ident))
        widget.string_value = "WRONG999"
        before = await tab.click("class_join_button")
        await tab.wait_full(before)
        widget.string_value = code
    before = await tab.click("class_join_button")
    await tab.wait_full(before)


def test_sixty_students_behind_one_address_all_join(app):
    url, store = app
    code, key = store.create_class({}, "overview")
    before = wrong_count(store)
    tabs = [Tab(f"s{i}", url, "class", f"class={code}", timeout=240.0)
            for i in range(STUDENTS)]

    async def everyone() -> None:
        for start in range(0, STUDENTS, 10):  # ten at a time: two cores, one server
            batch = tabs[start:start + 10]
            await asyncio.gather(*(join_by_link(t, code, typo=i % 3 == 0)
                                   for i, t in enumerate(batch)))
            await asyncio.gather(*(t.close() for t in batch))

    run_async(everyone())  # (Playwright's loop runs in this thread: a loop of its own)
    typos = sum(1 for i in range(STUDENTS) if (i % 10) % 3 == 0)
    assert wrong_count(store) == before + typos  # the typos reached the store
    assert students_of(store, code, key) == STUDENTS
