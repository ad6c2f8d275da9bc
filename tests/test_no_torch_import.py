"""No module of encoder_core/ or lens/ imports torch, timm or transformers (test-only deps)."""

import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = ("torch", "timm", "transformers", "torchvision", "safetensors")


def all_modules() -> list[str]:
    names = []
    for package in ("encoder_core", "lens"):
        names.append(package)
        for info in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            names.append(info.name)
    return names


def test_core_and_app_modules_import_no_deep_learning_framework():
    modules = all_modules()
    assert "encoder_core.checkpoints.load" in modules
    assert "encoder_core.checkpoints.torchfile" in modules
    assert "lens.settings" in modules
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}:\n"
        "    if m.endswith('__main__'): continue\n"
        "    importlib.import_module(m)\n"
        f"bad = sorted(n for n in sys.modules if n.split('.')[0] in {FORBIDDEN!r})\n"
        "print(len(sys.modules)); print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    count, bad = out.stdout.splitlines()
    assert int(count) > 100  # the imports really happened
    assert bad == "", f"imported: {bad}"
