"""Serve the app in production: start warming the defaults, then run `streamlit run` on the
package's entry script, `lens/entry.py`, in this same process (so the warmed caches are the
server's). The command `encoder-lens` (`lens.entry.main`, which `scripts/app` runs) and
`python -m lens.serve` start it, from any folder, installed or not.

    encoder-lens [--checkpoint FILE [--n-heads H] …] [--dev] [Streamlit flags]

`--checkpoint FILE` (any number of times) loads Vision Transformer checkpoints (`lens.models`);
`--n-heads H` after one gives its head count when the file does not say it; `--dev` reloads on
save; `--help` prints `HELP`. Every other argument goes to `streamlit run`.

Two warm-ups run in background threads while the server starts, so the first page is never
delayed (a learner arriving before they are done waits for the computation under way instead
of starting another):
- `traces.warming`: the built-in photo's trace at the default settings (pinned) and the
  trained model's files;
- `warm_pages`: once the server answers, one headless session runs each page of `WARM_PAGES`
  at the default settings over the server's own websocket, as a browser would, so that its
  pictures are in the server's caches too.
The production settings live in lens/.streamlit/config.toml, beside the entry script: Streamlit
reads it as that script's own config, whatever the current folder.

Before the server starts it says where students reach it (`where_lines`): this machine's
network address(es) — not localhost, which no phone can open — and the form of the join link
a class will give (`/class?class=CODE`); `ENCODER_LENS_PUBLIC_URL` when it is set; that no
other device can reach a server bound to loopback only. `scripts/serve` says the same for its
balancer's port.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import socket
import sys
import threading
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path

from .steps import STEPS

APP = Path(__file__).resolve().parent / "entry.py"  # the Streamlit script, inside the package
# The pages run once at start: every step of the note (a teacher's link may open any of them:
# ~3 s of work in the background, +50 MB; Compare's variant traces would add ~220 MB, so the
# pages beyond the note are left to their first visitor), or the ids listed in
# ENCODER_LENS_WARM_PAGES (comma-separated, e.g. "overview,multihead"; "" for none).
WARM_PAGES = tuple(p for p in os.environ.get("ENCODER_LENS_WARM_PAGES",
                                             ",".join(s.id for s in STEPS)).split(",")
                   if p.strip())
START_WAIT_S = 120  # give up warming pages if the server does not answer by then
PAGE_WAIT_S = 300  # give up on a page's session after this


def server_url() -> str:
    """The server's base URL on this machine, from Streamlit's configuration."""
    from streamlit import config

    address = config.get_option("server.address") or "127.0.0.1"
    if address in ("0.0.0.0", "::"):
        address = "127.0.0.1"
    base = (config.get_option("server.baseUrlPath") or "").strip("/")
    return f"http://{address}:{config.get_option('server.port')}" + (f"/{base}" if base else "")


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
            return r.read().strip() == b"ok"
    except OSError:
        return False


async def session(url: str, page: str) -> AsyncIterator[object]:
    """The messages (`ForwardMsg`) the server at `url` sends one headless session that opens
    `page` at the default settings, as a browser's would, until the caller stops reading (or
    PAGE_WAIT_S runs out)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.asyncio.client import connect

    back = BackMsg()
    back.rerun_script.page_name = page
    back.rerun_script.context_info.url = f"{url}/{page}"
    async with asyncio.timeout(PAGE_WAIT_S):
        async with connect(url.replace("http", "ws", 1) + "/_stcore/stream",
                           subprotocols=["streamlit"], max_size=None) as ws:
            await ws.send(back.SerializeToString())
            while True:
                msg = ForwardMsg()
                msg.ParseFromString(await ws.recv())
                yield msg


async def run_page(url: str, page: str) -> bool:
    """Run `page` at the default settings in one headless session; True when it finished
    without an exception element."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    ok = True
    async for msg in session(url, page):
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.new_element.WhichOneof("type") == "exception":
            ok = False
        if kind == "page_not_found":
            return False
        if kind == "script_finished" and msg.script_finished != \
                ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN:
            return ok and msg.script_finished == \
                ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY
    return False


def log(message: str) -> None:
    """One line of this process's log (stderr), timed like Streamlit's own lines
    ("2026-12-07 12:24:33.229 …"): every line of a replica's log carries its time."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    print(f"{stamp}.{int(now % 1 * 1000):03d} lens.serve: {message}", file=sys.stderr,
          flush=True)


