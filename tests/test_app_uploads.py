"""AppTest: uploads reach the trace, bad uploads get a message, the caches stay bounded."""

from __future__ import annotations

import numpy as np

from encoder_core import EncoderConfig, load_image
from lens import resources
from tests.support.apptest_helpers import SMALL, assert_clean, errors, new_app, png_bytes, upload


def test_an_uploaded_png_reaches_the_trace():
    at = new_app(**SMALL)
    at.run()
    data = png_bytes(1)
    upload(at, "pattern.png", data)
    assert_clean(at)
    assert at.session_state["image_name"] == "pattern.png"
    cfg = EncoderConfig(image_size=64, patch_size=16, d_model=32, n_heads=2, n_layers=2,
                        d_ff=128)
    expected = load_image(data, cfg)
    traces = [v for k, v in resources.caches()["traces"]._items.items() if k[1] == cfg]
    assert any(np.array_equal(t.image, expected) for t in traces)


def test_a_bad_upload_shows_an_error_and_the_next_good_upload_works():
    at = new_app(**SMALL)
    at.run()
    good = png_bytes(2)
    upload(at, "broken.png", good[: len(good) // 2])
    assert not at.exception
    assert any("damaged" in e or "cannot" in e for e in errors(at)), errors(at)
    assert len(at.image) >= 1  # still showing a picture (the built-in photo)
    upload(at, "text.png", b"this is not an image at all")
    assert any("not an image" in e for e in errors(at)), errors(at)
    upload(at, "good.png", good)
    assert_clean(at)
    assert at.session_state["image_name"] == "good.png"


def test_the_trace_cache_stays_bounded_with_more_uploads_than_its_size():
    at = new_app(**SMALL)
    at.run()
    for i in range(resources.MAX_IMAGES + 3):
        upload(at, f"img{i}.png", png_bytes(100 + i, size=24 + i))
        assert_clean(at)
    caches = resources.caches()
    assert len(caches["images"]) <= resources.MAX_IMAGES
    assert len(caches["traces"]) <= resources.MAX_TRACES
    assert caches["images"].misses >= resources.MAX_IMAGES + 3  # every upload was new

