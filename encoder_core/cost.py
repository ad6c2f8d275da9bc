"""What a forward pass, and what the core's views derive from it, cost: bytes and seconds,
predicted from the configuration alone, before anything is computed. What an app adds on top
(its pictures, what it sends to a browser) is the app's to declare, from these terms.

Shapes as in trace.py: N = n_tokens (patches), S = seq_len (n_prefix + N), d = d_model,
h = n_heads, L = n_layers, I = image_size, C = channels. Every trace array is float32 (4 bytes).

* `trace_bytes(cfg)` is exact: the bytes of the arrays `encode` returns, without the weights,
  each distinct array once, as a walk of the trace's dataclass fields counts them
  (some fields are the same array: pixels is image without pixel statistics, tokens is
  embedded without prefix tokens, pos is pe without prefix and with PE on, out is ln_2.out /
  ln_1.out / resid_2 / resid_1, output is the last out or final_ln.out). Per field:
  `trace_field_bytes`.
* `params_bytes(cfg)` is exact: the bytes of `init_params(cfg)` (W_1, W_2 exist even with the
  FFN off).
* `encode_peak_bytes(cfg)`: the most `encode` holds at once beyond its inputs, as tracemalloc
  measures it: the trace kept so far plus what one step holds while it runs, at the worst step
  (`encode_steps` lists them). Measured on these machines, the transient part is small: scores
  and attn are kept in the trace and softmax writes its result in place, so the worst moment
  is a LayerNorm at the end (its centred rows and γ ⊙ x̂ beside its two kept [S, d] arrays:
  2·S·d·4 bytes), plus the Python objects (~4 kB a layer).
* `encode_seconds(cfg)`: matrix-product FLOPs at the measured float32 rate, plus the memory
  the pass writes (its trace: fresh pages) and its element-wise work (exp of the softmax,
  the GELU) at measured rates.
* `params_cost(cfg)`: drawing the random weights (cached apart from the traces).
* `Derived` terms of the views a page may run on a trace: `rollout`, `head_statistics`,
  `patch_pca`, `heads_off` (each named after the view it predicts).

Rates were measured on these machines (2 cores, NumPy 2.4, one OpenBLAS thread as the server
runs) by `OPENBLAS_NUM_THREADS=1 python -m benchmarks.memory --calibrate`; see that module and
docs/benchmarks.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import EncoderConfig
from .params import encoder_optional_names, expected_shapes

F32 = 4  # bytes of a float32
F64 = 8  # bytes of a float64

# --- measured constants (OPENBLAS_NUM_THREADS=1 python -m benchmarks.memory --calibrate: one
# BLAS thread, as scripts/app and scripts/serve run the server; 2 cores; the best of 10–15 runs
# each, at load averages 0.5–7: the machine is shared)
MATMUL_GFLOPS = 92.0  # float32 matmul 1024 × 1024 × 1024, GFLOP/s, one thread
MATMUL_GFLOPS_2_THREADS = 160.0  # the same with OpenBLAS's two threads (runs gave 103–191)
MATMUL64_GFLOPS = 47.0  # float64 matmul (the rollout), GFLOP/s, one thread
WRITE_BYTES_PER_S = 1.0e9  # fitted: the trace's bytes per second of encode's other work (fresh
#                            pages, residual sums, LayerNorm passes), from encode at the defaults
#                            and at the heaviest settings minus their products and softmax
EXP_PER_S = 4.5e8  # float32 softmax (max, subtract, exp, sum, divide) of [8, 1024, 1024], /s
GELU_PER_S = 2.3e8  # exact-erf GELU (chunked, ~25 passes) of [1024, 4096], elements/s
PARAMS_BYTES_PER_S = 2.7e8  # init_params: bytes of weights drawn per second (577 MB in 2.1 s)
PARAMS_TRANSIENT = 1 << 20  # and its temporaries beside them (the draw's pieces), measured
SVD64_GFLOPS = 12.0  # float64 SVD (LAPACK gesdd, U and Vᵀ) of [196, 384] and [784, 384], GFLOP/s
#                     as 4·m·k² + 8·k³ counts them (k = min(m, n)), one thread
#                     (benchmarks/pca_iou.py: 12.7 and 45 ms)
ELEMENTWISE64_PER_S = 5.0e8  # float64 passes over 64 MB (log, ×) as the views make, elements/s
PY_OBJECTS_BASE = 1_300  # bytes of the trace's Python objects beyond its arrays, once
PY_OBJECTS_PER_LAYER = 4_200  # and per layer (ndarray headers, dataclasses)
REDUCE_BUFFER = 8192  # values in NumPy's buffer of a row reduction (float32), measured

GELU_CHUNK = 65_536  # values per piece of the activation (pipeline/ffn.py CHUNK)
GELU_TEMPS = 5  # chunk-sized float32 temporaries alive at once inside `gelu`
GELU_TANH_TEMPS = 1  # and inside `gelu_tanh`


@dataclass(frozen=True)
class Cost:
    """A predicted cost: the most memory held at once, and the time."""

    bytes: int  # the most bytes held at once
    seconds: float  # wall-clock seconds on these machines


@dataclass(frozen=True)
class Step:
    """One step of `encode` in the order it runs, for `encode_peak_bytes`."""

    field: str  # the trace field it makes ("q", "ln_1", …; "python" for the objects)
    kept: int  # bytes it adds to the trace (0 when its array is another field's)
    transient: int  # bytes it holds beside them while it runs, freed when it returns
    view: bool = False  # its array is a view of another's memory: counted by nbytes (as the
    #                     trace's bytes), allocating nothing


def _layer_norm_steps(field: str, S: int, d: int) -> list[Step]:
    """mean, var [S]; normed, out [S, d] kept; centred and γ ⊙ x̂ [S, d] alive at the end, and
    NumPy's buffer of a row reduction."""
    return [Step(field, 2 * S * F32 + 2 * S * d * F32, 2 * S * d * F32
                 + min(REDUCE_BUFFER, S * d) * F32)]


