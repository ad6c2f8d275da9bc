"""Test helpers for lens.hub, all offline: a Hugging Face cache written with the library's
layout, a config.json shaped like timm's, a closed port and a small hub on loopback."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from safetensors.numpy import save_file

from tests.support.vit_dicts import timm_state_dict

COMMIT = "0123456789abcdef0123456789abcdef01234567"
# The small random timm ViT the tests download: d 64, 16 × 16 patches on a 14 × 14 grid, CLS
# (197 tokens), 2 layers.
TINY_VIT = dict(d=64, P=16, grid=14, L=2, d_ff=128, head=False)


def vit_bytes(folder: Path) -> bytes:
    """TINY_VIT as the bytes of a .safetensors file (written in `folder`)."""
    path = folder / "vit_tiny_test.safetensors"
    save_file(timm_state_dict(**TINY_VIT), str(path))
    return path.read_bytes()


def timm_config(model, mean, std) -> bytes:
    """A config.json shaped like those timm writes to the hub (`save_config_for_hf`)."""
    arch = model.repo_id.split("/", 1)[1].split(".", 1)[0]
    return json.dumps({
        "architecture": arch, "num_classes": 0, "num_features": 64, "global_pool": "token",
        "pretrained_cfg": {"tag": model.repo_id.split(".", 1)[1], "input_size": [3, 224, 224],
                           "mean": list(mean), "std": list(std), "crop_pct": 0.9,
                           "license": model.licence.lower()}}).encode()


def put_in_cache(cache: Path, repo_id: str, files: dict[str, bytes], commit: str = COMMIT
                 ) -> Path:
    """Write `files` into `cache` as huggingface_hub does: blobs named by their etag, snapshot
    entries as relative symlinks to them, refs/main holding the commit. Returns the snapshot."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        etag = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / etag).write_bytes(data)
        (snapshot / name).symlink_to(Path("..", "..", "blobs", etag))
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    return snapshot


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalHub:
    """A hub on loopback: HEAD and GET of /<repo>/resolve/main/<file> with the headers
    huggingface_hub reads (X-Repo-Commit, ETag, Content-Length); X-Error-Code on a 404;
    every request answered with `status` when it is not 200."""

    def __init__(self, files: dict[tuple[str, str], bytes], status: int = 200) -> None:
        self.files, self.status, self.requests = files, status, []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self):
                self.answer(body=False)

            def do_GET(self):
                self.answer(body=True)

            def answer(self, body: bool) -> None:
                outer.requests.append((self.command, self.path))
                repo, sep, rest = self.path.partition("/resolve/")
                revision, _, name = rest.partition("/")
                data = outer.files.get((repo.lstrip("/"), name)) if sep else None
                if outer.status != 200 or data is None or revision != "main":
                    self.send_response(outer.status if outer.status != 200 else 404)
                    if outer.status == 200:
                        self.send_header("X-Error-Code", "EntryNotFound")
                    self.send_header("X-Repo-Commit", COMMIT)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", '"%s"' % hashlib.sha256(data).hexdigest())
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if body:
                    self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> LocalHub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()
