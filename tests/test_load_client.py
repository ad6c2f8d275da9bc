"""The load benchmark's headless client (benchmarks/load.py): it speaks Streamlit's websocket
well enough that two sessions run a page to the end, and it counts what a learner would see
as a failure (an exception element, a page that does not exist) as one."""

from __future__ import annotations

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks import load
from tests.support.run_async import run_async


def test_an_exception_element_is_a_failure():
    msg = ForwardMsg()
    msg.delta.new_element.exception.type = "ValueError"
    msg.delta.new_element.exception.message = "boom"
    assert load.message_errors(msg) == ["exception: ValueError: boom"]
    fine = ForwardMsg()
    fine.delta.new_element.markdown.body = "all good"
    assert load.message_errors(fine) == []


def test_media_urls_are_read_from_image_deltas():
    msg = ForwardMsg()
    msg.delta.new_element.imgs.imgs.add(url="/media/abc.png")
    msg.delta.new_element.imgs.imgs.add(url="data:image/png;base64,xx")
    assert load.media_urls(msg) == ["/media/abc.png"]


def test_own_settings_links_differ_and_keep_a_valid_head_count():
    links = [load.own_settings_query(i) for i in range(20)]
    assert len(set(links)) == 20
    assert "d_model=64" in links[0] and "seed=1000" in links[0]


@pytest.mark.slow
def test_two_sessions_finish_without_error_and_a_missing_page_fails():
    visits = (load.Visit("multihead"), load.Visit("multihead"), load.Visit("no_such_page"))
    burst = load.Burst("smoke", "2 sessions + a missing page", visits)
    with load.started_server([]) as (url, _proc):
        results = run_async(load.run_burst(burst, url, timeout=60))
    good, missing = results[:2], results[2]
    for r in good:
        assert r.ok, r.errors
        assert r.finish_s > 0 and r.images > 0 and r.image_bytes > 0
    assert not missing.ok and any("page not found" in e for e in missing.errors), missing
