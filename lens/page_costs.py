"""What a page derives on top of its trace — its pictures, the explorer's payload, the core's
views it runs — as the `Derived` terms of `encoder_core.cost`, declared per page: a page's entry
in the registry (`lens.steps`) names its function here (`costs=page_costs.stack`), and
`page_cost(cfg, terms)` sums them for the memory budget (`lens.admission`). Also the cost of
Compare's variant traces (`compare_variants`) and of the walk as a PDF (`handout_cost`).

Shapes as in encoder_core/trace.py: N = n_tokens, S = seq_len, d = d_model, h = n_heads,
L = n_layers. No Streamlit: the numbers only.
"""

from __future__ import annotations

from collections.abc import Callable

from encoder_core import EncoderConfig
from encoder_core.config import ConfigError
from encoder_core.cost import (
    ELEMENTWISE64_PER_S,
    F32,
    F64,
    MATMUL64_GFLOPS,
    Cost,
    Derived,
    encode_seconds,
    head_statistics,
    heads_off,
    layer_bytes,
    params_bytes,
    patch_pca,
    relevance,
    rollout,
    trace_bytes,
)

from . import explorer

Terms = Callable[[EncoderConfig, bool], list[Derived]]
"""A page's derived work at a configuration, `head` True when its weights have a
classification head (the shapes model, a checkpoint with one): what the relevance maps need."""

# A picture (lens.figures → PNG), measured at the defaults and at 1,024 tokens (the same within
# 10 %: the maps are G × G, a matrix is block-averaged to at most MAX_SIDE columns): drawing
# one holds ~3 MB plus ~0.35 MB per attention map in it; its PNG is ~100 kB plus ~24 kB a map.
PICTURE_PEAK_BASE = 3 * 2**20
PICTURE_PEAK_PER_MAP = 360_000
PICTURE_PNG_BASE = 100_000
PICTURE_PNG_PER_MAP = 24_000
PICTURE_SECONDS = 0.05  # one picture's drawing, a map table ~0.2–0.3 s


def explorer_payload(n_panels: int, n_tokens: int, copied: int = 0) -> Derived:
    """The explorer's blob with n_panels maps of every query (lens.explorer.payload): float16
    maps, kept in the payload cache; while built, the float32 maps scaled and their float16
    copy (+ `copied` bytes of attn rows gathered into a new array first). Only when they fit;
    else the picker alone (~0.25 MB)."""
    if not explorer.fits(n_panels, n_tokens):
        return Derived(explorer.FIXED, 0, 0.0)
    maps16 = 2 * n_panels * n_tokens * n_tokens
    return Derived(maps16 + explorer.FIXED, copied + 2 * maps16 + maps16, maps16 / 2e8)

def pictures(maps: list[int]) -> Derived:
    """Pictures drawn one after another, `maps[i]` attention maps in picture i (0: a chart or a
    heatmap): their PNGs kept (in the picture cache), the largest drawing's temporaries."""
    if not maps:
        return Derived(0, 0, 0.0)
    return Derived(sum(PICTURE_PNG_BASE + PICTURE_PNG_PER_MAP * m for m in maps),
                   PICTURE_PEAK_BASE + PICTURE_PEAK_PER_MAP * max(maps),
                   PICTURE_SECONDS * len(maps) + 0.005 * sum(maps))

def patch_similarity(cfg: EncoderConfig) -> Derived:
    """The patch similarity (lens/sections/similarity.py) of one layer: the unit rows [N, d]
    float32 kept (derived cache) and, when they fit the explorer (explorer.rows_fit), their
    float16 copy in its payload, else the picker's payload and one server map; beside them
    while computed, the rows in float64 and their quotient [N, d] each."""
    N, d = cfg.n_tokens, cfg.d_model
    payload = 2 * N * d + explorer.FIXED if explorer.rows_fit(N, d) else explorer.FIXED
    return Derived(N * d * F32 + payload, 2 * N * d * F64, 3 * N * d / ELEMENTWISE64_PER_S)


def similarity_terms(cfg: EncoderConfig) -> list[Derived]:
    """`patch_similarity`, and over the explorer's cap the map the server draws."""
    live = explorer.rows_fit(cfg.n_tokens, cfg.d_model)
    return [patch_similarity(cfg)] + ([] if live else [pictures([1])])

def relevance_terms(cfg: EncoderConfig) -> list[Derived]:
    """A class's relevance beside the attention (lens/sections/relevance.py): two classes' maps by
    one method (`encoder_core.cost.relevance` each); the last layer's attention and the
    rollout of the row the head reads (`views.relevance.attention_readout`: [N] float64 each
    kept, a layer's fused heads and its step [S, S] float64 beside them, L·(h + 7)·S² element
    passes, as `rollout` counts them); two pictures of two maps each."""
    S, N, h, L = cfg.seq_len, cfg.n_tokens, cfg.n_heads, cfg.n_layers
    readout = Derived(2 * N * F64, 3 * S * S * F64, L * (h + 7) * S * S / ELEMENTWISE64_PER_S)
    return [relevance(cfg), relevance(cfg), readout, pictures([2, 2])]


