"""Screenshots of every page, as a learner sees them, to look at (not a test).

    .venv/bin/python -m scripts.screenshots --out test-artifacts/shots
    .venv/bin/python -m scripts.screenshots --repo /path/to/other/checkout --sizes 1400x900

Run from the repository root, as a module (it starts the app with `tests.support.serverctl`).
Starts the app of `--repo` (default: this checkout) on a free loopback port, opens every page
in Debian's headless Chromium at each size, waits until the script has finished, and saves
`<out>/<size>/<NN>_<page>.png`: the viewport (scrolled to `--at` when given), and with --tall
also the whole page (Streamlit's main pane scrolls inside itself, so a tall viewport stands in
for a full-page shot).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.support.serverctl import serving

HERE = Path(__file__).resolve().parent.parent
IDLE = ('[data-testid="stApp"][data-test-script-state="notRunning"]'
        ' [data-testid="stMain"] h1')
# The page ids of the checkout that is the working directory (`python -c` puts it first on
# the path), also of one from before lens.steps existed.
PAGE_IDS = """
import json
try:
    from lens.steps import ALL_PAGES
    ids = [p.id for p in ALL_PAGES]
except ImportError:
    from lens.state import EXTRA_PAGES, STEPS  # the layout before the app-layer split
    ids = [s[0] for s in STEPS + EXTRA_PAGES]
print(json.dumps(ids))
"""


def page_ids(repo: Path) -> list[str]:
    """The pages of the checkout being shown, asked of a Python started inside it."""
    out = subprocess.run([sys.executable, "-c", PAGE_IDS], cwd=repo, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repo", type=Path, default=HERE)
    p.add_argument("--out", type=Path, default=HERE / "test-artifacts" / "shots")
    p.add_argument("--sizes", default="1400x900", help="e.g. 1400x900,820x1180,390x844")
    p.add_argument("--query", default="", help="link settings, e.g. lang=zh&d_model=64")
    p.add_argument("--tall", action="store_true", help="also the whole page (up to 7000 px)")
    p.add_argument("--pages", default="", help="page ids, e.g. positional,ffn (default: all)")
    p.add_argument("--at", default="", help="a CSS selector scrolled to the top of the view "
                   "first, e.g. '[data-testid=\"el-explorer\"]' (pages without it: the top)")
    args = p.parse_args()
    ids = page_ids(args.repo)
    if args.pages:
        ids = [i for i in ids if i in args.pages.split(",")]

    with serving(args.repo) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium",
                                     args=["--no-sandbox", "--disable-gpu"])
        for size in args.sizes.split(","):
            w, h = (int(v) for v in size.split("x"))
            folder = args.out / size
            folder.mkdir(parents=True, exist_ok=True)
            heights = [("", h)] + ([("_tall", 7000)] if args.tall else [])
            for suffix, height in heights:
                page = browser.new_page(viewport={"width": w, "height": height})
                for k, page_id in enumerate(ids, start=1):
                    page.goto(f"{url}/{page_id}?{args.query}")
                    page.wait_for_selector(IDLE, timeout=120_000)
                    page.wait_for_timeout(1500)  # images and LaTeX settle
                    page.wait_for_selector(IDLE, timeout=120_000)
                    if args.at and page.locator(args.at).count():
                        page.locator(args.at).first.evaluate(
                            "e => e.scrollIntoView({block: 'start'})")
                        page.wait_for_timeout(500)
                    path = folder / f"{k:02d}_{page_id}{suffix}.png"
                    page.screenshot(path=str(path))
                    print(path, flush=True)
                page.close()
        browser.close()


if __name__ == "__main__":
    main()