def _activation_transient(cfg: EncoderConfig, S: int) -> int:
    """Bytes the activation holds beside ffn_hidden: ReLU works in place, GELU piece by piece."""
    piece = min(GELU_CHUNK, S * cfg.d_ff) * F32
    return {"relu": 0, "gelu": GELU_TEMPS * piece, "gelu_tanh": GELU_TANH_TEMPS * piece}[
        cfg.activation]


def _layer_steps(cfg: EncoderConfig) -> list[Step]:
    """The steps of one encoder layer (post-norm or pre-norm), as `encoder_layer` runs them."""
    S, d, h = cfg.seq_len, cfg.d_model, cfg.n_heads
    row = S * d * F32  # one [S, d] float32 array
    scaled = row if cfg.layer_scale else 0  # ls ⊙ y, a temporary
    # X·W [S, d] is copied into heads [h, S, d_head], then freed; one head needs no copy: q is
    # X·W itself, and concat is a view of heads (counted by nbytes, allocating nothing)
    split = row if h > 1 else 0
    attention = [
        Step("q", row, split), Step("k", row, split), Step("v", row, split),
        Step("scores", h * S * S * F32, 0),
        Step("attn", h * S * S * F32, 2 * h * S * F32),  # row max and row sum [h, S, 1]
        Step("heads", row, 0), Step("concat", row, 0, view=h == 1), Step("attn_out", row, 0),
    ]
    resid_1 = [Step("resid_1", row, scaled)]
    ffn = [Step("ffn_hidden", S * cfg.d_ff * F32, _activation_transient(cfg, S)),
           Step("ffn_out", row, 0), Step("resid_2", row, scaled)] if cfg.use_ffn else []
    ln_1 = _layer_norm_steps("ln_1", S, d)
    ln_2 = _layer_norm_steps("ln_2", S, d) if cfg.use_ffn else []
    if cfg.norm_first:  # ln_1, attention, resid_1, ln_2, FFN, resid_2
        steps = ln_1 + attention + resid_1 + ln_2 + ffn
    else:  # attention, resid_1, ln_1, FFN, resid_2, ln_2
        steps = attention + resid_1 + ln_1 + ffn + ln_2
    return steps + [Step("python", PY_OBJECTS_PER_LAYER, 0)]


