"""Switch heads off, on every page that shows it (★ What a ViT looks at, and
The stack for weights with a classification head, the shapes model's): choose a layer and some
of its heads; the encoder runs again from that layer with those heads' outputs set to 0 before
W_O (`encoder_core.views.heads_off`). Shown: the prediction before and after (top 5), how much
each output row moved, the last layer's [CLS] map before and after (a ViT), and, per head of
the layer, how much switching it off alone moves the top class's logit (h reruns). Every
rerun is cached through `ctx.derived`, named by its layer and heads. Its texts are its own:
`lens/texts/<lang>/heads_off.toml`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from encoder_core import predict, top_classes
from encoder_core.views.heads_off import head_logit_effects, heads_off_change
from encoder_core.views.vit_views import on_grid

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts
from .prediction import TOP_K, class_names

OWNER = "heads_off"  # lens/texts/<lang>/heads_off.toml



def choices(ctx: PageContext) -> tuple[int, tuple[int, ...]]:
    """The layer (0-based; the last by default: its reruns are the cheapest) and the heads
    switched off (0-based, sorted; head 1 by default), kept per page."""
    t = Texts(ctx.lang, OWNER)
    L, H = ctx.cfg.n_layers, ctx.cfg.n_heads
    layer_key, heads_key = f"heads_off_layer_{ctx.id}", f"heads_off_heads_{ctx.id}"
    state = st.session_state
    if state.get(layer_key) not in range(L):  # new, or another model's layers
        state[layer_key] = L - 1
    if heads_key not in state or any(j not in range(H) for j in state[heads_key]):
        state[heads_key] = [0]
    texts = Texts(ctx.lang, OWNER)  # a widget keeps its format_func: never through ctx
    left, right = st.columns([1, 2])
    layer = (left.select_slider(t("off_layer"), options=list(range(L)), key=layer_key,
                                format_func=lambda i: f"{i + 1} / {L}") if L > 1 else 0)
    heads = right.multiselect(t("off_heads"), list(range(H)), key=heads_key,
                              format_func=lambda j: texts("off_head_n", n=j + 1))
    return layer, tuple(sorted(heads))


def ranked(ctx: PageContext, logits: np.ndarray, names: list[str]) -> list[dict[str, object]]:
    """The top classes of `logits` as table rows: rank, class, probability, logit."""
    t = Texts(ctx.lang, OWNER)
    classes, probs = top_classes(logits, min(TOP_K, len(logits)))
    columns = [t(k) for k in ("off_rank", "off_class", "off_prob", "off_logit")]
    return [dict(zip(columns, (k + 1, names[c], f"{100 * p:.2f} %", f"{logits[c]:+.4f}"),
                     strict=True)) for k, (c, p) in enumerate(zip(classes, probs, strict=True))]


def heads_off_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """The section under a `heading` of the page's size: the text, the layer and the heads,
    the prediction before and after, the rows' change, the [CLS] map, the per-head chart.
    Weights without a classification head: one line that says so."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    L, H, n, G = cfg.n_layers, cfg.n_heads, cfg.n_prefix, cfg.grid_size
    heading(t("off_title"))
    if tr.params.head is None:
        st.caption(t("off_no_head"))
        return
    st.write(t("off_text", h=H, d_head=cfg.d_head))
    st.latex(r"\text{concat}'[:,\ j\,d_k : (j+1)\,d_k] = 0 \ \ (j \in H), \qquad"
             r"\text{attn\_out}' = \text{concat}'\,W_O + b_O")
    layer, heads = choices(ctx)
    names = class_names(ctx)
    logits = ctx.derived("prediction/logits", lambda: predict(tr, tr.params))  # [n_classes]
    top = int(np.argmax(logits))
    heads_text = t("off_one" if len(heads) == 1 else "off_many",
                     list=", ".join(str(j + 1) for j in heads))  # "head 1", "heads 1, 3"

    # the per-head chart first: it needs no choice of heads
    effects = ctx.derived(f"heads_off/effects/layer{layer}/class{top}",  # [h]
                          lambda: head_logit_effects(tr, layer, top))
    chart_at, chart_text = st.columns([3, 2])
    widgets.picture(ctx, figures.bar_panels, effects[None],
                    [t("off_effect_panel")], t("off_head_axis"),
                    t("off_effect_axis"),
                    t("off_effect_title", l=layer + 1, L=L),
                    tick_labels=[str(j + 1) for j in range(H)], size=(5.2, 3.2),
                    key=f"heads_off_effects_{ctx.id}", where=chart_at)
    biggest = int(np.argmax(np.abs(effects)))  # the head that moves the logit most
    chart_text.markdown(t("off_effect_text", h=H, l=layer + 1, name=names[top]))
    chart_text.caption(t("off_effect_most", j=biggest + 1, delta=float(effects[biggest]),
                           logit=float(logits[top])))

    if not heads:
        st.info(t("off_none"))
        return
    change = ctx.derived(f"heads_off/layer{layer}/heads{heads}",
                         lambda: heads_off_change(tr, layer, heads))
    st.markdown(f"**{t('off_pred_title', heads=heads_text, l=layer + 1)}**")
    left, right = st.columns(2)
    before = left.container(key=f"heads_off_before_{ctx.id}")  # keyed: a browser test reads them
    after = right.container(key=f"heads_off_after_{ctx.id}")
    before.markdown(t("off_before"))
    before.table(ranked(ctx, logits, names), hide_index=True)
    after.markdown(t("off_after", heads=heads_text, l=layer + 1))
    after.table(ranked(ctx, change.logits, names), hide_index=True)
    new_top = int(np.argmax(change.logits))
    st.caption(t("off_top_same" if new_top == top else "off_top_moved",
                   name=names[top], new=names[new_top], a=float(logits[top]),
                   b=float(change.logits[top])))

    rows_at, cls_at = st.columns(2) if change.cls_before is not None else (st.container(), None)
    widgets.picture(ctx, figures.bars, [change.row_change],
                    [t("off_rows_panel", heads=heads_text, l=layer + 1)],
                    t("off_rows_axis", n=n) if n else t("off_rows_axis_note"),
                    [t("off_rows_value")], t("off_rows_title"),
                    highlight=0 if n else None, key=f"heads_off_rows_{ctx.id}", where=rows_at)
    rows_at.caption(t("off_rows_caption", mean=float(change.row_change.mean()),
                        top=float(change.row_change.max()),
                        i=int(np.argmax(change.row_change))))
    if cls_at is not None:  # a ViT: the last layer's [CLS] row, mean over the heads
        maps = np.stack([change.cls_before.mean(axis=0), change.cls_after.mean(axis=0)])  # [2, N]
        widgets.picture(ctx, figures.attention_grid, tr.image, on_grid(maps, G),
                        [t("off_before_short"), t("off_after_short")],
                        t("off_cls_title", L=L), ncols=2,
                        colorbar_label=t("off_cls_scale"),
                        key=f"heads_off_cls_{ctx.id}", where=cls_at)
        cls_at.caption(t("off_cls_same" if layer == L - 1 else "off_cls_caption", L=L,
                           l=layer + 1))
