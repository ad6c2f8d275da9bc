"""A classroom on one server: many headless sessions at once, through Streamlit's own websocket.

    .venv/bin/python -m benchmarks.load                      # start a server, run every burst
    .venv/bin/python -m benchmarks.load same30 own10         # only these bursts
    .venv/bin/python -m benchmarks.load --server-flags "--runner.postScriptGC true"
    .venv/bin/python -m benchmarks.load --url http://127.0.0.1:8080 --pid 1234,1235

Each session is a fresh browser tab, on loopback: it GETs the page (keeping any cookie the
server or a load balancer sets), opens `/_stcore/stream` (subprotocol `streamlit`), sends one
`BackMsg.rerun_script` with `ClientState(query_string, page_name)` and reads `ForwardMsg`s until
`script_finished`, fetching every `/media/…` image the page shows as soon as its delta arrives
(a browser does). A session fails on a timeout, a page not found, an exception element in a
delta, a script that does not finish successfully or a media request that is not 200. The tabs
of a burst stay open until every one has finished, then close together.

Bursts (`--list` prints them): `one` a single session on the Multi-head link (to fill the
caches before `same30` with `--reuse`); `same30` 30 at once on one link (Multi-head,
defaults); `own10`, `own20` 10 / 20 at once on The stack, each with its own settings (d_model
cycling 64, 96, 128, 192, 256, 384, 512, 768, 1024, 32 with h = 8, valid for each, and its
own seed); `mixed30` 20 on the Multi-head link and 10 with their own settings at once (the
memory goal); `row100` 100 sessions one after another on the Multi-head link; `heavy4`, `heavy8`
4 / 8 at once on The stack at the heaviest settings (1,024 tokens, d_model 1024, 12 layers), each
its own seed (the memory budget, issue 23); `heavy2class` 2 of those, then (HEAVY_LEAD_S later,
one computing and one waiting for memory) 20 on the Multi-head link and the first 5 of `own10`
(d_model 64 … 256, 0.2 GB in all: they fit beside one heavy run): whether a light run waits
behind a heavy one (figures per kind).

For each burst: p50 / p95 / max of the time from a session's start to `script_finished` (and
to its last image), the server's CPU-seconds per session (its process tree's utime + stime from
/proc, delta over the burst) and its peak RSS during the burst (VmRSS of the process tree
sampled every 50 ms; and VmHWM, reset at the start of the burst when the kernel allows), and
a speed probe (seconds of a fixed pure-Python loop just before the burst: these shared machines
run the same code up to twice as fast from one quarter of an hour to the next). When
this script starts the server (the default), every burst gets a fresh server unless `--reuse`
is given, so a burst's figures do not depend on the one before it. With `--url` it measures an
already-running server (e.g. replicas behind a balancer); pass `--pid` (comma-separated) to get
CPU and RSS figures. Figures, not pass/fail: the machines here are shared and noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import re
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from lens.settings import Settings

ROOT = Path(__file__).resolve().parent.parent

D_MODEL_CYCLE = (64, 96, 128, 192, 256, 384, 512, 768, 1024, 32)
OWN_HEADS = 8  # divides every d_model of the cycle, within the memory limit at the defaults
STARTUP_S = 60  # bounded wait for the server's /_stcore/health
STOP_S = 10  # terminate, then kill after this
IDLE_WAIT_S = 90  # at most this long for a started server to go idle before a burst
SAMPLE_S = 0.05  # RSS sampling period
HEAVY_LEAD_S = 3.0  # heavy2class: the heavy runs are in (one computing, one waiting) by then
CLK_TCK = os.sysconf("SC_CLK_TCK")
FINISHED = ForwardMsg.ScriptFinishedStatus


# --- what a session asks for ------------------------------------------------------------------
@dataclass(frozen=True)
class Visit:
    """One tab: a page (file name without its number) and a link's query string; it opens
    `delay_s` after the burst starts (its times count from then), and `group` names the kind
    of learner it stands for (a burst of several kinds gets figures per kind too)."""

    page: str
    query: str = ""
    delay_s: float = 0.0
    group: str = ""


def own_settings_query(i: int) -> str:
    """The link of the i-th learner with their own settings: d_model from the cycle, h = 8,
    seed 1000 + i (only the keys that differ from the defaults)."""
    d_model = D_MODEL_CYCLE[i % len(D_MODEL_CYCLE)]
    settings = Settings(d_model=d_model, n_heads=OWN_HEADS, seed=1000 + i)
    assert OWN_HEADS in settings.head_options(), (d_model, settings.head_options())
    default = Settings().to_url()
    return urllib.parse.urlencode({k: v for k, v in settings.to_url().items()
                                   if default.get(k) != v})


def heaviest_query(i: int) -> str:
    """The link of the i-th learner who moved every slider to its end: 1,024 tokens (224 px,
    patch 7), d_model 1024, 12 layers, 8 heads, seed 2000 + i (issue 23)."""
    settings = Settings(image_size=224, patch_size=7, d_model=1024, n_heads=8, n_layers=12,
                        seed=2000 + i)
    assert 8 in settings.head_options() and 7 in settings.patch_options()
    default = Settings().to_url()
    return urllib.parse.urlencode({k: v for k, v in settings.to_url().items()
                                   if default.get(k) != v})


@dataclass(frozen=True)
class Burst:
    name: str
    what: str  # one line for the table
    visits: tuple[Visit, ...]
    in_a_row: bool = False  # one after another instead of all at once


@functools.cache
def shown_progress(page: str) -> str:
    """The link's lesson progress (`lp`) of a learner who pressed "Show me" on every question
    of `page` at the defaults: read from the app itself (AppTest), so it stays bound to what
    the server computes."""
    from tests.support.apptest_helpers import new_app, open_page  # noqa: PLC0415

    at = new_app(lesson="1")
    at.run()
    open_page(at, page)
    for button in [b.key for b in at.button if b.key and b.key.startswith("lesson_show_")]:
        at.button(key=button).click().run()
    return at.query_params["lp"]


def bursts() -> dict[str, Burst]:
    same = Visit("multihead")
    own = [Visit("stack", own_settings_query(i)) for i in range(20)]
    heavy = [Visit("stack", heaviest_query(i)) for i in range(8)]
    return {b.name: b for b in (
        Burst("one", "1 session, one link (Multi-head, defaults)", (same,)),
        Burst("same30", "30 at once, one link (Multi-head, defaults)", (same,) * 30),
        Burst("own10", "10 at once, each its own settings (The stack)", tuple(own[:10])),
        Burst("own20", "20 at once, each its own settings (The stack)", tuple(own)),
        Burst("mixed30", "20 on one link (Multi-head) + 10 own settings (The stack) at once",
              (same,) * 20 + tuple(own[:10])),
        Burst("row100", "100 in a row, one link (Multi-head, defaults)", (same,) * 100,
              in_a_row=True),
        Burst("scores30", "30 at once, one link (Scores & softmax, defaults)",
              (Visit("scores"),) * 30),
        Burst("lesson30", "30 at once, one link in the lesson (Scores & softmax, its 3 "
              "questions open)", (Visit("scores", "lesson=1"),) * 30),
        Burst("shown30", "30 at once, one link in the lesson (Scores & softmax, its 3 "
              "questions shown: the whole page and the reveals)",
              (Visit("scores", f"lesson=1&lp={shown_progress('scores')}"),) * 30),
        Burst("heavy4", "4 at once, the heaviest settings, each its own seed (The stack)",
              tuple(heavy[:4])),
        Burst("heavy8", "8 at once, the heaviest settings, each its own seed (The stack)",
              tuple(heavy)),
        Burst("heavy2class", f"2 at the heaviest settings (The stack), {HEAVY_LEAD_S:.0f} s "
              "later 20 on one link (Multi-head) + 5 small own settings (The stack)",
              tuple(Visit(v.page, v.query, group="heavy") for v in heavy[:2])
              + (Visit(same.page, same.query, HEAVY_LEAD_S, "one link"),) * 20
              + tuple(Visit(v.page, v.query, HEAVY_LEAD_S, "own") for v in own[:5])),
    )}


# --- one session ------------------------------------------------------------------------------
@dataclass
class Result:
    ok: bool = False
    finish_s: float = float("nan")  # session start -> script_finished
    done_s: float = float("nan")  # session start -> script_finished and every image fetched
    images: int = 0  # /media/… images fetched
    image_bytes: int = 0
    messages: int = 0  # ForwardMsgs read
    errors: list[str] = field(default_factory=list)


def media_urls(msg: ForwardMsg) -> list[str]:
    """The /media/… image URLs a ForwardMsg's delta shows (st.image, st.pyplot)."""
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return []
    element = msg.delta.new_element
    if element.WhichOneof("type") != "imgs":
        return []
    return [img.url for img in element.imgs.imgs if img.url.startswith("/media/")]


