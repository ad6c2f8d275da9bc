"""A real, non-editable install: `pip install .` into a scratch virtual environment, run from an
empty folder where the source tree is not importable, loads the shipped trained weights through
the API the README names (`encoder_core.shapes_model.classifier.load_trained()`, no path given)
and classifies a generated shape with them (`encoder_core.predict`: the head is in the weights),
and reads ImageNet-1k's class names. The weights and the names are package data of
encoder_core.assets (pyproject.toml maps it from assets/); nothing finds them through the
checkout.

The wheel holds every file of every package (the package data is globbed by kind, so a new kind
of file would be left out silently), and the install serves: run from an empty folder, it gives
the command `encoder-lens`, whose help names the project's own options and whose server runs
every step of the note to its end with the app's own Streamlit settings."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from lens import serve
from lens.steps import STEPS
from tests.support import serverctl
from tests.support.run_async import run_async

ROOT = Path(__file__).resolve().parent.parent
# Each installed package and the folder of the checkout its files come from (pyproject.toml)
PACKAGE_FOLDERS = {"encoder_core": "encoder_core", "encoder_core/assets": "assets",
                   "lens": "lens", "pages": "pages"}

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


@pytest.mark.slow
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
from lens.classroom.ui import member
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


@pytest.mark.slow
def test_a_non_editable_install_imports_every_app_module_and_reads_its_files(tmp_path):
    """`pip install .` (not editable) with no hand list of packages: every module of lens and
    pages imports from the installed copy (the dependencies from this run's environment, which
    has the checkout only as an editable finder that a path entry does not activate), and the
    texts and the browser's files are read from it."""
    python, work = install_copy(tmp_path)
    site = next((python.parents[1] / "lib").glob("python3*/site-packages"))
    (site / "zz_dependencies.pth").write_text(f"{dependencies()}\n", encoding="utf-8")
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


def dependencies() -> Path:
    """This environment's site-packages (Streamlit and the rest), for a scratch venv's path."""
    return next(p for p in map(Path, sys.path) if p.name == "site-packages" and p.is_dir()
                and (p / "streamlit").is_dir())


def package_files() -> set[str]:
    """Every file of the installed packages as the wheel names it (encoder_core/assets/… for
    assets/…), from the checkout's folders: what `pip install .` must ship, Python or not."""
    out = set()
    for installed, folder in PACKAGE_FOLDERS.items():
        for where, dirs, files in os.walk(ROOT / folder):  # not into encoder_core/assets/,
            dirs[:] = [d for d in dirs if d != "__pycache__"]  # a link: its own entry
            rel = Path(where).relative_to(ROOT / folder)
            out |= {(Path(installed) / rel / f).as_posix() for f in files
                    if not f.endswith(".pyc")}
    return out


def test_the_wheel_holds_every_file_of_its_packages_and_nothing_of_training(tmp_path):
    names = set(zipfile.ZipFile(build_wheel(tmp_path)).namelist())
    expected = package_files()
    assert {n for n in expected if not n.endswith(".py")} >= {
        "lens/.streamlit/config.toml", "encoder_core/assets/shapes_encoder.npz",
        "lens/explorer_web/explorer.js"}  # the check below is not empty
    assert expected - names == set(), "left out of the wheel (pyproject.toml's package data)"
    files = {n for n in names if ".dist-info/" not in n}
    assert files - expected == set()  # nothing else: no training/, no app.py, no tests
    metadata = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    entry_points = zipfile.ZipFile(build_wheel(tmp_path)).read(metadata).decode()
    assert "encoder-lens = lens.entry:main" in entry_points


@pytest.mark.slow
def test_the_installed_command_serves_every_step_with_the_apps_settings(tmp_path):
    """`pip install .` into a scratch venv whose dependencies are this environment's (a path
    entry, which does not activate the checkout's editable finder), run from an empty folder:
    its modules are the venv's, not the checkout's; `encoder-lens --help` says the project's
    options; `encoder-lens` serves, every step runs to its end, and the session's settings are
    the package's config (toolbar "minimal", no usage statistics), whose
    client.showErrorDetails, for the same script seen from the same folder, is "none"."""
    python, work = install_copy(tmp_path)
    site = next((python.parents[1] / "lib").glob("python3*/site-packages"))
    (site / "zz_dependencies.pth").write_text(f"{dependencies()}\n", encoding="utf-8")
    command = python.parent / "encoder-lens"
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "ENCODER_LENS_WARM_PAGES": "",
           "ENCODER_LENS_DATA": str(tmp_path / "data"), "PYTHONUNBUFFERED": "1",
           **{k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_")}}
    probe = ("import lens.entry, pages, encoder_core.assets as a; from streamlit import config; "
             "from lens import serve; config._main_script_path = str(serve.APP); "
             "print(lens.entry.__file__, pages.__file__, a.__file__, serve.APP); "
             "print(config.get_option('client.showErrorDetails'))")
    out = subprocess.run([str(python), "-c", probe], cwd=work, env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    where, details = out.stdout.strip().splitlines()
    assert all(p.startswith(str(site)) for p in where.split()), where
    assert details == "none"

    help_text = subprocess.run([str(command), "--help"], cwd=work, env=env, capture_output=True,
                               text=True, timeout=60, check=True).stdout
    assert "--checkpoint FILE" in help_text and "--n-heads H" in help_text
    assert "--dev" in help_text and "streamlit run" in help_text
    assert len(help_text.splitlines()) < 40  # not Streamlit's own help

    port = serverctl.free_port()
    url = f"http://127.0.0.1:{port}"
    log_path = tmp_path / "encoder-lens.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(command), "--server.port", str(port),
                                 "--server.address", "127.0.0.1"], cwd=work, env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        assert serverctl.wait_healthy(proc, url, timeout=120) == "", log_path.read_text()
        config = run_async(session_config(url))
        # both the package config's, not Streamlit's defaults ("auto", True)
        assert config.toolbar_mode == config.MINIMAL and not config.gather_usage_stats
        failed = [s.id for s in STEPS if not run_async(serve.run_page(url, s.id))]
        assert failed == [], log_path.read_text()[-5000:]
    finally:
        serverctl.stop(proc)
        try:  # anything left in its group
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    text = log_path.read_text()
    assert "Traceback" not in text, text[-5000:]


async def session_config(url: str):
    """The Streamlit settings a new session of the server at `url` is sent (NewSession.config)."""
    async for msg in serve.session(url, STEPS[0].id):
        if msg.WhichOneof("type") == "new_session":
            return msg.new_session.config
    return None


def build_wheel(tmp_path: Path) -> Path:
    """The project's wheel (`pip wheel --no-deps`, this environment's setuptools), built once per
    test from a copy of the checkout."""
    out = tmp_path / "wheel"
    if not out.is_dir():
        copy_tree(tmp_path / "wheel-source")
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                        "--no-build-isolation", "--disable-pip-version-check", "-w", str(out),
                        str(tmp_path / "wheel-source")], check=True, timeout=300)
    return next(out.glob("encoder_lens-*.whl"))


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
