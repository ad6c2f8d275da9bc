"""The class's changes pushed to its students' cards (lens/classroom/ui/push.py): the watch
nudges exactly the pages that drew something else, once; forgets the gone; survives a store
out of reach; its recent look stands in for a page's own read. The browser's run it asks for
keeps the widgets' values and never presses a button again. The whole path through a real
server: tests/test_class200.py (a protocol client whose timers send nothing)."""

from __future__ import annotations

from streamlit.proto.ClientState_pb2 import ClientState

from lens.classroom.ui import push


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(states: dict, gone: set | None = None, clock: Clock | None = None, in_flight: int = 4):
    gone = set() if gone is None else gone
    nudged: list[tuple[str, str]] = []
    reads: list[str] = []

    def read(code: str):
        reads.append(code)
        value = states[code]
        if isinstance(value, Exception):
            raise value
        return value

    def nudge(session: str, fragment: str) -> bool:
        if gone and session in gone:
            return False
        nudged.append((session, fragment))
        return True

    watch = push.Watch(read, lambda s: None if s is None else s["v"], nudge,
                       lambda session: session not in gone, clock=clock or Clock(),
                       in_flight=in_flight)
    watch._thread = object()  # noqa: SLF001 - looks are made by hand here, not by a thread
    return watch, nudged, reads


def test_a_change_nudges_each_page_that_drew_something_else_until_its_run_registers():
    states = {"A": {"v": 1}, "B": {"v": 7}}
    watch, nudged, _ = make(states)
    watch.listen("s1", "A", "f1", 1)
    watch.listen("s2", "A", "f2", 1)
    watch.listen("s3", "B", "f3", 7)
    assert watch.look() == 0 and nudged == []  # nothing changed
    states["A"] = {"v": 2}
    assert watch.look() == 2
    assert sorted(nudged) == [("s1", "f1"), ("s2", "f2")]  # B's page untouched
    assert watch.look() == 0  # asked once, not at every look
    watch.listen("s1", "A", "f1", 2)  # its run drew the new state
    states["A"] = {"v": 3}
    assert watch.look() == 1 and nudged[-1] == ("s1", "f1")  # s2's run is not back yet
    watch.listen("s2", "A", "f2", 2)  # back, with what it drew then
    assert watch.look() == 1 and nudged[-1] == ("s2", "f2") and watch.nudges == 4


def test_at_most_in_flight_runs_are_out_and_each_that_lands_lets_the_next_go():
    clock = Clock()
    states = {"A": {"v": 1}}
    watch, nudged, _ = make(states, clock=clock)
    n = watch.in_flight + 3
    for k in range(n):
        watch.listen(f"s{k}", "A", f"f{k}", 1)
    states["A"] = {"v": 2}
    assert watch.look() == watch.in_flight  # in the order the pages registered
    assert [s for s, _ in nudged] == [f"s{k}" for k in range(watch.in_flight)]
    assert watch.look() == 0  # no place free
    watch.listen("s0", "A", "f0", 2)  # s0's run is back: the next page goes at once
    assert [s for s, _ in nudged][-1] == f"s{watch.in_flight}"
    clock.now += push.IN_FLIGHT_S + 0.1  # the others never came back: their places free
    assert watch.look() == 2 and len(nudged) == n  # every page nudged once
    # a run that never came back (interrupted, say) registered nothing: asked again, in turn
    assert watch.look() == 2 and nudged[-2:] == [("s1", "f1"), ("s2", "f2")]
    for _ in range(4):  # in vain again and again: from the third ask on, the whole page
        clock.now += push.IN_FLIGHT_S + 0.1
        watch.look()
    s1 = [fragment for session, fragment in nudged if session == "s1"]
    assert s1[:2] == ["f1", "f1"] and len(s1) > 2 and set(s1[2:]) == {""}
    for k in range(n):
        watch.listen(f"s{k}", "A", f"f{k}", 2)
    assert watch.look() == 0 and watch.look() == 0  # all drew the class as it is


def test_the_server_runs_one_nudged_page_at_a_time_each_after_the_last_was_handled():
    watch = push.Watch(lambda code: {"v": 2}, lambda s: s["v"], lambda s, f: True,
                       lambda s: True, clock=Clock())
    assert watch.in_flight == push.IN_FLIGHT == 1  # four at once: the loop fell behind
    watch._thread = object()  # noqa: SLF001 - looks by hand
    for k in range(3):
        watch.listen(f"s{k}", "A", f"f{k}", 1)
    assert watch.look() == 1 and watch.look() == 0  # s0 out; the others wait
    watch.listen("s0", "A", "f0", 2)  # handled: s1 goes
    watch.listen("s1", "A", "f1", 2)  # handled: s2 goes
    assert watch.nudges == 3 and watch.look() == 0


def test_a_page_that_drew_an_older_state_is_nudged_at_the_next_look():
    watch, nudged, _ = make({"A": {"v": 5}})
    watch.listen("s1", "A", "f1", 4)  # it read before the change the watch already saw
    assert watch.look() == 1 and nudged == [("s1", "f1")]


def test_the_class_ended_is_a_change_and_a_gone_session_is_forgotten():
    states = {"A": {"v": 1}}
    watch, nudged, _ = make(states, gone={"s2"})
    watch.listen("s1", "A", "f1", 1)
    watch.listen("s2", "A", "f2", 1)
    states["A"] = None  # ended
    assert watch.look() == 1 and nudged == [("s1", "f1")]
    assert watch.pages() == 1  # s2's session is gone


