"""A real-shaped ViT (CLS + 14 × 14 patches, pre-norm, biases) on the attention pages: Q/K/V,
Scores & softmax, Multi-head, The stack and Compare walk it honestly — the CLS row labelled,
the query's row found after CLS, the CLS column left out of the maps on the image and its
share said, the biases in the arithmetic — and the note's encoder shows none of it.

The expected numbers come from `encode` run here on the checkpoint's own weights and the
app's default photo, never from the app's caches.
"""

from __future__ import annotations

import json
import re
import struct

import numpy as np
import pytest

from encoder_core import encode, load_checkpoint
from encoder_core.pipeline.patches import shuffle_patches
from encoder_core.views.analysis import (
    fixed_permutation,
    head_statistics,
    head_sum_gap,
    patch_block,
    permute_tokens,
    prefix_share,
    rollout_mean_over_queries,
    uniform_attention_reference,
)
from encoder_core.views.explain import affine_terms
from encoder_core.views.rollout import attention_rollout
from lens import explorer, images, model_weights, resources, widgets
from lens.models import CHECKPOINTS_ENV
from lens.sections import meaning
from tests.support.apptest_helpers import SMALL, assert_clean, new_app, page_path

VIT = {"weights": "vit_tiny_test"}
PAGES = {"qkv": page_path("qkv"), "scores": page_path("scores"),
         "multihead": page_path("multihead"), "stack": page_path("stack"),
         "compare": page_path("compare")}


# --- the small pure functions the pages use -------------------------------------------------
@pytest.fixture(scope="module")
def vit(vit_checkpoint):
    """(cfg, params, trace of the app's default photo) of the test checkpoint."""
    cfg, params, _ = load_checkpoint(vit_checkpoint)
    _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                    cfg.channels)
    return cfg, params, encode(image, cfg, params)


def test_the_patch_block_and_the_prefix_share_split_every_row(vit):
    cfg, _, tr = vit
    attn = tr.layers[1].attn  # [h, 197, 197]
    block = patch_block(attn, cfg.n_prefix)
    assert block.shape == (2, 196, 196)
    share = prefix_share(attn[:, 1:, :], cfg.n_prefix)  # [h, 196]
    assert np.allclose(block.sum(-1) + share, 1, atol=1e-5)
    assert np.array_equal(share, attn[:, 1:, 0].astype(np.float64))
    assert share.mean() > 1e-3  # CLS takes a share of every row: the maps must say so
    assert prefix_share(attn[:, 0], 0).tolist() == [0, 0]


def test_head_statistics_with_cls_average_the_patch_queries_over_the_patch_keys(vit):
    cfg, _, tr = vit
    G, P = cfg.grid_size, cfg.patch_size
    attns = [layer.attn for layer in tr.layers]
    distance, entropy = head_statistics(attns, G, P, cfg.n_prefix)
    centres = (np.stack(np.divmod(np.arange(G * G), G), -1) + 0.5) * P  # [N, 2] pixels
    dist = np.linalg.norm(centres[:, None] - centres[None], axis=-1)  # [N, N]
    a = attns[1][1].astype(np.float64)  # layer 2, head 2
    assert distance[1, 1] == pytest.approx((a[1:, 1:] * dist).sum(-1).mean(), rel=1e-5)
    assert entropy[1, 1] == pytest.approx(-(a[1:] * np.log(a[1:])).sum(-1).mean(), rel=1e-5)
    d0, e0 = uniform_attention_reference(G, P)
    d1, e1 = uniform_attention_reference(G, P, 1)
    assert e1 == pytest.approx(np.log(197)) and e0 == pytest.approx(np.log(196))
    assert d1 == pytest.approx(d0 * 196 / 197)  # 1/197 of the weight has no place


def test_the_rollout_mean_runs_over_the_patch_queries(vit):
    cfg, _, tr = vit
    R = attention_rollout([layer.attn for layer in tr.layers])  # [197, 197]
    m = rollout_mean_over_queries(R, cfg.n_prefix)
    assert m.shape == (197,) and m.sum() == pytest.approx(1)
    assert np.allclose(m, R[1:].mean(0))


