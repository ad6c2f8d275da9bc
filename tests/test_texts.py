"""Texts are data (lens/texts/<lang>/<owner>.toml): every key in every shipped language with the
same placeholders, no page shadowing a common key, a page using only its own keys and the
common ones, no CJK string literal in the code, and a partial language falling back to English
key by key. The golden file written before the texts moved checks nothing was lost."""

from __future__ import annotations

import ast
import json
import string
from pathlib import Path

import pytest

from lens import i18n
from lens.i18n import catalogue, collisions, read_language, translate
from lens.settings import LANGS
from lens.steps import ALL_PAGES, TASKS

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = json.loads((ROOT / "tests" / "golden" / "texts.json").read_text(encoding="utf-8"))
CJK = ("\u2e80", "\u9fff")  # CJK radicals … unified ideographs, full-width punctuation included
SHIPPED = sorted(p.name for p in i18n.TEXTS.iterdir() if p.is_dir())


def placeholders(text: str) -> set[str]:
    """The {names} of a text (with their format spec: {p:.1f} and {p} differ)."""
    return {f"{name}:{spec}" for _, name, spec, _ in string.Formatter().parse(text)
            if name is not None}


def has_cjk(text: str) -> bool:
    return any(CJK[0] <= ch <= CJK[1] for ch in text)


def test_the_shipped_languages_are_the_settings_languages():
    assert SHIPPED == sorted(LANGS)


@pytest.mark.parametrize("lang", [lang for lang in SHIPPED if lang != i18n.SOURCE])
def test_every_key_is_in_every_language_with_the_same_placeholders(lang):
    source, other = read_language(i18n.SOURCE), read_language(lang)
    assert sorted(other) == sorted(source), "the same files"
    for owner, table in source.items():
        assert list(other[owner]) == list(table), owner  # the same keys, in the same order
        for key, text in table.items():
            assert text.strip() and other[owner][key].strip(), (owner, key)
            assert placeholders(other[owner][key]) == placeholders(text), (owner, key)


def test_the_placeholder_check_sees_a_missing_or_changed_placeholder():
    assert placeholders("{n:,} of {k}") == {"n:,", "k:"}
    assert placeholders("{n} of {k}") != placeholders("{n:,} of {k}")
    assert placeholders("a {{literal}} brace") == set()


def test_no_text_key_of_a_page_or_component_is_also_a_common_key():
    assert collisions() == {}


def test_a_key_that_shadows_a_common_one_is_found(tmp_path):
    write(tmp_path / "en" / "common.toml", 'weights = "Weights"\n')
    write(tmp_path / "en" / "qkv.toml", 'weights = "Head slices"\nx = "x"\n')
    assert collisions(tmp_path) == {"qkv": ["weights"]}


def test_every_page_has_a_title_and_a_takeaway_in_every_language():
    for p in ALL_PAGES:
        for lang in SHIPPED:
            assert p.title_in(lang).strip() and p.takeaway_in(lang).strip(), (p.id, lang)


# Pages whose texts are drawn by modules of their own (besides the page's): the class page's
# by lens/classroom, through `t = Texts(lang, "class")`; the ViT
# page's prediction block by lens/sections/prediction.py (the overview draws it too).
DRAWN_BY = {"class": ["lens/classroom/ui/join.py", "lens/classroom/ui/teacher.py",
                      "lens/classroom/ui/student.py", "lens/classroom/ui/view.py"],
            "vit": ["lens/sections/prediction.py"]}


