"""Multi-head attention: its lesson tasks (`TASKS`, in the order asked), its handout sheet
(`sheet`) and its page's figures as view-models (`heads_grid`, `heads_maps`, `concat_matrices`,
`contribution_pictures`: what each picture draws, from a context, without Streamlit — the page
only places them; docs/examples/multihead_figures.py draws them from a trace); page
`pages/multihead.py`, words `lens/texts/<lang>/multihead.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, patch_rows, prefix_names
from encoder_core.pipeline.attention import zero_heads
from encoder_core.views.analysis import (
    contribution_norms,
    head_contributions,
    patch_block,
    prefix_share,
)

from .. import explorer, figures
from ..handout.sheets import MAX_HEADS, Sheet, drawn, make_sheet, said
from ..latex import dims
from ..lesson.tasks import PAGE, Fixed, Question, Spec, cls_mistake, shape_task
from ..pictures import Matrix, Picture

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
                                ("stacked", (h * T, dk)), *cls_mistake(cfg, (T + 1, d))))


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


# --- its page's figures ------------------------------------------------------------------------

MAX_MAPS = 16  # attention maps drawn in the page's grid; more heads are listed but not drawn


def heads_grid(ctx: PageContext, l: int, query: int) -> Picture:
    """Every head's attention over the image from the query patch (the first MAX_MAPS heads),
    one figure: what the page draws when the explorer cannot send every query's maps."""
    cfg, layer = ctx.cfg, ctx.trace.layers[l]
    h, G = cfg.n_heads, cfg.grid_size
    k = min(h, MAX_MAPS)
    rows = layer.attn[:k, ctx.row(query), :]  # [k, T] the query's row of each head
    maps = patch_rows(rows, cfg).reshape(k, G, G)  # [k, N] -> [k, G, G]
    title = (ctx.t("grid_title", h=h, i=query, l=l + 1) if h <= MAX_MAPS
             else ctx.t("grid_title_first", h=h, k=k, i=query, l=l + 1))
    return Picture("mh_grid", figures.attention_grid,
                   (ctx.trace.image, maps, [ctx.t("head_n", n=n + 1) for n in range(k)], title),
                   dict(ncols=min(k, 4), query=query, colorbar_label=ctx.t("weight")))


def heads_maps(ctx: PageContext, l: int) -> explorer.Maps:
    """Every head's map of every query patch, for the explorer: the maps follow the pointer
    (a ViT's prefix rows left out, their share in the tooltip)."""
    cfg, layer = ctx.cfg, ctx.trace.layers[l]
    h, kp = cfg.n_heads, cfg.n_prefix
    names = ", ".join(prefix_names(cfg))
    return explorer.Maps(
        patch_block(layer.attn, kp)[None],  # [1, h, N, N] patch queries × patch keys
        (ctx.t("live_title_vit", h=h, i="{i}", l=l + 1, names=names) if kp
         else ctx.t("live_title", h=h, i="{i}", l=l + 1)), ctx.t("weight"),
        titles=[ctx.t("head_n", n=n + 1) for n in range(h)],
        prefix=prefix_share(layer.attn[:, kp:, :], kp)[None] if kp else None,  # [1, h, N]
        prefix_tip=ctx.t("prefix_tip", names=names, s="{s}"), seq_len=cfg.seq_len)


def concat_matrices(ctx: PageContext, l: int, r: int, j: int) -> tuple[Matrix, Matrix, Matrix]:
    """concat, W_O and attn_out as the page shows them side by side: the query's row r and
    the column j outlined."""
    layer, lp = ctx.trace.layers[l], ctx.trace.params.layers[l]
    size = (3.3, 3.2)
    return (Matrix(layer.concat, ctx.t("concat_name", l=l + 1), "concat",
                   xlabel=ctx.t("concat_x", dh=ctx.cfg.d_head), highlight_row=r, size=size,
                   tokens="rows"),
            Matrix(lp.W_O, ctx.t("W_O_name", l=l + 1), "W_O", xlabel=ctx.t("out_feature"),
                   ylabel=ctx.t("W_O_rows"), highlight_col=j, size=size),
            Matrix(layer.attn_out, ctx.t("attn_out_name", l=l + 1), "attn_out",
                   xlabel=ctx.t("out_feature"), highlight_row=r, highlight_col=j, size=size,
                   tokens="rows"))


def query_contributions(ctx: PageContext, l: int, r: int) -> np.ndarray:
    """[h, 1, d] what each head adds to row r of attn_out: head_h[r] · W_O[rows of h, :]."""
    layer, lp = ctx.trace.layers[l], ctx.trace.params.layers[l]
    return head_contributions(layer.heads[:, r:r + 1, :], lp.W_O)


def contribution_pictures(ctx: PageContext, l: int, query: int, j: int,
                          contrib: np.ndarray) -> tuple[Picture, Picture]:
    """Each head's contribution to the query's row of attn_out (`contrib` [h, 1, d]): the
    norms as bars, and the rows as a heatmap with the column j outlined."""
    h = ctx.cfg.n_heads
    norms = contribution_norms(contrib)[:, 0]  # [h]
    return (Picture("contrib_norms", figures.bar_panels,
                    (norms[None, :], [ctx.t("norm_panel", i=query)], ctx.t("head_axis"),
                     ctx.t("norm_axis"), ctx.t("norms_title", i=query, l=l + 1)),
                    dict(tick_labels=[str(n + 1) for n in range(h)], size=(5.0, 3.4))),
            Picture("contrib", figures.row_heatmap,
                    (contrib[:, 0, :], ctx.t("contrib_name", i=query), ctx.t("out_feature"),
                     ctx.t("head_axis"), [str(n + 1) for n in range(h)]),
                    dict(highlight_col=j, mean_of=ctx.t("mean_of"))))


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
              f"attn_out[{i}, 0] = Σ_h head_h[{i}] · W_O[{t('w_rows_of_h')}, 0]"
              f"{bias and ' + b_O[0]'}"
              f" = {shown}" + (f" + ({b0:+.3f})" if bias else "")
              + f" = {sum(parts) + b0:+.4f}",
              t("w_stored", v=float(layer.attn_out[i, 0]))]
    k = min(h, MAX_HEADS)
    maps = patch_rows(layer.attn[:k, i, :], cfg).reshape(k, G, G)
    title = ctx.t("grid_title" if h <= MAX_HEADS else "grid_title_first", h=h, k=k,
                  i=ctx.query, l=l + 1)
    grid = drawn(ctx, figures.attention_grid, tr.image, maps,
                 [ctx.t("head_n", n=n + 1) for n in range(k)], title, ncols=min(k, 4),
                 query=ctx.query, colorbar_label=ctx.t("weight"))
    return make_sheet(ctx, maths, worked, [grid])
