"""The handout's sheets, one per step of the walk: what a page of the PDF says and shows.

A `Sheet` is data: the step's title and one-line takeaway, its formulas with the live shapes
(matplotlib mathtext between `$…$`, words outside it: mathtext draws CJK as dummy glyphs),
the page's worked entry with its numbers, its key pictures (`Drawn`: PNG bytes from
`lens.figures`, drawn as on the page, each with its description from `lens.describe`: the
words the page gives it as its `alt`, printed under it), the learner's lesson answers and the
note's original lines. A step's builder reads the context its page reads
(`lens.context.PageContext`: the trace, the language, the layer, head and query chosen —
`ctx.layer`, `ctx.head`, `ctx.query` — its page's texts `ctx.t`) and no Streamlit state, so
the handout is made and tested without a running app. `lens.handout.pdf` lays sheets out.

Here: what a sheet is, the helpers every step's builder uses and the model's prediction (its
sheet after the steps, when the weights have a classification head). Each step's builder is in
its module of `lens.walk` (`lens/walk/scores.py`: `sheet`), named by its entry in `lens.steps`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import predict, prefix_names, top_classes
from encoder_core.views.explain import DotTerms, logit_terms

from .. import figures
from ..describe import describe
from ..i18n import Texts
from ..latex import dims  # one shape notation for the pages (KaTeX) and the sheets (mathtext)

if TYPE_CHECKING:
    from ..context import PageContext

OWNER = "handout"  # lens/texts/<lang>/handout.toml
SHOWN_TERMS = 3  # products of a dot product written out before "…"
MAX_HEADS = 8  # maps of a grid, as the pages show at most
TOP_K = 5  # classes of the prediction

Answer = tuple[str, str, str, str]  # (the task, the learner's answer, the right one, result)


def said(ctx: PageContext) -> Texts:
    """The handout's own texts (or common ones) in the context's language: what a sheet says
    in its own words (`ctx.t` is its page's, where the sheet says what the page says)."""
    return ctx.t.of(OWNER)


@dataclass(frozen=True)
class Drawn:
    """A picture of a sheet: its PNG and its description in the sheet's language, the page's
    `alt` with every part (`lens.describe.Description.text`): made from the same call, so it
    says only what the picture shows."""

    png: bytes
    text: str


def drawn(ctx: PageContext, draw: Callable[..., bytes], *args: object,
          **kwargs: object) -> Drawn:
    """The picture `draw(*args, **kwargs)` (a function of `lens.figures`) and its description."""
    return Drawn(draw(*args, **kwargs), describe(draw, args, kwargs, ctx.lang).text)


@dataclass(frozen=True)
class Sheet:
    """One step of the handout. A step's builder fills what the step computes; the handout
    (`lens.handout.book`) frames it with what its registry entry says: its id, title and
    takeaway, the learner's answers and the note's lines."""

    formulas: tuple[str, ...]  # with the live shapes; mathtext between $…$
    worked: tuple[str, ...]  # the page's worked entry, with its numbers (plain text)
    pictures: tuple[Drawn, ...]  # the step's key pictures, each with its description
    lines: tuple[str, ...] = ()  # what else the step says in words (a ViT's differences, …)
    note_head: int = 0  # only the first lines of the step's note (0: all of them)
    step: str = ""  # the page's id (lens.steps)
    title: str = ""  # "Step {k} of {n} · {title}", e.g. of Scores and softmax
    takeaway: str = ""  # the step in one line
    answers: tuple[Answer, ...] = ()  # the learner's lesson answers on this step
    note: tuple[str, ...] = ()  # the note's original lines (Chinese), math as plain text


def make_sheet(ctx: PageContext, formulas: list[str], worked: list[str],
               pictures: list[Drawn], lines: list[str] | None = None,
               note_head: int = 0) -> Sheet:
    """A step's sheet as its builder makes it (`Sheet`)."""
    return Sheet(formulas=tuple(formulas), worked=tuple(worked), pictures=tuple(pictures),
                 lines=tuple(plain(x) for x in lines or []), note_head=note_head)


Builder = Callable[["PageContext"], Sheet]  # a step's sheet (its entry in lens.steps names it)


def plain(text: str) -> str:
    """A page text without its Markdown (bold, code, links)."""
    text = re.sub(r"\*\*(.+?)\*\*", r"\1", text, flags=re.S)
    text = re.sub(r"`(.+?)`", r"\1", text)
    return re.sub(r"\[(.+?)\]\(.+?\)", r"\1", text).replace("\\\n", "").strip()


def written(terms: DotTerms) -> str:
    """A dot product's first products and its last, as plain text: (a₀)(b₀) + … + (aₙ)(bₙ)."""
    n = len(terms.products)
    shown = [f"({terms.a[k]:.3f})({terms.b[k]:.3f})" for k in range(min(SHOWN_TERMS, n))]
    if n > SHOWN_TERMS + 1:
        shown.append("…")
    if n > SHOWN_TERMS:
        shown.append(f"({terms.a[-1]:.3f})({terms.b[-1]:.3f})")
    return " + ".join(shown)


def heatmap(ctx: PageContext, m: np.ndarray, name: str, *, signed: bool = True, xlabel: str = "",
            ylabel: str = "", label: str = "", row: int | None = None,
            col: int | None = None, tokens: str = "") -> Drawn:
    """A matrix as the pages draw it (`widgets.matrix`): titled with its name and shape."""
    m, t = np.atleast_2d(m), said(ctx)
    return drawn(ctx, figures.heatmap, m, figures.matrix_title(name, m),
                 xlabel or t("features"), ylabel or t("tokens"),
                 signed=signed, colorbar_label=label, size=(5.0, 4.0),
                 highlight_row=row, highlight_col=col, mean_of=t("mean_of"),
                 prefix=prefix_names(ctx.cfg) if tokens else [], prefix_cols=tokens == "both")


# --- what the sheets of a layer share -------------------------------------------------------

def layer_input(ctx: PageContext, l: int) -> np.ndarray:
    """[T, d] what layer l's projections read: its input x, or LN₁(x) in pre-norm order."""
    tr = ctx.trace
    if ctx.cfg.norm_first:
        return tr.layers[l].ln_1.out
    return tr.x0 if l == 0 else tr.layers[l - 1].out


# --- the prediction (weights with a classification head) --------------------------------------

def prediction(ctx: PageContext, labels: tuple[str, ...] = ()) -> Sheet | None:
    """The top classes and the top logit written out, the classes named by `labels` (the
    head's class names in logit order; "class c" without); None without a head."""
    tr, params, t = ctx.trace, ctx.trace.params, said(ctx)
    if params.head is None:
        return None
    logits = predict(tr, params)  # [n_classes]
    classes, probs = top_classes(logits, min(TOP_K, params.head.n_classes))
    names = list(labels) or [f"class {c}" for c in range(params.head.n_classes)]
    top = logit_terms(tr, params, int(classes[0]))
    lines = [f"{k + 1}. {names[c]}   {100 * p:.2f} %   (logit {logits[c]:+.4f})"
             for k, (c, p) in enumerate(zip(classes, probs, strict=True))]
    formulas = [rf"$\mathrm{{logit}}_c = \mathrm{{pooled}} \cdot W_{{head}}[:, c] + b_c:\quad "
                rf"{dims(1, params.head.W_head.shape[0])} \cdot "
                rf"{dims(params.head.W_head.shape[0], params.head.n_classes)}$",
                r"$p = \mathrm{softmax}(\mathrm{logits})$"]
    dot = top.rows[0]
    worked = [t("w_logit", c=names[int(classes[0])]),
              f"logit = {written(dot)} + ({top.biases[0]:+.3f}) = {dot.total + top.biases[0]:+.4f}",
              t("w_stored", v=top.logit)]
    return Sheet(step="prediction", title=t("prediction_title"),
                 takeaway=t("prediction_takeaway"), formulas=tuple(formulas),
                 worked=tuple(worked), pictures=(), lines=tuple(lines))