def test_shuffled_patches_only_permute_the_patch_rows_of_a_vit_without_positions(vit):
    cfg, params, tr = vit
    perm = fixed_permutation(cfg.n_tokens)
    moved = shuffle_patches(tr.image, cfg.patch_size, perm)
    off = cfg.replace(use_pe=False)
    base, shuffled = encode(tr.image, off, params), encode(moved, off, params)
    rows = permute_tokens(base.output, perm, cfg.n_prefix)
    assert np.array_equal(rows[0], base.output[0]) and np.array_equal(rows[1:],
                                                                      base.output[1:][perm])
    assert np.abs(shuffled.output - rows).max() < 1e-4  # equivariant: CLS row unchanged
    with_pe = encode(moved, cfg, params)
    assert np.abs(with_pe.output - permute_tokens(tr.output, perm, 1)).max() > 0.1


def test_a_bias_is_one_more_product_and_the_head_sum_check_counts_it(vit):
    _, params, tr = vit
    terms = affine_terms(np.array([1.0, 2.0]), np.array([3.0, 4.0]), 0.5)
    assert terms.total == 11.5 and terms.products.tolist() == [3.0, 8.0, 0.5]
    layer, lp = tr.layers[0], params.layers[0]
    assert head_sum_gap(layer.heads, lp.W_O, layer.attn_out, lp.b_O) < 1e-4
    assert head_sum_gap(layer.heads, lp.W_O, layer.attn_out) > 1e-2  # b_O is not rounding


def test_the_explorer_carries_each_rows_cls_share_and_the_uniform_mark_of_197(vit):
    _, _, tr = vit
    attn = tr.layers[0].attn
    share = prefix_share(attn[:, 1:, :], 1)[None]  # [1, h, N]
    blob = explorer.payload(tr.image, 14, 5, {"hint": "", "aria": "", "patch": "", "weight": ""},
                            explorer.Maps(patch_block(attn, 1)[None], "t", "w", prefix=share,
                                          prefix_tip="CLS {s}", seq_len=197))
    (n,) = struct.unpack_from("<I", blob)
    head = json.loads(blob[4:4 + n])
    body = memoryview(blob)[4 + n:]
    sent = np.frombuffer(body, "<f2", share.size, head["prefix_at"]).reshape(share.shape)
    assert head["uniform"] == pytest.approx(1 / 197) and head["text"]["prefix"] == "CLS {s}"
    assert np.allclose(sent / head["scale"], share, rtol=2**-11)
    assert head["maps_at"] + 2 * 2 * 196 * 196 <= head["prefix_at"]


# --- the pages with the ViT loaded ---------------------------------------------------------
@pytest.fixture(scope="module")
def loaded(vit_checkpoint):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(CHECKPOINTS_ENV, vit_checkpoint)
        model_weights.clear_models()
        yield
    model_weights.clear_models()


@pytest.fixture
def spies(monkeypatch):
    """What the pages hand to the explorer (Maps) and to the pictures (kind, args, kwargs)."""
    sent, drawn = [], []
    real_payload, real_render = explorer.payload, widgets.render

    def spy_payload(image, grid, query, text, maps=None):
        sent.append(maps)
        return real_payload(image, grid, query, text, maps)

    def spy_render(draw, *args, **kwargs):
        drawn.append((draw.__name__, args, kwargs))
        return real_render(draw, *args, **kwargs)

    resources.caches()["payloads"].clear()
    monkeypatch.setattr(explorer, "payload", spy_payload)
    monkeypatch.setattr(widgets, "render", spy_render)
    return sent, drawn


def open_page(page: str, **query: str):
    at = new_app(**query)
    at.run()
    at.switch_page(PAGES[page]).run()
    assert_clean(at)
    return at


def texts(at) -> str:
    """Every text of the page's main area (not the sidebar: its model list names CLS)."""
    return " ".join(e.value for kind in ("markdown", "caption", "info", "success", "latex")
                    for e in at.main.get(kind))


def stored_check(at, field: str) -> tuple[float, float]:
    """(recomputed, stored) of the check line naming `field`."""
    for m in at.markdown:
        if f"`{field}`" in m.value:
            mine, stored = re.findall(r"\*\*([-+0-9.e]+)\*\*", m.value)
            return float(mine), float(stored)
    raise AssertionError(f"no check of {field}")


def shares(values) -> list[str]:
    return [f"{100 * v:.3g} %" for v in values]


