"""A class's change pushed to its pages: the process looks at the class, not every page.

Before, every student's page asked the store every 2 s (a fragment timer in the browser, a
Streamlit run and a query per page and look: 200 students, 100 runs a second) and ran the
whole page again when the class changed: 2.9 s from the teacher's Open to the 200th card.

Now each process has one `Watch`: a thread that reads the state of each class it has pages of
every `LOOK_S` seconds (one query per class, whatever the number of pages), and when it differs
from what a page last drew, asks Streamlit to run that page's card fragment again (`nudge`):
the change reaches the page as soon as the thread sees it, and only the cards run. Between
changes a page costs nothing: no timer, no run, no query. Replicas need nothing more: each
process watches the store, the one truth.

A page asked twice in vain (its run never registered: its fragment gone with a run that was
cut short, say) is asked for a run of the whole page, as a reload would.

One nudged run at a time per process (`IN_FLIGHT`): each run's `listen`, made from the
server's event loop once it has handled the run's messages, lets the next page due go (a run
that never comes back: after `IN_FLIGHT_S`). Measured with 200 students (benchmarks/class200):
with four at once, the cards were computed in turns but all reached the browsers together at
the end (p50 = max, 0.8 s), because the event loop, which sends every message and starts every
run's thread, waited on the GIL behind the script threads (py-spy: 40 % of its time in
`Thread.start`). One at a time, the loop keeps up: each card leaves as it is drawn (p50
0.32–0.34 s, p95 0.57–0.62 s in three runs), and the teacher's own run is not starved.

A page registers on every run of its fragment (`listen`: the session, the fragment, the class,
what it drew, or `UNSENT` when Streamlit dropped the run's output: `after_messages`). A page
whose session is gone (closed tab, dead websocket) is forgotten at the next nudge. A page that
missed a nudge (its session between two websockets) is caught by its slow fallback timer
(`follow.FOLLOW_S`).

`Watch` is plain Python (a clock, a reader and a nudger are given); the functions below it are
the one place that speaks to Streamlit's runtime: `Runtime.get_app_session` (thread-safe),
then, on the session's own event loop, `AppSession.request_rerun` with the last client state
the browser sent, narrowed to the fragment (what the browser's own fragment timer sends, minus
any button press: a trigger is never sent twice), and a look at the session's ScriptRunner
(`after_messages`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass

IN_FLIGHT = 1  # nudged runs at once per process: the rest wait their turn (see the docstring)
IN_FLIGHT_S = 1.0  # a nudged run not back (no `listen`) after this frees its place (seconds)
PRUNE_S = 5.0  # how often the pages of closed sessions are forgotten (seconds)
LOOK_S = 0.1  # how often a process reads each class it has pages of (seconds)
UNSENT = object()  # what a page whose run's output Streamlit dropped drew: no class's stamp
# what a press of a button (or a chat message) sends: never sent again by a nudge
TRIGGERS = ("trigger_value", "string_trigger_value", "json_trigger_value", "chat_input_value")

_log = logging.getLogger(__name__)


@dataclass
class Page:
    """One page's card fragment, as its last run left it."""

    code: str  # its class
    fragment_id: str
    drawn: Hashable  # the class's stamp the fragment drew
    asked: int = 0  # nudges since its last run registered


