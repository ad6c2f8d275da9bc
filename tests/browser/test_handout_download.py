"""The sidebar's "Download the walk as PDF" (lens/handout/ui.py) and the pictures' PNG downloads
named for what they show (lens/widgets.py `png_name`), in a real browser.

At 1400 × 900 on /scores: "Prepare the walk as PDF" builds the handout with its progress bar
shown, then "Download the walk as PDF (x.x MB)" hands over a PDF named by its language and
architecture, under 5 MB, whose text (Debian's `pdftotext`) has the walk's ten steps and the live
shapes — in English, and once in 中文 (?lang=zh). A picture's "Download PNG" gives a PNG named
`<page>_<what it shows>_<selectors drawn before it>_d512.png`: the positional sines heatmap and
the scores matrix.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from lens.i18n import translate
from lens.steps import STEPS
from tests.support.browser_helpers import (
    MAIN,
    assert_no_errors,
    main_images,
    open_app,
    sidebar,
    wait_idle,
)

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1400, "height": 900}
BUILD_MS = 120_000  # the PDF takes 5–15 s at the defaults; the machines are slow and shared
PDFTOTEXT = "/usr/bin/pdftotext"
HANDOUT = ".st-key-handout"
BUILD = ".st-key-handout_build"
DOWNLOAD = ".st-key-handout_download"
MB_5 = 5 * 2**20


@pytest.fixture
def desktop(page: Page) -> Page:
    """conftest's fresh session (downloads accepted, a screenshot on failure) at 1400 × 900."""
    page.set_viewport_size(DESKTOP)
    return page


def pdf_text(path: Path) -> str:
    """The PDF's text as Debian's poppler `pdftotext` reads it (kept beside the PDF)."""
    out = path.with_suffix(".txt")
    subprocess.run([PDFTOTEXT, "-enc", "UTF-8", str(path), str(out)], check=True, timeout=60)
    return out.read_text(encoding="utf-8")


def build_and_download(page: Page, lang: str, tmp_path: Path) -> tuple[str, bytes, str]:
    """Press "Prepare the walk as PDF" in the sidebar, see the progress, wait for the download
    button, download; (suggested file name, the bytes, the download button's label)."""
    box = sidebar(page).locator(HANDOUT)
    expect(box.get_by_role("heading", name=translate("handout", lang, "handout"))).to_be_visible()
    build = box.locator(BUILD).get_by_role("button")
    expect(build).to_have_text(translate("handout_build", lang, "handout"))
    build.click()
    building = translate("handout_building", lang, "handout").split("{")[0].strip()
    progress = box.get_by_text(re.compile("^" + re.escape(building)))
    download = box.locator(DOWNLOAD).get_by_role("button")
    expect(progress).to_be_visible(timeout=BUILD_MS)  # shown while it builds (seconds)
    expect(download).to_be_visible(timeout=BUILD_MS)
    expect(build).to_have_count(0)
    wait_idle(page, timeout=BUILD_MS)
    label = download.inner_text().strip()
    with page.expect_download() as info:
        download.click()
    got = info.value
    path = tmp_path / got.suggested_filename
    got.save_as(path)
    return got.suggested_filename, path.read_bytes(), label


def check_label_size(label: str, data: bytes) -> None:
    size = re.search(r"([\d.]+) MB", label)
    assert size, f"no size in the label {label!r}"
    assert abs(len(data) / 2**20 - float(size.group(1))) < 0.06, \
        f"the label {label!r} does not give the file's size ({len(data)} bytes)"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_walk_downloads_as_a_pdf(desktop, app_url, tmp_path, lang):
    page = desktop
    open_app(page, app_url, "scores", f"lang={lang}")
    assert_no_errors(page)
    name, data, label = build_and_download(page, lang, tmp_path)
    assert name == f"encoder_lens_walk_{lang}_d512_h8_L6.pdf"
    before, after = translate("handout_download", lang, "handout").split("{mb:.1f}")
    assert label.startswith(before) and label.endswith(after), label
    assert data.startswith(b"%PDF")
    assert len(data) < MB_5, f"{len(data) / 2**20:.1f} MB"
    check_label_size(label, data)
    text = pdf_text(tmp_path / name)
    assert "[196 × 512]" in text, f"no [196 × 512] in the PDF's text: {text[:2000]!r}"
    n = len(STEPS)
    for k in range(1, n + 1):  # "Step k of n", "第 k 步，共 n 步"
        step = translate("step_title", lang, "handout", k=k, n=n, title="").split(" · ")[0]
        assert step in text, f"no {step!r} in the PDF"
    expect(sidebar(page).locator(DOWNLOAD)).to_be_visible()  # still offered after the download
    assert_no_errors(page)


def download_png(page: Page, key: str, tmp_path: Path) -> tuple[str, bytes]:
    """The picture `key`'s "Download PNG" button, pressed: (suggested file name, bytes)."""
    box = page.locator(f"{MAIN} .st-key-dl_{key}")
    button = box.get_by_role("button")
    expect(button).to_have_text(translate("download_png", "en"))
    with page.expect_download() as info:
        button.click()
    got = info.value
    path = tmp_path / got.suggested_filename
    got.save_as(path)
    return got.suggested_filename, path.read_bytes()


@pytest.mark.parametrize(("page_id", "key", "name"), [
    ("positional", "pe_0", "positional_sines_d512.png"),
    ("scores", "scores", "scores_query105_layer1_head1_d512.png"),
])
def test_a_pictures_png_is_named_for_what_it_shows(desktop, app_url, tmp_path, page_id, key,
                                                   name):
    page = desktop
    open_app(page, app_url, page_id)
    main_images(page)  # every picture loaded: the page's run has ended
    wait_idle(page)
    got, data = download_png(page, key, tmp_path)
    assert got == name
    assert got.isascii() and got.endswith("_d512.png")
    assert got.startswith(f"{page_id}_")
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert_no_errors(page)