@pytest.mark.usefixtures("loaded")
def test_qkv_reads_ln1_of_x_adds_the_biases_and_finds_the_query_after_cls(vit, spies):
    cfg, params, tr = vit
    _, drawn = spies
    at = open_page("qkv", **VIT)
    query = at.session_state["query"]
    r = query + 1
    words = texts(at)
    assert "Pre-norm (this model)" in words and r"\tilde{x} = \mathrm{LN}_1(x)" in words
    assert "+ b_Q" in words and f"query patch {query} is row {r}" in words.replace("The q", "q")
    mine, stored = stored_check(at, f"layers[0].q[0, {r}, 0]")
    assert stored == pytest.approx(float(tr.layers[0].q[0, r, 0]), rel=1e-6)
    assert mine == pytest.approx(stored, rel=1e-5, abs=1e-6)  # x̃·W_Q + b_Q, bias included
    x_tilde = [a for kind, a, kw in drawn if kind == "heatmap" and a[1].startswith("x̃")]
    assert np.array_equal(x_tilde[0][0], tr.layers[0].ln_1.out)
    heat = {a[1].split("  [")[0]: kw for kind, a, kw in drawn if kind == "heatmap"}
    q_kw = next(kw for name, kw in heat.items() if name.startswith("Q_1"))
    assert q_kw["prefix"] == ["CLS"] and q_kw["highlight_row"] == r


@pytest.mark.usefixtures("loaded")
def test_scores_label_cls_in_both_axes_and_put_the_patch_keys_on_the_grid(vit, spies):
    cfg, _, tr = vit
    _, drawn = spies
    at = open_page("scores", **VIT)
    query = at.session_state["query"]
    r = query + 1
    row = tr.layers[0].attn[0, r]  # [197]
    j = int(np.argmax(row))
    assert at.number_input(key="scores_key_j").value == j
    mine, stored = stored_check(at, f"attn[{r}, {j}]")
    assert stored == pytest.approx(float(row[j]), rel=1e-6)
    mats = [(a, kw) for kind, a, kw in drawn if kind == "heatmap"]
    for a, kw in mats[:2]:  # scores, attn: 197 × 197 with CLS ticked in rows and columns
        assert a[0].shape == (197, 197) and kw["prefix"] == ["CLS"] and kw["prefix_cols"]
        assert kw["highlight_row"] == r
    grid = [(a, kw) for kind, a, kw in drawn if kind == "attention_grid"][0]
    assert np.array_equal(grid[0][1], row[1:].reshape(1, 14, 14))
    assert grid[1]["query"] == query
    share = float(row[0])
    assert (f"it holds {100 * share:.3g} % of this row's weight" in texts(at)
            and f"other {100 * (1 - share):.3g} %" in texts(at))


@pytest.mark.usefixtures("loaded")
def test_multihead_maps_leave_cls_out_say_its_share_and_add_b_O(vit, spies):
    cfg, params, tr = vit
    sent, _ = spies
    at = open_page("multihead", **VIT)
    query = at.session_state["query"]
    r = query + 1
    layer = tr.layers[0]
    maps = [m for m in sent if m is not None][-1]
    assert np.array_equal(maps.attn, layer.attn[None, :, 1:, 1:])
    assert np.allclose(maps.prefix, layer.attn[None, :, 1:, 0])
    assert maps.seq_len == 197 and "{s}" in maps.prefix_tip and "CLS" in maps.title
    words = texts(at)
    assert all(f"head {n + 1}: {s}" in words
               for n, s in enumerate(shares(layer.attn[:, r, 0])))
    assert "b_O" in words and "check over all 197 × 128 entries" in words
    gap = float(re.search(r"\+ b_O\)\| = ([0-9.e+-]+)", words).group(1))
    assert gap < 1e-4
    mine, stored = stored_check(at, f"attn_out[{r}, 0]")
    assert stored == pytest.approx(float(layer.attn_out[r, 0]), rel=1e-5)
    assert mine == pytest.approx(stored, rel=1e-4, abs=1e-6)
    assert abs(params.layers[0].b_O[0]) > 1e-3  # the bias matters in that sum


@pytest.mark.usefixtures("loaded")
def test_the_stack_rolls_out_the_full_matrices_of_a_vit(vit, spies):
    cfg, _, tr = vit
    sent, drawn = spies
    at = open_page("stack", **VIT)
    query = at.session_state["query"]
    r = query + 1
    maps = [m for m in sent if m is not None][-1]
    assert maps.attn.shape == (2, 2, 196, 196) and maps.prefix.shape == (2, 2, 196)
    assert np.array_equal(maps.attn[1], tr.layers[1].attn[:, 1:, 1:])
    R = attention_rollout([layer.attn for layer in tr.layers])
    tables = [a for kind, a, kw in drawn if kind == "attention_table"]
    assert np.allclose(tables[0][1], R[r, 1:].reshape(1, 1, 14, 14))
    words = texts(at)
    assert f"holds {100 * R[r, 0]:.3g} % of row {r}" in words
    assert f"{100 * R[1:, 0].mean():.3g} % of the mean over the patch queries" in words
    cls = np.stack([layer.attn[:, r, 0] for layer in tr.layers])
    assert f"{100 * cls.min():.3g} % to {100 * cls.max():.3g} %" in words
    assert "output = LN(x_2)" in words  # (its head is no longer set aside: issue 26)
    out = [kw for kind, a, kw in drawn if kind == "heatmap" and a[1].startswith("output")][0]
    assert out["prefix"] == ["CLS"] and out["highlight_row"] == r
    # no "show the trained model on a shape" (nor the training steps) for a checkpoint
    assert meaning.SHOW_TRAINED not in [b.key for b in at.button]


