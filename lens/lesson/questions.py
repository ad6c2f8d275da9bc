"""What each step of the walk asks in lesson mode: each task's builder — its question's values
and its right answer computed from the live trace (`encoder_core.views.predictions`), never
written down — and each step's tuple of `Spec`s (`SCORES_TASKS`, …) in the order its cards
ask them; the registry (`lens.steps`) names each step's tuple in its entry. What a task is and
how it is judged is `lens.lesson.tasks`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, EncoderTrace, patch_rows
from encoder_core.views.analysis import (
    relu_zero_share,
    row_moments,
    scaling_demo,
)
from encoder_core.views.predictions import (
    compare_sharpness,
    most_similar_other,
    share_within,
    top_patch,
)
from encoder_core.views.vit_views import position_cosines

if TYPE_CHECKING:
    from lens.context import PageContext

from .tasks import Fixed, Spec, Task, shape_task


def divides_by_d_k(cfg: EncoderConfig) -> bool:
    """The question compares √d_model with the page's √d_k: asked when the page divides so."""
    return cfg.scale == "d_k"


def adds_positions(cfg: EncoderConfig) -> bool:
    """x0 = X + PE: not with the positional encoding switched off (then x0 = X)."""
    return cfg.use_pe


# --- step 4 · positional encoding -----------------------------------------------------------

POSITIONAL_SHAPE = ("pe_formula", "pe_matrix", "pe_curves", "pe_sum")
POSITIONAL_SIMILAR = ("pe_similarity", "pe_sum")


def positional_shape(ctx: PageContext, fixed: Fixed) -> Task:
    """PE is added to X entry by entry: [N × d_model] (a ViT's pos: [T × d], T = N + prefix)."""
    cfg, tr = ctx.cfg, ctx.trace
    learned = cfg.position == "learned"
    return shape_task("positional.shape", tr.pos if learned else tr.pe,
                      {"N": cfg.n_tokens, "S": cfg.image_size, "P": cfg.patch_size,
                       "d": cfg.d_model, "G": cfg.grid_size, "T": cfg.seq_len,
                       "k": cfg.n_prefix},
                      POSITIONAL_SHAPE, fixed, variant="_vit" if learned else "")


def positional_similar(ctx: PageContext, fixed: Fixed) -> Task:
    """The patch whose position vector is most like patch i's (cosine, i itself left out)."""
    cfg, tr = ctx.cfg, ctx.trace
    i = min(fixed.query, cfg.n_tokens - 1)
    sim = ctx.derived("positions/cos", lambda: position_cosines(tr))  # shared with the page
    row = sim[i]
    best = most_similar_other(row, i)
    G = cfg.grid_size
    return Task("positional.similar", "patch", best,
                {"i": i, "r": i // G, "c": i % G, "G": G, "best": best, "br": best // G,
                 "bc": best % G, "cos": float(row[best])},
                POSITIONAL_SIMILAR, Fixed(query=i), scores=tuple(map(float, row)), exclude=i,
                grid=G, trace=tr, variant="_vit" if cfg.position == "learned" else "")


# --- step 6 · scores and softmax ------------------------------------------------------------

SCORES_SHAPE = ("scores_formulas", "matrices", "row", "arith")
SCORES_LOOK = ("matrices", "grid", "row", "arith", "scaling", "scaling_trained")
SCORES_DIVISOR = ("scaling", "scaling_trained")
SHARPNESS = ("sharper", "flatter", "same")


def scores_shape(ctx: PageContext, fixed: Fixed) -> Task:
    """scores_h = Q_h · K_hᵀ: [T × d_k] · [d_k × T] = [T × T]."""
    cfg = ctx.cfg
    return shape_task("scores.shape", ctx.trace.layers[0].scores,  # [h, T, T]
                      {"T": cfg.seq_len, "dk": cfg.d_head, "h": cfg.n_heads,
                       "d": cfg.d_model}, SCORES_SHAPE, fixed)


