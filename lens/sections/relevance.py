"""A class's relevance, on every page that shows it (★ What a ViT looks at, The stack) for
weights with a classification head: a class among the top 5 (the predicted one by default)
and a second one beside it, chosen by a click; their relevance maps by Chefer et al.'s method
or the gradient rollout (`encoder_core.relevance`), beside the last layer's attention and the
attention rollout read through the same row (`views.relevance.attention_readout`). Each map is
computed once per trace, class and method (`ctx.derived`); the pages declare its cost
(`lens.page_costs.relevance_terms`). Its texts are its own: `lens/texts/<lang>/relevance.toml`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from encoder_core import predict, relevance, top_classes
from encoder_core.views.relevance import METHODS, attention_readout
from encoder_core.views.vit_views import on_grid, scale_to_max

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts
from .prediction import class_names

OWNER = "relevance"  # lens/texts/<lang>/relevance.toml
TOP_K = 5  # the classes offered: the top 5 of the prediction


def class_choice(key: str, label: str, options: Sequence[int], default: int,
                 labels: dict[int, str]) -> int:
    """One class among `options` by a click (pills): the learner's, while it is among them,
    else `default` (a new image or model has its own top classes; clicking the chosen class
    again keeps it)."""
    state = st.session_state
    if state.get(key) not in options:
        state[key] = default
    st.pills(label, list(options), format_func=labels.get, key=key, selection_mode="single")
    return state[key] if state[key] in options else default


def relevance_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """Under a `heading` of the page's size: the text, the two classes and the method, the
    attention and rollout maps, the two classes' relevance maps on one scale."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    params, G, L = tr.params, cfg.grid_size, cfg.n_layers
    names = class_names(ctx)
    logits = ctx.derived("prediction/logits", lambda: predict(tr, params))  # [n_classes]
    top, probs = top_classes(logits, min(TOP_K, len(logits)))
    top = [int(c) for c in top]
    labels = {c: t("rel_option", name=names[c], p=100 * float(p))
              for c, p in zip(top, probs, strict=True)}
    row = t("rel_row_cls" if cfg.cls_token else "rel_row_mean")
    heading(t("rel_title"))
    st.write(t("rel_text", L=L, row=row, k=len(top)))
    chosen = class_choice(f"{ctx.id}_rel_class", t("rel_class"), top, top[0], labels)
    other = (class_choice(f"{ctx.id}_rel_other", t("rel_other"), top, top[1], labels)
             if len(top) > 1 else chosen)
    left, right = st.columns(2)
    texts = t  # kept by the widget: never ctx (the trace)
    method = left.radio(t("rel_method"), METHODS, horizontal=True, key=f"{ctx.id}_rel_method",
                        format_func=lambda m: texts(f"rel_method_{m}"))
    left.caption(t(f"rel_about_{method}"))
    for line in formula(method, cfg.n_prefix, cfg.cls_token, L):
        right.latex(line)
    if len(top) == 1:
        st.info(t("rel_one_class"))
    elif chosen == other:
        st.info(t("rel_same"))
    last, rolled = ctx.derived("relevance/readout", lambda: attention_readout(tr))  # [N] each
    maps = np.stack([ctx.derived(f"relevance/{method}/{c}",  # [2, N]
                                 lambda c=c: relevance(tr, params, c, method))
                     for c in (chosen, other)])
    where_at, why_at = st.columns(2)
    widgets.picture(ctx, figures.attention_grid, tr.image,
                    on_grid(scale_to_max(np.stack([last, rolled])), G),
                    [t("rel_where_attn", L=L), t("rel_where_rollout", L=L)],
                    t("rel_where_title", row=row), ncols=2, vmax=1.0,
                    colorbar_label=t("rel_where_scale"), key="relevance_where", where=where_at)
    widgets.picture(ctx, figures.attention_grid, tr.image, on_grid(maps, G),
                    [names[chosen], names[other]],
                    t("rel_why_title", method=t(f"rel_method_{method}")), ncols=2,
                    colorbar_label=t("rel_why_scale"), key="relevance_why",
                    shows=f"relevance_{method}_{chosen}_{other}", where=why_at)
    st.caption(t("rel_caption", row=row, a=names[chosen], b=names[other],
                 max_a=float(maps[0].max()), max_b=float(maps[1].max())))


def formula(method: str, n_prefix: int, cls: bool, L: int) -> tuple[str, str]:
    """The method in two lines of LaTeX: a layer's fused heads, then the product over the
    layers and the row the map reads."""
    read = (r"m = R[0,\ %d{:}]" % n_prefix if cls
            else r"m = \tfrac{1}{N}\textstyle\sum_{i \ge %d} R[i,\ %d{:}]" % (n_prefix, n_prefix)
            if n_prefix else r"m = \tfrac{1}{N}\textstyle\sum_{i} R[i,\ {:}]")
    if method == "chefer":
        return (r"\bar{A}_l = \mathbb{E}_h\big[(\nabla A_l \odot A_l)^{+}\big]",
                r"R \leftarrow R + \bar{A}_l R\ \ (l = 1 \dots %d),\quad " % L + read)
    return (r"\bar{A}_l = \big(\mathbb{E}_h[\nabla A_l \odot A_l]\big)^{+}",
            r"R = \mathrm{rows}(\bar{A}_{%d} + I) \cdots \mathrm{rows}(\bar{A}_1 + I),\quad "
            % L + read)
