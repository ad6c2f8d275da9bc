"""lens.serve: the production launcher serves the app, and its page warm-up client runs a page
to the end over the server's websocket (and reports a page that does not exist)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from run_async import run_async

from lens import serve

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("load_benchmark", ROOT / "benchmarks" / "load.py")
load = sys.modules.get("load_benchmark") or importlib.util.module_from_spec(_spec)
if "load_benchmark" not in sys.modules:
    sys.modules["load_benchmark"] = load
    _spec.loader.exec_module(load)


def test_the_launcher_serves_and_warms_the_first_page_and_a_page_runs_over_the_websocket():
    log = ROOT / "test-artifacts" / "lens-serve.log"
    log.parent.mkdir(exist_ok=True)
    with load.started_server([], log) as (url, _proc):  # python -m lens.serve, until idle
        assert run_async(serve.run_page(url, serve.WARM_PAGES[0])) is True
        assert run_async(serve.run_page(url, "no_such_page")) is False
    text = log.read_text()
    assert f"lens.serve: warmed the page '{serve.WARM_PAGES[0]}'" in text, text
    assert "lens.serve: warming" not in text, text  # no warm-up failed