def attention_model(ctx: PageContext) -> tuple[EncoderTrace, str] | None:
    """The trace a where-will-it-look task runs on: the page's own when its weights are trained
    (the shapes model, a checkpoint), else the model trained on shapes (random heads look
    almost evenly everywhere: any guess would be as good); None without a trained model."""
    if ctx.weights != "random":
        return ctx.trace, ""
    trained = ctx.trained_beside()
    return (trained, "trained") if trained is not None else None


def has_trained_attention(ctx: PageContext) -> bool:
    """Whether a where-will-it-look task can be asked: trained weights, or a trained model to
    ask it on."""
    return ctx.weights != "random" or ctx.has_trained_model


def scores_look(ctx: PageContext, fixed: Fixed) -> Task | None:
    """From patch i, the patch head h of layer l gives its largest weight (patch keys only)."""
    return looks_most(ctx, fixed, "scores.look", SCORES_LOOK)


def looks_most(ctx: PageContext, fixed: Fixed, task_id: str, withholds: tuple[str, ...],
               last_layer: bool = False) -> Task | None:
    """Where a head looks most from patch i: on the trace of `attention_model`, in layer
    `fixed.layer` (or the last layer)."""
    model = attention_model(ctx)
    if model is None:
        return None
    tr, source = model
    cfg = tr.config
    l = cfg.n_layers - 1 if last_layer else min(fixed.layer, cfg.n_layers - 1)
    hd = min(fixed.head, cfg.n_heads - 1)
    i = min(fixed.query, cfg.n_tokens - 1)
    row = patch_rows(tr.layers[l].attn[hd, cfg.n_prefix + i], cfg)  # [N]: patch keys
    best = top_patch(row)
    G = cfg.grid_size
    return Task(task_id, "patch", best,
                {"i": i, "r": i // G, "c": i % G, "l": l + 1, "hd": hd + 1, "G": G,
                 "best": best, "br": best // G, "bc": best % G, "w": float(row[best]),
                 "uniform": 1 / cfg.seq_len, "N": cfg.n_tokens, "L": cfg.n_layers},
                withholds, Fixed(l, hd, i), scores=tuple(map(float, row)), grid=G, trace=tr,
                source=source)


def scores_divisor(ctx: PageContext, fixed: Fixed) -> Task:
    """Dividing by √d_model instead of √d_k: row i of head h sharper, flatter or the same."""
    cfg = ctx.cfg
    l, hd = min(fixed.layer, cfg.n_layers - 1), min(fixed.head, cfg.n_heads - 1)
    r = ctx.row(min(fixed.query, cfg.n_tokens - 1))
    layer = ctx.trace.layers[l]
    cases = ctx.derived(f"scaling/{l}/{hd}",  # the page's own scaling demo, shared
                        lambda: scaling_demo(layer.q[hd:hd + 1], layer.k[hd:hd + 1], cfg.d_model))
    by_name = {c.name: float(c.entropy[0, r]) for c in cases}
    outcome = compare_sharpness(by_name["d_k"], by_name["d_model"])
    return Task("scores.divisor", "choice", outcome,
                {"i": r, "l": l + 1, "hd": hd + 1, "dk": cfg.d_head, "d": cfg.d_model,
                 "sdk": cfg.d_head ** 0.5, "sd": cfg.d_model ** 0.5, "e_dk": by_name["d_k"],
                 "e_d": by_name["d_model"], "lnT": float(np.log(cfg.seq_len))},
                SCORES_DIVISOR, Fixed(l, hd, r - cfg.n_prefix),
                options=SHARPNESS)


# --- step 8 · Add & Norm --------------------------------------------------------------------

ADDNORM = ("normalise", "by_hand")


