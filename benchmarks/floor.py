"""What Streamlit itself costs a classroom: the `same30` burst (`load.py`) against the app and
against two stand-in apps with nothing of ours in them, on the same machine, back to back.

    .venv/bin/python -m benchmarks.floor                  # 3 rounds, Multi-head
    .venv/bin/python -m benchmarks.floor --rounds 5 --page stack

Three servers, each started as `load.py` starts one (the repository's .streamlit config, one
BLAS thread, loopback):
- `app`: Encoder Lens as `scripts/app` starts it, its caches warm (one visit first);
- `one element`: a page with one `st.markdown` — what a session costs Streamlit at all
  (its websocket, session, script thread, the page's HTML);
- `same shape`: a page with as many elements and layout blocks as one visit of the app's page
  sends (counted from that visit), all of them `st.markdown` / `st.container` with a line of
  text, and as many images (a small PNG each) — Streamlit's cost for that much page, without
  our computations, pictures or widgets.

Each round runs the burst once against each server in turn, so that the three see the same
machine; the table gives the median (and range) over the rounds of p95 and CPU-seconds per
session. The lesson of the figures (benchmarks/README.md): one process's p95 for 30 sessions at
once is about 30 × its CPU-seconds per session, and the stand-in with the same shape sets the
floor that leaner code of ours can approach but not pass.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import statistics
import sys
import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from benchmarks.load import ROOT, Burst, Visit, measure, percentile, rerun_message, started_server


async def page_shape(base_url: str, page: str) -> Counter:
    """One visit's ForwardMsgs by kind: "block", "image", "element" (any other element), and
    "other" (session and page messages)."""
    kinds: Counter = Counter()
    ws_url = base_url.replace("http", "ws", 1) + "/_stcore/stream"
    async with connect(ws_url, subprotocols=["streamlit"], max_size=None) as ws:
        await ws.send(rerun_message(Visit(page), base_url))
        while True:
            msg = ForwardMsg()
            msg.ParseFromString(await ws.recv())
            if msg.WhichOneof("type") == "delta":
                delta = msg.delta.WhichOneof("type")
                if delta == "add_block":
                    kinds["block"] += 1
                elif delta == "new_element":
                    is_image = msg.delta.new_element.WhichOneof("type") == "imgs"
                    kinds["image" if is_image else "element"] += 1
                else:
                    kinds["other"] += 1
            else:
                kinds["other"] += 1
            if msg.WhichOneof("type") == "script_finished":
                return kinds


def stand_in_app(folder: Path, page: str, body: str) -> Path:
    """A Streamlit app in `folder` with the repository's config and `pages/<page>.py` = body."""
    (folder / ".streamlit").mkdir(parents=True)
    (folder / ".streamlit" / "config.toml").write_text(
        (ROOT / ".streamlit" / "config.toml").read_text())
    (folder / "pages").mkdir()
    (folder / "pages" / f"{page}.py").write_text(body)
    app = folder / "app.py"
    app.write_text("import streamlit as st\n\nst.markdown('home')\n")
    return app


def same_shape_body(shape: Counter) -> str:
    """A page sending `shape`'s blocks, elements and images, with nothing else in it."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (40, 90, 160)).save(buf, format="PNG")
    return "\n".join([
        "import streamlit as st",
        f"PNG = {buf.getvalue()!r}",
        f"for i in range({shape['block']}):",
        "    st.container()",
        f"for i in range({shape['element']}):",
        "    st.markdown(f'A line of text, number {i}, as long as a short caption.')",
        f"for i in range({shape['image']}):",
        "    st.image(PNG, output_format='PNG')",
        ""])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--page", default="multihead", help="the app's page (file name without its "
                    "number), visited by 30 sessions at once")
    ap.add_argument("--timeout", type=float, default=240.0)
    args = ap.parse_args(argv)
    burst = Burst("same30", f"30 at once, one link ({args.page})", (Visit(args.page),) * 30)
    with ExitStack() as stack:
        url, proc = stack.enter_context(started_server([]))
        shape = asyncio.run(page_shape(url, args.page))  # also warms the page's caches
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        one = stand_in_app(tmp / "one", args.page, "import streamlit as st\n\n"
                           "st.markdown('One line.')\n")
        same = stand_in_app(tmp / "same", args.page, same_shape_body(shape))
        servers = {"app": (url, proc)}
        for name, app in (("one element", one), ("same shape", same)):
            servers[name] = stack.enter_context(started_server([], app=app))
        print(f"one visit of {args.page}: {shape['element']} elements, {shape['block']} layout "
              f"blocks, {shape['image']} images, {shape['other']} other messages",
              file=sys.stderr)
        p95: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        for r in range(args.rounds):
            for name, (base, server) in servers.items():
                figures = measure(burst, base, [server.pid], args.timeout)
                failures = sum(not x.ok for x in figures.results)
                if failures:
                    print(f"{name}: {failures} sessions failed", file=sys.stderr)
                    return 1
                p95[name].append(percentile([x.finish_s for x in figures.results], 95))
                cpu[name].append(figures.cpu_s / len(figures.results))
                print(f"round {r + 1}, {name}: p95 {p95[name][-1]:.2f} s, "
                      f"{cpu[name][-1]:.3f} CPU-s / session", file=sys.stderr, flush=True)
    print(f"**30 sessions at once on one process, {args.rounds} rounds** (one visit of "
          f"`{args.page}`: {shape['element']} elements, {shape['block']} blocks, "
          f"{shape['image']} images)\n")
    print("| server | p95, median (range) | CPU s / session, median (range) |")
    print("|---|---|---|")
    for name in servers:
        print(f"| {name} | {statistics.median(p95[name]):.2f} s ({min(p95[name]):.2f}–"
              f"{max(p95[name]):.2f}) | {statistics.median(cpu[name]):.3f} "
              f"({min(cpu[name]):.3f}–{max(cpu[name]):.3f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
