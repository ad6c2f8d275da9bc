"""The walk as a handout PDF (issue 27): the time and the memory to build it, at the defaults and
at the heaviest settings, beside what `lens.page_costs.handout_cost` predicts.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.handout            # both, en and zh
    OPENBLAS_NUM_THREADS=1 .venv/bin/python -m benchmarks.handout --only default --repeat 3

For each configuration and language: the trace is made first (the page's run has it), then
`lens.handout.book.handout` runs — the ten sheets' pictures, then their pages — and we report

- the seconds (best of `--repeat`), split into the sheets (pictures) and the PDF (pages),
  timed in a build of their own (tracemalloc slows matplotlib's Python several times);
- tracemalloc's peak while it runs (every NumPy buffer and Python object alive at its worst
  moment, the PDF itself included), and the growth of the process's RSS high-water mark (VmHWM
  reset through /proc/self/clear_refs: matplotlib's C buffers too);
- the PDF's size and page count;
- the prediction: the bytes `handout_cost` reserves (the trace + the pictures' temporaries +
  matplotlib's allowance) and its seconds.

Figures, not pass/fail; the machines are shared (times ±50 %).
"""

from __future__ import annotations

import argparse
import gc
import re
import time
import tracemalloc

from benchmarks.memory import default_config, heavy_config, rss_growth
from encoder_core import encode, trace_bytes
from lens import images, model_weights
from lens.context import PageContext
from lens.handout.book import sheets_for
from lens.handout.pdf import TitlePage, handout_pdf
from lens.handout.sheets import said
from lens.page_costs import handout_cost

MB = 2**20


def one(cfg, lang: str) -> dict[str, float]:
    original, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                           cfg.channels)
    trace = encode(image, cfg, model_weights.random_params(cfg))
    ctx = PageContext.for_trace(trace, original, lang=lang, layer=1, head=1,
                                query=cfg.n_tokens // 2 + 7)
    say = said(ctx)
    title = TitlePage(title=say("doc_title"), image=original, image_name="default.jpg",
                      lines=(), footer="Encoder Lens · benchmark")
    gc.collect()
    times: dict[str, float] = {}

    def build() -> bytes:
        t0 = time.perf_counter()
        sheets = sheets_for(ctx)
        t1 = time.perf_counter()
        pdf = handout_pdf(title, sheets, say)
        times.update(sheets=t1 - t0, pdf=time.perf_counter() - t1)
        return pdf

    pdf = build()  # timed without tracemalloc, which slows matplotlib's Python several times
    timed = dict(times)
    tracemalloc.start()
    _, rss = rss_growth(build)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return dict(sheets=timed["sheets"], pdf=timed["pdf"], peak=peak, rss=rss or 0,
                size=len(pdf), pages=len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf)),
                trace=trace_bytes(cfg))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("default", "heaviest"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--lang", nargs="+", default=["en", "zh"])
    args = parser.parse_args()
    configs = [("defaults", default_config()), ("heaviest", heavy_config())]
    if args.only:
        configs = [c for c in configs if c[0].startswith(args.only[:4])]
    print("| settings | lang | sheets s | PDF s | total s | tracemalloc peak MB | RSS growth MB "
          "| PDF MB | pages | trace MB | predicted MB | predicted s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, cfg in configs:
        for lang in args.lang:
            runs = [one(cfg, lang) for _ in range(args.repeat)]
            best = min(runs, key=lambda r: r["sheets"] + r["pdf"])
            need = handout_cost(cfg)
            print(f"| {name} | {lang} | {best['sheets']:.2f} | {best['pdf']:.2f} | "
                  f"{best['sheets'] + best['pdf']:.2f} | {max(r['peak'] for r in runs) / MB:.0f}"
                  f" | {max(r['rss'] for r in runs) / MB:.0f} | {best['size'] / MB:.2f} | "
                  f"{best['pages']} | {best['trace'] / MB:.0f} | {need.bytes / MB:.0f} | "
                  f"{need.seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