def page_keys(module_path: Path) -> list[tuple[int, str]]:
    """(line, key) of every `….t("key", …)`, `t("key", …)` or `say(lang, "key", …)` call with
    a literal key in a page's module."""
    found = []
    for node in ast.walk(ast.parse(module_path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        arg = 1 if name == "say" else 0
        if (name in ("t", "say") and len(node.args) > arg
                and isinstance(node.args[arg], ast.Constant)
                and isinstance(node.args[arg].value, str)):
            found.append((node.lineno, node.args[arg].value))
    return found


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda p: p.id)
def test_a_page_uses_only_keys_of_its_own_file_or_the_common_one(page):
    used = page_keys(ROOT / page.path)
    for extra in DRAWN_BY.get(page.id, []):
        used += page_keys(ROOT / extra)
    assert used, "the scan finds the page's texts"
    missing = [(line, key) for line, key in used if not i18n.has_text(key, page.id)]
    assert not missing, missing


# What a task's card, reveal and summary line read, by kind (`lens.lesson.ui.cards`): the part of
# each key after the task's id ("scores_shift" + "_q").
TASK_PARTS = {"number": ("_p0", "_answer"), "choice": ("_label",), "estimate": ("_label",),
              "patch": ("_quality",)}


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_a_tasks_words_are_in_its_steps_file_and_not_in_the_lessons(task_id):
    spec, texts = TASKS[task_id], catalogue(i18n.SOURCE)
    text_id = task_id.replace(".", "_")
    parts = ("_q", "_why", "_short", "_concept", *TASK_PARTS[spec.kind],
             *(f"_{o}" for o in spec.options))
    assert [p for p in parts if text_id + p not in texts[spec.page]] == []
    assert [k for k in texts["lesson"] if k.startswith(text_id + "_")] == []


def test_a_key_of_another_page_is_refused_at_run_time():
    assert translate("grid", "en", "multihead")  # the multi-head page's own text
    with pytest.raises(KeyError, match="grid"):
        translate("grid", "en", "overview")
    assert not i18n.has_text("grid", "overview") and i18n.has_text("grid", "multihead")


def string_literals_with_cjk(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each string literal with CJK in `path` that is not a docstring."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(body, list) and body and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)):
            docstrings.add(id(body[0].value))
    return [(node.lineno, node.value[:40]) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docstrings and has_cjk(node.value)]


def code_files() -> list[Path]:
    skip = {".venv", "tests", ".git", "node_modules", "build", "dist"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


def test_no_string_literal_outside_the_tests_and_the_text_files_holds_cjk():
    """Docstrings and comments may; the language switch's own label ("中文", in
    lens.i18n.LANG_NAMES) is the one exception."""
    files = code_files()
    assert ROOT / "lens" / "i18n.py" in files and ROOT / "pages" / "multihead.py" in files
    found = {str(p.relative_to(ROOT)): string_literals_with_cjk(p) for p in files}
    found["lens/i18n.py"] = [(n, s) for n, s in found["lens/i18n.py"] if s != "中文"]
    assert {p: f for p, f in found.items() if f} == {}


def test_the_cjk_scan_finds_a_literal_and_leaves_docstrings(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('"""模块"""\ndef f():\n    """函数"""\n    return ("x", "头")\n',
                    encoding="utf-8")
    assert string_literals_with_cjk(path) == [(4, "头")]


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_partial_third_language_loads_and_falls_back_to_english_key_by_key(tmp_path):
    write(tmp_path / "en" / "common.toml", 'next = "Next step →"\nprev = "← Previous step"\n')
    write(tmp_path / "en" / "multihead.toml", 'grid = "Where each head looks"\n')
    write(tmp_path / "fr" / "common.toml", 'next = "Étape suivante →"\n')
    fr = catalogue("fr", tmp_path)
    assert fr["common"] == {"next": "Étape suivante →", "prev": "← Previous step"}
    assert fr["multihead"] == {"grid": "Where each head looks"}  # a file it lacks: English
    assert translate("next", "fr", root=tmp_path) == "Étape suivante →"
    assert translate("grid", "fr", "multihead", root=tmp_path) == "Where each head looks"


def test_a_text_that_is_not_a_string_is_refused(tmp_path):
    write(tmp_path / "en" / "common.toml", 'n = 3\n')
    with pytest.raises(ValueError, match="must be strings"):
        read_language("en", tmp_path)


# --- the golden file: nothing lost in the move from Python tables to TOML ---------------------

def test_every_text_is_the_golden_one_in_both_languages():
    """tests/golden/texts.json was written from the Python tables before the move (its script,
    tests/golden/make_golden_before.py, is in the history at 3fa052b): every text in it is
    still there, word for word. A text changed on purpose since is listed in
    CHANGED_SINCE_THE_MOVE with its reason; new texts need no entry."""
    now = {lang: catalogue(lang) for lang in ("en", "zh")}
    golden = GOLDEN["texts"]
    assert set(golden) <= set(now["en"])
    for owner, table in golden.items():
        for key, (en, zh) in table.items():
            if (owner, key) in CHANGED_SINCE_THE_MOVE:
                continue
            assert now["en"][owner].get(key) == en, (owner, key)
            assert now["zh"][owner].get(key) == zh, (owner, key)


# Texts changed on purpose after the move: (owner, key) -> why.
CHANGED_SINCE_THE_MOVE: dict[tuple[str, str], str] = {
    **{key: "ending a class no longer deletes it at once: the teacher loses its answers, each "
            "student keeps their own until it expires (issue 51, item 9)"
       for key in (("class", "results_help"), ("class", "end_sure"))},
    **{key: "the walk's length said once, by the registry: 'the steps' / 'every step' "
          "(每个步骤), not 'the ten steps' (issue 49, item 5)"
       for key in (("overview", "what_to_do"), ("handout", "handout_help"))},
    ("common", "checkpoint_head_aside"): "gone: a checkpoint's classification head is kept and "
                                         "used (issue 26); the caption names what no page uses "
                                         "instead (checkpoint_set_aside)",
    ("stack", "head_aside"): "gone: the head reads the output and its prediction is shown "
                             "(issue 26, head_kept)",
    ("addnorm", "x_is_x0"): "中文: x0 = 图像块 · W_E + PE, as the pictures say it "
                            "(issue 22, item 2)",
    ("overview", "diff_patch_bias"): "中文: X = 图像块 · W_E + b_E, as the pictures "
                                     "(issue 22, item 2)",
    ("vit", "need_vit"): "names the sidebar's 'Download a model', a hosted user's one route "
                         "(issue 22, item 6)",
    ("common", "checkpoint_caption"): "'the checkpoint <name>', whatever it holds, not "
                                      "'the pretrained Vision Transformer' (issue 22, item 6)",
    **{("embedding", key): "中文 in every picture: the bars' titles say 图像块[i, k] and "
       "嵌入[i, j], not the English names patches and embedded (issue 22, item 2)"
       for key in ("terms_title", "terms_a", "terms_ab", "terms_ab_bias")},
    **{(owner, key): "中文: 奈特, not the English nats, as the lesson's texts say it (issue 36, "
       "item 6)" for owner, key in (("compare", "entropy"), ("scores", "col_head_h"),
                                    ("scores", "col_row_h"), ("scores", "entropy_caption"),
                                    ("scores", "entropy_line"), ("stack", "entropy_text"),
                                    ("stack", "entropy_title"), ("stack", "uniform"),
                                    ("stack", "uniform_vit"))},
    ("compare", "gap_name"): "中文: [置换], not the English perm (issue 36, item 6)",
    ("scores", "col_now"): "中文: 本页使用的, not 'trace 使用的' (issue 36, item 6)",
    ("multihead", "where"): "'h = 1 heads' read wrong with one head: 'h = {h}, each head "
                            "d_head = {dh} wide' (issue 36, item 6)",
    **{("scores", key): "中文 in every picture: 分数, not the English name scores, in the "
       "heatmaps' and the bars' titles (issue 22, item 2)"
       for key in ("scores_name", "attn_name", "row_before")},
}


@pytest.mark.parametrize("name", sorted(GOLDEN["pipeline"]))
def test_every_cell_of_the_overview_pipeline_table_is_the_golden_one(name):
    from encoder_core import EncoderConfig
    from pages.overview import pipeline_rows
    from tests.test_overview_zh import CONFIGS

    cfg = EncoderConfig(**CONFIGS[name])
    for lang in ("en", "zh"):
        rows = pipeline_rows(cfg, i18n.Texts(lang, "overview"), lang)
        assert [list(r) for r in rows] == GOLDEN["pipeline"][name][lang], lang