def page_run(msg: ForwardMsg) -> str | None:
    """The url path of the page a `navigation` ForwardMsg says is running, else None."""
    if msg.WhichOneof("type") != "navigation":
        return None
    nav = msg.navigation
    return next((p.url_pathname for p in nav.app_pages
                 if p.page_script_hash == nav.page_script_hash), "")


def message_errors(msg: ForwardMsg) -> list[str]:
    """What in one ForwardMsg makes the session a failure: an exception element, a page not
    found, a message sent only by reference (this client keeps no message cache)."""
    kind = msg.WhichOneof("type")
    if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
        element = msg.delta.new_element
        if element.WhichOneof("type") == "exception":
            ex = element.exception
            return [f"exception: {ex.type}: {ex.message}"[:300]]
    if kind == "page_not_found":
        return [f"page not found: {msg.page_not_found.page_name}"]
    if kind is None and msg.ref_hash:
        return ["message sent by reference"]
    return []


def rerun_message(visit: Visit, base_url: str) -> bytes:
    """The BackMsg a fresh tab sends: run `visit.page` with `visit.query`."""
    back = BackMsg()
    state = back.rerun_script
    state.query_string = visit.query
    state.page_name = visit.page
    state.page_script_hash = ""
    state.context_info.url = f"{base_url}/{visit.page}" + (f"?{visit.query}" if visit.query
                                                            else "")
    state.context_info.timezone = "UTC"
    state.context_info.locale = "en-US"
    return back.SerializeToString()


