"""What the app plots beyond the raw trace: summaries computed from it, one formula each.

The app does no math of its own; every derived number it shows comes from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..config import EncoderConfig
from ..pipeline.attention import softmax
from ..pipeline.patches import patch_centres


def mean_attention_distance(attn: np.ndarray, grid_size: int, patch_size: int) -> np.ndarray:
    """Per head: Σ_j attn[i, j]·‖c_i − c_j‖₂ averaged over queries i, c = patch centres in pixels.

    Args:
        attn: [h, N, N]
    Returns:
        [h] distances in pixels of the resized image (as in the ViT paper's Figure 7).
    """
    dist = patch_distances(grid_size, patch_size)  # [N, N]
    return (attn * dist).sum(axis=-1).mean(axis=-1)  # [h, N, N] -> [h]


def patch_distances(grid_size: int, patch_size: int) -> np.ndarray:
    """‖c_i − c_j‖₂ between the centres of every pair of patches, in pixels. Returns [N, N]."""
    c = patch_centres(grid_size, patch_size)  # [N, 2]
    return np.sqrt(((c[:, None, :] - c[None, :, :]) ** 2).sum(-1))


def head_statistics(attns: list[np.ndarray] | tuple[np.ndarray, ...], grid_size: int,
                    patch_size: int, n_prefix: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean attention distance (pixels) and entropy (nats) of every head of every layer.

    With prefix tokens (a ViT's CLS, …) both are averaged over the patch queries only; the
    distance sums over the patch keys (a prefix token has no place on the grid, so the weight
    it takes adds no distance) and the entropy is that of the whole row, prefix keys included.

    Args:
        attns: per layer, attn [h, S, S] with S = n_prefix + grid_size².
    Returns:
        (distance [L, h], entropy [L, h]); the distance matrix is built once for all layers.
    """
    dist = patch_distances(grid_size, patch_size)  # [N, N]
    distance = np.stack([(patch_block(attn, n_prefix) * dist).sum(axis=-1).mean(axis=-1)
                         for attn in attns])
    entropy = np.stack([attention_entropy(attn[..., n_prefix:, :]) for attn in attns])
    return distance, entropy


def patch_block(attn: np.ndarray, n_prefix: int) -> np.ndarray:
    """The patch-to-patch part of attention: patch queries, patch keys (a view).

    [..., S, S] -> [..., N, N]; its rows sum to 1 − prefix_share (1 without prefix tokens).
    """
    return attn[..., n_prefix:, n_prefix:]


def prefix_share(rows: np.ndarray, n_prefix: int) -> np.ndarray:
    """The weight each attention row puts on the prefix tokens (CLS, …): Σ_{j < n_prefix} a_j,
    in float64; what a map laid on the patch grid leaves out. [..., S] -> [...] (0 without)."""
    return rows[..., :n_prefix].sum(axis=-1, dtype=np.float64)


def permute_tokens(a: np.ndarray, perm: np.ndarray, n_prefix: int = 0) -> np.ndarray:
    """The rows of a per-token array with the patch rows permuted and the prefix rows kept:
    [a[:n_prefix], a[n_prefix:][perm]]. Shuffling an image's patches moves only the patch rows.
    a: [S, ...], perm: [N] -> [S, ...] (a new array)."""
    return np.concatenate([a[:n_prefix], a[n_prefix:][perm]], axis=0)


def row_entropy(p: np.ndarray) -> np.ndarray:
    """H = −Σ_j p_j ln p_j of each row, in nats (0·ln 0 = 0). [..., N] -> [...]."""
    p64 = p.astype(np.float64)
    logp = np.log(np.where(p64 > 0, p64, 1.0))
    return -(p64 * logp).sum(axis=-1)


def attention_entropy(attn: np.ndarray) -> np.ndarray:
    """Per head, the mean over query rows of the row entropy, in nats. [h, N, N] -> [h]."""
    return row_entropy(attn).mean(axis=-1)


@dataclass(frozen=True)
class ScalingCase:
    name: str  # "d_k", "d_model" or "none"
    divisor: float  # s in softmax(Q·Kᵀ / s)
    attn: np.ndarray  # [h, N, N] softmax rows at this scaling
    entropy: np.ndarray  # [h, N] row entropy in nats


def scaling_demo(q: np.ndarray, k: np.ndarray, d_model: int) -> list[ScalingCase]:
    """The same Q·Kᵀ divided by √d_head, √d_model and 1, softmaxed: sharper or flatter rows.

    Args:
        q, k: [h, N, d_head] of one layer.
    Returns:
        Three ScalingCase, in the order √d_head (the paper), √d_model (the note), none.
    """
    d_head = q.shape[-1]
    raw = q.astype(np.float32) @ k.transpose(0, 2, 1)  # [h, N, N]
    cases = []
    for name, s in (("d_k", d_head**0.5), ("d_model", d_model**0.5), ("none", 1.0)):
        attn = softmax(raw / np.float32(s))
        cases.append(ScalingCase(name=name, divisor=float(s), attn=attn,
                                 entropy=row_entropy(attn)))
    return cases


SWEEP_D_HEADS: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""The head widths of `divisor_sweep` by default: from one feature to far past any real head."""


@dataclass(frozen=True)
class DivisorSweep:
    """softmax(q·kᵀ) and softmax(q·kᵀ / √d_k) of random unit-variance q and k at several d_k."""

    d_head: np.ndarray  # [m] the head widths d_k, ascending
    score_std: np.ndarray  # [m] standard deviation of the unscaled scores q·k (≈ √d_k)
    entropy_none: np.ndarray  # [m] mean row entropy (nats) of softmax(q·kᵀ)
    entropy_d_k: np.ndarray  # [m] mean row entropy (nats) of softmax(q·kᵀ / √d_k)
    top_none: np.ndarray  # [m] mean over rows of the largest weight of softmax(q·kᵀ)
    top_d_k: np.ndarray  # [m] mean over rows of the largest weight of softmax(q·kᵀ / √d_k)


def divisor_sweep(n_tokens: int, d_heads: tuple[int, ...] = SWEEP_D_HEADS,
                  seed: int = 0) -> DivisorSweep:
    """The paper's argument for the divisor, computed: q and k with d_k independent entries of
    mean 0 and variance 1 give scores q·k of variance d_k, so without a divisor the softmax
    saturates (entropy → 0, largest weight → 1) as d_k grows; divided by √d_k the scores keep
    variance 1 and the rows stay as spread at every width.

    For each d_k: Q, K [n_tokens, d_k] drawn from N(0, 1) (seeded; the same draw's first d_k
    columns at every width), scores Q·Kᵀ [n_tokens, n_tokens], softmaxed in float64.

    Args:
        n_tokens: queries and keys (the page's sequence length: ln n_tokens is the most a row's
            entropy can be); d_heads: the widths d_k, any order (returned ascending, unique).
    Returns:
        DivisorSweep, every field [m] with m = len(set(d_heads)).
    """
    widths = np.array(sorted(set(int(d) for d in d_heads)))  # [m]
    rng = np.random.default_rng(seed)
    q_all = rng.standard_normal((n_tokens, int(widths[-1])))  # [n_tokens, max d_k]
    k_all = rng.standard_normal((n_tokens, int(widths[-1])))
    fields: dict[str, list[float]] = {name: [] for name in (
        "score_std", "entropy_none", "entropy_d_k", "top_none", "top_d_k")}
    for d_k in widths:
        raw = q_all[:, :d_k] @ k_all[:, :d_k].T  # [n_tokens, d_k] @ [d_k, n_tokens] -> [n, n]
        fields["score_std"].append(float(raw.std()))
        for name, s in (("none", 1.0), ("d_k", float(d_k) ** 0.5)):
            attn = softmax(raw / s)  # [n_tokens, n_tokens]
            fields[f"entropy_{name}"].append(float(row_entropy(attn).mean()))
            fields[f"top_{name}"].append(float(attn.max(axis=-1).mean()))
    return DivisorSweep(d_head=widths, **{k: np.array(v) for k, v in fields.items()})


def row_moments(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """μ_i = (1/d)·Σ_k x_ik and σ²_i = (1/d)·Σ_k (x_ik − μ_i)² of every row (the population
    variance, as LayerNorm's), in float64: what a row looked like before and after normalising.

    Args:
        x: [N, d] (e.g. resid_1, or ln_1.normed: μ ≈ 0, σ² ≈ σ²/(σ² + ε) ≈ 1 by construction)
    Returns:
        (mean [N], var [N])
    """
    x64 = np.asarray(x, dtype=np.float64)  # [N, d]
    mean = x64.mean(axis=-1)  # [N, d] -> [N]
    var = ((x64 - mean[:, None]) ** 2).mean(axis=-1)  # [N, d] -> [N]
    return mean, var


def cosine_similarity(x: np.ndarray) -> np.ndarray:
    """cos(x_i, x_j) = x_i·x_j / (‖x_i‖‖x_j‖) for every pair of rows. [N, d] -> [N, N]."""
    x64 = x.astype(np.float64)
    norms = np.linalg.norm(x64, axis=-1, keepdims=True)
    unit = x64 / np.where(norms > 0, norms, 1.0)
    return unit @ unit.T


def head_contributions(heads: np.ndarray, W_O: np.ndarray) -> np.ndarray:
    """What each head adds to attn_out: head_h · W_O[h·d_head:(h+1)·d_head, :].

    concat · W_O = Σ_h head_h · W_O[rows of h], so the contributions sum to attn_out.
    Args:
        heads: [h, N, d_head]; W_O: [d_model, d_model]
    Returns:
        [h, N, d_model]
    """
    h, _, d_head = heads.shape
    W_O_rows = W_O.reshape(h, d_head, W_O.shape[1])  # [h, d_head, d_model]
    return heads @ W_O_rows  # [h, N, d_head] @ [h, d_head, d_model] -> [h, N, d_model]


def relu_zero_share(hidden: np.ndarray) -> float:
    """The share of FFN hidden activations that the ReLU set to 0."""
    return float(np.mean(hidden <= 0))


@dataclass(frozen=True)
class Word:
    """A word or phrase of a formula, by id, with the values it carries: the app words it from
    its text files (`word_<id>`), the command line from its own English table. Never prose."""

    id: str  # e.g. "n_heads", "pe_off", "layers_stacked"
    values: tuple[tuple[str, object], ...] = ()  # (("n", 8),): the numbers in the phrase


def word(word_id: str, **values: object) -> Word:
    return Word(word_id, tuple(values.items()))


Text = tuple[str | Word, ...]
"""A formula or a shape: symbols as they are written in every language (str: "X = ",
"196 × 512", "W_Q"), and words by id (Word)."""


@dataclass(frozen=True)
class Step:
    id: str  # stable key of the step ("patches", "qkv", "addnorm_1", …): filter and look up by it
    formula: Text  # the formula, e.g. ("Q = x · W_Q, …",) or ("x0 = X", Word("pe_off"))
    shape: Text  # the product with actual shapes, e.g. ("(196 × 256) · (256 × 512) = 196 × 512",)
    n_params: int  # trainable parameters of this step (per layer for layer steps)
    per_layer: bool  # True for the steps inside an encoder layer (repeated n_layers times)


def words(text: Text, say: Callable[[Word], str]) -> str:
    """A formula or shape as one string: symbols as they are, each Word as `say` words it."""
    return "".join(part if isinstance(part, str) else say(part) for part in text)


STEP_IDS: tuple[str, ...] = ("patches", "embedding", "positional", "qkv", "scores", "softmax",
                             "heads", "concat", "addnorm_1", "ffn", "addnorm_2", "output")
"""Every step id of `pipeline_steps` for the note's encoder, in pipeline order ("ffn",
"addnorm_2" only with the FFN)."""
VIT_STEP_IDS: tuple[str, ...] = ("normalise", "patches", "embedding", "prefix", "positional",
                                 "ln_1", "qkv", "scores", "softmax", "heads", "concat", "add_1",
                                 "ln_2", "ffn", "add_2", "final_norm", "output")
"""The step ids of a pre-norm ViT with pixel statistics, prefix tokens and a final norm, in
its real order: LayerNorm before each sub-layer ("ln_1", "ln_2"), the residual adds after
("add_1", "add_2")."""


def pipeline_steps(cfg: EncoderConfig) -> list[Step]:
    """Every step of the pipeline at these settings, in the order the encoder runs them:
    formula, shapes (as `Text`: symbols and words by id), parameter count.

    The note's encoder: the ids of STEP_IDS. The ViT variants add steps where they
    happen (ids of VIT_STEP_IDS): "normalise" (pixel_mean / pixel_std) before the patches,
    "prefix" ([CLS], DIST, registers) after the embedding, pre-norm's "ln_1" → attention →
    "add_1" → "ln_2" → FFN → "add_2" in place of the two Add & Norm steps, and "final_norm";
    biases, GELU and LayerScale appear in the formulas and the parameter counts, and the
    per-token shapes count seq_len = n_prefix + N rows.
    """
    N, d, h, dh, dff = cfg.n_tokens, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.d_ff
    S_, C, S = cfg.seq_len, cfg.channels, cfg.image_size
    bias = {name: d if on else 0 for name, on in (("E", cfg.patch_bias), ("qkv", cfg.qkv_bias),
                                                  ("O", cfg.proj_bias), ("ls", cfg.layer_scale))}
    learned = cfg.position == "learned"
    # what the positions add (the note's PE: one row per patch), with the space before " = "
    # (a word that qualifies it carries that space, so a language may drop it)
    added: Text = (f"{N} × {d} ",)
    if learned and cfg.n_prefix:
        added = ((f"pos_embed {cfg.n_pos} × {d}", word("none_on_registers")) if cfg.n_registers
                 else (f"pos_embed {cfg.n_pos} × {d} ",))
    elif cfg.n_prefix:
        added = (f"PE {N} × {d}", word("on_patch_rows"))
    pre = cfg.norm_first
    heads = word("n_heads", n=h)
    steps = []
    if cfg.normalises_pixels:
        steps.append(Step("normalise", (word("normalise", mean=channel_values(cfg.pixel_mean),
                                             std=channel_values(cfg.pixel_std)),),
                          (f"{S} × {S} × {C} -> {S} × {S} × {C}",), 0, per_layer=False))
    b_E = " + b_E" if cfg.patch_bias else ""
    steps += [
        Step("patches", ("(h p1)(w p2) c -> (h w)(p1 p2 c)",),
             (f"{S} × {S} × {C} -> {N} × {cfg.patch_dim}",), 0, per_layer=False),
        Step("embedding", ("X = ", word("patches"), f" · W_E{b_E}"),
             (f"({N} × {cfg.patch_dim}) · ({cfg.patch_dim} × {d}){f' + {d}' if b_E else ''}"
              f" = {N} × {d}",), cfg.patch_dim * d + bias["E"], per_layer=False),
    ]
    if cfg.n_prefix:
        names = ", ".join(["CLS"] * cfg.cls_token + ["DIST"] * cfg.dist_token)
        regs: Text = (word("n_registers", n=cfg.n_registers),) if cfg.n_registers else ()
        steps.append(Step("prefix", (word("tokens"), f" = [{names}", *((", ",) if names and regs
                                                                       else ()), *regs, "; X]"),
                          (f"{cfg.n_prefix} × {d} ; {N} × {d} = {S_} × {d}",),
                          cfg.n_prefix * d, per_layer=False))
    x_in: Text = (word("tokens"),) if cfg.n_prefix else ("X",)
    added_by = " + pos_embed" if learned else " + PE"
    off = word("positions_off" if learned else "pe_off")
    steps.append(Step(
        "positional", ("x0 = ", *x_in, added_by) if cfg.use_pe else ("x0 = ", *x_in, off),
        (f"{S_} × {d} + ", *added, f"= {S_} × {d}") if cfg.use_pe else (f"{S_} × {d}",),
        cfg.n_pos * d if learned else 0,
        per_layer=False))
    u = "LN_1(x)" if pre else "x"  # what attention reads
    b = {name: f" + b_{name}" if bias[key] else ""
         for name, key in (("Q", "qkv"), ("K", "qkv"), ("V", "qkv"), ("O", "O"))}
    ls_1, ls_2 = ("ls_1 ⊙ ", "ls_2 ⊙ ") if cfg.layer_scale else ("", "")
    if pre:
        steps.append(Step("ln_1", ("LN_1(x) = γ_1 ⊙ (x − μ)/√(σ² + ε) + β_1",),
                          (f"{S_} × {d}",), 2 * d, per_layer=True))
    steps += [
        Step("qkv",
             (f"Q, K, V = {u} · W_Q, W_K, W_V + b_Q, b_K, b_V",) if pre and bias["qkv"]
             else (f"Q = {u} · W_Q{b['Q']}, K = {u} · W_K{b['K']}, V = {u} · W_V{b['V']}",),
             (f"({S_} × {d}) · ({d} × {d}) = {S_} × {d} -> ", heads, f" × {S_} × {dh}"),
             3 * d * d + 3 * bias["qkv"], per_layer=True),
        Step("scores", ("Q_h · K_hᵀ / ", word(f"divisor_{cfg.scale}", **score_divisor(cfg))),
             (f"({S_} × {dh}) · ({dh} × {S_}) = {S_} × {S_}, × ", heads), 0, per_layer=True),
        Step("softmax", (word("softmax_rows"),), (f"{h} × {S_} × {S_}",), 0, per_layer=True),
        Step("heads", ("head_h = attn_h · V_h",),
             (f"({S_} × {S_}) · ({S_} × {dh}) = {S_} × {dh}, × ", heads), 0, per_layer=True),
        Step("concat", (f"attn_out = [head_1 … head_h] · W_O{b['O']}",),
             (f"({S_} × {d}) · ({d} × {d}) = {S_} × {d}",), d * d + bias["O"], per_layer=True),
    ]
    if pre:
        steps.append(Step("add_1", (f"x ← x + {ls_1}attn_out", word("x_not_normalised")),
                          (f"{S_} × {d}",), bias["ls"], per_layer=True))
    else:
        steps.append(Step("addnorm_1",
                          (f"LayerNorm(x + {ls_1}attn_out) = γ ⊙ (x − μ)/√(σ² + ε) + β",),
                          (f"{S_} × {d}",), 2 * d + bias["ls"], per_layer=True))
    act = {"relu": "max(0, {u} · W_1 + b_1)", "gelu": "GELU({u} · W_1 + b_1)",
           "gelu_tanh": "GELU_tanh({u} · W_1 + b_1)"}[cfg.activation]
    if cfg.use_ffn:
        ffn = Step("ffn", (act.format(u="LN_2(x)" if pre else "x") + " · W_2 + b_2",),
                   (f"({S_} × {d}) · ({d} × {dff}) · ({dff} × {d}) = {S_} × {d}",),
                   d * dff + dff + dff * d + d, per_layer=True)
        if pre:
            steps += [Step("ln_2", ("LN_2(x) = γ_2 ⊙ (x − μ)/√(σ² + ε) + β_2",),
                           (f"{S_} × {d}",), 2 * d, per_layer=True), ffn,
                      Step("add_2", (f"x ← x + {ls_2}FFN(LN_2(x))",), (f"{S_} × {d}",),
                           bias["ls"], per_layer=True)]
        else:
            steps += [ffn, Step("addnorm_2", (f"LayerNorm(x + {ls_2}FFN(x))",),
                                (f"{S_} × {d}",), 2 * d + bias["ls"], per_layer=True)]
    if cfg.final_norm:
        steps.append(Step("final_norm", (word("output"), " = γ ⊙ (x − μ)/√(σ² + ε) + β",
                                         word("after_last_layer")),
                          (f"{S_} × {d}",), 2 * d, per_layer=False))
    stacked: Text = (word("layers_stacked" if cfg.n_layers > 1 else "layer_stacked",
                          n=cfg.n_layers),)
    if cfg.cls_token:
        stacked += (word("cls_stands_for_image", row=0),)
    steps.append(Step("output", stacked,
                      (f"{S_} × {d}", *((word("cls_row", shape=f"1 × {d}"),)
                                        if cfg.cls_token else ())), 0, per_layer=False))
    return steps


def channel_values(v: tuple[float, ...]) -> str:
    """(0.485, 0.456, 0.406) as written in a formula."""
    return "(" + ", ".join(f"{x:g}" for x in v) + ")"


def score_divisor(cfg: EncoderConfig) -> dict[str, int]:
    """What the scores are divided by, as numbers: {"n": d_k} for √d_k, {"n": d_model} for
    √d_model, {"n": 1} for no scaling (cfg.scale says which; the words are the app's)."""
    return {"n": {"d_k": cfg.d_head, "d_model": cfg.d_model, "none": 1}[cfg.scale]}


def parameter_count(cfg: EncoderConfig) -> int:
    """All trainable parameters: W_E plus n_layers × (attention + norms [+ FFN]), and those of
    the variants that are on (biases, prefix tokens, learned positions, LayerScale, final norm)."""
    steps = pipeline_steps(cfg)
    once = sum(s.n_params for s in steps if not s.per_layer)  # W_E
    layer = sum(s.n_params for s in steps if s.per_layer)
    return once + cfg.n_layers * layer


def forward_flops(cfg: EncoderConfig) -> int:
    """Multiply-add FLOPs (2 per MAC) of the matrix products of one forward pass (N = seq_len
    in the layers: the prefix tokens count)."""
    N, d, dff = cfg.seq_len, cfg.d_model, cfg.d_ff
    embed = 2 * cfg.n_tokens * cfg.patch_dim * d
    attn = 2 * N * d * d * 4 + 2 * 2 * N * N * d  # Q, K, V, W_O; Q·Kᵀ and attn·V over heads
    ffn = 2 * 2 * N * d * dff if cfg.use_ffn else 0
    return embed + cfg.n_layers * (attn + ffn)


def rollout_mean_over_queries(R: np.ndarray, n_prefix: int = 0) -> np.ndarray:
    """The mean of the rollout rows of the patch queries, (1/N)·Σ_i R[n_prefix + i, :]: how much
    each input token feeds the patches' outputs on average. R: [S, S] -> [S] (sums to 1)."""
    return R[n_prefix:].mean(axis=0)


def uniform_attention_reference(grid_size: int, patch_size: int,
                                n_prefix: int = 0) -> tuple[float, float]:
    """(mean attention distance in pixels, entropy in nats) of uniform attention, 1/S everywhere
    (S = n_prefix + N tokens), measured as `head_statistics` does.

    The baseline for a head that looks everywhere alike; the entropy equals ln S, its maximum.
    """
    S = n_prefix + grid_size * grid_size
    uniform = np.full((1, S, S), 1.0 / S)  # [1, S, S]
    distance, entropy = head_statistics([uniform], grid_size, patch_size, n_prefix)
    return float(distance[0, 0]), float(entropy[0, 0])


def contribution_norms(contributions: np.ndarray) -> np.ndarray:
    """‖head_h · W_O[rows of h]‖₂ of each head at each position: how much each head moves
    attn_out there. contributions: [h, N, d_model] (from head_contributions) -> [h, N]."""
    return np.linalg.norm(contributions.astype(np.float64), axis=-1)


def head_sum_gap(heads: np.ndarray, W_O: np.ndarray, attn_out: np.ndarray,
                 b_O: np.ndarray | None = None) -> float:
    """max |Σ_h head_h · W_O[rows of h] (+ b_O) − attn_out| over all entries: the check that
    concat · W_O is the sum of the heads' contributions (≈ float32 rounding, not 0).

    Accumulates one head at a time (memory [N, d_model], not [h, N, d_model]).
    Args:
        heads: [h, N, d_head]; W_O: [d_model, d_model]; attn_out: [N, d_model]
            (concat · W_O + b_O); b_O: [d_model] (a ViT's bias) or None
    """
    h, _, d_head = heads.shape
    total = np.zeros(attn_out.shape, dtype=np.float64)  # [N, d_model]
    if b_O is not None:
        total += b_O.astype(np.float64)
    for g in range(h):
        rows = W_O[g * d_head:(g + 1) * d_head].astype(np.float64)  # [d_head, d_model]
        total += heads[g].astype(np.float64) @ rows  # [N, d_head] @ [d_head, d_model]
    return float(np.abs(total - attn_out).max())


def permutation_gap(out_shuffled: np.ndarray, out: np.ndarray, perm: np.ndarray) -> float:
    """max |out(shuffled input) − out[perm]|: 0 (to rounding) when the encoder cannot see order.

    Args:
        out_shuffled, out: [N, d]; perm: [N], patch n of the shuffled input was patch perm[n].
    """
    return float(np.abs(out_shuffled - out[perm]).max())


def fixed_permutation(n: int, seed: int = 0) -> np.ndarray:
    """A reproducible shuffle of 0 … n−1 (for the ablation demo). Returns [n] int."""
    return np.random.default_rng(seed).permutation(n)


def unshuffle(values: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """Values over the shuffled patches put back in the original patch order: u[perm[n]] =
    values[..., n]. Without PE, the shuffled image's attention row of the moved query,
    unshuffled, equals the original row (permutation equivariance).

    Args:
        values: [..., N] over the shuffled image's patches; perm: [N], patch n of the shuffled
            image was patch perm[n].
    Returns:
        [..., N] in the original order (a new array).
    """
    out = np.empty_like(values)
    out[..., perm] = values
    return out
