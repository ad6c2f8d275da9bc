"""The lesson's tasks: every answer against an independent computation (the naive float64
reference of tests/support/reference.py, or NumPy on its fields — never the task's own code),
for three configurations; every concept question's answer the same on each, and its
experiment's claim checked on the trace; the misconceptions a wrong answer names; where a task
does not apply, it is not offered; the judging."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from encoder_core import encode, init_params
from lens import model_weights
from lens.context import PageContext
from lens.lesson.tasks import Fixed, Task, judge, mistake, task_from_json, task_json, task_texts
from lens.services import Services
from lens.settings import Settings
from lens.steps import ALL_PAGES, STEPS, TASKS, tasks_for
from tests.support.configs import make_test_image
from tests.support.reference import reference_encode, reference_patchify

CONFIGS = {
    "defaults": {},
    "d256_h4_L2": {"d_model": 256, "n_heads": 4, "n_layers": 2},
    "rgb96_p8": {"channels": 3, "image_size": 96, "patch_size": 8, "d_model": 64,
                 "n_heads": 4, "n_layers": 2},
}
FIXED = Fixed(layer=1, head=2, query=5)  # a layer, head and query each config has


def context(page: str, **settings: object) -> PageContext:
    s, _ = Settings(**settings).normalised(model_weights.model_architectures(),
                                           model_weights.checkpoint_steps())
    cfg = s.to_config()
    image = make_test_image(cfg.image_size, cfg.channels)
    params = (init_params(cfg) if s.weights == "random"
              else model_weights.weights_for(s.weights, cfg, s.train_step)[0])
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


def with_head(task_id: str, settings: dict) -> dict:
    """`settings`, or the trained shapes model's where the task needs a head (vit.settles:
    random weights have none to read the states with)."""
    needs = TASKS[task_id].page == "vit"
    return {**settings, "weights": "trained"} if needs and "weights" not in settings else settings


def build(task_id: str, settings: dict, fixed: Fixed = FIXED) -> Task:
    settings = with_head(task_id, settings)
    ctx = context(TASKS[task_id].page, **settings)
    task = TASKS[task_id].ask(ctx, fixed)
    assert task is not None and task.withholds, task_id
    return task


def cos_rows(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    return unit @ unit.T


def entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def softmax64(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


# --- the counts and shapes: one a step at most ---------------------------------------------

def test_the_counting_tasks_are_the_references_shapes_and_sizes(case):
    settings, ctx, ref = case
    cfg = ctx.cfg
    S, P, C, d, h = cfg.image_size, cfg.patch_size, cfg.channels, cfg.d_model, cfg.n_heads
    N, D = (S // P) ** 2, P * P * C
    expected = {
        "overview.tokens": (N,), "patches.shape": ref.patches.shape, "embedding.shape": (D, d),
        "qkv.d_head": (d // h,), "scores.shape": ref.layers[0].scores.shape[1:],
        "multihead.concat": ref.layers[0].concat.shape, "ffn.hidden": (N, 4 * d),
    }
    assert ref.patches.shape == (N, D) and ref.layers[0].scores.shape[1:] == (N, N)
    for task_id, answer in expected.items():
        task = build(task_id, settings)
        assert task.answer == tuple(float(a) for a in answer), task_id
        assert judge(task, answer).right and not judge(task, (*answer[:-1], answer[-1] + 1)).right


def test_every_step_asks_at_most_one_shape_and_at_least_one_concept():
    cfg = Settings().to_config()
    for info in STEPS:
        specs = tasks_for(info.id, cfg)
        assert sum(s.kind == "number" for s in specs) <= 1, info.id
        assert any(s.kind in ("choice", "patch") for s in specs), info.id


# --- the concept questions: the same answer everywhere, the experiment on the trace -----------

CONCEPTS = [s.id for info in STEPS for s in info.tasks if s.kind == "choice"]


@pytest.mark.parametrize("task_id", CONCEPTS)
def test_a_concept_questions_answer_is_the_same_on_every_configuration(task_id):
    answers = {name: build(task_id, settings).answer for name, settings in CONFIGS.items()
               if TASKS[task_id].applies(context("overview", **settings).cfg)}
    assert len(answers) == len(CONFIGS) and len(set(answers.values())) == 1, answers
    task = build(task_id, {})
    assert task.answer in task.options and task.options.index(task.answer) > 0 or (
        task_id == "scores.divisor")  # the right one is not simply the first


def test_the_output_is_a_row_per_token_and_its_rows_differ(case):
    settings, ctx, ref = case
    task = build("overview.output", settings)
    ev = task.revealed()
    i, j = task.values["i"], task.values["j"]
    out = ref.output  # float64, the naive reference's
    own = out - out.mean(axis=0)  # each row's own part, beyond the mean row

    def cos(a, b):
        return a @ b / np.linalg.norm(a) / np.linalg.norm(b)

    assert ev["T"] == out.shape[0] and ev["d"] == out.shape[1]
    assert ev["cos_rows"] == pytest.approx(cos(out[i], out[j]), abs=1e-4)
    assert ev["cos"] == pytest.approx(cos(own[i], own[j]), abs=1e-4)
    # the patch compared is the one whose own part is least like i's ...
    assert j == int(np.argmin([cos(own[i], own[k]) for k in range(len(own))]))
    # ... and the number shown supports "the rows differ", on these random weights too (their
    # whole rows are alike: cosine ~0.98, which would say the opposite)
    assert ev["cos"] < 0.9
    assert ev["gap"] == pytest.approx(np.abs(out[i] - out[j]).max(), rel=1e-4)


def test_moving_the_image_by_a_patch_renumbers_the_same_rows(case):
    settings, ctx, ref = case
    task = build("patches.shift", settings)
    ev = task.revealed()
    P, G = ctx.cfg.patch_size, ctx.cfg.grid_size
    image = np.asarray(ctx.trace.image, dtype=np.float64)
    moved = reference_patchify(np.roll(image, -P, axis=1), P)
    for k in range(G * G):  # new patch (r, c) is old patch (r, c + 1 mod G)
        r, c = divmod(k, G)
        np.testing.assert_allclose(moved[k], ref.patches[r * G + (c + 1) % G], atol=1e-6)
    assert ev["gap"] < 1e-6
    half = reference_patchify(np.roll(image, -(P // 2), axis=1), P)
    kept = sum(any(np.allclose(row, old, atol=1e-6) for old in ref.patches) for row in half)
    assert ev["kept_half"] == kept < G * G


def test_equal_pixels_give_equal_embeddings_until_the_positions_are_added(case):
    settings, ctx, ref = case
    task = build("embedding.twins", settings)
    ev = task.revealed()
    i, j = task.values["i"], task.values["j"]
    assert i != j and ev["after_w"] == 0.0  # one W_E, the same row, bit for bit
    assert ev["after_pe"] == pytest.approx(np.abs(ref.pe[i] - ref.pe[j]).max(), abs=1e-5)
    assert ev["after_pe"] > 0.1


def test_without_positions_a_shuffle_only_moves_the_output_rows(case):
    settings, ctx, _ = case
    task = build("positional.shuffle", settings)
    ev = task.revealed()
    assert ev["off"] < 1e-4, ev  # permutation-equivariant: float32 rounding only
    assert ev["on"] > 0.1 and ev["on"] > 1000 * ev["off"], ev


def test_w_q_takes_any_number_of_tokens(case):
    settings, ctx, ref = case
    task = build("qkv.slip", settings)
    ev = task.revealed()
    d = ctx.cfg.d_model
    assert (ev["rows"], ev["cols"]) == (d, d)  # not the sequence length
    assert ev["gap_half"] < 1e-4 and ev["gap_twice"] < 1e-4
    q_ref = ref.layers[0].q.transpose(1, 0, 2).reshape(ref.output.shape[0], d)  # [T, d]
    x = np.asarray(ctx.trace.x0, dtype=np.float64)[:ev["half"]]
    np.testing.assert_allclose(x @ np.asarray(ctx.trace.params.layers[0].W_Q, np.float64),
                               q_ref[:ev["half"]], atol=1e-3)


def test_adding_a_number_to_a_row_of_scores_leaves_its_weights(case):
    settings, ctx, ref = case
    task = build("scores.shift", settings)
    ev = task.revealed()
    row = ref.layers[FIXED.layer].scores[FIXED.head, FIXED.query]
    assert ev["gap"] < 1e-6
    np.testing.assert_allclose(softmax64(row + 5), softmax64(row), atol=1e-12)
    one = row.copy()
    one[ev["j"]] += 5
    assert ev["pj_one"] == pytest.approx(softmax64(one)[ev["j"]], abs=1e-4)
    assert ev["pj_one"] > ev["pj"]


def test_dividing_by_root_d_model_is_flatter_by_the_references_entropy(case):
    settings, ctx, ref = case
    task = build("scores.divisor", settings)
    cfg = ctx.cfg
    layer = ref.layers[FIXED.layer]
    q, k = layer.q[FIXED.head], layer.k[FIXED.head]  # [N, d_k] float64

    def row_entropy(r: int, s: float) -> float:
        return entropy(softmax64(k @ q[r] / s))

    rows = range(len(q))
    e_dk = np.array([row_entropy(r, np.sqrt(cfg.d_head)) for r in rows])
    e_dm = np.array([row_entropy(r, np.sqrt(cfg.d_model)) for r in rows])
    r = task.values["i"]
    # the row asked about is the one where the divisor matters most (on random weights most
    # rows are near even whatever the divisor: the claim shows best there)
    assert r == int(np.argmax(np.abs(e_dm - e_dk)))
    assert task.values["e_dk"] == pytest.approx(e_dk[r], abs=1e-4)
    assert task.values["e_d"] == pytest.approx(e_dm[r], abs=1e-4)
    assert task.answer == "flatter" and np.all(e_dm > e_dk)  # a larger divisor: never sharper
    assert task.values["p_d"] < task.values["p_dk"]  # its largest weight falls
    assert judge(task, "flatter").right and not judge(task, "sharper").right


def test_with_one_head_the_divisor_makes_no_difference():
    task = build("scores.divisor", {"d_model": 64, "n_heads": 1, "n_layers": 2},
                 Fixed(1, 0, 5))
    assert task.answer == "same"
    assert mistake(task, "flatter") == "flatter"


def test_a_head_switched_off_changes_every_column_of_attn_out(case):
    settings, ctx, ref = case
    task = build("multihead.mix", settings)
    ev = task.revealed()
    cfg, layer = ctx.cfg, ref.layers[FIXED.layer]
    hd = task.fixed.head
    off = layer.concat.copy()
    off[:, hd * cfg.d_head:(hd + 1) * cfg.d_head] = 0
    W_O = np.asarray(ctx.trace.params.layers[FIXED.layer].W_O, np.float64)
    change = np.abs(layer.concat @ W_O - off @ W_O).max(axis=0)
    assert ev["changed"] == int(np.sum(change > 1e-6)) == cfg.d_model
    assert ev["concat_changed"] == cfg.d_head


def test_layer_norm_forgets_a_rows_scale(case):
    settings, ctx, ref = case
    task = build("addnorm.scale", settings)
    ev = task.revealed()
    lp = ctx.trace.params.layers[FIXED.layer]
    x = ref.layers[FIXED.layer].resid_1[FIXED.query]

    def ln(v: np.ndarray) -> np.ndarray:
        return (v - v.mean()) / np.sqrt(v.var() + ctx.cfg.ln_eps) * lp.gamma_1 + lp.beta_1

    assert ev["gap"] < 1e-4 and np.abs(ln(10 * x) - ln(x)).max() < 1e-4
    assert ev["sigma10"] == pytest.approx(10 * ev["sigma"], rel=1e-5)


def test_the_share_within_one_is_the_references(case):
    settings, ctx, ref = case
    task = build("addnorm.within", settings)
    x_hat = ref.layers[FIXED.layer].ln_1.normed[FIXED.query]
    share = 100 * np.mean(np.abs(x_hat) <= 1)
    assert task.answer == pytest.approx(share, abs=0.1)
    assert judge(task, task.answer + 9.5).right and not judge(task, task.answer + 11).right


def test_the_ffn_leaves_every_other_row_alone(case):
    settings, ctx, _ = case
    task = build("ffn.mix", settings)
    ev = task.revealed()
    assert ev["gap_i"] == 0.0 and ev["others"] == 0  # row i depends on row i alone
    assert ev["gap_j"] > 0.01


def test_the_relu_share_is_the_references(case):
    settings, ctx, ref = case
    task = build("ffn.relu", settings)
    hidden = ref.layers[FIXED.layer].ffn_hidden
    assert task.answer == pytest.approx(100 * np.mean(hidden <= 0), abs=0.1)


def test_after_the_stack_a_far_patch_reaches_a_row_less_than_its_own(case):
    settings, ctx, _ = case
    task = build("stack.reach", settings)
    ev = task.revealed()
    G = ctx.cfg.grid_size
    i = task.values["i"]
    for q in (i, 0, G * G - 1, G * G // 2 + G // 2):  # a corner, the centre: far from each
        far = TASKS["stack.reach"].ask(ctx, Fixed(query=q)).values["j"]
        assert abs(q // G - far // G) + abs(q % G - far % G) >= G - 1, (q, far)
    assert 1e-4 < ev["far"] < ev["own"], ev


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
    G = ctx.cfg.grid_size
    assert mistake(task, i + G) == "below" and mistake(task, far) is None


# --- the misconceptions ---------------------------------------------------------------------

def test_each_misconception_is_recognised(case):
    settings, ctx, _ = case
    cfg = ctx.cfg
    T, d, h, dk, D = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.patch_dim
    wrong = {
        ("qkv.d_head", (d * h,)): "times", ("qkv.d_head", (d,)): "whole",
        ("multihead.concat", (T, h * d)): "times", ("multihead.concat", (T, dk)): "one",
        ("embedding.shape", (d, D)): "transposed", ("embedding.shape", (T, d)): "output",
        ("patches.shape", (D, T)): "transposed", ("scores.shape", (T, dk)): "query_shape",
        ("ffn.hidden", (T, d)): "width", ("overview.tokens", (cfg.grid_size,)): "side",
        ("addnorm.within", 100.0): "all", ("stack.reach", "no"): "no",
        ("ffn.mix", "yes"): "yes", ("positional.shuffle", "changes"): "changes",
    }
    for (task_id, given), name in wrong.items():
        task = build(task_id, settings)
        if task.kind == "number" and tuple(map(float, given)) == task.answer:
            continue  # d_model = P·P·C: W_E on its side is W_E
        assert not judge(task, given).right and mistake(task, given) == name, (task_id, given)
        assert mistake(task, task.answer) is None  # right: no misconception
    odd = build("qkv.d_head", settings)
    assert mistake(odd, (d + 3,)) is None  # wrong, but no known misconception


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_of_every_task_is_there_with_its_values(case, lang):
    """The question, the reason and every misconception's message, filled with the task's
    values (the experiment's included): a missing key or placeholder fails here."""
    settings, ctx, _ = case
    for info in STEPS:
        for spec in tasks_for(info.id, ctx.cfg):
            task = build(spec.id, settings)
            words, values = task_texts(lang, task), task.revealed()
            assert words(task.text("q"), **task.values) and words(task.text("why"), **values)
            assert words(f"{task.text_id}_concept")
            names = [n for n, _ in task.mistakes] + [o for o in task.options
                                                    if o != task.answer]
            for name in names:
                assert words(f"{task.text_id}_if_{name}", **values), (task.id, name)


def test_the_experiment_runs_only_when_revealed():
    """Building a task (asking it) computes no experiment: its numbers do not exist before the
    answer."""
    calls = []

    class Recording(Services):  # the services the context hands over, recording what is derived
        def derived(self, key, compute):  # noqa: ANN001, ANN202
            calls.append(key[-1])
            return super().derived(key, compute)

    ctx = replace(context("positional"), services=Recording())
    task = TASKS["positional.shuffle"].ask(ctx, FIXED)
    assert task.evidence is not None and not [c for c in calls if "shuffle" in c]
    task.revealed()
    assert [c for c in calls if "shuffle" in c]
    assert task.light().evidence is None and task.light().trace is None


# --- where tasks apply, what they keep ------------------------------------------------------

def test_every_task_withholds_something_and_has_a_known_kind():
    SPECS = [s for info in ALL_PAGES for s in info.tasks or ()]  # a step's, /learn's
    assert len({s.id for s in SPECS}) == len(SPECS) == len(TASKS)
    for spec in SPECS:
        task = build(spec.id, {})
        assert task.kind == spec.kind and task.withholds
    kinds = {s.kind for s in SPECS}
    assert kinds == {"number", "patch", "choice", "estimate"}


def test_a_task_that_does_not_apply_is_not_offered():
    off = Settings(use_pe=False).to_config()
    assert "embedding.twins" not in [s.id for s in tasks_for("embedding", off)]
    assert "positional.shuffle" in [s.id for s in tasks_for("positional", off)]
    note = Settings(scale="d_model").to_config()
    assert "scores.divisor" not in [s.id for s in tasks_for("scores", note)]
    assert [s.id for s in tasks_for("scores", Settings().to_config())] == [
        "scores.shape", "scores.shift", "scores.divisor"]
    one = Settings(n_heads=1).to_config()
    assert "multihead.mix" not in [s.id for s in tasks_for("multihead", one)]


def test_a_moved_selector_does_not_change_an_asked_task():
    """The task is built from what it was first asked with, not the page's selectors."""
    ctx = context("scores")
    first = TASKS["scores.divisor"].ask(ctx, Fixed(1, 2, 5))
    ctx = replace(ctx, settings=ctx.settings.replace(layer=3, head=0, query=100))
    again = TASKS["scores.divisor"].ask(ctx, first.fixed)
    assert again.values == first.values and again.answer == first.answer


def test_a_vits_tasks_follow_its_architecture(with_checkpoint):
    ctx = context("overview", weights="vit_tiny_test")
    cfg = ctx.cfg
    assert cfg.n_prefix == 1 and cfg.activation == "gelu"
    tokens = TASKS["overview.tokens"].ask(ctx, FIXED)
    assert tokens.answer == (float(cfg.n_tokens + 1),)
    assert tokens.text("q") == "overview_tokens_q_vit"
    assert mistake(tokens, (float(cfg.n_tokens),)) == "prefix"  # [CLS] forgotten
    assert [s.id for s in tasks_for("ffn", cfg)] == ["ffn.hidden", "ffn.mix"]  # GELU: no zeros
    for spec in (s for info in STEPS for s in tasks_for(info.id, cfg) if s.kind == "choice"):
        task = spec.ask(context(spec.page, weights="vit_tiny_test"), FIXED)
        assert task.answer == build(spec.id, {}).answer, spec.id  # the concept holds
    shuffle = TASKS["positional.shuffle"].ask(context("positional", weights="vit_tiny_test"),
                                                FIXED).revealed()
    assert shuffle["off"] < 1e-4 < 0.1 < shuffle["on"]
    reach = TASKS["stack.reach"].ask(context("stack", weights="vit_tiny_test"),
                                       FIXED).revealed()
    assert 0 < reach["far"] < reach["own"]


def test_without_the_ffn_its_tasks_are_not_offered():
    assert tasks_for("ffn", Settings(use_ffn=False).to_config()) == []


def test_every_task_as_asked_has_its_specs_id_kind_options_and_page(case):
    """Declared once: a builder computes the question, its Spec (`Spec.ask`) names it."""
    settings, _, _ = case
    for task_id, spec in TASKS.items():
        task = build(task_id, settings)
        assert (task.id, task.kind, task.options, task.page) == (
            spec.id, spec.kind, spec.options, spec.page), task_id
        assert task.kind != "choice" or task.answer in task.options, task_id


# A task as a class's store kept it before a task held its page (no "page" in it)
OLD_JSON = ('{"id": "scores.shift", "kind": "choice", "answer": "unchanged", "values": {"i": 5, '
            '"l": 2, "hd": 3, "add": 5.0}, "withholds": ["scores_shift"], "fixed": {"layer": 1, '
            '"head": 2, "query": 5}, "tolerance": 0.0, "decimals": 0, "options": ["changes", '
            '"unchanged", "flatter"], "scores": [], "exclude": null, "grid": 0, "source": "", '
            '"variant": "", "true_map": true, "mistakes": []}')


def test_a_task_stored_before_it_held_its_page_reads_back_with_the_registrys():
    old = task_from_json(OLD_JSON, TASKS["scores.shift"].page)  # as `teacher.asked_tasks`
    assert (old.id, old.kind, old.page, old.answer) == ("scores.shift", "choice", "scores",
                                                          "unchanged")
    assert old.options == ("changes", "unchanged", "flatter") and old.fixed == Fixed(1, 2, 5)
    assert judge(old, "unchanged").right and not judge(old, "flatter").right
    assert task_from_json(task_json(old)) == old  # written again: with its page
    with pytest.raises(ValueError, match="page"):
        task_from_json(OLD_JSON)


def test_every_task_as_asked_comes_back_from_its_json_the_same(case):
    """What a class's store keeps of a question (`task_json`) reads back as the same task,
    light, and judges its answers alike: the teacher's results after a reload."""
    settings, _, _ = case
    for task_id in TASKS:
        task = build(task_id, settings)
        back = task_from_json(task_json(task))
        assert back == task.light(), task_id
        assert judge(back, task.answer).right, task_id
        for _, given in task.mistakes:
            if task.kind != "estimate":
                assert judge(back, given).right == judge(task, given).right, (task_id, given)


# --- What a ViT looks at: where the class settles (issue 53, item 4) ----------------------------

def test_the_depth_where_the_class_settles_is_read_off_every_layer_by_hand(with_checkpoint):
    """On the suite's test ViT (pre-norm, [CLS], a final LayerNorm, a linear head): the head
    applied by hand to the stream entering layer 1 and leaving every layer — the final norm
    written out in float64, then [CLS]'s row through W_head — gives, as the first depth from
    which the final top-1 stays the top-1, the task's answer; random weights (no head) are
    not asked it."""
    settings = {"weights": "vit_tiny_test"}
    ctx = context("vit", **settings)
    tr, cfg = ctx.trace, ctx.cfg
    head, params = tr.params.head, tr.params
    assert head is not None and head.pool == "token" and cfg.final_norm
    assert head.fc_norm_gamma is None and head.W_pre is None  # the plain path, written here

    def read(x: np.ndarray) -> np.ndarray:
        row = x[0].astype(np.float64)  # [CLS]
        normed = (row - row.mean()) / np.sqrt(row.var() + cfg.ln_eps)
        return (normed * params.norm_gamma + params.norm_beta) @ head.W_head + head.b_head

    states = [tr.x0] + [layer.out for layer in tr.layers]  # [L+1] × [S, d]
    top = np.array([int(np.argmax(read(x))) for x in states])
    depth = len(top) - 1
    while depth > 0 and top[depth - 1] == top[-1]:
        depth -= 1
    task = build("vit.settles", settings)
    assert task.answer == (float(depth),)
    assert judge(task, (float(depth),)).right
    if depth < cfg.n_layers:
        assert mistake(task, (float(cfg.n_layers),)) == "last"
    assert not TASKS["vit.settles"].possible(context("stack"))  # random weights: no head