async def http_get(base_url: str, path: str, cookies: dict[str, str],
                   timeout: float) -> tuple[int, int]:
    """GET base_url + path over HTTP/1.1 (Connection: close); (status, body bytes). Cookies
    the response sets are added to `cookies` (a balancer's sticky cookie)."""
    url = urllib.parse.urlsplit(base_url)
    host, port = url.hostname, url.port or 80
    reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
    try:
        head = [f"GET {path} HTTP/1.1", f"Host: {url.netloc}", "Connection: close",
                "User-Agent: encoder-lens-load"]
        if cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in cookies.items()))
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode())
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    finally:
        writer.close()
    header, _, body = data.partition(b"\r\n\r\n")
    lines = header.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "set-cookie":
            key, _, val = value.strip().split(";")[0].partition("=")
            cookies[key.strip()] = val.strip()
    return status, len(body)


async def session(visit: Visit, base_url: str, timeout: float, done: asyncio.Event | None,
                  release: asyncio.Event | None) -> Result:
    """One tab: load the page, open the websocket, run the page, fetch its images. When
    `release` is given, the tab stays open until it is set."""
    result = Result()
    cookies: dict[str, str] = {}
    await asyncio.sleep(visit.delay_s)
    t0 = time.perf_counter()
    fetches: list[asyncio.Task] = []

    async def fetch(url: str) -> None:
        status, size = await http_get(base_url, url, cookies, timeout)
        if status != 200:
            result.errors.append(f"media {url}: HTTP {status}")
        else:
            result.images += 1
            result.image_bytes += size

    try:
        async with asyncio.timeout(timeout) as deadline:
            status, _ = await http_get(base_url, f"/{visit.page}", cookies, timeout)
            if status != 200:
                result.errors.append(f"page: HTTP {status}")
            ws_url = base_url.replace("http", "ws", 1) + "/_stcore/stream"
            headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())} \
                if cookies else None
            async with connect(ws_url, subprotocols=["streamlit"], additional_headers=headers,
                               max_size=None, open_timeout=timeout, ping_interval=None) as ws:
                await ws.send(rerun_message(visit, base_url))
                ran = None  # the page the server ran last (a missing one runs the main page)
                while True:
                    msg = ForwardMsg()
                    msg.ParseFromString(await ws.recv())
                    result.messages += 1
                    result.errors += message_errors(msg)
                    ran = page_run(msg) or ran
                    fetches += [asyncio.create_task(fetch(u)) for u in media_urls(msg)]
                    if msg.WhichOneof("type") == "script_finished":
                        if msg.script_finished == FINISHED.FINISHED_EARLY_FOR_RERUN:
                            continue
                        if msg.script_finished != FINISHED.FINISHED_SUCCESSFULLY:
                            result.errors.append(
                                f"script_finished {FINISHED.Name(msg.script_finished)}")
                        break
                # Streamlit's page_not_found message is dropped when the default page's rerun
                # (app.py's landing page switches to the first step) clears the queue first.
                if ran is not None and ran != visit.page and \
                        not any(e.startswith("page not found") for e in result.errors):
                    result.errors.append(f"page not found: {visit.page} (ran {ran or 'main'})")
                result.finish_s = time.perf_counter() - t0
                await asyncio.gather(*fetches)
                result.done_s = time.perf_counter() - t0
                result.ok = not result.errors
                deadline.reschedule(None)  # held open as long as the burst needs
                if done is not None:
                    done.set()
                if release is not None:
                    await release.wait()
    except TimeoutError:
        result.errors.append(f"timeout after {timeout:.0f} s")
    except Exception as err:  # noqa: BLE001 - a failed session is a figure, not a crash
        result.errors.append(f"{type(err).__name__}: {err}"[:300])
    finally:
        for task in fetches:
            task.cancel()
    result.ok = not result.errors
    return result


