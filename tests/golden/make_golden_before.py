"""One-off: the golden file of every text and every pipeline-table cell, read from the layout
*before* the texts moved into TOML (issue 20). Kept in history only; the test that compares
the text files with it is tests/test_golden_texts.py."""

import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_overview_zh import CONFIGS  # noqa: E402

from encoder_core import EncoderConfig  # noqa: E402
from encoder_core.analysis import pipeline_steps  # noqa: E402
from lens import blocks, hub, meaning  # noqa: E402
from lens.i18n import COMMON, formula_in, translate  # noqa: E402
from lens.steps import ALL_PAGES  # noqa: E402


def page_table(path: Path) -> dict:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "TEXT":
            return ast.literal_eval(node.value)
    return {}


texts = {"common": {k: list(v) for k, v in COMMON.items()}}
for m in hub.MODELS.values():
    texts["common"][f"hub_about_{m.id}"] = list(m.about)
for p in ALL_PAGES:  # a page's title and takeaway go into its own text file
    texts[p.id] = {"title": list(p.title), "takeaway": list(p.takeaway)}
    texts[p.id].update({k: list(v) for k, v in page_table(ROOT / p.path).items()})
texts["blocks"] = {k: list(v) for k, v in blocks.TEXT.items()}
texts["meaning"] = {k: list(v) for k, v in meaning.TEXT.items()}

overview = page_table(ROOT / "app_pages/01_overview.py")
pipeline = {}
for name, changes in CONFIGS.items():
    cfg = EncoderConfig(**changes)
    pipeline[name] = {}
    for lang in ("en", "zh"):
        def t(key, lang=lang, **values):
            return translate(key, lang, overview, **values)
        pipeline[name][lang] = [
            [t(f"step_{s.id}"), formula_in(s.formula, lang), formula_in(s.shape, lang),
             f"{s.n_params:,}" + (t("per_layer") if s.per_layer and s.n_params else "")]
            for s in pipeline_steps(cfg)]
out = {"texts": texts, "pipeline": pipeline}
(ROOT / "tests/golden/texts.json").write_text(
    json.dumps(out, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
print(sum(len(v) for v in texts.values()), "texts,", len(pipeline), "configs")
