"""Latency of the pages that walk a ViT (01–04, 08, 09): a 197-token checkpoint against the
note's encoder at the same token count (196 patches), measured with Streamlit's AppTest.

    .venv/bin/python benchmarks/vit_pages.py [--checkpoint FILE] [--repeat 3]

Without --checkpoint a random timm ViT is written to a temporary folder (the tests' shape:
224 px, P 16, CLS, d 128, 2 layers, pre-norm, GELU). For each page and each model: a visit
with every cache cleared (forward pass, pictures) and a new session's visit with everything
cached (the next learner), median seconds over --repeat. Figures, not pass/fail: these
machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ("overview", "patches", "embedding", "positional", "addnorm", "ffn")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--checkpoint", default="")
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    path = args.checkpoint
    if not path:
        sys.path.insert(0, str(ROOT / "tests"))
        from vit_dicts import SMALL_VIT, write_timm_checkpoint

        path = write_timm_checkpoint(Path(tempfile.mkdtemp()) / "vit_bench.safetensors",
                                     **SMALL_VIT)
    os.environ["ENCODER_LENS_CHECKPOINTS"] = path

    from streamlit.testing.v1 import AppTest

    from lens import compute, widgets
    from lens.models import model_id
    from lens.steps import PAGES as INFO

    compute.clear_models()
    vit = model_id(path)

    def clear() -> None:
        for cache in compute.caches().values():
            cache.clear()
        widgets.render.clear()

    def visit(page: str, weights: str, cold: bool) -> float:
        """Seconds of one session's visit to `page` (its first run done on the overview)."""
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
        at.query_params["weights"] = weights
        at.run()
        if cold:
            clear()
        at.switch_page(INFO[page].path)
        t0 = time.perf_counter()
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return time.perf_counter() - t0

    print(f"{'page':<11} {'model':<18} {'cold visit s':>13} {'cached visit s':>15}")
    for page in PAGES:
        for weights in ("random", vit):
            cold = statistics.median(visit(page, weights, True) for _ in range(args.repeat))
            warm = statistics.median(visit(page, weights, False) for _ in range(args.repeat))
            name = "note (196 tok)" if weights == "random" else f"{vit} (197)"
            print(f"{page:<11} {name:<18} {cold:>13.2f} {warm:>15.2f}", flush=True)


if __name__ == "__main__":
    main()
