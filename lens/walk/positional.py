"""Positional encoding: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/positional.py`, words `lens/texts/<lang>/positional.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from encoder_core import EncoderConfig
from encoder_core.views.explain import pe_terms
from encoder_core.views.predictions import most_similar_other
from encoder_core.views.vit_views import position_cosines

from ..handout.sheets import Sheet, Walk, dims, heatmap, make_sheet
from ..lesson.tasks import Fixed, Spec, Task, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def adds_positions(cfg: EncoderConfig) -> bool:
    """x0 = X + PE: not with the positional encoding switched off (then x0 = X)."""
    return cfg.use_pe


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


TASKS: tuple[Spec, ...] = (
    Spec("positional.shape", "number", positional_shape, applies=adds_positions),
    Spec("positional.similar", "patch", positional_similar),
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
