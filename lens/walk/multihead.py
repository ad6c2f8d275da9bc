"""Multi-head attention: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/multihead.py`, words `lens/texts/<lang>/multihead.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, patch_rows
from encoder_core.pipeline.attention import zero_heads
from encoder_core.views.analysis import head_contributions

from .. import figures
from ..handout.sheets import MAX_HEADS, Sheet, make_sheet, said
from ..latex import dims
from ..lesson.tasks import PAGE, Fixed, Question, Spec, shape_task

if TYPE_CHECKING:
    from ..context import PageContext


def multihead_concat(ctx: PageContext, fixed: Fixed) -> Question:
    """The h heads side by side: [T × h·d_k] = [T × d_model]."""
    cfg = ctx.cfg
    T, h, dk, d = float(cfg.seq_len), float(cfg.n_heads), float(cfg.d_head), float(cfg.d_model)
    return shape_task(ctx.trace.layers[0].concat,
                      {"T": cfg.seq_len, "h": cfg.n_heads, "dk": cfg.d_head,
                       "d": cfg.d_model}, PAGE, fixed,
                      mistakes=(("times", (T, h * d)), ("one", (T, dk)),
                                ("stacked", (h * T, dk))))


def has_heads(cfg: EncoderConfig) -> bool:
    """One head switched off among others: with h = 1 there is nothing left to mix."""
    return cfg.n_heads >= 2


MIX = ("its_own", "all", "none")


def multihead_mix(ctx: PageContext, fixed: Fixed) -> Question:
    """Switch one head off (its columns of concat set to 0): every column of attn_out changes,
    because W_O mixes the heads (a concept: the same answer for every model with two heads or
    more). The reveal does it on the live layer."""
    cfg, tr = ctx.cfg, ctx.trace
    l, hd = min(fixed.layer, cfg.n_layers - 1), min(fixed.head, cfg.n_heads - 1)

    def evidence() -> dict[str, object]:
        layer, lp = tr.layers[l], tr.params.layers[l]
        concat = layer.concat.astype(np.float64)  # [T, d]
        off = zero_heads(concat, (hd,), cfg.n_heads)
        W = lp.W_O.astype(np.float64)
        change = np.abs((concat - off) @ W)  # attn_out − attn_out without the head (b_O cancels)
        return {"changed": int(np.sum(change.max(axis=0) > 1e-6)), "d": cfg.d_model,
                "dk": cfg.d_head, "a0": hd * cfg.d_head, "a1": (hd + 1) * cfg.d_head - 1,
                "concat_changed": int(np.sum(np.abs(concat - off).max(axis=0) > 0)),
                "mean": float(change.mean())}

    return Question("all", {"l": l + 1, "hd": hd + 1}, PAGE, Fixed(l, hd), evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("concat", "number", multihead_concat),
    Spec("mix", "choice", multihead_mix, applies=has_heads, options=MIX),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig, has_bias: bool) -> list[str]:
    """head_h, concat and attn_out with their shapes, in LaTeX that KaTeX (the page's
    st.latex) and mathtext (the sheet, between $…$) both draw; `has_bias`: W_O has b_O."""
    T, d, h, dh = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.d_head
    return [r"\text{head}_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^{\top}}{s}\right) V_h:\quad "
            + dims(T, T) + r" \cdot " + dims(T, dh) + " = " + dims(T, dh),
            r"\text{concat} = [\,\text{head}_1, \ldots, \text{head}_{" + str(h) + r"}\,]:\quad "
            + str(h) + r" \times " + dims(T, dh) + r" \rightarrow " + dims(T, d),
            r"\text{attn\_out} = \text{concat} \cdot W_O" + (" + b_O" if has_bias else "")
            + r":\quad " + dims(T, d) + r" \cdot " + dims(d, d)
            + (r" + " + dims(d) if has_bias else "") + " = " + dims(T, d)]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr, l, i = ctx.cfg, ctx.trace, ctx.layer, ctx.row(ctx.query)
    h, G = cfg.n_heads, cfg.grid_size
    layer, lp = tr.layers[l], tr.params.layers[l]
    bias = " + b_O" if lp.b_O is not None else ""
    maths = [f"${f}$" for f in formulas(cfg, lp.b_O is not None)]  # as the page shows them
    # what each head adds: head_h[i] · W_O[rows of h, 0], as the multi-head page sums them
    parts = [float(p) for p in head_contributions(layer.heads[:, i:i + 1], lp.W_O)[:, 0, 0]]
    b0 = float(lp.b_O[0]) if lp.b_O is not None else 0.0
    shown = " + ".join(f"({p:+.3f})" for p in parts[:MAX_HEADS]) + (" + …" if h > MAX_HEADS
                                                                      else "")
    worked = [t("w_heads_sum", i=i, l=l + 1, h=h),
              f"attn_out[{i}, 0] = Σ_h head_h[{i}] · W_O[rows of h, 0]{bias and ' + b_O[0]'}"
              f" = {shown}" + (f" + ({b0:+.3f})" if bias else "")
              + f" = {sum(parts) + b0:+.4f}",
              t("w_stored", v=float(layer.attn_out[i, 0]))]
    k = min(h, MAX_HEADS)
    maps = patch_rows(layer.attn[:k, i, :], cfg).reshape(k, G, G)
    title = ctx.t("grid_title" if h <= MAX_HEADS else "grid_title_first", h=h, k=k,
                  i=ctx.query, l=l + 1)
    grid = figures.attention_grid(tr.image, maps, [ctx.t("head_n", n=n + 1)
                                                   for n in range(k)], title,
                                  ncols=min(k, 4), query=ctx.query,
                                  colorbar_label=ctx.t("weight"))
    return make_sheet(ctx, maths, worked, [grid])