async def run_burst(burst: Burst, base_url: str, timeout: float) -> list[Result]:
    """Every visit of the burst at once (tabs held open until all have finished), or one
    after another."""
    if burst.in_a_row:
        return [await session(v, base_url, timeout, None, None) for v in burst.visits]
    release = asyncio.Event()
    dones = [asyncio.Event() for _ in burst.visits]
    tasks = [asyncio.create_task(session(v, base_url, timeout, d, release))
             for v, d in zip(burst.visits, dones, strict=True)]

    await _until_settled(dones, tasks, timeout)
    release.set()
    return list(await asyncio.gather(*tasks))


async def _until_settled(dones: list[asyncio.Event], tasks: list[asyncio.Task],
                         timeout: float) -> None:
    """Wait (bounded) until every session has finished its page or ended."""
    deadline = time.perf_counter() + timeout + 5
    while time.perf_counter() < deadline:
        if all(d.is_set() or t.done() for d, t in zip(dones, tasks, strict=True)):
            return
        await asyncio.sleep(0.05)


# --- the server: /proc figures ----------------------------------------------------------------
def process_tree(pids: list[int]) -> list[int]:
    """The pids and all their descendants (from /proc/*/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
    out, todo = [], list(pids)
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def cpu_seconds(pids: list[int]) -> float:
    """utime + stime of the processes (and their reaped children), seconds."""
    total = 0
    for pid in process_tree(pids):
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / CLK_TCK


def status_kb(pid: int, key: str) -> int:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    m = re.search(rf"^{key}:\s+(\d+) kB", text, re.M)
    return int(m.group(1)) if m else 0


def reset_hwm(pids: list[int]) -> bool:
    """Reset VmHWM of the processes (clear_refs 5); False when the kernel refuses."""
    try:
        for pid in process_tree(pids):
            Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


@contextmanager
def rss_sampler(pids: list[int]) -> Iterator[dict[str, float]]:
    """Samples the tree's VmRSS every SAMPLE_S in a thread; yields a dict whose "peak_mb"
    holds the highest sum seen (and "hwm_mb" VmHWM at the end, when it could be reset)."""
    out = {"peak_mb": 0.0, "hwm_mb": float("nan")}
    stop = threading.Event()
    hwm_ok = reset_hwm(pids)

    def sample() -> None:
        while not stop.is_set():
            rss = sum(status_kb(p, "VmRSS") for p in process_tree(pids)) / 1024
            out["peak_mb"] = max(out["peak_mb"], rss)
            stop.wait(SAMPLE_S)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()
        if hwm_ok:
            out["hwm_mb"] = sum(status_kb(p, "VmHWM") for p in process_tree(pids)) / 1024


def wait_idle(pids: list[int], limit_s: float = 0.1, period_s: float = 1.0) -> float:
    """Wait until the processes use under `limit_s` CPU-seconds in `period_s` (at most
    IDLE_WAIT_S); the seconds waited."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < IDLE_WAIT_S:
        before = cpu_seconds(pids)
        time.sleep(period_s)
        if cpu_seconds(pids) - before < limit_s:
            break
    return time.monotonic() - t0