def warm_pages(pages: tuple[str, ...] = WARM_PAGES) -> None:
    """Once the server answers, run each page once (see the module's docstring)."""
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        time.sleep(0.5)
        url = server_url()
        if answers(url):
            break
    else:
        return
    for page in pages:
        t0 = time.perf_counter()
        try:
            if asyncio.run(run_page(url, page)):
                log(f"warmed the page {page!r} in {time.perf_counter() - t0:.1f} s")
            else:
                log(f"warming the page {page!r} did not finish cleanly")
        except Exception as err:  # noqa: BLE001 - warming is best effort; the app still serves
            log(f"warming the page {page!r} failed: {err}")


HELP = """\
usage: encoder-lens [--checkpoint FILE [--n-heads H]] ... [--dev] [Streamlit flags]

Serve Encoder Lens, a Transformer encoder walked step by step on an image, on
http://localhost:8501 (from any folder: the app and its settings are in the package).

  --checkpoint FILE  add a Vision Transformer checkpoint to the model choice (any number of
                     times): a .safetensors, .npz or .pth file, or a Hugging Face model
                     folder. A .pth is read by a whitelist unpickler that rebuilds only
                     tensors and plain containers (an OrderedDict): no code in it runs.
  --n-heads H        after a --checkpoint FILE: that file's number of heads, for a file that
                     does not say it (a torchvision ViT of no standard size)
  --dev              reload on save (Streamlit's file watcher and run on save), for editing
                     the code
  -h, --help         show this help and exit

Every other argument goes to `streamlit run` as it is, e.g. --server.port 8600 or
--server.address 0.0.0.0 (`streamlit run --help` lists them all). The app's own Streamlit
settings (lens/.streamlit/config.toml: no file watcher, no error details shown, ...) hold
unless such a flag, or a STREAMLIT_* variable, says otherwise.
"""
# `--dev`: the file watcher back on (the config turns it off), each save rerunning the page
DEV_FLAGS = ["--server.fileWatcherType", "auto", "--server.runOnSave", "true"]


def split_checkpoints(argv: list[str]) -> tuple[list[str], dict[str, int], list[str]]:
    """(checkpoint paths, {path: n_heads}, the other arguments): `--checkpoint PATH` and
    `--checkpoint=PATH`, any number of times, are ours, and so is `--n-heads H` (or
    `--n-heads=H`) after a checkpoint: the head count of the file just named, for a file that
    does not say it (a torchvision ViT of no standard size); the rest are Streamlit's.
    ValueError for an `--n-heads` before any checkpoint or not a positive whole number."""
    paths, heads, rest = [], {}, []
    args = iter(argv)
    for arg in args:
        if arg == "--checkpoint":
            paths.append(next(args, ""))
        elif arg.startswith("--checkpoint="):
            paths.append(arg.split("=", 1)[1])
        elif arg == "--n-heads" or arg.startswith("--n-heads="):
            value = next(args, "") if arg == "--n-heads" else arg.split("=", 1)[1]
            if not paths:
                raise ValueError("--n-heads H comes after the --checkpoint FILE it is for: "
                                 "--checkpoint FILE --n-heads H")
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"--n-heads takes a positive whole number, not {value!r}")
            heads[paths[-1]] = int(value)
        else:
            rest.append(arg)
    return paths, heads, rest


PUBLIC_URL_ENV = "ENCODER_LENS_PUBLIC_URL"  # as `lens.classroom.ui.join` reads it