def encode_steps(cfg: EncoderConfig) -> list[Step]:
    """Every step of `encode(image, cfg, params)` in order, with the bytes it keeps and the bytes
    it holds only while it runs (temporaries), modelled on the code of pipeline/*.py."""
    I, C, N, S, d = cfg.image_size, cfg.channels, cfg.n_tokens, cfg.seq_len, cfg.d_model
    image = I * I * C * F32
    # the sinusoidal table is built in float64: angle [N, d/2], pe [N, d], sin / cos [N, d/2]
    pe_transient = (N * d // 2 * F64 + N * d * F64 + N * d // 2 * F64
                    if cfg.position == "sinusoidal" else 0)
    steps = [
        Step("image", image, 0),  # the private float32 copy
        Step("pixels", image if cfg.normalises_pixels else 0, 0),
        Step("patches", image, 0),  # the transposed copy
        Step("embedded", N * d * F32, 0),
        Step("pe", N * d * F32, pe_transient, view=cfg.position == "learned"),
        Step("tokens", S * d * F32 if cfg.n_prefix else 0, 0),
        Step("pos", S * d * F32 if (cfg.n_prefix or not cfg.use_pe) else 0, 0),
        Step("x0", S * d * F32, 0),
    ]
    layer = _layer_steps(cfg)
    steps += layer * cfg.n_layers
    if cfg.final_norm:
        steps += _layer_norm_steps("final_ln", S, d)
    return steps + [Step("python", PY_OBJECTS_BASE, 0)]


def trace_field_bytes(cfg: EncoderConfig) -> dict[str, int]:
    """Bytes of the trace by field, each distinct array once (a per-layer field summed over the
    layers; "ln_1" is mean + var + normed + out), the fields that are another's array at 0.

    Keys: image, pixels, patches, embedded, pe, tokens, pos, x0, q, k, v, scores, attn, heads,
    concat, attn_out, resid_1, ln_1, ffn_hidden, ffn_out, resid_2, ln_2, final_ln.
    """
    fields = ("image", "pixels", "patches", "embedded", "pe", "tokens", "pos", "x0", "q", "k",
              "v", "scores", "attn", "heads", "concat", "attn_out", "resid_1", "ln_1",
              "ffn_hidden", "ffn_out", "resid_2", "ln_2", "final_ln")
    out = dict.fromkeys(fields, 0)
    for step in encode_steps(cfg):
        if step.field != "python":
            out[step.field] += step.kept
    return out


def trace_bytes(cfg: EncoderConfig) -> int:
    """Bytes of the arrays of `encode(image, cfg, params)`'s trace, without the weights: each
    distinct array once (every array reachable through the trace's fields, less the weights').

    Per layer 4·S·d (q, k, v, heads) + 2·h·S² (scores, attn) + 3·S·d (concat, attn_out,
    resid_1) + 2·S·d + 2·S (ln_1), with the FFN + S·d_ff + 2·S·d (ffn_out, resid_2) + 2·S·d +
    2·S (ln_2); once 2·I²·C (image, patches; + I²·C pixels with pixel statistics), N·d
    (embedded) + N·d (pe; learned: a view of pos_embed, which nbytes counts too) + S·d (x0)
    + S·d (tokens, with prefix) + S·d (pos, with prefix or PE off) + 2·S·d + 2·S (final_ln);
    all × 4 bytes.
    """
    return sum(trace_field_bytes(cfg).values())


def params_bytes(cfg: EncoderConfig) -> int:
    """Bytes of `init_params(cfg)`: W_E [P·P·C, d] and the variants' encoder-level arrays once,
    per layer W_Q, W_K, W_V, W_O [d, d], W_1 [d, d_ff], W_2 [d_ff, d], γ, β, b_1, b_2 and the
    variants' biases and LayerScale; float32."""
    shapes = expected_shapes(cfg)
    once = ("W_E", *encoder_optional_names(cfg))

    def size(name: str) -> int:
        n = 1
        for s in shapes[name]:
            n *= s
        return n * F32

    per_layer = sum(size(name) for name in shapes if name not in once)
    return sum(size(name) for name in once) + cfg.n_layers * per_layer


def params_cost(cfg: EncoderConfig) -> Cost:
    """The cost of drawing the random weights, `init_params(cfg)` (a cache may keep them apart from
    the traces: one set serves every trace of the same seed, layers, patch and widths):
    params_bytes + ~1 MB of temporaries, at PARAMS_BYTES_PER_S."""
    size = params_bytes(cfg)
    return Cost(size + PARAMS_TRANSIENT, size / PARAMS_BYTES_PER_S)