# --- the server: start and stop ---------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except (urllib.error.URLError, OSError):
        return False


@contextmanager
def started_server(flags: list[str], log_path: Path | None = None,
                   env: dict[str, str] | None = None, app: Path | None = None,
                   ) -> Iterator[tuple[str, subprocess.Popen]]:
    """The app as `scripts/app` starts it (`python -m lens.serve`, or `streamlit run app.py`
    in a checkout without it; the repository's .streamlit config; one BLAS thread), on a free
    loopback port with `flags` added; yields (base URL, process) once it answers and has gone
    idle (its start-up work, e.g. warming the default trace, done: at most IDLE_WAIT_S); stops
    it after. With `app` (a script), `streamlit run` that script in its own folder instead."""
    port = free_port()
    if app is not None:
        launch = ["-m", "streamlit", "run", app.name]
    elif (ROOT / "lens" / "serve.py").exists():
        launch = ["-m", "lens.serve"]
    else:
        launch = ["-m", "streamlit", "run", "app.py"]
    cmd = [sys.executable, *launch, "--browser.gatherUsageStats", "false",
           "--server.headless", "true", "--server.address", "127.0.0.1",
           "--server.port", str(port), *flags]
    log = open(log_path or os.devnull, "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(cmd, cwd=app.parent if app is not None else ROOT, stdout=log,
                            stderr=subprocess.STDOUT,
                            env={**os.environ,  # `-m` from ROOT: the checkout comes first
                                 # as scripts/app: one BLAS thread unless told otherwise
                                 "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS",
                                                                        "1"),
                                 **(env or {})},
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + STARTUP_S
        while not healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {' '.join(cmd)}")
            time.sleep(0.2)
        wait_idle([proc.pid])
        yield url, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=STOP_S)
        log.close()