# --- inside the model, layer by layer (lens/sections/logit_lens.py, logit_shares.py,
# patching.py, faithfulness.py): with a head only ---------------------------------------------

N_CLASSES = 1000  # the logits a head gives at most (ImageNet-1k's): what a lens keeps per row
FAITH_STEPS = 10  # the faithfulness curves' steps: FAITH_STEPS + 1 points each


def logit_lens(cfg: EncoderConfig) -> Derived:
    """Both lenses (`views.logit_lens`): kept, [L+1, n_classes] and [L+1, S, n_classes] float32;
    beside them one depth's normed rows [S, d] float64 and its logits [S, n_classes] float64;
    (L+1)·S rows through the final norm and the head (a d × n_classes product each)."""
    S, d, L, C = cfg.seq_len, cfg.d_model, cfg.n_layers, N_CLASSES
    return Derived((L + 1) * (S + 1) * C * F32, S * d * F64 + S * C * F64,
                   2 * (L + 1) * S * d * C / (MATMUL64_GFLOPS * 1e9))


def logit_shares(cfg: EncoderConfig) -> Derived:
    """One class's shares (`views.logit_attribution`): kept, [L, h] and [L] float64; beside
    them each layer's heads' outputs through W_O, [h, S, d] float64; a pass over the layers."""
    S, d, h, L = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.n_layers
    return Derived((L * h + L + 8) * F64, h * S * d * F64,
                   2 * L * h * S * d * d / (MATMUL64_GFLOPS * 1e9))


def patching(cfg: EncoderConfig) -> Derived:
    """Patching one image into another (`views.patching.patching_map`): B's trace (kept in the
    traces' cache, `trace_bytes`) and the map [L, S] float64; beside them a partial pass's
    layers; one pass from each layer for each of the S tokens: S·(L+1)/2 forwards' time."""
    S, L = cfg.seq_len, cfg.n_layers
    return Derived(trace_bytes(cfg) + L * S * F64, 2 * layer_bytes(cfg),
                   S * (L + 1) / 2 * encode_seconds(cfg))


def faithfulness(cfg: EncoderConfig) -> Derived:
    """The deletion and insertion curves of five orders (`views.faithfulness`): 2 · 5 ·
    (FAITH_STEPS + 1) forwards, one at a time (a trace's worth beside them), the curves kept;
    the two relevance maps they order by are the relevance section's (`relevance_terms`)."""
    runs = 2 * 5 * (FAITH_STEPS + 1)
    return Derived(runs * 2 * F64, trace_bytes(cfg), runs * encode_seconds(cfg))


def inside_terms(cfg: EncoderConfig) -> list[Derived]:
    """The four sections inside the model, with their pictures: the lens grid and the patch
    map (2 maps), the shares grid, the images A and B and one patching map per layer, the two
    pictures of curves."""
    L = cfg.n_layers
    return [logit_lens(cfg), logit_shares(cfg), patching(cfg), faithfulness(cfg),
            pictures([0, 2, 0, 0, L, 0, 0])]


