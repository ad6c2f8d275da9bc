"""Positional encoding: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/positional.py`, words `lens/texts/<lang>/positional.toml`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, encode
from encoder_core.pipeline.patches import shuffle_patches
from encoder_core.views.analysis import fixed_permutation, permutation_gap
from encoder_core.views.explain import pe_terms
from encoder_core.views.predictions import most_similar_other
from encoder_core.views.vit_views import position_cosines

from ..handout.sheets import Sheet, heatmap, make_sheet, said
from ..lesson.tasks import Fixed, Question, Spec

if TYPE_CHECKING:
    from ..context import PageContext


POSITIONAL_TABLE = ("pe_sum",)  # positional.shuffle: the formula, table and curves help reason
POSITIONAL_SIMILAR = ("pe_similarity", "pe_sum")


def positional_similar(ctx: PageContext, fixed: Fixed) -> Question:
    """The patch whose position vector is most like patch i's (cosine, i itself left out)."""
    cfg, tr = ctx.cfg, ctx.trace
    i = min(fixed.query, cfg.n_tokens - 1)
    sim = ctx.derived("positions/cos", lambda: position_cosines(tr))  # shared with the page
    row = sim[i]
    best = most_similar_other(row, i)
    G = cfg.grid_size
    return Question(best,
                    {"i": i, "r": i // G, "c": i % G, "G": G, "best": best, "br": best // G,
                     "bc": best % G, "cos": float(row[best]), "below": i + G, "above": i - G},
                    POSITIONAL_SIMILAR, Fixed(query=i), scores=tuple(map(float, row)),
                    exclude=i, grid=G, trace=tr,
                    variant="_vit" if cfg.position == "learned" else "",
                    mistakes=() if cfg.position == "learned" else tuple(
                        (name, j) for name, j in (("below", i + G), ("above", i - G))
                        if 0 <= j < cfg.n_tokens))


SHUFFLE = ("changes", "moves", "same")


def positional_shuffle(ctx: PageContext, fixed: Fixed) -> Question:
    """Positions off, patches shuffled: each patch's output row is the same, moved with its
    patch (permutation equivariance; a concept: the same answer for every model). The reveal
    runs the encoder on the shuffled image without and with the positions."""
    cfg, tr = ctx.cfg, ctx.trace
    i = min(fixed.query, cfg.n_tokens - 1)

    def evidence() -> dict[str, object]:
        def gaps() -> tuple[float, float, int]:
            perm = fixed_permutation(cfg.n_tokens)
            moved = shuffle_patches(tr.image, cfg.patch_size, perm)
            off = replace(cfg, use_pe=False)
            k = cfg.n_prefix
            plain = encode(tr.image, off, tr.params).output[k:]
            gap_off = permutation_gap(encode(moved, off, tr.params).output[k:], plain, perm)
            gap_on = permutation_gap(encode(moved, cfg, tr.params).output[k:],
                                     tr.output[k:], perm)
            return gap_off, gap_on, int(np.flatnonzero(perm == i)[0])
        off_gap, on_gap, n = ctx.derived("lesson/shuffle", gaps)  # type: ignore[misc]
        return {"off": off_gap, "on": on_gap, "n": n,
                "size": float(np.abs(tr.output).max())}

    return Question("moves", {"i": i, "L": cfg.n_layers}, POSITIONAL_TABLE, Fixed(query=i),
                    evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("similar", "patch", positional_similar),
    Spec("shuffle", "choice", positional_shuffle, options=SHUFFLE),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig) -> list[str]:
    """The positions' formulas, in LaTeX that KaTeX (the page's st.latex) and mathtext (the
    sheet, between $…$) both draw. Sinusoidal: PE's definition, its ranges, x_0 = X + PE (the
    page shows them in this order, in three places); learned: x_0 = tokens + pos."""
    N, d, T = cfg.n_tokens, cfg.d_model, cfg.seq_len
    if cfg.position == "learned":
        first = cfg.n_pos - N  # pos_embed's row of patch 0
        return [rf"\underset{{{T} \times {d}}}{{x_0}} = "
                rf"\underset{{{T} \times {d}}}{{\text{{tokens}}}} + "
                rf"\underset{{{T} \times {d}}}{{\text{{pos}}}},\qquad "
                rf"\text{{pos}}[n_{{prefix}} + i] = \text{{pos\_embed}}[{first} + i]"
                rf"\quad (i = 0 \ldots {N - 1})"]
    angle = r"\left(\frac{pos}{10000^{2i/d_{model}}}\right)"
    x0 = rf"\underset{{{N} \times {d}}}{{x_0}} = \underset{{{N} \times {d}}}{{X}}"
    return [rf"PE(pos, 2i) = \sin\!{angle},\qquad PE(pos, 2i+1) = \cos\!{angle}",
            rf"pos = 0 \ldots {N - 1},\quad i = 0 \ldots d_{{model}}/2 - 1 = {d // 2 - 1},\quad "
            rf"PE\;[{N} \times {d}]",
            x0 + (rf" + \underset{{{N} \times {d}}}{{PE}}" if cfg.use_pe
                  else r"\quad(\text{use\_pe} = \text{off})")]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr = ctx.cfg, ctx.trace
    d = cfg.d_model
    x0 = heatmap(ctx, tr.x0, "x0", row=ctx.row(ctx.query), tokens="rows")
    maths = [f"${f}$" for f in formulas(cfg)]  # as the page shows them
    if cfg.position == "learned":
        r, k = ctx.row(ctx.query), 0
        worked = [f"x0[{r}, {k}] = tokens[{r}, {k}] + pos[{r}, {k}] = "
                  f"{tr.tokens[r, k]:+.4f} + {tr.pos[r, k]:+.4f} = {tr.x0[r, k]:+.4f}"]
        pictures = [heatmap(ctx, tr.pos, "pos", row=ctx.row(ctx.query), tokens="rows"), x0]
    else:
        ex = pe_terms(ctx.query, 1, d)
        worked = [f"PE[{ex.pos}, {ex.column}] = {ex.func}({ex.pos} / 10000^({2 * ex.i}/{d})) = "
                  f"{ex.func}({ex.angle:.4f}) = {ex.value:+.4f}",
                  t("w_stored", v=float(tr.pe[ex.pos, ex.column]))]
        pictures = [heatmap(ctx, tr.pe, "PE", row=ctx.query), x0]
        if not cfg.use_pe:
            worked.append(t("w_pe_off"))
    return make_sheet(ctx, maths, worked, pictures)