# --- figures ----------------------------------------------------------------------------------
@dataclass
class Figures:
    burst: Burst
    results: list[Result]
    wall_s: float
    cpu_s: float = float("nan")
    peak_mb: float = float("nan")
    hwm_mb: float = float("nan")
    start_mb: float = float("nan")
    probe_s: float = float("nan")  # speed_probe() just before the burst
    healthy_after: bool = True  # /_stcore/health answered "ok" once the burst was over


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank) of the values; NaN when there are none."""
    values = sorted(v for v in values if v == v)
    if not values:
        return float("nan")
    return values[min(len(values) - 1, max(0, -(-len(values) * q // 100) - 1))]


def speed_probe() -> float:
    """Seconds a fixed pure-Python loop (3 million additions) takes here, now: how fast the
    machine runs Python at the moment (shared machines drift by ±50 % within minutes)."""
    t0 = time.perf_counter()
    total = 0
    for i in range(3_000_000):
        total += i
    return time.perf_counter() - t0


def measure(burst: Burst, base_url: str, pids: list[int], timeout: float) -> Figures:
    """Run one burst against the server, with its CPU and RSS figures when pids are known."""
    probe = speed_probe()
    cpu0 = cpu_seconds(pids) if pids else float("nan")
    start_mb = sum(status_kb(p, "VmRSS") for p in process_tree(pids)) / 1024 if pids else 0
    t0 = time.perf_counter()
    if pids:
        with rss_sampler(pids) as rss:
            results = asyncio.run(run_burst(burst, base_url, timeout))
        peak, hwm = rss["peak_mb"], rss["hwm_mb"]
    else:
        results = asyncio.run(run_burst(burst, base_url, timeout))
        peak = hwm = float("nan")
    wall = time.perf_counter() - t0
    cpu = cpu_seconds(pids) - cpu0 if pids else float("nan")
    return Figures(burst, results, wall, cpu, peak, hwm, start_mb if pids else float("nan"),
                   probe, healthy(base_url))


def table(rows: list[Figures], label: str) -> str:
    """The figures as a markdown table."""
    out = [f"**{label}**", "",
           "| burst | sessions | failures | p50 | p95 | max | p95 with images | images / session "
           "| CPU s / session | peak RSS (sampled) | VmHWM | RSS before | wall | speed probe "
           "| healthy after |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for f in rows:
        finish = [r.finish_s for r in f.results]
        done = [r.done_s for r in f.results]
        n = len(f.results)
        failures = sum(not r.ok for r in f.results)
        out.append(
            f"| {f.burst.what} | {n} | {failures} | {percentile(finish, 50):.2f} s "
            f"| {percentile(finish, 95):.2f} s | {percentile(finish, 100):.2f} s "
            f"| {percentile(done, 95):.2f} s | {statistics.mean(r.images for r in f.results):.1f} "
            f"| {f.cpu_s / n:.2f} | {f.peak_mb:.0f} MB | {f.hwm_mb:.0f} MB "
            f"| {f.start_mb:.0f} MB | {f.wall_s:.1f} s | {f.probe_s:.2f} s "
            f"| {'yes' if f.healthy_after else 'NO'} |")
        out += group_rows(f)
    return "\n".join(out)


def group_rows(f: Figures) -> list[str]:
    """One table row per kind of learner when the burst has several (`Visit.group`): its
    sessions' p50 / p95 / max, each counted from the session's own start."""
    groups = dict.fromkeys(v.group for v in f.burst.visits)
    if len(groups) < 2:
        return []
    rows = []
    for group in groups:
        results = [r for v, r in zip(f.burst.visits, f.results, strict=True) if v.group == group]
        finish = [r.finish_s for r in results]
        rows.append(f"| … {group} | {len(results)} | {sum(not r.ok for r in results)} "
                    f"| {percentile(finish, 50):.2f} s | {percentile(finish, 95):.2f} s "
                    f"| {percentile(finish, 100):.2f} s |" + " |" * 9)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bursts", nargs="*", help="which bursts (default: all); see --list")
    ap.add_argument("--list", action="store_true", help="print the bursts and stop")
    ap.add_argument("--url", help="an already-running server (or balancer); not started here")
    ap.add_argument("--pid", default="", help="with --url: the server pid(s), comma-separated, "
                    "for the CPU and RSS figures")
    ap.add_argument("--server-flags", default="", help='extra flags for the started server, '
                    'e.g. "--runner.postScriptGC true"')
    ap.add_argument("--env", action="append", default=[], metavar="KEY=VALUE",
                    help="an environment variable for the started server (repeatable), e.g. "
                    "ENCODER_LENS_MAX_COMPUTES=2")
    ap.add_argument("--reuse", action="store_true",
                    help="one started server for every burst (default: a fresh one each)")
    ap.add_argument("--timeout", type=float, default=240.0, help="seconds, per session")
    ap.add_argument("--label", default="", help="a title for the table")
    ap.add_argument("--log", type=Path, help="the started server's log file")
    args = ap.parse_args(argv)

    available = bursts()
    if args.list:
        for b in available.values():
            print(f"{b.name:8} {b.what}")
        return 0
    chosen = [available[name] for name in (args.bursts or list(available))]
    label = args.label or (f"against {args.url}" if args.url else
                           f"started server, flags: {args.server_flags or '(none)'}"
                           + (f", env: {' '.join(args.env)}" if args.env else ""))
    rows: list[Figures] = []
    if args.url:
        pids = [int(p) for p in args.pid.split(",") if p.strip()]
        for burst in chosen:
            rows.append(measure(burst, args.url.rstrip("/"), pids, args.timeout))
            print(table(rows[-1:], burst.name), file=sys.stderr, flush=True)
    else:
        flags = shlex.split(args.server_flags)
        env = dict(e.split("=", 1) for e in args.env)
        groups = [chosen] if args.reuse else [[b] for b in chosen]
        for group in groups:
            with started_server(flags, args.log, env) as (url, proc):
                for burst in group:
                    rows.append(measure(burst, url, [proc.pid], args.timeout))
                    print(table(rows[-1:], burst.name), file=sys.stderr, flush=True)
    print(table(rows, label))
    for f in rows:
        errors = sorted({e for r in f.results for e in r.errors})
        for e in errors[:5]:
            print(f"- {f.burst.name}: {e}")
    return 0 if all(r.ok for f in rows for r in f.results) else 1


if __name__ == "__main__":
    sys.exit(main())
