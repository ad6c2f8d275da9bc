"""Multi-head attention: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/multihead.py`, words `lens/texts/<lang>/multihead.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from encoder_core import patch_rows
from encoder_core.views.analysis import head_contributions
from encoder_core.views.predictions import top_patch

from .. import figures
from ..handout.sheets import MAX_HEADS, Sheet, Walk, dims, make_sheet
from ..lesson.tasks import (
    PAGE,
    Fixed,
    Spec,
    Task,
    attention_model,
    has_trained_attention,
    shape_task,
)

if TYPE_CHECKING:
    from ..context import PageContext


YES_NO = ("yes", "no")


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


TASKS: tuple[Spec, ...] = (
    Spec("multihead.concat", "number", multihead_concat),
    Spec("multihead.same", "choice", multihead_same, possible=has_trained_attention,
         options=YES_NO),
)


# --- its sheet of the handout --------------------------------------------------------------------

def sheet(w: Walk) -> Sheet:
    cfg, tr, l, i = w.cfg, w.trace, w.layer, w.row
    T, d, h, dk, G = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.grid_size
    layer, lp = tr.layers[l], tr.params.layers[l]
    bias = " + b_O" if lp.b_O is not None else ""
    formulas = [rf"$\mathrm{{head}}_h = \mathrm{{softmax}}(Q_h K_h^\top / s)\, V_h:\quad "
                rf"{dims(T, T)} \cdot {dims(T, dk)} = {dims(T, dk)}$",
                rf"$\mathrm{{concat}} = [\mathrm{{head}}_1, \ldots, \mathrm{{head}}_{{{h}}}]:"
                rf"\quad {h} \times {dims(T, dk)} \rightarrow {dims(T, d)}$",
                rf"$\mathrm{{attn\_out}} = \mathrm{{concat}} \cdot W_O{bias}:\quad {dims(T, d)}"
                rf" \cdot {dims(d, d)} = {dims(T, d)}$"]
    # what each head adds: head_h[i] · W_O[rows of h, 0], as the multi-head page sums them
    parts = [float(p) for p in head_contributions(layer.heads[:, i:i + 1], lp.W_O)[:, 0, 0]]
    b0 = float(lp.b_O[0]) if lp.b_O is not None else 0.0
    shown = " + ".join(f"({p:+.3f})" for p in parts[:MAX_HEADS]) + (" + …" if h > MAX_HEADS
                                                                      else "")
    worked = [w.t("w_heads_sum", i=i, l=l + 1, h=h),
              f"attn_out[{i}, 0] = Σ_h head_h[{i}] · W_O[rows of h, 0]{bias and ' + b_O[0]'}"
              f" = {shown}" + (f" + ({b0:+.3f})" if bias else "")
              + f" = {sum(parts) + b0:+.4f}",
              w.t("w_stored", v=float(layer.attn_out[i, 0]))]
    k = min(h, MAX_HEADS)
    maps = patch_rows(layer.attn[:k, i, :], cfg).reshape(k, G, G)
    title = w.page("multihead", "grid_title" if h <= MAX_HEADS else "grid_title_first", h=h,
                   k=k, i=w.query, l=l + 1)
    grid = figures.attention_grid(tr.image, maps, [w.page("multihead", "head_n", n=n + 1)
                                                   for n in range(k)], title,
                                  ncols=min(k, 4), query=w.query,
                                  colorbar_label=w.page("multihead", "weight"))
    return make_sheet(w, formulas, worked, [grid])
