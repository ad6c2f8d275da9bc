"""The CJK font that ships with the app (assets/fonts/, made by scripts/subset-font): it holds
every character of the texts, it comes second in the figures' font list, and a walk of every
page in 中文 on a machine without any system font draws 中文 with no missing glyph."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import matplotlib
import pytest
from fontTools.ttLib import TTFont
from matplotlib import font_manager

from lens import figures
from lens.figures import lettering, style

ROOT = Path(__file__).resolve().parent.parent
WALKER = "tests.support.font_walk"  # run as `python -m` from ROOT
HIDDEN = ("/usr/share/fonts", "/usr/local/share/fonts")  # the system's font folders


def load_script():
    """scripts/subset-font as a module (its name has no .py)."""
    loader = importlib.machinery.SourceFileLoader("subset_font", str(ROOT / "scripts" /
                                                                      "subset-font"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


subset_font = load_script()


def browser_only(ch: str) -> bool:
    """An emoji (the page icon 🔍): the browser draws it, never a figure, and no font here has
    one."""
    return ord(ch) > 0xFFFF and unicodedata.category(ch) == "So"


# --- the subset holds the texts ----------------------------------------------------------------

def test_the_sources_of_the_texts_hold_the_chinese_of_the_texts_and_of_the_note():
    files = subset_font.source_files()
    assert any(p.suffix == ".toml" for p in files) or any(p.suffix == ".py" for p in files)
    assert ROOT / "assets" / "note_zh" / "day01-encode.txt" in files
    chars = subset_font.text_characters()
    assert sum(ord(ch) > 0x2E80 for ch in chars) > 500
    assert set("编码器注意力图像块") <= chars and subset_font.PRINTABLE_ASCII <= chars


FACES = [style.CJK_FONT_FILE, style.CJK_BOLD_FONT_FILE]


@pytest.mark.parametrize("face", FACES, ids=lambda p: p.stem)
def test_every_character_of_the_texts_is_in_the_shipped_subset_or_in_dejavu_sans_before_it(face):
    chars = subset_font.text_characters()
    lacking = subset_font.missing(chars, face)
    # Noto Sans CJK SC itself lacks a few symbols (ᵀ, ₁, ⋮, combining accents): DejaVu Sans,
    # first in the list, draws them; every CJK character must be in the subset itself.
    assert [ch for ch in lacking if ord(ch) > 0x2E80 and not browser_only(ch)] == []
    dejavu = font_manager.findfont("DejaVu Sans", fallback_to_default=False)
    left = subset_font.missing(lacking, dejavu)
    assert [f"U+{ord(ch):04X}" for ch in left if not browser_only(ch)] == [], (
        "characters no shipped font has: add them to a source and run scripts/subset-font")


def test_the_missing_check_reports_a_character_outside_the_subset():
    assert subset_font.missing({"龘", "注", "A"}, style.CJK_FONT_FILE) == ["龘"]
    assert subset_font.missing(set("注意力 Q·K"), style.CJK_FONT_FILE) == []


@pytest.mark.parametrize("face, weight, weight_class", [(FACES[0], "Regular", 400),
                                                         (FACES[1], "Bold", 700)],
                         ids=["Regular", "Bold"])
def test_the_subset_has_truetype_outlines_and_a_name_of_its_own(face, weight, weight_class):
    font = TTFont(str(face))
    assert "glyf" in font and "CFF " not in font and font.sfntVersion == "\x00\x01\x00\x00"
    assert font["maxp"].tableVersion == 0x00010000 and font["post"].formatType in (2.0, 3.0)
    assert font["name"].getDebugName(1) == style.CJK_FONT_FAMILY == "Encoder Lens CJK"
    assert font["name"].getDebugName(2) == weight and face.stem == f"EncoderLensCJK-{weight}"
    assert font["OS/2"].usWeightClass == weight_class
    assert "Noto" not in font["name"].getDebugName(4) + font["name"].getDebugName(6)
    assert face.stat().st_size < 600_000
    licence = (face.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Adobe" in licence


@pytest.mark.skipif(not subset_font.NOTO_TTC.exists(), reason="needs Debian's fonts-noto-cjk")
@pytest.mark.parametrize("weight", subset_font.WEIGHTS)
def test_the_script_makes_the_shipped_font_again(weight, tmp_path):
    chars = subset_font.text_characters()
    a, b = tmp_path / "a.ttf", tmp_path / "b.ttf"
    ttc = subset_font.noto_collection(weight)
    subset_font.make(chars, ttc, out=a, licence=None, weight=weight)
    subset_font.make(chars, ttc, out=b, licence=None, weight=weight)
    assert a.read_bytes() == b.read_bytes() == subset_font.out_font(weight).read_bytes(), (
        "the shipped font is not what the texts make: run scripts/subset-font")
    assert subset_font.missing(chars, a) == subset_font.missing(chars, subset_font.NOTO_TTC,
                                                                subset_font.face_index(
                                                                    subset_font.NOTO_TTC,
                                                                    subset_font.NOTO_FACE))


# --- the font list -----------------------------------------------------------------------------

def test_the_figures_fall_back_from_dejavu_sans_to_the_subset_then_to_a_system_cjk_font():
    assert figures.FONTS[:2] == ["DejaVu Sans", "Encoder Lens CJK"]
    assert set(figures.FONTS[2:]) <= set(style.SYSTEM_CJK_FAMILIES) and len(figures.FONTS) <= 3
    assert matplotlib.rcParams["font.family"] == figures.FONTS
    files = lettering._font_files()
    assert Path(files[0][0]).name == "DejaVuSans.ttf"
    assert Path(files[1][0]) == style.CJK_FONT_FILE
    assert len(files) == len(figures.FONTS)


def test_bold_chinese_is_drawn_with_the_shipped_bold_face():
    bold = font_manager.FontProperties(family=style.CJK_FONT_FAMILY, weight="bold")
    regular = font_manager.FontProperties(family=style.CJK_FONT_FAMILY)
    # resolved: encoder_core/assets is the top-level assets/ folder (a link in a checkout)
    assert Path(font_manager.findfont(bold, fallback_to_default=False)).resolve() == \
        FACES[1].resolve()
    assert Path(font_manager.findfont(regular, fallback_to_default=False)).resolve() == \
        FACES[0].resolve()


def test_pillow_text_takes_each_glyph_from_the_first_font_that_has_it():
    assert lettering.font_runs("key j = 3") == ((0, "key j = 3"),)
    assert lettering.font_runs("像素值 p₁p₂c") == ((1, "像素值 "), (0, "p₁p₂c"))  # ₁ ₂: DejaVu
    assert lettering.font_runs("  查询 i") == ((1, "  查询 "), (0, "i"))
    if len(lettering._font_files()) == 3:  # a system CJK font draws what the subset lacks
        assert lettering.font_runs("龘") == ((2, "龘"),)


# --- a walk of every page in 中文 without the system's fonts -----------------------------------

def sandbox_problem() -> str | None:
    """Why the walk cannot hide the system's fonts here (None: it can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "hiding the system's fonts (unshare -m, mount) needs root"
    if shutil.which("unshare") is None:
        return "no unshare"
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m does not work here: {probe.stderr.strip()}"
    return None


