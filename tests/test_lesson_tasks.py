"""The lesson's tasks: every answer against an independent computation (the naive float64
reference of tests/support/reference.py, or NumPy on its fields — never the task's own code),
for three configurations; where a task does not apply, it is not offered; the judging."""

from __future__ import annotations

import numpy as np
import pytest

from encoder_core import encode, init_params
from lens import compute
from lens.context import PageContext
from lens.lesson.tasks import Fixed, Task, judge
from lens.settings import Settings
from lens.steps import STEPS, TASKS, tasks_for
from tests.support.configs import make_test_image
from tests.support.reference import reference_encode

CONFIGS = {
    "defaults": {},
    "d256_h4_L2": {"d_model": 256, "n_heads": 4, "n_layers": 2},
    "rgb96_p8": {"channels": 3, "image_size": 96, "patch_size": 8, "d_model": 64,
                 "n_heads": 4, "n_layers": 2},
}
FIXED = Fixed(layer=1, head=2, query=5)  # a layer, head and query each config has


def context(page: str, **settings: object) -> PageContext:
    s, _ = Settings(**settings).normalised(compute.model_architectures(),
                                           compute.checkpoint_steps())
    cfg = s.to_config()
    image = make_test_image(cfg.image_size, cfg.channels)
    params = (init_params(cfg) if s.weights == "random"
              else compute.weights_for(s.weights, cfg, s.train_step)[0])
    trace = encode(image, cfg, params)
    return PageContext(id=page, settings=s, trace=trace, original=image, image_name="test",
                       image_key=f"test/{cfg.image_size}/{cfg.channels}")


@pytest.fixture(scope="module", params=list(CONFIGS))
def case(request):
    """(page context maker, the float64 reference of the same pass) for one configuration."""
    settings = CONFIGS[request.param]
    ctx = context("overview", **settings)
    ref = reference_encode(ctx.trace.image, ctx.cfg, ctx.trace.params)
    return settings, ctx, ref


def build(task_id: str, settings: dict, fixed: Fixed = FIXED) -> Task:
    ctx = context(TASKS[task_id].page, **settings)
    task = TASKS[task_id].build(ctx, fixed)
    assert task is not None and task.withholds, task_id
    return task


def cos_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit @ unit.T


def entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def test_the_shape_of_pe_is_patches_by_d_model(case):
    settings, ctx, _ = case
    cfg = ctx.cfg
    task = build("positional.shape", settings)
    assert task.answer == ((cfg.image_size // cfg.patch_size) ** 2, cfg.d_model)
    assert judge(task, task.answer).right
    assert not judge(task, (task.answer[0], task.answer[1] + 1)).right


def test_the_most_alike_position_is_the_referencess_most_alike(case):
    settings, ctx, ref = case
    task = build("positional.similar", settings)
    i = FIXED.query
    sim = cos_rows(ref.pe)[i]  # the float64 sinusoidal table
    sim[i] = -np.inf
    # i − 1 and i + 1 are exactly alike (the dot product of two rows depends on |i − j|): the
    # answer is one with the largest similarity
    assert sim[task.answer] == pytest.approx(sim.max(), abs=1e-9)
    assert task.answer in (i - 1, i + 1)
    assert judge(task, i - 1).right and judge(task, i + 1).right
    far = int(np.argmin(sim[np.isfinite(sim)])) + 1  # past i: the least alike
    assert not judge(task, far).right


def test_the_scores_shape_is_tokens_by_tokens(case):
    settings, ctx, ref = case
    task = build("scores.shape", settings)
    assert task.answer == ref.layers[0].scores.shape[1:]
    assert task.answer == (ctx.cfg.n_tokens, ctx.cfg.n_tokens)


def test_where_a_trained_head_looks_is_the_references_largest_weight(case):
    settings, ctx, _ = case
    task = build("scores.look", settings)
    trained = context("scores", **settings).trained_beside()
    assert task.source == "trained" and trained is not None
    ref = reference_encode(trained.image, trained.config, trained.params)
    tc = trained.config
    l, hd = min(FIXED.layer, tc.n_layers - 1), min(FIXED.head, tc.n_heads - 1)
    row = ref.layers[l].attn[hd, FIXED.query]
    assert row[task.answer] == pytest.approx(row.max(), abs=1e-6)
    np.testing.assert_allclose(task.scores, row, atol=1e-5)
    assert task.fixed == Fixed(l, hd, FIXED.query)
    worst = int(np.argmin(row))
    verdict = judge(task, worst)
    assert not verdict.right and verdict.detail["rank"] == tc.n_tokens - int(
        np.sum(row == row[worst])) + 1


def test_a_trained_models_own_trace_is_asked_when_the_page_shows_it():
    ctx = context("scores", weights="trained")
    assert ctx.weights == "trained"
    task = TASKS["scores.look"].build(ctx, Fixed(0, 0, 3))
    assert task is not None and task.source == "" and task.trace is ctx.trace


def test_dividing_by_root_d_model_is_flatter_by_the_references_entropy(case):
    settings, ctx, ref = case
    task = build("scores.divisor", settings)
    cfg = ctx.cfg
    layer = ref.layers[FIXED.layer]
    q, k = layer.q[FIXED.head], layer.k[FIXED.head]  # [N, d_k] float64
    raw = k @ q[FIXED.query]  # [N]: q_i · k_j

    def row_entropy(s: float) -> float:
        z = raw / s
        p = np.exp(z - z.max())
        return entropy(p / p.sum())

    e_dk, e_dm = row_entropy(np.sqrt(cfg.d_head)), row_entropy(np.sqrt(cfg.d_model))
    assert task.values["e_dk"] == pytest.approx(e_dk, abs=1e-4)
    assert task.values["e_d"] == pytest.approx(e_dm, abs=1e-4)
    assert task.answer == ("flatter" if e_dm > e_dk + 1e-6 else "sharper")
    assert task.answer == "flatter"  # a larger divisor: never sharper
    assert judge(task, "flatter").right and not judge(task, "sharper").right


def test_with_one_head_the_divisor_makes_no_difference():
    task = build("scores.divisor", {"d_model": 64, "n_heads": 1, "n_layers": 2},
                 Fixed(1, 0, 5))
    assert task.answer == "same"


def test_a_normalised_rows_mean_and_variance_are_the_references(case):
    settings, ctx, ref = case
    task = build("addnorm.moments", settings)
    x_hat = ref.layers[FIXED.layer].ln_1.normed[FIXED.query]
    assert task.answer == pytest.approx((x_hat.mean(), x_hat.var()), abs=1e-5)
    assert judge(task, (0.0, 1.0)).right  # within its stated tolerance of 0.01
    assert not judge(task, (0.0, 0.9)).right and not judge(task, (0.5, 1.0)).right


def test_the_share_within_one_is_the_references(case):
    settings, ctx, ref = case
    task = build("addnorm.within", settings)
    x_hat = ref.layers[FIXED.layer].ln_1.normed[FIXED.query]
    share = 100 * np.mean(np.abs(x_hat) <= 1)
    assert task.answer == pytest.approx(share, abs=0.1)
    assert judge(task, task.answer + 9.5).right and not judge(task, task.answer + 11).right


def test_every_task_withholds_something_and_has_a_known_kind():
    SPECS = [s for info in STEPS for s in info.tasks]
    assert len({s.id for s in SPECS}) == len(SPECS) == len(TASKS)
    for spec in SPECS:
        task = build(spec.id, {})
        assert task.kind == spec.kind and task.withholds
    kinds = {s.kind for s in SPECS}
    assert kinds == {"number", "patch", "choice", "estimate"}

    for info in STEPS:  # at least two on every step, for the note's encoder
        assert len(tasks_for(info.id, Settings().to_config())) >= 2, info.id


def test_a_task_that_does_not_apply_is_not_offered():
    off = Settings(use_pe=False).to_config()
    assert "positional.shape" not in [s.id for s in tasks_for("positional", off)]
    assert "positional.similar" in [s.id for s in tasks_for("positional", off)]
    note = Settings(scale="d_model").to_config()
    assert "scores.divisor" not in [s.id for s in tasks_for("scores", note)]
    assert [s.id for s in tasks_for("scores", Settings().to_config())] == [
        "scores.shape", "scores.look", "scores.divisor"]


def test_a_moved_selector_does_not_change_an_asked_task():
    """The task is built from what it was first asked with, not the page's selectors."""
    ctx = context("scores")
    first = TASKS["scores.divisor"].build(ctx, Fixed(1, 2, 5))
    ctx.settings = ctx.settings.replace(layer=3, head=0, query=100)
    again = TASKS["scores.divisor"].build(ctx, first.fixed)
    assert again.values == first.values and again.answer == first.answer


# --- the other steps ------------------------------------------------------------------------

def test_the_counting_tasks_are_the_references_shapes_and_sizes(case):
    settings, ctx, ref = case
    cfg = ctx.cfg
    S, P, C, d, h = cfg.image_size, cfg.patch_size, cfg.channels, cfg.d_model, cfg.n_heads
    N, D = (S // P) ** 2, P * P * C
    expected = {
        "overview.tokens": (N,), "overview.output": ref.output.shape,
        "patches.shape": ref.patches.shape, "embedding.shape": (D, d),
        "embedding.params": (D * d,), "qkv.d_head": (d // h,), "qkv.params": (d * d,),
        "multihead.concat": ref.layers[0].concat.shape, "ffn.hidden": (N, 4 * d),
        "stack.output": ref.layers[-1].out.shape,
    }
    assert ref.output.shape == (N, d) and ref.patches.shape == (N, D)
    for task_id, answer in expected.items():
        task = build(task_id, settings)
        assert task.answer == tuple(float(a) for a in answer), task_id
        assert judge(task, answer).right and not judge(task, (*answer[:-1], answer[-1] + 1)).right


def test_patch_numbers_run_row_by_row(case):
    settings, ctx, _ = case
    task = build("patches.number", settings)
    G = ctx.cfg.image_size // ctx.cfg.patch_size
    k = FIXED.query
    assert task.answer == k and divmod(k, G) == (task.values["r"], task.values["c"])
    assert judge(task, k).right
    assert not judge(task, k + 1).right and not judge(task, k + G).right  # its neighbours


def test_the_relu_share_is_the_references(case):
    settings, ctx, ref = case
    task = build("ffn.relu", settings)
    hidden = ref.layers[FIXED.layer].ffn_hidden
    assert task.answer == pytest.approx(100 * np.mean(hidden <= 0), abs=0.1)


def test_two_heads_and_the_last_layer_are_read_off_the_trained_reference(case):
    settings, _, _ = case
    trained = context("multihead", **settings).trained_beside()
    ref = reference_encode(trained.image, trained.config, trained.params)
    tc = trained.config
    same = build("multihead.same", settings)
    l, a = min(FIXED.layer, tc.n_layers - 1), min(FIXED.head, tc.n_heads - 1)
    b = (a + 1) % tc.n_heads
    ja = int(np.argmax(ref.layers[l].attn[a, FIXED.query]))
    jb = int(np.argmax(ref.layers[l].attn[b, FIXED.query]))
    assert same.answer == ("yes" if ja == jb else "no")
    assert (same.values["ja"], same.values["jb"]) == (ja, jb)
    last = build("stack.look", settings)
    row = ref.layers[-1].attn[a, FIXED.query]
    assert last.values["l"] == tc.n_layers
    assert row[last.answer] == pytest.approx(row.max(), abs=1e-6)


def test_a_vits_tasks_follow_its_architecture(with_checkpoint):
    ctx = context("overview", weights="vit_tiny_test")
    cfg = ctx.cfg
    assert cfg.n_prefix == 1 and cfg.activation == "gelu"
    assert TASKS["overview.tokens"].build(ctx, FIXED).answer == (float(cfg.n_tokens + 1),)
    assert TASKS["overview.tokens"].build(ctx, FIXED).text("q") == "overview_tokens_q_vit"
    params = ctx.trace.params
    assert TASKS["embedding.params"].build(ctx, FIXED).answer == (
        float(params.W_E.size + params.b_E.size),)
    assert TASKS["qkv.params"].build(ctx, FIXED).answer == (
        float(params.layers[0].W_Q.size + params.layers[0].b_Q.size),)
    assert [s.id for s in tasks_for("ffn", cfg)] == ["ffn.hidden"]  # GELU: no zeros to count
    look = TASKS["stack.look"].build(ctx, FIXED)
    assert look.source == "" and look.trace is ctx.trace  # its own (trained) attention
    assert look.fixed.head == min(FIXED.head, cfg.n_heads - 1)
    row = ctx.trace.layers[-1].attn[look.fixed.head, 1 + FIXED.query, 1:]  # CLS key left out
    assert look.answer == int(np.argmax(row))


def test_without_the_ffn_its_tasks_are_not_offered():
    assert tasks_for("ffn", Settings(use_ffn=False).to_config()) == []