def test_the_pages_of_closed_sessions_are_forgotten_and_their_class_no_longer_read():
    clock = Clock()
    gone: set = set()
    watch, nudged, reads = make({"A": {"v": 1}, "B": {"v": 1}}, gone=gone, clock=clock)
    watch.listen("s1", "A", "f1", 1)
    watch.listen("s2", "B", "f2", 1)
    watch.look()
    assert sorted(reads) == ["A", "B"]
    gone.add("s2")  # its tab closed; B never changes again
    clock.now += push.PRUNE_S
    reads.clear()
    watch.look()
    assert watch.pages() == 1 and reads == ["A"] and nudged == []


def test_a_store_out_of_reach_nudges_nobody_and_the_next_look_catches_up():
    states: dict = {"A": RuntimeError("database is locked")}
    watch, nudged, _ = make(states)
    watch.listen("s1", "A", "f1", 1)
    assert watch.look() == 0 and nudged == []
    states["A"] = {"v": 2}
    assert watch.look() == 1 and nudged == [("s1", "f1")]


def test_the_recent_look_stands_in_for_a_read_only_while_it_is_one_interval_old():
    clock = Clock()
    states = {"A": {"v": 1}}
    watch, _, reads = make(states, clock=clock)
    watch.listen("s1", "A", "f1", 1)
    watch.look()
    own: list[str] = []

    def read_own(code: str):
        own.append(code)
        return {"v": "own"}

    clock.now += push.LOOK_S / 2
    assert watch.recent("A", read_own) == {"v": 1} and own == []
    clock.now += push.LOOK_S
    assert watch.recent("A", read_own) == {"v": "own"} and own == ["A"]
    assert watch.recent("B", read_own) == {"v": "own"}  # a class it does not watch
    watch.forget("s1")
    watch.look()  # no page of A left: its look is dropped
    clock.now -= push.LOOK_S
    assert watch.recent("A", read_own) == {"v": "own"} and reads == ["A"]


def test_the_pushed_run_is_the_browsers_last_state_for_the_fragment_without_presses():
    last = ClientState(query_string="class=ABC&student=t", page_script_hash="p1")
    kinds = {"n": "int_value", "send": "trigger_value", "pick": "json_trigger_value",
             "s": "string_value", "t": "string_trigger_value", "c": "chat_input_value"}
    for wid, kind in kinds.items():
        w = last.widget_states.widgets.add()
        w.id = wid
        if kind == "int_value":
            w.int_value = 196
        elif kind == "trigger_value":
            w.trigger_value = True
        elif kind == "string_value":
            w.string_value = "ok"
        elif kind == "json_trigger_value":
            w.json_trigger_value = "{}"
        elif kind == "string_trigger_value":
            w.string_trigger_value.data = "x"
        else:
            w.chat_input_value.data = "hi"
    run = push.fragment_run(last, "frag1")
    assert run.fragment_id == "frag1" and run.is_auto_rerun
    assert run.query_string == last.query_string and run.page_script_hash == "p1"
    assert {w.id: w.WhichOneof("value") for w in run.widget_states.widgets} == {
        "n": "int_value", "s": "string_value"}
    assert [w.int_value for w in run.widget_states.widgets if w.id == "n"] == [196]
    assert len(last.widget_states.widgets) == 6  # the session's own state is not touched
    whole = push.fragment_run(last, "")  # the whole page, as the browser's own rerun
    assert whole.fragment_id == "" and not whole.is_auto_rerun
    assert len(whole.widget_states.widgets) == 2


def test_outside_a_server_a_nudge_finds_no_session():
    assert push.nudge("no-such-session", "f") is False
    assert push.this_fragment() is None  # no script run here


class Runner:
    def __init__(self, thread) -> None:  # noqa: ANN001
        self._script_thread = thread


class Session:
    """What `push.after_messages` reads of a Streamlit AppSession: its current ScriptRunner
    and its event loop."""

    def __init__(self, loop, runner) -> None:  # noqa: ANN001
        self._event_loop = loop
        self._scriptrunner = runner


def handled_after(session, between=lambda: None) -> list[bool]:  # noqa: ANN001
    """`after_messages` from this thread, `between` done before the loop gets to it; the
    loop then runs in a thread of its own, as the server's does (this thread may already
    have a loop running: another test's)."""
    import asyncio  # noqa: PLC0415
    import threading  # noqa: PLC0415

    said: list[bool] = []
    loop = session._event_loop
    assert push.after_messages(session, said.append) is True
    between()
    server = threading.Thread(target=lambda: loop.run_until_complete(asyncio.sleep(0)))
    server.start()  # the loop handles what was queued
    server.join(10)
    return said


def test_a_run_whose_runner_is_still_the_sessions_is_said_sent_after_its_messages():
    import asyncio  # noqa: PLC0415
    import threading  # noqa: PLC0415

    loop = asyncio.new_event_loop()
    try:
        session = Session(loop, Runner(threading.current_thread()))
        assert handled_after(session) == [True]

        def replaced() -> None:  # the browser's request met a runner at its end: a new one
            session._scriptrunner = Runner(threading.Thread(target=lambda: None))

        assert handled_after(session, replaced) == [False]  # Streamlit drops its messages
        other = Session(loop, Runner(threading.Thread(target=lambda: None)))
        assert handled_after(other) == [False]  # not this thread's run: not said sent
    finally:
        loop.close()
    assert push.after_messages(Session(loop, None), print) is False  # a closed loop
    assert push.when_handled("no-such-session", print) is False


def test_a_run_whose_output_streamlit_dropped_is_asked_again_at_the_next_look():
    watch, nudged, _ = make({"A": {"v": 5}})
    watch.listen("s1", "A", "f1", push.UNSENT)  # its card reached no browser
    assert watch.look() == 1 and nudged == [("s1", "f1")]
    watch.listen("s1", "A", "f1", 5)  # the run asked for reached it
    assert watch.look() == 0
