"""The handout's sheets, one per step of the walk: what a page of the PDF says and shows.

A `Sheet` is data: the step's title and one-line takeaway, its formulas with the live shapes
(matplotlib mathtext between `$…$`, words outside it: mathtext draws CJK as dummy glyphs),
the page's worked entry with its numbers, its key pictures (PNG bytes from `lens.figures`,
drawn as on the page), the learner's lesson answers and the note's original lines. The
builders read a `Walk` — the trace and what the learner chose — and no Streamlit state, so
the handout is made and tested without a running app. `lens.handout.pdf` lays sheets out.

Steps 1–4 (the input: the pipeline, patches, embedding, positions) are here; the layer's
steps and the model's prediction are in `sheets_layer.py`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from encoder_core import EncoderConfig, EncoderTrace, prefix_names
from encoder_core.views.analysis import channel_values, parameter_count, pipeline_steps
from encoder_core.views.explain import DotTerms, affine_terms, dot_terms, pe_terms
from encoder_core.views.vit_steps import vit_differences

from .. import figures
from ..i18n import Texts, worded
from ..pipeline_words import pipeline_captions, pipeline_stages

OWNER = "handout"  # lens/texts/<lang>/handout.toml
SHOWN_TERMS = 3  # products of a dot product written out before "…"

Answer = tuple[str, str, str, str]  # (the task, the learner's answer, the right one, result)


@dataclass(frozen=True)
class Walk:
    """What the handout is made of: the trace and the learner's choices (0-based)."""

    trace: EncoderTrace
    lang: str
    original: np.ndarray  # [h, w, 3] the image as given (downscaled for display)
    layer: int = 0  # the layer the pages show
    head: int = 0  # the head
    query: int = 0  # the query patch (row-major, without the prefix rows)
    labels: tuple[str, ...] = ()  # the classification head's class names, in logit order
    answers: dict[str, tuple[Answer, ...]] = field(default_factory=dict)  # page id -> answers

    @property
    def cfg(self) -> EncoderConfig:
        return self.trace.config

    @property
    def row(self) -> int:
        """The query's row of the sequence (after CLS, …)."""
        return self.cfg.n_prefix + self.query

    def t(self, key: str, **values: object) -> str:
        """A text of the handout (or a common one)."""
        return Texts(self.lang, OWNER)(key, **values)

    def page(self, page_id: str, key: str, **values: object) -> str:
        """A text of a page, where the handout says what the page says."""
        return Texts(self.lang, page_id)(key, **values)


@dataclass(frozen=True)
class Sheet:
    """One step of the handout. A step's builder fills what the step computes; the handout
    (`lens.handout.book`) frames it with what its registry entry says: its id, title and
    takeaway, the learner's answers and the note's lines."""

    formulas: tuple[str, ...]  # with the live shapes; mathtext between $…$
    worked: tuple[str, ...]  # the page's worked entry, with its numbers (plain text)
    pictures: tuple[bytes, ...]  # PNG, the step's key pictures
    lines: tuple[str, ...] = ()  # what else the step says in words (a ViT's differences, …)
    note_head: int = 0  # only the first lines of the step's note (0: all of them)
    step: str = ""  # the page's id (lens.steps)
    title: str = ""  # "Step 6 of 10 · Scores and softmax"
    takeaway: str = ""  # the step in one line
    answers: tuple[Answer, ...] = ()  # the learner's lesson answers on this step
    note: tuple[str, ...] = ()  # the note's original lines (Chinese), math as plain text


def sheet(w: Walk, formulas: list[str], worked: list[str], pictures: list[bytes],
          lines: list[str] | None = None, note_head: int = 0) -> Sheet:
    """A step's sheet as its builder makes it (`Sheet`)."""
    return Sheet(formulas=tuple(formulas), worked=tuple(worked), pictures=tuple(pictures),
                 lines=tuple(plain(x) for x in lines or []), note_head=note_head)


Builder = Callable[[Walk], Sheet]  # a step's sheet (its entry in lens.steps names it)


def plain(text: str) -> str:
    """A page text without its Markdown (bold, code, links)."""
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text, flags=re.S)
    text = re.sub(r"`(.+?)`", r"\1", text)
    return re.sub(r"\[(.+?)\]\(.+?\)", r"\1", text).replace("\\\n", "").strip()


