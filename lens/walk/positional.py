"""Positional encoding: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/positional.py`, words `lens/texts/<lang>/positional.toml`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import encode
from encoder_core.pipeline.patches import shuffle_patches
from encoder_core.views.analysis import fixed_permutation, permutation_gap
from encoder_core.views.explain import pe_terms
from encoder_core.views.predictions import most_similar_other
from encoder_core.views.vit_views import position_cosines

from ..handout.sheets import Sheet, Walk, dims, heatmap, make_sheet
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

def sheet(w: Walk) -> Sheet:
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
    return make_sheet(w, formulas, worked, pictures)