def _normed_row(ctx: PageContext, fixed: Fixed) -> tuple[np.ndarray, int, int]:
    cfg = ctx.cfg
    l = min(fixed.layer, cfg.n_layers - 1)
    r = ctx.row(min(fixed.query, cfg.n_tokens - 1))
    return ctx.trace.layers[l].ln_1.normed[r], l, r


def addnorm_moments(ctx: PageContext, fixed: Fixed) -> Task:
    """The normalised row x̂_i: its mean (0) and variance (σ²/(σ² + ε) ≈ 1)."""
    x_hat, l, r = _normed_row(ctx, fixed)
    mean, var = row_moments(x_hat[None, :])
    return Task("addnorm.moments", "number", (float(mean[0]), float(var[0])),
                {"i": r, "l": l + 1, "d": ctx.cfg.d_model, "eps": ctx.cfg.ln_eps,
                 "m": float(mean[0]), "v": float(var[0])},
                ADDNORM, Fixed(layer=l, query=r - ctx.cfg.n_prefix), tolerance=0.01,
                decimals=2)


def addnorm_within(ctx: PageContext, fixed: Fixed) -> Task:
    """The share of x̂_i's d values between −1 and 1, in % (a normal distribution: 68 %)."""
    x_hat, l, r = _normed_row(ctx, fixed)
    share = 100 * share_within(x_hat, 1.0)
    return Task("addnorm.within", "estimate", round(share, 1),
                {"i": r, "l": l + 1, "d": ctx.cfg.d_model, "share": share,
                 "n": int(round(share * ctx.cfg.d_model / 100))},
                ADDNORM, Fixed(layer=l, query=r - ctx.cfg.n_prefix), tolerance=10.0)


# --- the other steps: their tasks withhold the whole page until answered -------------------

PAGE = ("page",)  # the page below the cards (`lens.runner.run_page`)


def prefix_variant(cfg: EncoderConfig) -> str:
    return "_vit" if cfg.n_prefix else ""


def overview_tokens(ctx: PageContext, fixed: Fixed) -> Task:
    """How many tokens the encoder reads: (S/P)² patches (and a ViT's prefix tokens)."""
    cfg = ctx.cfg
    return Task("overview.tokens", "number", (float(ctx.trace.x0.shape[0]),),
                {"S": cfg.image_size, "P": cfg.patch_size, "G": cfg.grid_size,
                 "N": cfg.n_tokens, "T": cfg.seq_len, "k": cfg.n_prefix},
                PAGE, fixed, variant=prefix_variant(cfg))


def overview_output(ctx: PageContext, fixed: Fixed) -> Task:
    """The encoder's output: one row per token, d_model wide, whatever the layers."""
    cfg = ctx.cfg
    return shape_task("overview.output", ctx.trace.output,
                      {"T": cfg.seq_len, "d": cfg.d_model, "L": cfg.n_layers}, PAGE, fixed)


def patches_shape(ctx: PageContext, fixed: Fixed) -> Task:
    """The patch matrix: one row per patch, P·P·C values each."""
    cfg = ctx.cfg
    return shape_task("patches.shape", ctx.trace.patches,
                      {"S": cfg.image_size, "P": cfg.patch_size, "C": cfg.channels,
                       "G": cfg.grid_size, "N": cfg.n_tokens, "D": cfg.patch_dim}, PAGE, fixed)


def patches_number(ctx: PageContext, fixed: Fixed) -> Task:
    """Row-major numbering: patch k is at row k // G, column k % G."""
    cfg = ctx.cfg
    G, k = cfg.grid_size, min(fixed.query, cfg.n_tokens - 1)
    hit = np.zeros(cfg.n_tokens)
    hit[k] = 1.0  # the one right patch
    return Task("patches.number", "patch", k, {"k": k, "r": k // G, "c": k % G, "G": G,
                                                "N": cfg.n_tokens, "i": -1},
                PAGE, Fixed(query=k), scores=tuple(hit), grid=G, trace=ctx.trace,
                true_map=False)  # the page's numbered grid is its map