def dims(*sizes: int) -> str:
    """A shape in mathtext: [196 \\times 64]."""
    return "[" + r" \times ".join(str(n) for n in sizes) + "]"


def num(v: float) -> str:
    return f"{v:+.4f}"


def written(terms: DotTerms) -> str:
    """A dot product's first products and its last, as plain text: (a₀)(b₀) + … + (aₙ)(bₙ)."""
    n = len(terms.products)
    shown = [f"({terms.a[k]:.3f})({terms.b[k]:.3f})" for k in range(min(SHOWN_TERMS, n))]
    if n > SHOWN_TERMS + 1:
        shown.append("…")
    if n > SHOWN_TERMS:
        shown.append(f"({terms.a[-1]:.3f})({terms.b[-1]:.3f})")
    return " + ".join(shown)


def heatmap(w: Walk, m: np.ndarray, name: str, *, signed: bool = True, xlabel: str = "",
            ylabel: str = "", label: str = "", row: int | None = None,
            col: int | None = None, tokens: str = "") -> bytes:
    """A matrix as the pages draw it (`widgets.matrix`): titled with its name and shape."""
    m = np.atleast_2d(m)
    return figures.heatmap(m, figures.matrix_title(name, m), xlabel or w.t("features"),
                           ylabel or w.t("tokens"),
                           signed=signed, colorbar_label=label, size=(5.0, 4.0),
                           highlight_row=row, highlight_col=col, mean_of=w.t("mean_of"),
                           prefix=prefix_names(w.cfg) if tokens else [],
                           prefix_cols=tokens == "both")


# --- 1 · the pipeline -------------------------------------------------------------------------

def overview(w: Walk) -> Sheet:
    cfg = w.cfg
    N, D, d, L, S = cfg.n_tokens, cfg.patch_dim, cfg.d_model, cfg.n_layers, cfg.image_size
    o = Texts(w.lang, "overview")
    pipeline = figures.pipeline(w.trace.image, cfg.patch_size, pipeline_captions(o, cfg),
                                pipeline_stages(o, cfg))
    formulas = [w.t("f_image_to_patches") + rf"  ${dims(S, S, cfg.channels)} \rightarrow "
                rf"{dims(N, D)} \rightarrow {dims(cfg.seq_len, d)}$"]
    for s in pipeline_steps(cfg):
        formulas.append(f"{o('step_' + s.id)}:  {worded(s.shape, w.lang)}")
    worked = [w.t("w_parameters", n=parameter_count(cfg), L=L)]
    lines = [o("diff_" + name, mean=channel_values(cfg.pixel_mean),
               std=channel_values(cfg.pixel_std), S=cfg.seq_len,
               R=cfg.n_registers, n=cfg.n_pos, d=d, eps=cfg.ln_eps)
             for name in vit_differences(cfg)]
    # the page shows the whole note; here each step has its own part: the note's title only
    return sheet(w, formulas, worked, [pipeline], lines, note_head=2)


# --- 2 · patches ------------------------------------------------------------------------------

def patches(w: Walk) -> Sheet:
    cfg, tr = w.cfg, w.trace
    S, P, C, G, N, D = (cfg.image_size, cfg.patch_size, cfg.channels, cfg.grid_size,
                        cfg.n_tokens, cfg.patch_dim)
    r, c = divmod(w.query, G)
    grid = figures.image_with_grid(tr.image, P, w.page("patches", "grid_title", G=G, N=N),
                                   highlight=w.query, size=4.0)
    rows = heatmap(w, tr.patches, w.t("word_patches"), signed=cfg.normalises_pixels,
                   xlabel=w.t("pixel_in_patch"), row=w.query, label=w.t("pixel_value"))
    formulas = [rf"${dims(S, S, C)} \rightarrow ({G}\cdot{P}) \times ({G}\cdot{P}) \times {C}"
                rf" \rightarrow {dims(N, D)}$",
                w.t("f_patch_count") + rf"  $N = (S/P)^2 = ({S}/{P})^2 = {N},\quad "
                rf"P \cdot P \cdot C = {P}\cdot{P}\cdot{C} = {D}$"]
    first = ", ".join(f"{v:.3f}" for v in tr.patches[w.query, :4])
    worked = [w.t("w_patch", i=w.query, r=r, c=c, y0=r * P, y1=(r + 1) * P - 1, x0=c * P,
                  x1=(c + 1) * P - 1, D=D, first=first)]
    return sheet(w, formulas, worked, [grid, rows])