def encode_peak_bytes(cfg: EncoderConfig) -> int:
    """The most memory `encode(image, cfg, params)` holds at once beyond its inputs (image and
    weights): the trace kept so far plus the running step's temporaries, at the worst step.

    ≈ trace_bytes(cfg) + 2·S·d·4 (a LayerNorm at the end: centred rows and γ ⊙ x̂) + ~4 kB a
    layer of Python objects; checked against tracemalloc within ±20 % (tests/test_cost.py).
    """
    held = peak = 0
    for step in encode_steps(cfg):
        new = 0 if step.view else step.kept
        peak = max(peak, held + new + step.transient)
        held += new
    return peak


def encode_transient_bytes(cfg: EncoderConfig) -> int:
    """encode_peak_bytes − trace_bytes: what `encode` needs beyond the trace it returns
    (negative by N·d·4 at most: a learned pe is a view of the weights, counted in the trace)."""
    return encode_peak_bytes(cfg) - trace_bytes(cfg)


def matmul_flops(cfg: EncoderConfig) -> int:
    """FLOPs (2 per multiply-add) of the matrix products of one forward pass:
    2·N·P²C·d (embedding) + L·(8·S·d² (Q, K, V, W_O) + 4·S²·d (Q·Kᵀ, attn·V)
    + 4·S·d·d_ff (FFN))."""
    S, d = cfg.seq_len, cfg.d_model
    layer = 8 * S * d * d + 4 * S * S * d + (4 * S * d * cfg.d_ff if cfg.use_ffn else 0)
    return 2 * cfg.n_tokens * cfg.patch_dim * d + cfg.n_layers * layer


def encode_seconds(cfg: EncoderConfig, gflops: float = MATMUL_GFLOPS) -> float:
    """Predicted wall-clock seconds of `encode` on these machines:

        matmul_flops / gflops + trace_bytes / WRITE_BYTES_PER_S
        + L·h·S² / EXP_PER_S (softmax) + L·S·d_ff / GELU_PER_S (GELU only)

    gflops: the float32 matmul rate; the default MATMUL_GFLOPS was measured here with one
    OpenBLAS thread, as the server runs (1024³ product, `OPENBLAS_NUM_THREADS=1 python -m
    benchmarks.memory --calibrate`); MATMUL_GFLOPS_2_THREADS for two. The other rates
    likewise. Checked: the defaults 148 ms predicted, 143 ms measured; the heaviest settings
    5.8 s predicted, 6.6 s measured (one thread, load average 4.4).
    """
    S, h, L = cfg.seq_len, cfg.n_heads, cfg.n_layers
    gelu = L * S * cfg.d_ff / GELU_PER_S if cfg.use_ffn and cfg.activation != "relu" else 0.0
    return (matmul_flops(cfg) / (gflops * 1e9) + trace_bytes(cfg) / WRITE_BYTES_PER_S
            + L * h * S * S / EXP_PER_S + gelu)


def trace_cost(cfg: EncoderConfig) -> Cost:
    """The cost of one forward pass: (encode_peak_bytes, encode_seconds)."""
    return Cost(encode_peak_bytes(cfg), encode_seconds(cfg))


# --- what the views derive from a trace ---------------------------------------------------------


@dataclass(frozen=True)
class Derived:
    """One quantity derived from a trace (a view's result): what it keeps, what it holds
    beside that while computed, and its time."""

    kept: int  # bytes of the result, kept in the derived cache
    transient: int  # bytes held beside it while it is computed
    seconds: float


def rollout(cfg: EncoderConfig) -> Derived:
    """attention_rollout over every layer: R [S, S] float64 kept; per layer, beside R, the
    fused mean's copy, the identity and their sum [S, S] float64 (measured: 3 at once);
    L·2·S³ float64 FLOPs and (h + 7)·S² element passes a layer."""
    S, L, h = cfg.seq_len, cfg.n_layers, cfg.n_heads
    return Derived(S * S * F64, 3 * S * S * F64,
                   L * 2 * S**3 / (MATMUL64_GFLOPS * 1e9)
                   + L * (h + 7) * S * S / ELEMENTWISE64_PER_S)