def embedding_shape(ctx: PageContext, fixed: Fixed) -> Task:
    """W_E maps a patch's P·P·C values to d_model: [P·P·C × d_model]."""
    cfg = ctx.cfg
    return shape_task("embedding.shape", ctx.trace.params.W_E,
                      {"P": cfg.patch_size, "C": cfg.channels, "D": cfg.patch_dim,
                       "d": cfg.d_model, "N": cfg.n_tokens}, PAGE, fixed)


def embedding_params(ctx: PageContext, fixed: Fixed) -> Task:
    """The trainable numbers of the embedding: W_E, and b_E when the model has it."""
    cfg, params = ctx.cfg, ctx.trace.params
    bias = params.b_E.size if cfg.patch_bias and params.b_E is not None else 0
    return Task("embedding.params", "number", (float(params.W_E.size + bias),),
                {"D": cfg.patch_dim, "d": cfg.d_model, "w": int(params.W_E.size), "b": bias},
                PAGE, fixed, variant="_bias" if bias else "")


def qkv_d_head(ctx: PageContext, fixed: Fixed) -> Task:
    """Each head's queries, keys and values are d_model / h wide."""
    cfg = ctx.cfg
    return Task("qkv.d_head", "number", (float(ctx.trace.layers[0].q.shape[-1]),),
                {"d": cfg.d_model, "h": cfg.n_heads, "dk": cfg.d_head}, PAGE, fixed)


def qkv_params(ctx: PageContext, fixed: Fixed) -> Task:
    """W_Q: d_model × d_model numbers (all heads side by side), and b_Q when present."""
    cfg = ctx.cfg
    lp = ctx.trace.params.layers[0]
    bias = lp.b_Q.size if cfg.qkv_bias and lp.b_Q is not None else 0
    return Task("qkv.params", "number", (float(lp.W_Q.size + bias),),
                {"d": cfg.d_model, "h": cfg.n_heads, "dk": cfg.d_head, "w": int(lp.W_Q.size),
                 "b": bias}, PAGE, fixed, variant="_bias" if bias else "")


def multihead_concat(ctx: PageContext, fixed: Fixed) -> Task:
    """The h heads side by side: [T × h·d_k] = [T × d_model]."""
    cfg = ctx.cfg
    return shape_task("multihead.concat", ctx.trace.layers[0].concat,
                      {"T": cfg.seq_len, "h": cfg.n_heads, "dk": cfg.d_head,
                       "d": cfg.d_model}, PAGE, fixed)


def multihead_same(ctx: PageContext, fixed: Fixed) -> Task | None:
    """Do two heads of one layer look most at the same patch from patch i?"""
    model = attention_model(ctx)
    if model is None:
        return None
    tr, source = model
    cfg = tr.config
    if cfg.n_heads < 2:
        return None
    l = min(fixed.layer, cfg.n_layers - 1)
    a = min(fixed.head, cfg.n_heads - 1)
    b = (a + 1) % cfg.n_heads
    i = min(fixed.query, cfg.n_tokens - 1)
    rows = [patch_rows(tr.layers[l].attn[h, cfg.n_prefix + i], cfg) for h in (a, b)]
    ja, jb = top_patch(rows[0]), top_patch(rows[1])
    G = cfg.grid_size
    return Task("multihead.same", "choice", "yes" if ja == jb else "no",
                {"i": i, "r": i // G, "c": i % G, "l": l + 1, "ha": a + 1, "hb": b + 1,
                 "ja": ja, "jb": jb, "wa": float(rows[0][ja]), "wb": float(rows[1][jb])},
                PAGE, Fixed(l, a, i), options=YES_NO, grid=G, trace=tr, source=source)


def ffn_hidden(ctx: PageContext, fixed: Fixed) -> Task:
    """The FFN widens every token: [T × d_ff]."""
    cfg = ctx.cfg
    return shape_task("ffn.hidden", ctx.trace.layers[0].ffn_hidden,
                      {"T": cfg.seq_len, "d": cfg.d_model, "dff": cfg.d_ff}, PAGE, fixed)


