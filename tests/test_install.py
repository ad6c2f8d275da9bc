"""A real, non-editable install: `pip install .` into a scratch virtual environment, run from an
empty folder where the source tree is not importable, loads the shipped trained weights through
the API the README names (`encoder_core.shapes_model.classifier.load_trained()`, no path given)
and classifies a generated shape with them (`encoder_core.predict`: the head is in the weights),
and reads ImageNet-1k's class names. The weights and the names are package data of
encoder_core.assets (pyproject.toml maps it from assets/); nothing finds them through the
checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

PROBE = """
import encoder_core, numpy as np
from encoder_core import encode
from encoder_core import predict, softmax
from encoder_core.checkpoints.labels import imagenet_labels
from encoder_core.shapes_model.classifier import DEFAULT_WEIGHTS, load_trained
from encoder_core.shapes_model.dataset import make_sample
cfg, params, head = load_trained()
sample = make_sample(np.random.default_rng(3), cfg.image_size)
probs = softmax(predict(encode(sample.image, cfg, params), params))
print(encoder_core.__file__)
print(DEFAULT_WEIGHTS)
print(cfg.d_model, cfg.n_layers, round(float(probs.sum()), 6), int(probs.argmax()) == sample.label,
      len(imagenet_labels()))
"""


def test_a_non_editable_install_loads_the_shipped_weights_from_anywhere(tmp_path):
    # the project without its app dependencies (Streamlit, …): the core needs NumPy and Pillow
    python, work = install_copy(tmp_path, "numpy", "pillow")
    out = subprocess.run([str(python), "-c", PROBE], cwd=work, capture_output=True, text=True,
                         timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    module, weights, figures = out.stdout.strip().splitlines()
    site = str(python.parents[1])  # the venv
    assert module.startswith(site) and weights.startswith(site), (module, weights)
    assert str(ROOT) not in module + weights
    d_model, n_layers, total, right, n_imagenet = figures.split()
    assert (d_model, n_layers, total, right) == ("64", "2", "1.0", "True")
    assert n_imagenet == "1000"  # ImageNet-1k's class names ship as package data too


def test_the_probe_would_see_the_checkout(tmp_path):
    """The check above can fail: run from the repository with the repository importable, the
    same probe's core is the checkout's."""
    probe = "import encoder_core; print(encoder_core.__file__)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip().startswith(str(ROOT))


APP_PROBE = """
import importlib, pkgutil, sys
import encoder_core, lens, pages
from lens import explorer_component, layout_js
from lens.classroom import member
from lens.i18n import translate
names = sorted({m.name for pkg in (lens, pages)
                for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")})
for name in names:
    importlib.import_module(name)
print(lens.__file__)
print(len(names), ",".join(n for n in names if n.count(".") == 1 and "." in n)[:0])
print(translate("title", "zh", "multihead"), translate("title", "en", "multihead"))
print(len(explorer_component.HTML) > 0, len(explorer_component.JS) > 0, len(layout_js.JS) > 0,
      len(member.JS) > 0)
"""


def test_a_non_editable_install_imports_every_app_module_and_reads_its_files(tmp_path):
    """`pip install .` (not editable) with no hand list of packages: every module of lens and
    pages imports from the installed copy (the dependencies from this run's environment, which
    has the checkout only as an editable finder that a path entry does not activate), and the
    texts and the browser's files are read from it."""
    python, work = install_copy(tmp_path)
    site = next((python.parents[1] / "lib").glob("python3*/site-packages"))
    deps = next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir()
                and (p / "streamlit").is_dir())
    (site / "zz_dependencies.pth").write_text(f"{deps}\n", encoding="utf-8")
    out = subprocess.run([str(python), "-c", APP_PROBE], cwd=work, capture_output=True,
                         text=True, timeout=300,
                         env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr[-3000:]
    where, count, titles, files = out.stdout.strip().splitlines()
    assert where.startswith(str(site)) and str(ROOT) not in where, where
    expected = {p.relative_to(ROOT).with_suffix("").as_posix().replace("/", ".")
                .removesuffix(".__init__") for top in ("lens", "pages")
                for p in (ROOT / top).rglob("*.py")} - {"lens", "pages"}
    assert int(count.split()[0]) == len(expected)
    assert titles == "多头注意力 Multi-head attention"
    assert files == "True True True True"


def install_copy(tmp_path: Path, *extra: str) -> tuple[Path, Path]:
    """`pip install` (not editable, no dependencies) a copy of the checkout into a new venv,
    with the packages `extra` beside it: (its python, an empty folder to run it from)."""
    env_dir, work, source = tmp_path / "venv", tmp_path / "empty", tmp_path / "source"
    work.mkdir()
    copy_tree(source)
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--no-deps", str(source), *extra], check=True, timeout=600)
    return python, work


def copy_tree(to: Path) -> None:
    """The source tree copied to `to`, without what a run leaves in it (the virtual
    environment, caches, a build/): a build in the checkout itself would leave its build/
    there, whose stale modules a later build would package again."""
    shutil.copytree(ROOT, to, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", "node_modules", ".run",
        "data", "test-artifacts", ".pytest_cache", ".ruff_cache", ".hypothesis"))
