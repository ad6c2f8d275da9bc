"""The attention explorer: hover → repaint latency in Chromium, and the payload a page sends.

    .venv/bin/python -m benchmarks.explorer [--hovers 200]

Starts the app on a free loopback port, opens Multi-head attention (8 maps) and The stack
(6 × 8 maps) at 1400 × 900 in Debian's headless Chromium, and moves the pointer over `--hovers`
patches of the picture, each a new patch. For each hover it measures, with performance.now() in
the page: the handler (every map recoloured and put on its canvas) and the time until the next
animation frame (when the browser paints it). Then the payload sizes, from `lens.explorer` at the
defaults and at the largest settings. Figures, not pass/fail: these machines are noisy.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from playwright.sync_api import sync_playwright

from lens import explorer
from tests.support.serverctl import serving

ROOT = Path(__file__).resolve().parent.parent

PICKER = '[data-testid="el-explorer"] .el-pick canvas'

HOVER_JS = """async (cv, pts) => {
  const r = cv.getBoundingClientRect(), handler = [], frame = [];
  for (const [fx, fy] of pts) {
    const ev = new PointerEvent('pointermove', {bubbles: true, pointerType: 'mouse',
      clientX: r.left + fx * r.width, clientY: r.top + fy * r.height});
    const t0 = performance.now();
    cv.dispatchEvent(ev);
    handler.push(performance.now() - t0);
    await new Promise(ok => requestAnimationFrame(() => ok()));
    frame.push(performance.now() - t0);
    await new Promise(ok => setTimeout(ok, 5));
  }
  return {handler, frame};
}"""


def hover_latency(page, url: str, hovers: int, grid: int = 14) -> dict[str, list[float]]:
    page.goto(url)
    page.wait_for_selector(PICKER, timeout=120_000)
    page.wait_for_selector('[data-testid="stApp"][data-test-script-state="notRunning"]')
    page.wait_for_timeout(1000)
    rng = np.random.default_rng(0)
    pts, last = [], None
    while len(pts) < hovers:  # each hover a new patch (the same patch repaints nothing)
        r, c = (int(v) for v in rng.integers(0, grid, 2))
        if (r, c) != last:
            pts.append([(c + 0.5) / grid, (r + 0.5) / grid])
            last = (r, c)
    return page.locator(PICKER).evaluate(HOVER_JS, pts)


def summary(ms: list[float]) -> str:
    q = np.percentile(ms, [50, 95])
    return f"median {q[0]:6.2f} ms, p95 {q[1]:6.2f} ms, max {max(ms):6.2f} ms"


def payloads() -> None:
    """kB of the explorer's blob (header, colour map, picture, float16 maps) per page."""
    text = {"hint": "…", "aria": "…", "patch": "patch {i} (row {r}, column {c})",
            "weight": "weight"}
    rows = [("Multi-head, defaults (8 heads, 196 tokens)", 224, 14, (1, 8)),
            ("The stack, defaults (6 layers × 8 heads, 196 tokens)", 224, 14, (6, 8)),
            ("Multi-head, 1,024 tokens × 16 heads: over the cap", 512, 32, (1, 16)),
            ("The stack, 1,024 tokens, 6 × 8 shown: over the cap", 512, 32, (6, 8)),
            ("The stack, 1,024 tokens: one layer of 8 heads", 512, 32, (1, 8)),
            ("any page's picker (no maps), 512 px image", 512, 32, None)]
    print("\npayload per page (what the explorer sends on every run)")
    for name, size, grid, shape in rows:
        image = np.zeros((size, size, 1), np.float32)
        n = grid * grid
        if shape is not None and not explorer.fits(shape[0] * shape[1], n):
            kb = explorer.map_bytes(shape[0] * shape[1], n) / 1024
            print(f"  {name:58s} would be {kb:9.0f} kB > {explorer.MAX_BYTES / 1024:.0f} kB: "
                  "the picker alone is sent, the maps are static pictures (click → rerun)")
            continue
        maps = None
        if shape is not None:
            attn = np.full((*shape, n, n), 1 / n, np.float32)
            maps = explorer.Maps(attn, "t", "w")
        blob = explorer.payload(image, grid, 0, text, maps)
        print(f"  {name:58s} {len(blob) / 1024:9.0f} kB")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hovers", type=int, default=200)
    args = p.parse_args()
    with serving(ROOT) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium",
                                     args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        print(f"hover → repaint, {args.hovers} hovers, 1400 × 900, headless Chromium")
        for name, path in [("Multi-head (8 maps)", "multihead"),
                           ("The stack (48 maps)", "stack")]:
            t = hover_latency(page, f"{url}/{path}", args.hovers)
            print(f"  {name:22s} handler (recolour + draw): {summary(t['handler'])}")
            print(f"  {'':22s} to the next frame:         {summary(t['frame'])}")
        browser.close()
    payloads()


if __name__ == "__main__":
    main()