def ffn_relu(ctx: PageContext, fixed: Fixed) -> Task:
    """The share of layer l's hidden activations that ReLU sets to 0, in %."""
    cfg = ctx.cfg
    l = min(fixed.layer, cfg.n_layers - 1)
    share = 100 * relu_zero_share(ctx.trace.layers[l].ffn_hidden)
    return Task("ffn.relu", "estimate", round(share, 1),
                {"l": l + 1, "share": share, "T": cfg.seq_len, "dff": cfg.d_ff,
                 "n": cfg.seq_len * cfg.d_ff}, PAGE, Fixed(layer=l), tolerance=10.0)


def stack_output(ctx: PageContext, fixed: Fixed) -> Task:
    """After L layers the sequence keeps its shape: [T × d_model]."""
    cfg = ctx.cfg
    return shape_task("stack.output", ctx.trace.output,
                      {"T": cfg.seq_len, "d": cfg.d_model, "L": cfg.n_layers}, PAGE, fixed)


def stack_look(ctx: PageContext, fixed: Fixed) -> Task | None:
    """Where a head of the last layer looks most from patch i."""
    return looks_most(ctx, fixed, "stack.look", PAGE, last_layer=True)


def uses_ffn(cfg: EncoderConfig) -> bool:
    return cfg.use_ffn


def uses_relu(cfg: EncoderConfig) -> bool:
    """ReLU's zeros: not a ViT's GELU, which is seldom exactly 0."""
    return cfg.use_ffn and cfg.activation == "relu"


YES_NO = ("yes", "no")


# Each step's tasks, in the order its cards ask them; the registry (lens.steps) names each
# tuple in the step's entry.
OVERVIEW_TASKS: tuple[Spec, ...] = (
    Spec("overview.tokens", "number", overview_tokens),
    Spec("overview.output", "number", overview_output),
)
PATCHES_TASKS: tuple[Spec, ...] = (
    Spec("patches.shape", "number", patches_shape),
    Spec("patches.number", "patch", patches_number),
)
EMBEDDING_TASKS: tuple[Spec, ...] = (
    Spec("embedding.shape", "number", embedding_shape),
    Spec("embedding.params", "number", embedding_params),
)
POSITIONAL_TASKS: tuple[Spec, ...] = (
    Spec("positional.shape", "number", positional_shape, applies=adds_positions),
    Spec("positional.similar", "patch", positional_similar),
)
QKV_TASKS: tuple[Spec, ...] = (
    Spec("qkv.d_head", "number", qkv_d_head),
    Spec("qkv.params", "number", qkv_params),
)
SCORES_TASKS: tuple[Spec, ...] = (
    Spec("scores.shape", "number", scores_shape),
    Spec("scores.look", "patch", scores_look, possible=has_trained_attention),
    Spec("scores.divisor", "choice", scores_divisor, applies=divides_by_d_k, options=SHARPNESS),
)
MULTIHEAD_TASKS: tuple[Spec, ...] = (
    Spec("multihead.concat", "number", multihead_concat),
    Spec("multihead.same", "choice", multihead_same, possible=has_trained_attention,
         options=YES_NO),
)
ADDNORM_TASKS: tuple[Spec, ...] = (
    Spec("addnorm.moments", "number", addnorm_moments),
    Spec("addnorm.within", "estimate", addnorm_within),
)
FFN_TASKS: tuple[Spec, ...] = (
    Spec("ffn.hidden", "number", ffn_hidden, applies=uses_ffn),
    Spec("ffn.relu", "estimate", ffn_relu, applies=uses_relu),
)
STACK_TASKS: tuple[Spec, ...] = (
    Spec("stack.output", "number", stack_output),
    Spec("stack.look", "patch", stack_look, possible=has_trained_attention),
)
