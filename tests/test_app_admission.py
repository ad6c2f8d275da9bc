"""The server's memory budget in the app (lens.admission through lens.runner.admit): settings
that could never fit are refused with what to lower and nothing computed; settings that must
wait for other work wait their turn with a notice, then the page is drawn; the sidebar says what
the settings cost before they are paid."""

from __future__ import annotations

import gc
import threading

import pytest

from encoder_core import cost
from lens import model_weights, resources
from lens.admission import MemoryBudget
from lens.fair_queue import Queue
from lens.i18n import translate
from lens.settings import Settings
from lens.steps import ALL_PAGES as ALL_PAGE_INFO
from tests.support.apptest_helpers import assert_clean, new_app, open_page

MB = 2**20


class Recording(MemoryBudget):
    """A budget that remembers each request's size and every notice it asked for."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.asked: list[int] = []
        self.told: list[Queue] = []
        self.settled: list[tuple[int, int]] = []  # (bytes settled, reserved after)

    def settle(self, n_bytes: int) -> None:
        super().settle(n_bytes)
        self.settled.append((n_bytes, self.reserved))

    def reserve(self, need, seconds=0.0, *, on_wait=None, poll_s=0.5):
        self.asked.append(need)

        def told(q: Queue) -> None:
            self.told.append(q)
            if on_wait is not None:
                on_wait(q)

        return super().reserve(need, seconds, on_wait=told, poll_s=0.05)


@pytest.fixture
def budget(monkeypatch):
    def install(limit: int) -> Recording:
        b = Recording(limit)
        monkeypatch.setattr(resources, "budget", lambda: b)
        return b
    return install


def fresh_seed(request) -> str:
    """A seed no other test used: its weights and trace are in no cache."""
    return str(10_000 + abs(hash(request.node.name)) % 50_000)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_settings_that_could_never_fit_are_refused_with_what_to_lower(budget, request, lang):
    b = budget(40 * MB)  # less than the default trace and its weights (~134 MB)
    seed = fresh_seed(request)
    at = new_app(lang=lang, seed=seed)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(b.asked) == 1 and b.asked[0] > 40 * MB
    errors = [e.value for e in at.main.error]
    assert len(errors) == 1, errors
    head = translate("too_heavy", lang, gb=b.asked[0] / 1e9, limit=40 * MB / 1e9, lower="")
    assert errors[0].startswith(head[:20]), errors[0]
    assert "n_layers 3" in errors[0] or translate("lower_none", lang) in errors[0]
    assert not list(at.main.image)  # nothing drawn
    assert not [k for k in resources.caches()["traces"]._items if k[1].seed == int(seed)]
    assert b.reserved == 0


def test_a_run_over_the_budget_waits_its_turn_with_a_notice_then_draws_its_page(budget, request):
    b = budget(400 * MB)
    hold, release = threading.Event(), threading.Event()

    def other_learner() -> None:  # takes the whole budget for a moment
        with b.reserve(400 * MB, 3.0):
            hold.set()
            release.wait(30)

    other = threading.Thread(target=other_learner, daemon=True)
    other.start()
    assert hold.wait(10)
    def release_once_waiting() -> None:  # the other work ends while this page waits
        for _ in range(3000):  # not a fixed delay: under load the run may reach it late
            if b.queue()[1] == 1:
                break
            threading.Event().wait(0.01)
        release.set()

    threading.Thread(target=release_once_waiting, daemon=True).start()
    at = new_app(seed=fresh_seed(request))
    at.run()
    other.join(10)
    assert_clean(at)
    assert b.told and b.told[0].ahead == 1 and b.told[0].seconds_ahead == 3.0
    assert b.granted == [0, 1]  # the other learner's, then this page's
    assert list(at.main.image)  # the page was drawn once its turn came
    assert not [i.value for i in at.main.info if "waiting" in i.value]  # the notice is gone


def test_a_light_run_is_not_held_behind_a_heavy_one_that_waits(budget, request):
    """First come first served kept this page waiting for the heavy run queued before it."""
    b = budget(700 * MB)
    hold, release = threading.Event(), threading.Event()

    def other_learner() -> None:  # takes most of the budget for a while
        with b.reserve(400 * MB, 3.0):
            hold.set()
            release.wait(30)

    def heavy_learner() -> None:  # waits for the other: 400 + 500 MB > 700 MB
        with b.reserve(500 * MB, 5.0):
            pass

    other = threading.Thread(target=other_learner, daemon=True)
    other.start()
    assert hold.wait(10)
    heavy = threading.Thread(target=heavy_learner, daemon=True)
    heavy.start()
    for _ in range(500):
        if b.queue() == (1, 1):
            break
        threading.Event().wait(0.01)
    assert b.queue() == (1, 1)  # the heavy run waits
    at = new_app(seed=fresh_seed(request))  # the defaults: ~0.13 GB, fits beside the other
    at.run()
    assert_clean(at)
    assert b.granted == [0, 2] and b.queue() == (1, 1)  # drawn while the heavy one still waits
    assert list(at.main.image)
    release.set()
    other.join(10)
    heavy.join(10)
    assert b.granted == [0, 2, 1] and b.reserved == 0


def test_what_is_held_costs_nothing_again(budget):
    b = budget(resources.MEMORY_BUDGET)
    at = new_app()
    at.run()  # the defaults: computed once (or warm)
    b.asked.clear()
    at.run()
    assert_clean(at)
    assert b.asked == []  # the trace and its weights are held: nothing to reserve


def test_what_a_run_computed_leaves_its_reservation_once_held(budget, request):
    """The page run's new weights and trace, once computed and held, are settled: out of its
    reservation (they count as held), so the run does not take their bytes twice."""
    b = budget(resources.MEMORY_BUDGET)
    seed = fresh_seed(request)
    at = new_app(seed=seed)
    at.run()
    assert_clean(at)
    cfg = Settings(seed=int(seed)).to_config()
    params = resources.held()["params"].bytes_of(model_weights.params_key(cfg))
    assert len(b.asked) == 1 and params > 0
    assert [n for n, _ in b.settled][:1] == [params]  # the weights, then the trace
    assert len(b.settled) == 2 and b.settled[1][0] > 0
    # what stayed reserved: the computation's temporaries and what the page derives
    assert b.settled[1][1] == b.asked[0] - params - b.settled[1][0] > 0
    assert b.reserved == 0


def test_compare_reserves_its_variants_before_it_computes(budget, request):
    b = budget(resources.MEMORY_BUDGET)
    seed = fresh_seed(request)
    at = new_app(seed=seed, image_size="64", patch_size="16", d_model="32", n_heads="2",
                 n_layers="2")
    at.run()
    open_page(at, "compare")
    assert_clean(at)
    s = Settings(image_size=64, patch_size=16, d_model=32, n_heads=2, n_layers=2, seed=int(seed))
    cfgs = {s.replace(use_pe=True).to_config(), s.replace(use_pe=False).to_config()}
    variants = 2 * sum(cost.trace_cost(c).bytes for c in cfgs)  # the image and its shuffle
    assert max(b.asked) >= variants  # one reservation for all of them, not one at a time


def test_the_sidebar_says_what_the_settings_cost():
    at = new_app()
    at.run()
    s = Settings()
    cfg = s.to_config()
    trace, weights = cost.trace_cost(cfg), cost.params_cost(cfg)
    wanted = translate("cost_estimate", "en", gb=(trace.bytes + weights.bytes) / 1e9,
                       s=trace.seconds + weights.seconds)
    assert wanted in [c.value for c in at.sidebar.caption]


@pytest.mark.parametrize("page", [p.id for p in ALL_PAGE_INFO if p.id != "vit"])
def test_nothing_holds_a_trace_once_its_run_ended_and_the_caches_dropped_it(page):
    """What a widget keeps until the session's next run (a format_func, a callback) must not
    reach the trace: at the heaviest settings it would hold 1.7 GB for as long as the tab is
    open, outside every budget. Settings where every chooser of heads and layers is drawn."""
    seed = 30_000 + [p.id for p in ALL_PAGE_INFO].index(page)
    at = new_app(seed=str(seed), image_size="64", patch_size="16", d_model="32", n_heads="16",
                 n_layers="8")
    at.run()
    open_page(at, page)
    assert_clean(at)
    assert any(k[1].seed == seed for k in resources.held()["traces"]._refs)  # it was computed
    resources.caches()["traces"].drop_oldest(2**40)
    resources.caches()["derived"].clear()
    gc.collect()
    alive = [k for k in list(resources.held()["traces"]._refs)
             if k[1].seed == seed and resources.held()["traces"].get(k) is not None]
    assert not alive, alive
