"""Shared helpers of the AppTest tests: a new app with link settings, uploads, checks."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
from PIL import Image
from streamlit.testing.v1 import AppTest

from lens import keys
from lens.steps import ALL_PAGES as PAGES
from lens.steps import PAGES as PAGE_INFO

APP = str(Path(__file__).resolve().parents[2] / "app.py")
ALL_PAGES = [(p.id, p.path) for p in PAGES]

SMALL = {"image_size": "64", "patch_size": "16", "d_model": "32", "n_heads": "2",
         "n_layers": "2"}


def new_app(*, advanced: bool = True, first_visit: bool = False, **query: str) -> AppTest:
    """An app (not yet run) opened with a link carrying `query`, its sidebar's architecture
    controls open (`advanced`: they are built only while their expander is). The link says
    lesson=0 unless `query` says otherwise: the walk's first page has its choice made (a
    `first_visit` opens it with no link: the choice offered alone)."""
    if not first_visit:
        query = {"lesson": "0", **query}
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in query.items():
        at.query_params[k] = v
    if advanced:
        at.session_state[keys.ADVANCED] = True
    return at


def png_bytes(seed: int, size: int = 40, mode: str = "RGB") -> bytes:
    rng = np.random.default_rng(seed)
    arr = (rng.random((size, size + 8, 3)) * 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(arr).convert(mode).save(buf, format="PNG")
    return buf.getvalue()


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not errors(at), errors(at)


def upload(at: AppTest, name: str, data: bytes, mime: str = "image/png") -> None:
    if at.session_state["source"] != "upload":
        at.sidebar.radio(key="source").set_value("upload").run()
    at.sidebar.file_uploader[0].set_value((name, data, mime)).run()


def sidebar_labels(at: AppTest) -> list[str]:
    """Every label and text of the sidebar, in order of kind: what a learner reads there."""
    kinds = ("radio", "select_slider", "slider", "toggle", "number_input", "button",
             "subheader", "caption", "info", "markdown")
    out = []
    for kind in kinds:
        for e in at.sidebar.get(kind):
            out.append(f"{kind}: {getattr(e, 'label', None) or getattr(e, 'value', '')}")
    return out


def build_button(at: AppTest) -> list:
    """The sidebar's "Prepare the walk as PDF" button (lens.handout.ui): one while offered,
    none once the PDF is built (its download in its place) or while a task withholds it."""
    return [b for b in at.sidebar.button if b.key == keys.HANDOUT_BUILD]


def page_path(page_id: str) -> str:
    """The script of a page, as AppTest's switch_page takes it (lens.steps names it)."""
    return PAGE_INFO[page_id].path


def open_page(at: AppTest, page_id: str) -> AppTest:
    """Open a page as a learner does: the entry script first when this AppTest has not run yet
    (a fresh AppTest that switches page before its first run runs the page file alone), then
    the page. Returns `at`, run."""
    if keys.INITIALISED not in at.session_state:
        at.run()
    return at.switch_page(page_path(page_id)).run()


def opened(page_id: str, **query: str) -> AppTest:
    """A new session opened with a link carrying `query`, then on page `page_id`, run clean."""
    at = new_app(**query)
    open_page(at, page_id)
    assert_clean(at)
    return at


def shown_record(spec, bound: str = "elsewhere"):  # noqa: ANN001, ANN201 (a Spec, a Record)
    """A record of task `spec` as "Show me" leaves it (no answer of the learner's), with a
    right answer of its kind that the link's codec keeps (`lens.lesson.progress.decode`):
    what a link's progress holds for a task seen, here and now or on other settings."""
    from lens.lesson.progress import Record  # noqa: PLC0415
    from lens.lesson.tasks import Fixed  # noqa: PLC0415

    answer = {"number": (1.0, 1.0), "choice": spec.options[0] if spec.options else "",
              "patch": 0, "estimate": 50.0}[spec.kind]
    return Record(spec.id, bound, Fixed(), None, False, answer)
