"""The model's prediction, on every page that shows it (the overview, ★ What a ViT looks at):
the top classes with their probabilities, then the top logit written out — the pooled row ·
W_head[:, c] + b_c, term by term (`encoder_core.views.explain.logit_terms`), checked against
`encoder_core.predict`. Its texts are the ViT page's (`lens/texts/<lang>/vit.toml`), wherever
it is drawn."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from encoder_core import predict, top_classes
from encoder_core.checkpoints.load import normalisation_example
from encoder_core.views.explain import logit_terms

from .. import blocks
from ..context import PageContext
from ..i18n import Texts

TOP_K = 5  # classes listed with their probabilities
OWNER = "vit"  # the block's texts are the ViT page's, wherever it is shown
NUMBERED = "numbered"  # the labels' source when the file names no class (`checkpoints.labels`)



def fmt_numbers(values: tuple[float, ...]) -> str:
    """(0.5,) -> "0.5"; (0.485, 0.456, 0.406) -> "(0.485, 0.456, 0.406)"."""
    text = ", ".join(f"{v:g}" for v in values)
    return text if len(values) == 1 else f"({text})"


def class_names(ctx: PageContext) -> list[str]:
    """The head's class names in logit order: the checkpoint's (`info.labels`; "class k" in the
    learner's language when the file names none), or the shapes model's in the learner's
    language."""
    if ctx.model is not None and ctx.model.info.labels_source == NUMBERED:  # "class k": ours
        t = Texts(ctx.lang, OWNER)
        return [t("class_numbered", k=k) for k in range(len(ctx.model.info.labels))]
    if ctx.model is not None:
        return list(ctx.model.info.labels)
    return [ctx.t(f"class_{c}") for c in ctx.head_model.class_names]


def prediction(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """The model's prediction — the top classes with their probabilities, then the top logit
    written out (pooled row · W_head[:, c] + b_c) — on every page that shows it (the overview,
    under a `heading` of its own size, and this one). Weights without a classification head:
    one line that says so."""
    t = Texts(ctx.lang, OWNER)
    tr, params = ctx.trace, ctx.trace.params
    heading(t("pred_title"))
    if params.head is None:
        st.caption(t("pred_none"))
        return
    head, cfg = params.head, ctx.cfg
    names = class_names(ctx)
    logits = ctx.derived("prediction/logits", lambda: predict(tr, params))  # [n_classes]
    classes, probs = top_classes(logits, min(TOP_K, head.n_classes))
    pooled = t(f"pool_{head.pool}", N=cfg.n_tokens, n=cfg.n_prefix,
                 d_in=head.W_head.shape[0])
    extra = ([t("pool_fc_norm")] if head.fc_norm_gamma is not None else []) + (
        [t("pool_pre_logits", r=head.W_pre.shape[1])] if head.W_pre is not None else [])
    st.write(t("pred_text", n=f"{head.n_classes:,}", pooled=" ".join([pooled, *extra])))
    if ctx.weights == "trained" and ctx.settings.source != "sample":
        st.caption(t("pred_off_domain"))
    if ctx.model is not None and ctx.model.info.guessed_normalisation():
        st.warning(t("pred_norm_guessed", mean=fmt_numbers(cfg.pixel_mean),
                     std=fmt_numbers(cfg.pixel_std),
                     example=normalisation_example(cfg.channels)))
    left, right = st.columns([1, 1])
    columns = [t(key) for key in ("col_rank", "col_class", "col_prob", "col_logit")]
    left.table([dict(zip(columns, (k + 1, names[c], f"{100 * p:.2f} %", f"{logits[c]:+.4f}"),
                         strict=True))
                for k, (c, p) in enumerate(zip(classes, probs, strict=True))], hide_index=True)
    if ctx.model is not None:
        source = ctx.model.info.labels_source
        left.caption(t("pred_labels", source=t("labels_numbered") if source == NUMBERED
                       else source))
    best = int(classes[0])
    terms = ctx.derived(f"prediction/terms/{best}", lambda: logit_terms(tr, params, best))
    with right:
        st.markdown(t("pred_arith", c=best, name=names[best]))
        st.latex(r"\text{logit}_{c} = \text{%s} \cdot W_{\text{head}}[:,\, c] + b_c"
                 % t("tex_pooled"))
        two = len(terms.rows) == 2  # DeiT distilled: each head on its row, then their mean
        for r, (row, b, stored) in enumerate(zip(terms.rows, terms.biases, terms.stored,
                                                 strict=True)):
            name = ("CLS", "DIST")[r]
            if two:
                st.markdown(t("pred_dist_row", row=f"[{name}]"))
            lhs = (r"\text{logit}^{\text{%s}}_{%d}" % (name, best) if two
                   else r"\text{logit}_{%d}" % best)
            field = f"{('head', 'head_dist')[r]}(x_{name})[{best}]" if two else f"logits[{best}]"
            blocks.dot_product(ctx, lhs, row, stored, field, bias=b,
                               bias_tex=f"{('b_head', 'b_dist')[r]}[{best}]")
        if len(terms.rows) == 2:
            st.markdown(t("pred_dist_mean", a=terms.stored[0], b=terms.stored[1],
                            logit=terms.logit))
