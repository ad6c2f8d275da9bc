"""Every page's AppTest element tree as plain data, to prove that a change of the app's code
leaves what a user sees as it was.

A dump walks each page of `lens.steps` in each *case* (the defaults, the trained model, lesson
mode, a small test ViT) and each language, and writes every element the page run left: its
kind, its place in the tree, and its protobuf message as a dict (texts, labels, keys, options,
values), with each picture or download replaced by the SHA-256 of its bytes and any long string
by its SHA-256. `tests/test_golden_pages.py` compares a new dump with `tests/golden/pages.json`.

    OPENBLAS_CORETYPE=Haswell .venv/bin/python -m tests.support.golden_pages --write
    OPENBLAS_CORETYPE=Haswell .venv/bin/python -m tests.support.golden_pages --diff

--write after a change you decided on, --diff for what differs, page by page. The pictures'
bytes and the last printed digits depend on the OpenBLAS kernel: the file is written with
Haswell's, the one `scripts/test` pins on every x86-64 with AVX2 (an AVX-512 machine would
otherwise pick SkylakeX's, which rounds some float32 products the other way).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from google.protobuf.json_format import MessageToDict
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from lens import model_weights
from lens.figures import min_text_px
from lens.models import CHECKPOINTS_ENV
from lens.steps import ALL_PAGES, STEPS
from tests.support.apptest_helpers import assert_clean, new_app, open_page

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "pages.json"
LANGS = ("en", "zh")
LONG = 300  # a longer string is kept as its SHA-256
# case -> (the link's settings, the pages it is walked on)
CASES: dict[str, tuple[dict[str, str], tuple[str, ...]]] = {
    "defaults": ({}, tuple(p.id for p in ALL_PAGES)),
    "trained": ({"weights": "trained"}, tuple(p.id for p in ALL_PAGES)),
    "lesson": ({"lesson": "1", "lc": "------."}, tuple(p.id for p in STEPS)),  # check skipped
    "vit": ({"weights": "vit_tiny_test"}, tuple(p.id for p in ALL_PAGES)),
}

_MEDIA: dict[str, str] = {}  # media file id -> SHA-256 of its bytes
# SHA-256 of a figure's PNG -> (its width in px, its smallest text in px: lens.figures'
# min_text_px chunk); only the PNGs that have texts
GEOMETRY: dict[str, tuple[int, float]] = {}


@contextmanager
def media_recorded() -> Iterator[None]:
    """Record the SHA-256 of every picture and download a page run stores (AppTest keeps them in
    a MemoryMediaFileStorage it drops after the run)."""
    real = MemoryMediaFileStorage.load_and_get_id

    def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):  # noqa: ANN001
        file_id = real(self, path_or_data, mimetype, kind, filename)
        data = path_or_data if isinstance(path_or_data, bytes) else Path(path_or_data).read_bytes()
        _MEDIA[file_id] = hashlib.sha256(data).hexdigest()
        if data[:8] == b"\x89PNG\r\n\x1a\n" and (smallest := min_text_px(data)) is not None:
            GEOMETRY[_MEDIA[file_id]] = (int.from_bytes(data[16:20], "big"), smallest)
        return file_id

    MemoryMediaFileStorage.load_and_get_id = load_and_get_id
    try:
        yield
    finally:
        MemoryMediaFileStorage.load_and_get_id = real


def _plain(value: object, uuid: str = "") -> object:
    """A message's dict with media URLs as their bytes' SHA-256 and long strings hashed. What
    is drawn at random on each run is named, not kept: a deferred download's file id, a
    styled table's uuid (also in its CSS)."""
    if isinstance(value, dict):
        uuid = value.get("uuid") or uuid
        return {k: k if k in ("deferred_file_id", "uuid") else _plain(v, uuid)
                for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_plain(v, uuid) for v in value]
    if isinstance(value, str):
        if uuid:
            value = value.replace(uuid, "uuid")
        if "/media/" in value:
            file_id = value.rsplit("/", 1)[-1].split(".", 1)[0]
            return f"media sha256:{_MEDIA.get(file_id, '?' + file_id)}"
        if len(value) > LONG:
            return f"sha256:{hashlib.sha256(value.encode()).hexdigest()}"
    return value


def _walk(node: object, path: str) -> Iterator[dict]:
    children = getattr(node, "children", None)
    proto = getattr(node, "proto", None)
    kind = getattr(node, "type", type(node).__name__)
    entry = {"at": path, "kind": kind}
    if proto is not None and hasattr(proto, "DESCRIPTOR"):
        entry["proto"] = _plain(MessageToDict(proto, preserving_proto_field_name=True))
    yield entry
    if children:
        for k in sorted(children):
            yield from _walk(children[k], f"{path}/{k}")