class Watch:
    """The pages of this process by session, and the thread that nudges them on a change.

    `read(code)` gives a class's state (None: ended; raises: out of reach, looked at again
    next time), `stamp(state)` what of it the pages show; `nudge(session_id, fragment_id)`
    asks for the fragment's run and says whether the session still exists; `alive(session_id)`
    whether it does (every `PRUNE_S` the pages of closed sessions are forgotten, and with them
    the reads of classes no page here shows any more)."""

    def __init__(self, read: Callable[[str], object], stamp: Callable[[object], Hashable],
                 nudge: Callable[[str, str], bool], alive: Callable[[str], bool],
                 look_s: float = LOOK_S, clock: Callable[[], float] = time.monotonic,
                 in_flight: int = IN_FLIGHT) -> None:
        self._read = read
        self._stamp = stamp
        self._nudge = nudge
        self._alive = alive
        self._pruned = clock()
        self._look_s = look_s
        self.in_flight = in_flight
        self._clock = clock
        self._pages: dict[str, Page] = {}
        self._queued: dict[str, None] = {}  # sessions due, in order (a dict: an ordered set)
        self._flying: dict[str, float] = {}  # sessions nudged, not back yet -> when nudged
        self._latest: dict[str, tuple[float, object]] = {}  # code -> (when read, state)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.nudges = 0  # how many runs it asked for (benchmarks/class200 reports it)

    def listen(self, session_id: str, code: str, fragment_id: str, drawn: Hashable) -> None:
        """The page of `session_id` drew `drawn` of class `code` in `fragment_id`: nudge it
        when the class is no longer that. Starts the thread on the first page."""
        with self._lock:
            self._pages[session_id] = Page(code, fragment_id, drawn)
            landed = self._flying.pop(session_id, None) is not None
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="encoder-lens-push",
                                                daemon=True)
                self._thread.start()
        if landed:  # its place goes to the next page due
            self._dispatch()

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._pages.pop(session_id, None)
            self._queued.pop(session_id, None)
            self._flying.pop(session_id, None)

    def pages(self) -> int:
        with self._lock:
            return len(self._pages)

    def recent(self, code: str, read: Callable[[str], object]) -> object:
        """The class's state as this process's last look read it, if that look is at most one
        interval old (what a page's own read would tell it, one query fewer for each of
        200 pages at a change); else `read(code)` now."""
        with self._lock:
            seen = self._latest.get(code)
        if seen is not None and self._clock() - seen[0] <= self._look_s:
            return seen[1]
        return read(code)

    def prune(self) -> int:
        """Forget the pages whose session is gone; how many."""
        with self._lock:
            sessions = list(self._pages)
        gone = [sid for sid in sessions if not self._alive(sid)]
        for sid in gone:
            self.forget(sid)
        return len(gone)

    def look(self) -> int:
        """One look at every class with pages: each page that drew something else is due
        (one whose nudged run is not back yet: at the next look after it is); nudge up to
        `IN_FLIGHT` at once. Returns how many it nudged."""
        if self._clock() - self._pruned >= PRUNE_S:
            self._pruned = self._clock()
            self.prune()
        with self._lock:
            codes = {p.code for p in self._pages.values()}
        now: dict[str, Hashable] = {}
        for code in codes:
            try:
                when, state = self._clock(), self._read(code)
            except Exception as err:  # noqa: BLE001 - the store out of reach: next look
                _log.debug("class %s not read: %s", code, err)
                continue
            now[code] = self._stamp(state)
            with self._lock:
                self._latest[code] = (when, state)
        with self._lock:
            for code in set(self._latest) - codes:  # no page of it here any more
                del self._latest[code]
            for sid, p in self._pages.items():  # asked once: due until its run registers
                if (p.code in now and now[p.code] != p.drawn and sid not in self._flying
                        and sid not in self._queued):  # what it drew (a run interrupted
                    self._queued[sid] = None  # never does: asked again after IN_FLIGHT_S)
            late = [sid for sid, at in self._flying.items() if self._clock() - at > IN_FLIGHT_S]
            for sid in late:
                del self._flying[sid]
        return self._dispatch()

    def _dispatch(self) -> int:
        """Nudge the pages due, in order, while fewer than `IN_FLIGHT` runs are out."""
        sent = 0
        while True:
            with self._lock:
                if len(self._flying) >= self.in_flight or not self._queued:
                    break
                sid = next(iter(self._queued))
                del self._queued[sid]
                page = self._pages.get(sid)
                if page is None:
                    continue
                self._flying[sid] = self._clock()
            page.asked += 1  # asked twice in vain (its fragment gone, say): the whole page
            if self._nudge(sid, page.fragment_id if page.asked <= 2 else ""):
                sent += 1
            else:
                self.forget(sid)
        with self._lock:
            self.nudges += sent
        return sent

    def _run(self) -> None:
        while True:
            started = time.monotonic()
            try:
                self.look()
            except Exception:  # a bug here must not end the pushes of the process
                _log.exception("the class watch's look failed")
            time.sleep(max(0.0, self._look_s - (time.monotonic() - started)))