def machine_addresses() -> list[str]:
    """This machine's IPv4 addresses other devices may reach: the source of its default route
    first (a UDP socket's connect sends nothing: it only picks a route), then its host name's;
    no loopback, no link-local."""
    found: list[str] = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.254.254.254", 9))
            found.append(probe.getsockname()[0])
    except OSError:
        pass
    try:
        found += [info[4][0] for info in socket.getaddrinfo(socket.gethostname(), None,
                                                            socket.AF_INET)]
    except OSError:
        pass
    out = []
    for text in found:
        ip = ipaddress.ip_address(text)
        if not (ip.is_loopback or ip.is_link_local or ip.is_unspecified) and text not in out:
            out.append(text)
    return out


def where_lines(port: int, bind: str, addresses: list[str], public_url: str | None,
                who: str = "Encoder Lens") -> list[str]:
    """What the server says at its start about where it is reached: here (localhost), on the
    network (`addresses`, unless it is bound to loopback only: `bind`), and the join link a
    class gives students (on `public_url` when set)."""
    lines = [f"{who}: on this computer http://localhost:{port}"]
    local_only = bind in ("localhost", "127.0.0.1", "::1")
    if local_only:
        lines.append(f"{who}: served on {bind} only: no phone or other computer can reach it "
                     "(start it without --server.address, or with 0.0.0.0, for a class)")
    elif addresses:
        lines.append(f"{who}: on the network " + ", ".join(f"http://{a}:{port}"
                                                           for a in addresses))
    else:
        lines.append(f"{who}: this machine has no network address but loopback: students "
                     "cannot reach it")
    base = (public_url or "").strip().rstrip("/")
    if not base and addresses and not local_only:
        base = f"http://{addresses[0]}:{port}"
    if base:
        lines.append(f"{who}: a class's join link will be {base}/class?class=CODE (the code "
                     "the teacher's page shows); teachers, open the app by this address too")
    return lines


def flag(argv: list[str], name: str, default: str) -> str:
    """A Streamlit flag's value in `argv` (`--name V` or `--name=V`), else its STREAMLIT_*
    variable, else `default`."""
    for k, arg in enumerate(argv):
        if arg == name and k + 1 < len(argv):
            return argv[k + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    env = "STREAMLIT_" + name.lstrip("-").replace(".", "_").upper()
    return os.environ.get(env, default)


def main(argv: list[str]) -> int:
    if "-h" in argv or "--help" in argv:
        print(HELP, end="")
        return 0
    from streamlit.web import cli

    from . import traces
    from .models import CHECKPOINTS_ENV, HEADS_ENV

    dev = "--dev" in argv
    argv = [a for a in argv if a != "--dev"]
    try:
        paths, heads, argv = split_checkpoints(argv)
    except ValueError as err:
        print(f"lens.serve: {err}", file=sys.stderr)
        return 2
    missing = [p for p in paths if not p or not Path(p).exists()]
    if missing:
        print("lens.serve: no such checkpoint: " + ", ".join(repr(p) for p in missing)
              + " (give a .safetensors, .npz or .pth file, or a Hugging Face model folder)",
              file=sys.stderr)
        return 2
    if paths:  # the Streamlit process is this one: the registry reads them from here
        os.environ[CHECKPOINTS_ENV] = os.pathsep.join(str(Path(p).resolve()) for p in paths)
        os.environ[HEADS_ENV] = json.dumps({str(Path(p).resolve()): h for p, h in heads.items()})
    if dev:  # Streamlit watches the modules in the entry script's folder (lens/) and in
        # PYTHONPATH's: the folder above it too (the checkout: encoder_core/, pages/; installed,
        # site-packages, which Streamlit never watches)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(APP.parent.parent), os.environ.get("PYTHONPATH", "")) if p)
        argv = [*DEV_FLAGS, *argv]
    if os.environ.get("ENCODER_LENS_BEHIND_PROXY") != "1":  # a replica: scripts/serve says it
        port = flag(argv, "--server.port", "8501")
        for line in where_lines(int(port) if port.isdigit() else 8501,
                                flag(argv, "--server.address", ""), machine_addresses(),
                                os.environ.get(PUBLIC_URL_ENV)):
            print(line, flush=True)
    traces.warming()
    threading.Thread(target=warm_pages, name="encoder-lens-warm-pages", daemon=True).start()
    sys.argv = ["streamlit", "run", str(APP), *argv]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