def page_tree(query: dict[str, str], page_id: str) -> list[dict]:
    """The element tree of page `page_id` opened by a new session with a link of `query`."""
    at = new_app(**query)
    open_page(at, page_id)
    assert_clean(at)
    return [e for root in ("main", "sidebar") for e in _walk(getattr(at, root), root)]


def dump(cases: dict[str, tuple[dict[str, str], tuple[str, ...]]] = CASES,
         checkpoint: str | None = None) -> dict:
    """{case: {lang: {page: [element, …]}}}; the ViT case needs `checkpoint` (a timm file)."""
    out: dict = {}
    with media_recorded():
        for case, (query, pages) in cases.items():
            if case == "vit":
                os.environ[CHECKPOINTS_ENV] = str(checkpoint)
                model_weights.clear_models()
            try:
                for lang in LANGS:
                    for page_id in pages:
                        out.setdefault(case, {}).setdefault(lang, {})[page_id] = page_tree(
                            {**query, "lang": lang}, page_id)
            finally:
                if case == "vit":
                    os.environ.pop(CHECKPOINTS_ENV, None)
                    model_weights.clear_models()
    return out


def test_checkpoint(folder: Path) -> str:
    """The small random timm ViT of the tests (`vit_tiny_test`), written into a folder
    "models" of `folder` (the sidebar shows its folder and name: the same in every run)."""
    from tests.support.vit_dicts import SMALL_VIT, write_timm_checkpoint

    (folder / "models").mkdir(exist_ok=True)
    return write_timm_checkpoint(folder / "models" / "vit_tiny_test.safetensors", **SMALL_VIT)


def pictures(elements: list[dict]) -> list[tuple[int, float]]:
    """(width, smallest text) in px of every figure PNG with texts on a page, in page order."""
    found = re.findall(r"media sha256:([0-9a-f]{64})", json.dumps(elements))
    return [GEOMETRY[sha] for sha in found if sha in GEOMETRY]


def seen(elements: list[dict] | None) -> list[dict] | None:
    """A page's elements as a user sees them: without the empty placeholders, which draw
    nothing (the admission's notice slot exists only when the run had memory to reserve, i.e.
    when no other run still held its traces: a matter of timing), each placed by its depth in
    the tree (an index counts the placeholders before it)."""
    if elements is None:
        return None
    return [{**{k: v for k, v in e.items() if k != "at"}, "depth": e["at"].count("/")}
            for e in elements if e["kind"] != "empty"]


def differences(old: dict, new: dict) -> list[str]:
    """Where two dumps differ: one line per page (case/lang/page) with its first difference."""
    out = []
    for case in sorted(set(old) | set(new)):
        for lang in sorted(set(old.get(case, {})) | set(new.get(case, {}))):
            a, b = old.get(case, {}).get(lang, {}), new.get(case, {}).get(lang, {})
            for page_id in sorted(set(a) | set(b)):
                x, y = seen(a.get(page_id)), seen(b.get(page_id))
                if x == y:
                    continue
                if x is None or y is None:
                    side = "new" if x is None else "old"
                    out.append(f"{case}/{lang}/{page_id}: only in the {side}")
                    continue
                i = next((i for i, (p, q) in enumerate(zip(x, y, strict=False)) if p != q),
                         min(len(x), len(y)))
                old_e, new_e = (json.dumps(z[i] if i < len(z) else None, ensure_ascii=False)[:600]
                                for z in (x, y))
                out.append(f"{case}/{lang}/{page_id}: {len(x)} → {len(y)} elements; first "
                           f"difference at #{i}:\n  old {old_e}\n  new {new_e}")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--write", action="store_true", help=f"write {GOLDEN.name}")
    p.add_argument("--diff", action="store_true", help=f"compare with {GOLDEN.name}")
    p.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases")
    args = p.parse_args()
    cases = {k: v for k, v in CASES.items() if not args.case or k in args.case}
    os.environ.setdefault("ENCODER_LENS_DATA", tempfile.mkdtemp(prefix="encoder-lens-data-"))
    with tempfile.TemporaryDirectory() as folder:
        new = dump(cases, test_checkpoint(Path(folder)))
    if args.write:
        old = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else {}
        GOLDEN.write_text(json.dumps({**old, **new}, ensure_ascii=False, indent=0) + "\n",
                          encoding="utf-8")
    if args.diff:
        old = json.loads(GOLDEN.read_text(encoding="utf-8"))
        diff = differences({k: old[k] for k in new if k in old}, new)
        print("\n".join(diff) if diff else "identical")
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