def stack(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    """Rollout, head statistics, the explorer with the maps that fit (pages/stack.py: at most 6
    layers × 8 heads; all of them, else the chosen layer, else none), its pictures: the layer ×
    head table when the explorer does not carry every layer, two rollout maps, two value grids,
    the output heatmap; the PCA of the output's patch rows and its three pictures; with a head,
    two classes' relevance (`relevance_terms`) and the sections inside the model
    (`inside_terms`)."""
    N, L, h, S = cfg.n_tokens, cfg.n_layers, cfg.n_heads, cfg.seq_len
    n_l, n_h = min(L, 6), min(h, 8)  # pages/stack.py MAX_GRID_LAYERS, MAX_GRID_HEADS
    live = n_l if explorer.fits(n_l * n_h, N) else (1 if explorer.fits(n_h, N) else 0)
    terms = [rollout(cfg), head_statistics(cfg)]
    if live:  # attn[heads] gathered per layer, then stacked: [live, n_h, N, N] float32
        terms.append(explorer_payload(live * n_h, N, n_h * S * S * F32 + live * n_h * N * N * F32))
    else:
        terms.append(explorer_payload(n_h, N))  # the picker alone
    table = [n_l * n_h] if live < n_l else []
    terms.append(pictures(table + [1, 1, 0, 0, 0]))
    terms += [patch_pca(cfg), pictures([0, 1, 0])]  # its first component, mask and colours
    terms += similarity_terms(cfg)
    return terms + (relevance_terms(cfg) + inside_terms(cfg) if head else [])

def multihead(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    S, d, h, N = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.n_tokens
    gap = Derived(0, 3 * S * d * F64, 2 * S * d * d / (MATMUL64_GFLOPS * 1e9))  # head_sum_gap
    live = explorer.fits(h, N)  # else the server draws the first ≤ 16 maps
    grid = [] if live else [min(h, 16)]
    return [gap, explorer_payload(h, N), pictures(grid + [0, 0, 0, 0, 0])]


def scores(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    """scaling_demo on one head (3 softmaxes kept, [S, S] float32) and divisor_sweep(S, …)
    (Q, K [S, 1024] float64, scores, their softmax and entropy [S, S] float64)."""
    S = cfg.seq_len
    demo = Derived(3 * S * S * F32, S * S * F32 + S * S * F32 + 3 * S * S * F64,
                   3 * S * S * 20 / ELEMENTWISE64_PER_S)
    widths = max(1024, cfg.d_head)
    sweep = Derived(0, 2 * S * widths * F64 + 6 * S * S * F64,
                    2 * S * S * 2 * widths / (MATMUL64_GFLOPS * 1e9)
                    + 12 * 2 * 20 * S * S / ELEMENTWISE64_PER_S)
    return [demo, sweep]

def vit(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    """cls maps [L, h, N]; rollout of row 0 with a discard (partition, masks, indices of
    S² float64 per layer); token norms [L, S]; the explorer of one layer's heads; the PCA of
    the output's patch rows; the heads switched off (`heads_off`); with a head, two classes'
    relevance (`relevance_terms`) and the sections inside the model (`inside_terms`)."""
    if not cfg.cls_token:
        return []
    S, N, h, L, d = cfg.seq_len, cfg.n_tokens, cfg.n_heads, cfg.n_layers, cfg.d_model
    rollout = Derived(N * F64, 6 * S * S * F64,
                      L * 40 * S * S / ELEMENTWISE64_PER_S)
    norms = Derived(L * S * F64, S * d * F64, L * S * d / ELEMENTWISE64_PER_S)
    k = min(h, 12)
    terms = [Derived(L * h * N * F64, 0, 0.0), rollout, norms, heads_off(cfg)]
    live = explorer.fits(k, N)
    terms.append(explorer_payload(k, N, k * S * S * F32 if live else 0))
    # the DINO maps and their masks, the rollout, the layer × head table, (the patch's maps),
    # the norm map; heads switched off: the per-head chart, the rows' change, the [CLS] maps
    terms.append(pictures([k, k, 1, L * k] + ([] if live else [k]) + [0, 0, 0, 2]))
    terms += [patch_pca(cfg), pictures([0, 1, 0])]  # its first component, mask and colours
    terms += similarity_terms(cfg)
    return terms + (relevance_terms(cfg) + inside_terms(cfg) if head else [])


def compare(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    """The non-trace work of Compare: the shuffled image, the output gaps [S, d] and the
    entropy of one layer's attention for the two settings ([h, N, S] float64 temporaries)."""
    S, N, d, h = cfg.seq_len, cfg.n_tokens, cfg.d_model, cfg.n_heads
    image = cfg.image_size**2 * cfg.channels * F32
    gaps = Derived(2 * S * d * F32, 2 * S * d * F32 + 3 * image, 0.0)
    entropy = Derived(0, 3 * h * N * S * F64 + h * N * S, 2 * 6 * h * N * S / ELEMENTWISE64_PER_S)
    k = min(h, 8)  # the heads shown: PE on / off, the moved table, the shuffled image, the
    #                gaps' heatmaps, settings A and B
    return [gaps, entropy, pictures([k, k, 0, 4, 0, 0, k, k])]


def addnorm(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    S, d = cfg.seq_len, cfg.d_model
    return [Derived(4 * S * F64, 3 * S * d * F64, 2 * 3 * S * d / ELEMENTWISE64_PER_S)]


def positional(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    if cfg.position != "learned":
        return []
    N, d, G = cfg.n_tokens, cfg.d_model, cfg.grid_size
    mosaic = (G * (G + 1) - 1) ** 2 * F64
    return [Derived(N * N * F64 + mosaic, 2 * N * d * F64,
                    2 * N * N * d / (MATMUL64_GFLOPS * 1e9))]


def ffn(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    if not cfg.use_ffn:
        return []
    return [Derived(0, cfg.seq_len * cfg.d_ff, cfg.n_layers * cfg.seq_len * cfg.d_ff / 1e9)]


# How it learns works on the shapes model whatever the sidebar's settings: its architecture.
SHAPES_ARCHITECTURE = EncoderConfig(image_size=224, patch_size=16, channels=1, d_model=64,
                                    n_heads=4, n_layers=2, d_ff=128)
LEARN_STEPS = 10  # the most steps one run adds ("ten more steps")


def learn(cfg: EncoderConfig, head: bool = False) -> list[Derived]:
    """How it learns, on the shapes model (not `cfg`): its walk kept (the trace and its
    gradients: two traces' worth, and the weights' gradients), ten updates' traces and weights
    while they run (the weights before, after and Adam's two moments), and its pictures."""
    shapes = SHAPES_ARCHITECTURE
    t, p = trace_bytes(shapes), params_bytes(shapes)
    walk = Derived(2 * t + p, t, 2.5 * encode_seconds(shapes))
    steps = Derived(4 * p, t + 2 * p, LEARN_STEPS * 2.5 * encode_seconds(shapes))
    return [walk, steps, pictures([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0])]


def page_cost(cfg: EncoderConfig, terms: Terms | None, head: bool = False) -> Cost:
    """The predicted cost of what a page derives on top of its trace (not the trace), from its
    `terms` (its registry entry's `costs`; None: it only indexes the trace): bytes = the
    results kept + the largest temporaries of one computation (they run one after another),
    seconds = their sum.

    "stack": the rollout (float64 [S, S] products over every layer) and the head statistics
    ([h, N, S] float64 temporaries per layer), the explorer's payload when it fits, the PCA of
    the patch features (`patch_pca`), the patch similarity (`patch_similarity`);
    "compare": only its non-trace work (the gaps, the entropies of the two settings): its
    variant traces (`compare_variants`) are each a trace of their own, to be admitted with
    `trace_cost` of their configuration; "vit": the [CLS] maps, the row-0 rollout with a
    discard ratio, the token norms, the explorer, the PCA, the patch similarity, the heads
    switched off (`heads_off`: ~2 layers' arrays while it reruns); "stack" and "vit" with a
    `head`: two classes' relevance (a trace's worth of gradients each, one at a time);
    "scores": the scaling demo
    and the divisor sweep; "multihead": the head-sum check and the explorer; the other pages
    derive a few rows at most (Cost(0, 0.0)).
    """
    derived = terms(cfg, head) if terms is not None else []
    if not derived:
        return Cost(0, 0.0)
    kept = sum(t.kept for t in derived)
    return Cost(kept + max(t.transient for t in derived), sum(t.seconds for t in derived))


def compare_variants(cfg: EncoderConfig) -> dict[str, EncoderConfig]:
    """The configurations of the traces Compare asks for beside the page's own, by name, at
    its default choices (pages/compare.py's `plan`): PE on / off on the image and on its shuffled
    copy (one of the image's equals the page's own trace: left out), and the two settings
    side by side (n_heads 4 and 8, each left out when it is the page's own configuration or
    impossible). The shuffled image's traces have the configuration of the image's (another
    image, the same cost). A model that fixes the architecture, or the d_model choice (which
    lens ties to d_ff = 4·d_model), are the app's to map: the names say what each is."""
    out: dict[str, EncoderConfig] = {}
    on, off = cfg.replace(use_pe=True), cfg.replace(use_pe=False)
    if on != cfg:
        out["pe_on"] = on
    if off != cfg:
        out["pe_off"] = off
    out["shuffled_pe_on"], out["shuffled_pe_off"] = on, off
    for side, n_heads in (("settings_a", 4), ("settings_b", 8)):
        try:
            variant = cfg.replace(n_heads=n_heads)
        except ConfigError:
            continue
        if variant != cfg:
            out[side] = variant
    return out


# --- the walk as a handout (lens.handout) ---------------------------------------------------

HANDOUT_FIXED_BYTES = 96 * 2**20  # matplotlib's pages and pictures, the PDF being written
HANDOUT_SECONDS = 6.0  # its pages at any size (the text, the fonts' subsets, the images)


def handout_cost(cfg: EncoderConfig) -> Cost:
    """The predicted cost of the PDF of the walk: bytes = the trace it reads (kept alive through
    the build, which runs after the page's run released it) + the pictures' largest
    temporaries (an [S, max(S, d_ff)] matrix block-averaged in float64, twice) + what
    matplotlib holds; seconds = a fixed part + the stack's maps. benchmarks/handout.py measured
    the trace + 70–90 MB (defaults: 145 MB, predicted 157; heaviest: 1,672 MB, predicted
    1,760) and 5.3–6.7 s at either."""
    S = cfg.seq_len
    temporaries = 2 * S * max(S, cfg.d_ff) * 8
    seconds = HANDOUT_SECONDS + 1e-6 * cfg.n_layers * cfg.n_heads * S
    return Cost(trace_bytes(cfg) + temporaries + HANDOUT_FIXED_BYTES, seconds)
