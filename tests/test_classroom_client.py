"""The live class benchmark's tab (benchmarks/classroom.py) speaks the browser's part of
Streamlit's protocol: a fragment's `auto_rerun` starts a timer that sends `rerun_script` with
that fragment id, a full run clears the timers (the run's `auto_rerun` starts them again),
`stop_auto_rerun` cancels one, and a widget is sent by the element id its delta carried. No
server: the messages are fed to the tab, what it sends is read back."""

from __future__ import annotations

import asyncio

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.classroom import Tab
from tests.support.run_async import run_async


class FakeSocket:
    def __init__(self) -> None:
        self.sent: list[BackMsg] = []

    async def send(self, data: bytes) -> None:
        back = BackMsg()
        back.ParseFromString(data)
        self.sent.append(back)

    async def close(self) -> None:
        pass


def new_session(fragment_ids: tuple[str, ...] = ()) -> ForwardMsg:
    msg = ForwardMsg()
    msg.new_session.page_script_hash = "hash-overview"
    msg.metadata.run.fragment_ids.extend(fragment_ids)
    return msg


def auto_rerun(fragment_id: str, interval: float) -> ForwardMsg:
    msg = ForwardMsg()
    msg.auto_rerun.fragment_id = fragment_id
    msg.auto_rerun.interval = interval
    return msg


def finished(status: int) -> ForwardMsg:
    msg = ForwardMsg()
    msg.script_finished = status
    return msg


async def _timers() -> tuple[Tab, FakeSocket, dict[str, int]]:
    tab = Tab("s0", "http://127.0.0.1:1", "overview", "class=ABC&student=tok")
    ws = FakeSocket()
    tab._ws = ws
    await tab._handle(new_session())
    await tab._handle(auto_rerun("frag-1", 0.01))
    await tab._handle(auto_rerun("frag-1", 0.01))  # the same timer again: one timer
    after = {"timers": len(tab.timers)}
    async with asyncio.timeout(10):  # two ticks of the timer (no message wakes the tab)
        while len(ws.sent) < 2:
            await asyncio.sleep(0.005)
    await tab._handle(new_session())  # a full run: the frontend clears every timer
    after["timers_after_full_run"] = len(tab.timers)
    await tab._handle(auto_rerun("frag-1", 0.01))
    msg = ForwardMsg()
    msg.stop_auto_rerun.fragment_ids.append("frag-1")
    await tab._handle(msg)
    after["timers_after_stop"] = len(tab.timers)
    await tab._handle(new_session(("frag-1",)))  # a fragment run keeps the timers
    await tab._handle(finished(ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY))
    after["full_runs"] = tab.full_started
    await tab.close()
    return tab, ws, after


def test_a_fragment_timer_sends_its_fragment_id_until_a_full_run_or_a_stop():
    tab, ws, after = run_async(_timers())
    assert after == {"timers": 1, "timers_after_full_run": 0, "timers_after_stop": 0,
                     "full_runs": 2}
    state = ws.sent[0].rerun_script
    assert state.fragment_id == "frag-1" and state.is_auto_rerun
    assert state.page_script_hash == "hash-overview" and state.page_name == ""
    assert state.query_string == "class=ABC&student=tok"
    assert tab.fragment_rtt and not tab.errors


async def _widgets() -> tuple[list[BackMsg], Tab]:
    tab = Tab("s0", "http://127.0.0.1:1", "overview", "class=ABC&student=tok")
    ws = FakeSocket()
    tab._ws = ws
    await tab._handle(new_session())
    msg = ForwardMsg()
    msg.delta.new_element.number_input.id = "$$ID-abc123-lesson_in_overview_tokens_b1_0"
    await tab._handle(msg)
    msg = ForwardMsg()
    msg.delta.new_element.button.id = "$$ID-def456-class_send_overview_tokens"
    await tab._handle(msg)
    msg = ForwardMsg()
    msg.page_info_changed.query_string = "class=ABC&student=tok&lesson=1"
    await tab._handle(msg)
    await tab._handle(finished(ForwardMsg.ScriptFinishedStatus.FINISHED_SUCCESSFULLY))

    async def respond() -> None:  # the server runs the page again after each send
        seen = 0
        while True:
            await asyncio.sleep(0.001)
            if len(ws.sent) > seen:
                seen = len(ws.sent)
                await tab._handle(new_session())
                await tab._handle(finished(ForwardMsg.ScriptFinishedStatus
                                           .FINISHED_SUCCESSFULLY))

    server = asyncio.create_task(respond())
    await tab.set_int("lesson_in_overview_tokens_b1_0", 196)
    before = await tab.click("class_send_overview_tokens")
    await tab.wait_full(before)
    server.cancel()
    return ws.sent, tab


def test_a_number_is_sent_by_its_element_id_then_the_button_as_a_trigger():
    sent, tab = run_async(_widgets())
    value, click = sent[0].rerun_script, sent[1].rerun_script
    assert [(w.id, w.int_value) for w in value.widget_states.widgets] == [
        ("$$ID-abc123-lesson_in_overview_tokens_b1_0", 196)]
    assert value.query_string == "class=ABC&student=tok&lesson=1" and not value.fragment_id
    triggers = [w.id for w in click.widget_states.widgets if w.trigger_value]
    assert triggers == ["$$ID-def456-class_send_overview_tokens"]
    assert any(w.int_value == 196 for w in click.widget_states.widgets)
    assert tab.first_seen.keys() == {"lesson_in_overview_tokens_b1_0",
                                     "class_send_overview_tokens"}
