"""The logit's shares (direct logit attribution), on The stack and the ViT page for weights
with a classification head: a class's logit written as the sum of what each layer's heads,
each layer's FFN, the embedding, the positions, the prefix tokens and the biases add to the
residual stream, read through the head with the final norm's per-row scale held at its value
in the trace (`encoder_core.views.logit_attribution`). Shown: a layers × (heads, FFN) grid of
the shares and the rest in a table that sums to the logit. A post-norm model (the note's
encoder) has a LayerNorm after every sub-layer: the section says why the sum does not apply.

The pure part (`shares_grid`, `rest_rows`) makes the picture and the table from the shares;
`logit_shares_section` places them. Cached per trace and class (`ctx.derived`). Its texts are
its own: `lens/texts/<lang>/logit_shares.toml`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from encoder_core import predict, top_classes
from encoder_core.views.logit_attribution import NotDecomposable, logit_attribution, total

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts
from ..pictures import Picture
from .logit_lens import width_share
from .prediction import class_names
from .relevance import class_choice

OWNER = "logit_shares"  # lens/texts/<lang>/logit_shares.toml
TOP_K = 5  # the classes offered: the prediction's top 5
REST = ("embedding", "positions", "prefix", "biases", "head_bias")  # the shares beside the grid


def shares_grid(t: Texts, shares: object, name: str, key: str) -> Picture:
    """The layers × (heads, FFN) grid of a `LogitShares`: heads [L, h] and ffn [L] side by
    side, each share written in, one signed scale."""
    heads = np.asarray(shares.heads, np.float64)  # [L, h]
    grid = np.concatenate([heads, np.asarray(shares.ffn, np.float64)[:, None]], axis=1)
    L, h = heads.shape
    cells = [[f"{v:+.2f}" for v in row] for row in grid]
    return Picture(key, figures.label_grid,
                   (grid, cells, t("shares_title", name=name, logit=float(shares.logit)),
                    t("shares_col_axis"), t("shares_row_axis"),
                    [t("shares_layer_n", l=l + 1) for l in range(L)],
                    [str(j + 1) for j in range(h)] + [t("shares_ffn")]),
                   dict(signed=True, colorbar_label=t("shares_scale"), outline_col=h))


def rest_rows(t: Texts, shares: object) -> list[dict[str, str]]:
    """The shares outside the grid, the grid's total, and their sum, the logit: table rows."""
    heads, ffn = float(np.sum(shares.heads)), float(np.sum(shares.ffn))
    items = [(t("shares_heads_sum"), heads), (t("shares_ffn_sum"), ffn)] + [
        (t(f"shares_{part}"), float(getattr(shares, part))) for part in REST]
    part_col, value_col = t("shares_part"), t("shares_value")
    return [{part_col: label, value_col: f"{v:+.4f}"} for label, v in items] + [
        {part_col: t("shares_total"), value_col: f"{float(total(shares)):+.4f}"},
        {part_col: t("shares_logit"), value_col: f"{float(shares.logit):+.4f}"}]


def logit_shares_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """Under a `heading` of the page's size: the text and the formula, the class, the grid and
    the table — or, for a post-norm model, why not."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    params = tr.params
    heading(t("shares_title_section"))
    names = class_names(ctx)
    logits = ctx.derived("prediction/logits", lambda: predict(tr, params))  # [n_classes]
    top, probs = top_classes(logits, min(TOP_K, len(logits)))
    top = [int(c) for c in top]

    def split(c: int) -> object:  # a LogitShares, once per trace and class
        return ctx.derived(f"inside/shares/{c}", lambda: logit_attribution(tr, params, c))

    try:  # the predicted class first: whether the model's logits split at all
        split(top[0])
    except NotDecomposable:  # its message is the core's English: ours says why, translated
        st.info(t("shares_post_norm" if not cfg.norm_first else "shares_pre_logits"))
        return
    st.write(t("shares_text", L=cfg.n_layers, h=cfg.n_heads))
    st.latex(r"\text{logit}_c = \sum_{l,\,j} h_{l,j} + \sum_l f_l + e + p + r + \beta + b_c")
    labels = {c: t("shares_option", name=names[c], p=100 * float(p))
              for c, p in zip(top, probs, strict=True)}
    target = class_choice(f"{ctx.id}_shares_class", t("shares_class"), top, top[0], labels)
    shares = split(target)
    grid = shares_grid(t, shares, names[target], f"logit_shares_{ctx.id}")
    share = width_share(grid, most=0.95)  # a wide grid on its own, its table below
    grid_at, table_at = st.columns([share, 1 - share])
    if share > 0.6:  # no room beside it
        table_at = st.columns([3, 2])[0]
    widgets.show(ctx, grid, where=grid_at, shows=f"logit_shares_{target}")
    table_at.table(rest_rows(t, shares), hide_index=True)
    heads = np.asarray(shares.heads)
    l, j = np.unravel_index(int(np.argmax(np.abs(heads))), heads.shape)
    st.caption(t("shares_caption", name=names[target], l=int(l) + 1, j=int(j) + 1,
                 v=float(heads[l, j]), logit=float(shares.logit)))
