"""The lesson's progress in a link: records round-trip; anything else a link holds is dropped."""

from __future__ import annotations

import base64
import json

import pytest

from encoder_core import EncoderConfig
from lens.lesson.progress import MAX_URL_CHARS, Record, binding, decode, encode
from lens.lesson.tasks import Fixed

RECORDS = {
    "patches.shape": Record("patches.shape", "abc123", Fixed(0, 0, 105), (196.0, 256.0),
                            True, (196.0, 256.0)),
    "positional.similar": Record("positional.similar", "def456", Fixed(1, 2, 7), 33, False, 34),
    "scores.divisor": Record("scores.divisor", "def456", Fixed(1, 2, 7), None, False,
                             "flatter"),
    "addnorm.within": Record("addnorm.within", "0a0b0c", Fixed(0, 0, 3), 70.0, True, 68.4),
}


def link(rows: object) -> str:
    raw = json.dumps(rows).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def test_records_round_trip_through_the_link():
    text = encode(RECORDS)
    assert text.isascii() and all(c.isalnum() or c in "-_" for c in text)  # URL-safe
    assert decode(text) == RECORDS
    assert encode({}) == "" and decode("") == {} and decode(None) == {}


@pytest.mark.parametrize("rows", [
    [["no.such_task", "abc", [0, 0, 0], 1, 1, 1]],  # unknown task
    [["positional.similar", "abc", [0, 0, 0], True, 1, 3]],  # a bool is no patch
    [["positional.similar", "abc", [0, 0, -1], 3, 1, 3]],  # a negative query
    [["positional.similar", "a b<", [0, 0, 0], 3, 1, 3]],  # a binding that is no name
    [["scores.divisor", "abc", [0, 0, 0], "<script>", 0, "flatter"]],  # not one of its options
    [["patches.shape", "abc", [0, 0, 0], [196, "x"], 1, [196, 256]]],  # a part no number
    [["patches.shape", "abc", [0, 0, 0], [196, 256], 2, [196, 256]]],  # right: 0 or 1
    [["addnorm.within", "abc", [0, 0, 0], 1e999, 1, 50]],  # not finite (JSON: Infinity)
    [["positional.similar", "abc", [0, 0], 3, 1, 3]],  # a short fixed
    {"not": "a list"},
])
def test_a_malformed_record_is_dropped_and_the_rest_kept(rows):
    good = ["positional.similar", "abc", [0, 1, 2], 5, 1, 5]
    records = decode(link([good, *rows] if isinstance(rows, list) else rows))
    if isinstance(rows, list):
        assert list(records) == ["positional.similar"] and records["positional.similar"].given == 5
    else:
        assert records == {}


@pytest.mark.parametrize("text", ["%%%", "not base64!", "e30", "W10", "x" * (MAX_URL_CHARS + 1),
                                  base64.urlsafe_b64encode(b"\xff\xfe").decode()])
def test_a_link_that_is_no_progress_gives_none(text):
    assert decode(text) == {}


def test_a_binding_names_image_weights_and_architecture():
    cfg = EncoderConfig()
    same = binding("img", "random", cfg)
    assert same == binding("img", "random", EncoderConfig())
    others = {binding("img2", "random", cfg), binding("img", "trained", cfg),
              binding("img", "random", cfg.replace(seed=1)),
              binding("img", "random", cfg.replace(d_model=256))}
    assert same not in others and len(others) == 4