def server_session(session_id: str):  # noqa: ANN201 - a Streamlit AppSession, or None
    """The session `session_id` of this server, or None: gone, or not a server's (AppTest's
    runtime has sessions without a browser's client state)."""
    from streamlit.proto.ClientState_pb2 import ClientState
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    session = Runtime.instance().get_app_session(session_id)
    return session if isinstance(getattr(session, "_client_state", None), ClientState) else None


def alive(session_id: str) -> bool:
    """Whether this server still has the session `session_id`."""
    return server_session(session_id) is not None


def nudge(session_id: str, fragment_id: str) -> bool:
    """Ask Streamlit to run `fragment_id` of the session `session_id` again (False: no such
    session any more). Thread-safe: the request is made on the session's event loop."""
    session = server_session(session_id)
    if session is None:
        return False
    state = fragment_run(session._client_state, fragment_id)  # noqa: SLF001 - the browser's last
    try:
        session._event_loop.call_soon_threadsafe(session.request_rerun, state)  # noqa: SLF001
    except RuntimeError:  # its loop closed: the server is stopping
        return False
    return True


def when_handled(session_id: str, then: Callable[[bool], None]) -> bool:
    """`after_messages` for the session `session_id` (False: no such session)."""
    session = server_session(session_id)
    return session is not None and after_messages(session, then)


def after_messages(session, then: Callable[[bool], None]) -> bool:  # noqa: ANN001 - AppSession
    """Call `then(sent)` on the session's event loop once it has handled every message the
    run going on in this thread has produced so far; `sent`: whether they went on to the
    browser. False: its loop is closed (nothing is scheduled).

    Streamlit hands each message of a run to the event loop, which drops the messages of a
    ScriptRunner that is no longer the session's. When a rerun request (the browser's timer,
    say) reaches a runner that has just finished, before the loop has handled its end, a new
    runner replaces it, and the finished run's output never reaches the browser, though its
    changes to the session's state stay. A loaded server's loop lags behind its script
    threads, which widens that window: in class200, one student of 200 never saw the card.
    The callback is queued after the run's messages, so `sent` is the truth."""
    runner = getattr(session, "_scriptrunner", None)
    ours = getattr(runner, "_script_thread", None) is threading.current_thread()

    def handled() -> None:
        try:
            then(ours and session._scriptrunner is runner)  # noqa: SLF001
        except Exception:  # the loop serves every session: a bug here must not stop it
            _log.exception("a page's run could not be registered")

    try:
        session._event_loop.call_soon_threadsafe(handled)  # noqa: SLF001
    except RuntimeError:  # its loop closed: the server is stopping
        return False
    return True


def fragment_run(last, fragment_id: str):  # noqa: ANN001, ANN201 - ClientState protobufs
    """The run the browser's own timer would ask for `fragment_id` ("": the whole page): its
    last client state (query, page, widget values), narrowed to the fragment, with no button
    pressed."""
    from streamlit.proto.ClientState_pb2 import ClientState

    state = ClientState()
    state.CopyFrom(last)
    state.fragment_id = fragment_id  # "": the whole page, as the browser asks for a rerun
    state.is_auto_rerun = bool(fragment_id)
    keep = [w for w in state.widget_states.widgets if w.WhichOneof("value") not in TRIGGERS]
    del state.widget_states.widgets[:]
    state.widget_states.widgets.extend(keep)  # a button press is never replayed
    return state


def this_fragment() -> tuple[str, str] | None:
    """(session id, fragment id) of the fragment running now; None outside a session's
    fragment (AppTest has sessions, not always a runtime: its nudges find no session)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    ctx = get_script_run_ctx()
    fragment_id = ThreadState.get().fragment_id if ctx is not None else None
    return (ctx.session_id, fragment_id) if ctx is not None and fragment_id else None