def head_statistics(cfg: EncoderConfig) -> Derived:
    """head_statistics: distances [N, N] float64; per layer attn × distance [h, N, N] float64,
    then the entropy's float64 copy, its where and its log [h, N, S] (p·log p after)."""
    N, S, h, L = cfg.n_tokens, cfg.seq_len, cfg.n_heads, cfg.n_layers
    transient = N * N * F64 + 3 * h * N * S * F64 + h * N * S
    return Derived(2 * L * h * F64, transient,
                   L * (2 * h * N * N + 6 * h * N * S) / ELEMENTWISE64_PER_S)


def svd_workspace(n_rows: int, n_cols: int) -> int:
    """Bytes of LAPACK gesdd's float64 workspace for U, Σ, Vᵀ of an [m, n] matrix (JOBZ='S':
    3k² + max(m, 4k² + 4k) values, k = min(m, n), and 8k integers): malloc'd by NumPy's linalg,
    so tracemalloc does not see it."""
    k, m = min(n_rows, n_cols), max(n_rows, n_cols)
    return (3 * k * k + max(m, 4 * k * k + 4 * k)) * F64 + 8 * k * 4


def patch_pca(cfg: EncoderConfig) -> Derived:
    """encoder_core.views.pca.trace_pca of one layer: kept, the PatchPCA ([N] float64 × 7 and
    [d] × 4, the mask); beside it, at the worst (every patch but one foreground), the rows in
    float64 [N, d], the foreground's copy and its centred rows [N, d] each, U [N, k] and
    Vᵀ [k, d] (k = min(N, d)), and gesdd's workspace; two SVDs of at most [N, d]."""
    N, d = cfg.n_tokens, cfg.d_model
    k = min(N, d)
    kept = (7 * N + 4 * d) * F64 + N
    transient = (3 * N * d + N * k + k * d) * F64 + svd_workspace(N, d)
    flops = 4 * max(N, d) * k * k + 8 * k**3
    return Derived(kept, transient, 2 * flops / (SVD64_GFLOPS * 1e9))


def layer_bytes(cfg: EncoderConfig) -> int:
    """Bytes of one layer's arrays in the trace (q … ln_2, each distinct array once)."""
    per_layer = ("q", "k", "v", "scores", "attn", "heads", "concat", "attn_out", "resid_1",
                 "ln_1", "ffn_hidden", "ffn_out", "resid_2", "ln_2")
    fields = trace_field_bytes(cfg)
    return sum(fields[f] for f in per_layer) // cfg.n_layers


def heads_off(cfg: EncoderConfig) -> Derived:
    """Heads switched off (encoder_core.views.heads_off), head 1 of the last layer: h + 1
    reruns of one layer each (the per-head chart, then the change). encoder_core.views.heads_off
    holds the rerun's current layer and the one before it, whatever the layer, and the final
    norm's rows: ~2 layers' arrays beside the trace. Kept: the effects [h] and the change (its
    logits, the rows' |Δ| [S], two [CLS] maps [h, N] float64). A layer chosen earlier reruns
    more layers: more seconds, the same memory."""
    S, N, h, L, d = cfg.seq_len, cfg.n_tokens, cfg.n_heads, cfg.n_layers, cfg.d_model
    kept = h * F64 + S * F64 + 2 * h * N * F64 + 1000 * F32  # logits: ImageNet-1k's at most
    return Derived(kept, 2 * layer_bytes(cfg) + 4 * S * d * F32,
                   (h + 1) * encode_seconds(cfg) / L)


RELEVANCE_PER_ENCODE = 1.4  # relevance's time / encode's (benchmarks/backward.py: 1.32–1.44)


def relevance(cfg: EncoderConfig) -> Derived:
    """encoder_core.relevance of one class, either method: kept, the map [N] float32; beside
    it, the gradients of `backward(…, weights=False)`, field for field the trace's shapes
    (`trace_bytes`), and a layer's softmax backward, two [h, S, S] float32 temporaries
    (tracemalloc: the trace's bytes × 1.01–1.13 at 144–200 tokens; benchmarks/backward.py:
    81 MB for ViT-S's 88 MB trace); RELEVANCE_PER_ENCODE forwards' time. A page that shows
    two classes by one method declares two."""
    S, N, h = cfg.seq_len, cfg.n_tokens, cfg.n_heads
    return Derived(N * F32, trace_bytes(cfg) + 2 * h * S * S * F32,
                   RELEVANCE_PER_ENCODE * encode_seconds(cfg))
