"""Benchmark: the patch similarity's payload (issue 26, item 4) — how many kB the similarity
explorer sends, and what building it costs on the server.

    .venv/bin/python -m benchmarks.similarity [--repeat 20]

For each shape (the app's defaults, ViT-S/16 and ViT-B/16 and ViT-L/16 at 224 px, and the
largest the app allows: 1,024 tokens × d_model 1,024), rows of that shape (random, as the
payload's size depends only on N, d and the picture) through `unit_rows`' arithmetic and
`lens.explorer.similarity_payload` on the built-in photo: the blob's size in kB (1 kB = 1,000
bytes) and its parts (the unit rows as float16, the picture, the header), whether it fits
`explorer.MAX_BYTES`, and the median build time in ms. The browser then takes N · d
multiply-adds per hover (N dot products of d terms; its paint time is the explorer root's
`data-paint-ms`).
Figures, not pass/fail: the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import statistics
import struct
import time

import numpy as np

from lens import explorer, images

SHAPES = [  # (name, image side, patch side, d_model)
    ("defaults (224 px, P 16, d 512)", 224, 16, 512),
    ("ViT-S/16 (d 384)", 224, 16, 384),
    ("ViT-B/16 (d 768)", 224, 16, 768),
    ("ViT-L/16 (d 1,024)", 224, 16, 1024),
    ("largest: 512 px, P 16 (1,024 tokens), d 1,024", 512, 16, 1024),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    print("| shape | N × d | payload | unit rows | picture + header | fits 4 MiB | build |")
    print("|---|---|---|---|---|---|---|")
    for name, S, P, d in SHAPES:
        G = S // P
        N = G * G
        _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), S, 3)
        X = np.random.default_rng(0).standard_normal((N, d)).astype(np.float32)
        text = {"hint": "", "aria": "", "patch": "patch {i}", "weight": "cos", "title": "{i}",
                "colorbar": "", "colorbar_row": "", "to_row": "", "to_fixed": ""}
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            X64 = X.astype(np.float64)
            unit = (X64 / np.linalg.norm(X64, axis=1, keepdims=True)).astype(np.float32)
            blob = explorer.similarity_payload(image, G, N // 2, text, unit)
            times.append(time.perf_counter() - t0)
        (n,) = struct.unpack_from("<I", blob)
        json.loads(blob[4:4 + n])
        rows = explorer.rows_bytes(N, d)
        print(f"| {name} | {N} × {d} | {len(blob) / 1e3:,.0f} kB | {rows / 1e3:,.0f} kB | "
              f"{(len(blob) - rows) / 1e3:,.0f} kB | {'yes' if explorer.rows_fit(N, d) else 'no'}"
              f" | {1e3 * statistics.median(times):.1f} ms |")


if __name__ == "__main__":
    main()