@pytest.mark.usefixtures("loaded")
def test_the_stack_says_a_checkpoints_head_reads_its_output(vit):
    _, params, _ = vit
    at = open_page("stack", **VIT)
    words = texts(at)
    assert "no classification head" not in words
    assert f"classification head ({params.head.n_classes:,} classes) reads this output" in words


@pytest.mark.usefixtures("loaded")
def test_compare_ablates_a_vit_with_its_architecture_locked(vit, spies):
    cfg, params, tr = vit
    _, drawn = spies
    at = open_page("compare", **VIT)
    query = at.session_state["query"]
    r = query + 1
    grids = [a for kind, a, kw in drawn if kind == "attention_grid"]
    assert np.array_equal(grids[0][1], tr.layers[0].attn[:, r, 1:].reshape(2, 14, 14))
    words = texts(at)
    assert "learned" in words and "fixes the architecture" in words
    assert at.radio(key="cmp_what").options == ["score scaling"]
    off = float(re.search(r"Without PE: ([0-9.e+-]+)", words).group(1))
    on = float(re.search(r"With PE: ([0-9.e+-]+)", words).group(1))
    assert off < 1e-4 < 0.1 < on  # equivariance holds with CLS in front, and breaks with PE
    assert "CLS column left out" in words and "The weight on CLS is left out" in words


# --- the note's encoder shows none of it -----------------------------------------------------
VIT_WORDS = ("CLS", "Pre-norm", "b_Q", "b_O", "left out", "set aside", "LN(x_")


@pytest.mark.parametrize("page", list(PAGES))
def test_the_notes_encoder_shows_no_vit_parts(page, spies):
    _, drawn = spies
    at = open_page(page, **SMALL)
    words = texts(at) + " ".join(e.label for e in at.main.number_input)
    assert not [w for w in VIT_WORDS if w in words], page
    assert all(not kw.get("prefix") for kind, a, kw in drawn if kind == "heatmap")
    if page == "scores":
        assert at.number_input(key="scores_key_j").max == 15  # 16 patches, no CLS


@pytest.mark.usefixtures("loaded")
@pytest.mark.parametrize("page", list(PAGES))
def test_every_attention_page_walks_the_vit_in_chinese(page):
    at = open_page(page, lang="zh", **VIT)
    assert re.search(r"[\u4e00-\u9fff]", texts(at))


def test_two_prefix_tokens_cls_and_dist_are_both_named_and_left_out(tmp_path, monkeypatch):
    """A DeiT-like model (CLS, DIST, then the patches): the patch rows start at 2."""
    from tests.support.vit_dicts import SMALL_VIT, write_timm_checkpoint

    path = write_timm_checkpoint(tmp_path / "deit_test.safetensors", dist=True, **SMALL_VIT)
    monkeypatch.setenv(CHECKPOINTS_ENV, path)
    model_weights.clear_models()
    try:
        cfg, params, _ = load_checkpoint(path)
        _, image = images.decode_image(images.DEFAULT_IMAGE.read_bytes(), cfg.image_size,
                                        cfg.channels)
        attn = encode(image, cfg, params).layers[0].attn  # [h, 198, 198]
        for page in PAGES:
            at = open_page(page, weights="deit_test")
            query = at.session_state["query"]
            words = texts(at)
            if page == "multihead":
                shares_cls_dist = attn[:, query + 2, :2].sum(-1)
                assert all(f"head {n + 1}: {100 * s:.3g} %" in words
                           for n, s in enumerate(shares_cls_dist)), words
                assert "The weight on CLS, DIST is left out" in words
            if page == "stack":
                assert "CLS, DIST first (rows 0–1)" in words
    finally:
        model_weights.clear_models()