# --- 3 · the input embedding ------------------------------------------------------------------

def embedding(w: Walk) -> Sheet:
    cfg, tr = w.cfg, w.trace
    N, D, d, i, j = cfg.n_tokens, cfg.patch_dim, cfg.d_model, w.query, 0
    b = tr.params.b_E
    bias = " + b_E" if b is not None else ""
    formulas = [rf"$\mathrm{{embedded}} = \mathrm{{patches}} \cdot W_E{bias}:\quad "
                rf"{dims(N, D)} \cdot {dims(D, d)} = {dims(N, d)}$"]
    if cfg.n_prefix:
        names = ", ".join(prefix_names(cfg))
        formulas.append(w.t("f_prefix", names=names)
                        + rf"  ${dims(cfg.seq_len, d)}$")
    terms = (affine_terms(tr.patches[i], tr.params.W_E[:, j], float(b[j])) if b is not None
             else dot_terms(tr.patches[i], tr.params.W_E[:, j]))
    worked = [f"embedded[{i}, {j}] = Σ_k patches[{i}, k] · W_E[k, {j}]"
              + (f" + b_E[{j}]" if b is not None else ""),
              f"  = {written(terms)} = {terms.result:+.4f}",
              w.t("w_stored", v=float(tr.embedded[i, j]))]
    shown = tr.tokens if cfg.n_prefix else tr.embedded
    name = (w.page("embedding", "tokens_name", names=", ".join(prefix_names(cfg)))
            if cfg.n_prefix else w.page("embedding", "embedded_name"))
    return sheet(w, formulas, worked,
                 [heatmap(w, shown, name, row=w.row, tokens="rows")])


# --- 4 · positional encoding ------------------------------------------------------------------

def positional(w: Walk) -> Sheet:
    cfg, tr = w.cfg, w.trace
    N, d, T = cfg.n_tokens, cfg.d_model, cfg.seq_len
    x0 = heatmap(w, tr.x0, "x0", row=w.row, tokens="rows")
    if cfg.position == "learned":
        formulas = [rf"$x_0 = \mathrm{{tokens}} + \mathrm{{pos\_embed}}:\quad {dims(T, d)}"
                    rf" + {dims(T, d)} = {dims(T, d)}$"]
        r, k = w.row, 0
        worked = [f"x0[{r}, {k}] = tokens[{r}, {k}] + pos[{r}, {k}] = "
                  f"{tr.tokens[r, k]:+.4f} + {tr.pos[r, k]:+.4f} = {tr.x0[r, k]:+.4f}"]
        pictures = [heatmap(w, tr.pos, "pos", row=w.row, tokens="rows"), x0]
    else:
        formulas = [r"$PE(pos, 2i) = \sin(pos\,/\,10000^{2i/d_{model}}),\quad "
                    r"PE(pos, 2i+1) = \cos(pos\,/\,10000^{2i/d_{model}})$",
                    rf"$i = 0, \ldots, d_{{model}}/2 - 1 = {d // 2 - 1},\quad PE: {dims(N, d)}$",
                    rf"$x_0 = X + PE:\quad {dims(N, d)} + {dims(N, d)} = {dims(N, d)}$"]
        ex = pe_terms(w.query, 1, d)
        worked = [f"PE[{ex.pos}, {ex.column}] = {ex.func}({ex.pos} / 10000^({2 * ex.i}/{d})) = "
                  f"{ex.func}({ex.angle:.4f}) = {ex.value:+.4f}",
                  w.t("w_stored", v=float(tr.pe[ex.pos, ex.column]))]
        pictures = [heatmap(w, tr.pe, "PE", row=w.query), x0]
        if not cfg.use_pe:
            worked.append(w.t("w_pe_off"))
    return sheet(w, formulas, worked, pictures)

