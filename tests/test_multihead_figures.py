"""The Multi-head page's figures drawn from a trace with no Streamlit (issue 49): the script in
docs/examples/ runs the encoder at the defaults, asks the step's view-models
(`lens/walk/multihead.py`) what each picture shows and draws each with `lens.figures`. Run in a
fresh interpreter, it never imports Streamlit, and it writes one PNG for each picture the page
draws at the defaults — the same pictures, byte for byte, as an AppTest run of the page draws
(`lens.widgets.render`)."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from tests.support.apptest_helpers import assert_clean, new_app, page_path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "docs" / "examples" / "multihead_figures.py"


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> tuple[dict[str, bytes], str]:
    """The script's PNGs by file name, and what it printed, from a fresh interpreter."""
    out = tmp_path_factory.mktemp("multihead")
    run = subprocess.run([sys.executable, str(SCRIPT), str(out)], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.png"))}, run.stdout


def page_pictures(monkeypatch) -> list[bytes]:
    """The PNGs the Multi-head page draws at the default settings (each `widgets.render`)."""
    from lens import widgets  # noqa: PLC0415

    pngs: list[bytes] = []
    real_render = widgets.render

    def spy_render(draw, *args, **kwargs) -> bytes:
        png = real_render(draw, *args, **kwargs)
        pngs.append(png)
        return png

    monkeypatch.setattr(widgets, "render", spy_render)
    at = new_app()
    at.run()  # the entry script's first page (the overview) draws its own
    pngs.clear()
    at.switch_page(page_path("multihead")).run()
    assert_clean(at)
    return pngs


def test_the_script_draws_without_streamlit(drawn):
    _, printed = drawn
    assert printed.strip().splitlines()[-1] == "streamlit imported: False"


def test_each_file_is_a_valid_png(drawn):
    pngs, _ = drawn
    assert pngs
    for name, data in pngs.items():
        assert data.startswith(b"\x89PNG\r\n\x1a\n"), name
        with Image.open(io.BytesIO(data)) as img:
            img.verify()
            assert img.size[0] > 50 and img.size[1] > 50, name


def test_it_draws_what_the_page_draws_at_the_defaults(drawn, monkeypatch):
    pngs, _ = drawn
    shown = page_pictures(monkeypatch)
    assert len(pngs) == len(shown) == 5  # concat, W_O, attn_out, the norms, the contributions
    assert sorted(pngs.values()) == sorted(shown)  # the same pictures, byte for byte