@pytest.fixture(scope="module")
def walk(tmp_path_factory) -> dict:
    """tests/support/font_walk.py's record, run in a mount namespace where a tmpfs hides the
    system's font folders, with HOME and MPLCONFIGDIR empty (matplotlib scans ~/.fonts and
    ~/.local/share/fonts itself, and would reuse a font cache)."""
    problem = sandbox_problem()
    if problem:
        pytest.skip(problem)
    tmp = tmp_path_factory.mktemp("font_walk")
    home, mpl, out = tmp / "home", tmp / "mpl", tmp / "walk.json"
    home.mkdir()
    mpl.mkdir()
    hide = " && ".join(f"{{ [ ! -d {d} ] || mount -t tmpfs none {d}; }}" for d in HIDDEN)
    env = {**os.environ, "HOME": str(home), "MPLCONFIGDIR": str(mpl),
           "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CONFIG_HOME": str(home / ".config"), "XDG_CACHE_HOME": str(home / ".cache")}
    start = time.perf_counter()
    run = subprocess.run(["unshare", "-m", "sh", "-c", hide + ' && exec "$0" "$@"',
                          sys.executable, "-m", WALKER, str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and out.exists(), run.stderr[-4000:]
    record = json.loads(out.read_text(encoding="utf-8"))
    record["wall_seconds"] = time.perf_counter() - start
    print(f"font walk: {record['wall_seconds']:.1f} s")
    return record


@pytest.mark.slow
def test_the_walk_ran_every_page_in_chinese_without_an_exception(walk):
    assert walk["crash"] is None, walk["crash"]
    from lens.steps import ALL_PAGES

    assert [p["id"] for p in walk["pages"]] == ["(entry)", *(p.id for p in ALL_PAGES)]
    failed = {p["id"]: p["exceptions"] for p in walk["pages"] if p["exceptions"]}
    assert failed == {}


@pytest.mark.slow
def test_the_walk_saw_no_system_font(walk):
    assert not any("Noto Sans CJK" in name for name in walk["ttflist_names"])
    mpl_data = Path(matplotlib.get_data_path()).resolve()
    foreign = [entry for entry in walk["ttflist"]
               if not Path(entry.split("|", 1)[1]).resolve().is_relative_to(mpl_data)
               and Path(entry.split("|", 1)[1]).resolve() not in [f.resolve() for f in FACES]]
    assert foreign == []
    assert walk["fonts"] == ["DejaVu Sans", "Encoder Lens CJK"]


@pytest.mark.slow
def test_the_walk_drew_chinese_with_matplotlib_and_with_pillow(walk):
    assert any(any(0x4E00 <= ord(ch) <= 0x9FFF for ch in t) for t in walk["mpl_texts"])
    assert any(any(0x4E00 <= ord(ch) <= 0x9FFF for ch in t) for t in walk["pil_texts"])


@pytest.mark.slow
def test_the_walk_met_no_missing_glyph(walk):
    # the probe (a code point no font has) shows that a missing glyph would have been caught
    assert walk["probe_before"] and walk["probe_after"]
    assert walk["missing_glyph_warnings"] == []
    assert walk["pil_missing"] == []
