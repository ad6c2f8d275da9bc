"""When a tablet's page shows its pictures, and in how wide a column (issue 22, item 4).

    .venv/bin/python -m benchmarks.tablet_first_paint [--repeat 5] [--repo DIR] [--page multihead]

Serves the app of `--repo` (default: this checkout; another one, e.g. a `git worktree` of an
older commit, for a before/after), visits the page once at 1400 px (the trace computed, as for
the second learner of a class), then `--repeat` times opens it at 820 × 1180 in a fresh browser
context (no stored sidebar choice) and samples the page every 20 ms: when the title shows, when
the sidebar has closed (the main column at its full width) and when the first picture shows,
with the main column's width then. Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.support.serverctl import serving

ROOT = Path(__file__).resolve().parent.parent
TABLET = {"width": 820, "height": 1180}
SAMPLE_JS = """() => {
  const c = document.querySelector('[data-testid="stMain"] [data-testid="stMainBlockContainer"]');
  const h1 = document.querySelector('[data-testid="stMain"] h1');
  const img = document.querySelector('[data-testid="stMain"] [data-testid="stImage"] img');
  return {main: c ? c.getBoundingClientRect().width : 0,
          title: !!(h1 && h1.textContent.trim()), picture: !!img};
}"""


def one_visit(browser, url: str, limit_s: float = 30.0) -> dict:
    """Seconds from the navigation to the title, to the full-width column and to the first
    picture, and the column's width at that picture."""
    ctx = browser.new_context(viewport=TABLET)
    page = ctx.new_page()
    t0 = time.monotonic()
    page.goto(url, wait_until="commit")
    seen: dict = {}
    while time.monotonic() - t0 < limit_s and not ("picture" in seen and "wide" in seen):
        s, t = page.evaluate(SAMPLE_JS), time.monotonic() - t0
        if s["title"]:
            seen.setdefault("title", t)
        if s["main"] >= TABLET["width"] - 40:
            seen.setdefault("wide", t)
        if s["picture"] and "picture" not in seen:
            seen["picture"], seen["main_at_picture"] = t, s["main"]
        page.wait_for_timeout(20)
    ctx.close()
    return seen


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--repo", type=Path, default=ROOT)
    p.add_argument("--page", default="multihead")
    args = p.parse_args()
    with serving(args.repo.resolve()) as base, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium")
        url = f"{base}/{args.page}"
        warm = browser.new_page(viewport={"width": 1400, "height": 900})
        warm.goto(url)
        warm.wait_for_selector('[data-testid="stMain"] [data-testid="stImage"] img',
                               timeout=120_000)
        warm.close()
        visits = [one_visit(browser, url) for _ in range(args.repeat)]
        browser.close()
    print(f"{args.repo} /{args.page}, 820 × 1180, trace cached, {args.repeat} visits")
    print("| visit | title s | column full width s | first picture s | column at it px |")
    print("|---|---|---|---|---|")
    for n, v in enumerate(visits, 1):
        print(f"| {n} | {v.get('title', float('nan')):.2f} | {v.get('wide', float('nan')):.2f} "
              f"| {v.get('picture', float('nan')):.2f} | {v.get('main_at_picture', 0):.0f} |")
    narrow = sum(v.get("main_at_picture", 0) < 600 for v in visits)
    print(f"first picture in a column under 600 px: {narrow} of {len(visits)}; median first "
          f"picture {statistics.median(v.get('picture', 0) for v in visits):.2f} s")


if __name__ == "__main__":
    main()
