"""The stack of encoder layers: attention in every layer, rollout, output."""

import numpy as np
import streamlit as st

from encoder_core import patch_rows, prefix_names
from encoder_core.views.analysis import (
    head_statistics,
    patch_block,
    prefix_share,
    rollout_mean_over_queries,
    uniform_attention_reference,
)
from encoder_core.views.rollout import attention_rollout
from lens import chrome, explorer, figures, widgets
from lens.context import PageContext
from lens.lesson.ui import course
from lens.runner import run_page
from lens.sections import meaning
from lens.sections.faithfulness import faithfulness_section
from lens.sections.heads_off import heads_off_section
from lens.sections.logit_lens import logit_lens_section
from lens.sections.logit_shares import logit_shares_section
from lens.sections.patching import patching_section
from lens.sections.pca import pca_section
from lens.sections.relevance import relevance_section
from lens.sections.similarity import similarity_section
from lens.steps import EXTRA_PAGES, STEPS, nav_label
from lens.walk import stack as walk

MAX_GRID_LAYERS = 6  # layers shown in the layer × head grid
MAX_GRID_HEADS = 8  # heads shown at once in the layer × head grid (the learner chooses which)


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg, tr = ctx.cfg, ctx.trace
    in_lesson = ctx.settings.lesson and ctx.student is None  # a class's answers are the class's
    if in_lesson:  # the lesson's end, right below the step's last card: what was right
        course.summary(ctx)
    st.write(ctx.t("intro", L=cfg.n_layers, N=cfg.seq_len, d=cfg.d_model))
    widgets.note_original(ctx)
    meaning.trained_attention_control(ctx)

    top_left, top_right = st.columns([2, 3], gap="large")
    with top_left:
        query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer below
    r = ctx.row(query)  # the query patch's row of the sequence
    with top_right:
        stack_formulas(ctx, query, r)
    layer_head_grid(ctx, query, r)  # --- 1
    rollout(ctx, query, r)  # --- 2
    per_head_statistics(ctx)  # --- 3
    output(ctx, r)  # --- 4
    if tr.params.head is not None:  # a class's relevance: the shapes model, a ViT's head
        relevance_section(ctx, heading=st.subheader)
        for section in (logit_lens_section, logit_shares_section, patching_section,
                        faithfulness_section):  # inside the model, layer by layer
            section(ctx, heading=st.subheader)

    pca_section(ctx, heading=st.subheader)  # --- 5 · PCA of the output's patch rows ----------
    similarity_section(ctx, heading=st.subheader)  # --- 6 · patch similarity, live ------------
    if tr.params.head is not None:  # --- 7 · heads switched off: the shapes model, a ViT's head
        heads_off_section(ctx, heading=st.subheader)

    recap(ctx, lesson_mode=in_lesson)
    chrome.footer(ctx)


def prefix_rows(ctx: PageContext) -> str:
    """The prefix tokens' rows in words ("row 0", "rows 0 … 4")."""
    kp = ctx.cfg.n_prefix
    return ctx.t("rows_one") if kp == 1 else ctx.t("rows_many", last=kp - 1)


def stack_formulas(ctx: PageContext, query: int, r: int) -> None:
    """x_l = EncoderLayer_l(x_{l-1}) and the output, the prefix's rows said."""
    cfg, tr = ctx.cfg, ctx.trace
    T, kp = cfg.seq_len, cfg.n_prefix
    for tex in walk.formulas(cfg, tr.final_ln is not None, ctx.t("word_output")):
        st.latex(tex)  # the handout's sheet shows the same
    if kp:
        st.caption(ctx.t("vit_rows", T=T, names=", ".join(prefix_names(cfg)), N=cfg.n_tokens,
                         i=query, r=r, rows=prefix_rows(ctx)))


def layer_head_grid(ctx: PageContext, query: int, r: int) -> None:
    """The layer × head grid of the query's attention: live in the explorer when it fits,
    drawn by the server otherwise; the prefix's share left out of the maps."""
    cfg, tr = ctx.cfg, ctx.trace
    N, G, T, kp = cfg.n_tokens, cfg.grid_size, cfg.seq_len, cfg.n_prefix
    names = ", ".join(prefix_names(cfg))
    st.subheader(ctx.t("grid"))
    st.write(ctx.t("grid_text", i=query, N=T, G=G))
    layers = widgets.layers_chooser(ctx, cfg.n_layers, key="stack_layers", limit=MAX_GRID_LAYERS)
    heads = widgets.heads_chooser(ctx, cfg.n_heads, key="stack_heads", limit=MAX_GRID_HEADS)
    n_l, n_h = len(layers), len(heads)
    row_labels = [ctx.t("layer_label", l=l + 1) for l in layers]
    col_labels = [ctx.t("head_title", h=h + 1) for h in heads]
    live = list(layers) if explorer.fits(n_l * n_h, N) else []
    if not live and explorer.fits(n_h, N):  # one layer fits: the one chosen here
        live = [widgets.layer_selector(ctx)]
        ctx = ctx.choose(layer=live[0] + 1)
        st.caption(ctx.t("live_one", l=live[0] + 1, n=n_l))
    if live:  # every query's row of the layers sent: the maps follow the pointer
        widgets.query_explorer(ctx, lambda: explorer.Maps(
            # [layers, n_h, N, N]: patch queries × patch keys
            np.stack([patch_block(tr.layers[l].attn[heads], kp) for l in live]),
            (ctx.t("grid_title_vit", i="{i}", G=G, names=names) if kp
             else f"attn[h, {{i}}, :]  ({G} × {G})"), ctx.t("weight"),
            row_labels=[ctx.t("layer_label", l=l + 1) for l in live], col_labels=col_labels,
            prefix=(np.stack([prefix_share(tr.layers[l].attn[heads, kp:, :], kp) for l in live])
                    if kp else None),  # [layers, n_h, N]
            prefix_tip=ctx.t("prefix_tip", names=names, s="{s}"), seq_len=T),
            maps_key=f"stack/{live}/{heads}")
    if live != layers:  # the server draws the layers the explorer does not carry
        if not live:
            widgets.query_explorer(ctx)
            st.caption(ctx.t("live_off", mb=explorer.map_bytes(n_h, N) / 2**20,
                             cap=explorer.MAX_BYTES / 2**20))
        maps = np.stack([patch_rows(tr.layers[l].attn[heads, r, :], cfg).reshape(n_h, G, G)
                         for l in layers])  # [n_l, n_h, G, G]: the patch keys of row r
        share = (1.25 * n_h + 1.6) / (1.25 * MAX_GRID_HEADS + 1.6)  # the figure's width, relative
        where = st.columns([share, 1 - share])[0] if share < 0.9 else st  # few heads: not blown up
        widgets.picture(ctx, figures.attention_table, tr.image, maps,
                        (ctx.t("grid_title_vit", i=query, G=G, names=names) if kp
                         else f"attn[h, {query}, :]  ({G} × {G})"),
                        where=where, row_labels=row_labels, col_labels=col_labels, query=query,
                        colorbar_label=ctx.t("weight"), key="grid")
    if kp:  # what the maps leave out, for the chosen query
        cls = np.stack([prefix_share(tr.layers[l].attn[heads, r, :], kp) for l in layers])
        st.info(ctx.t("grid_left_out" if live else "grid_left_out_static", names=names,
                      lo=100 * cls.min(), hi=100 * cls.max(), i=query))


def rollout(ctx: PageContext, query: int, r: int) -> None:
    """Attention rollout: the query's row and the mean of the patch queries' rows."""
    cfg, tr = ctx.cfg, ctx.trace
    N, G, L, T, kp = cfg.n_tokens, cfg.grid_size, cfg.n_layers, cfg.seq_len, cfg.n_prefix
    st.subheader(ctx.t("rollout"))
    st.write(ctx.t("rollout_text", L=L))
    st.latex(r"\hat{A}_l = \tfrac{1}{2}\,\mathrm{mean}_h(\text{attn}_l) + \tfrac{1}{2}\,I, \qquad"
             r" R = \hat{A}_{%d} \cdots \hat{A}_1 \quad [%d \times %d]" % (L, T, T))
    # [T, T]: on the full matrices, the prefix tokens (CLS) included
    R = ctx.derived("rollout", lambda: attention_rollout([layer.attn for layer in tr.layers]))
    R_mean = rollout_mean_over_queries(R, kp)  # [T] the mean of the patch queries' rows
    c1, c2 = st.columns(2)
    widgets.picture(ctx, figures.attention_table, tr.image,
                    patch_rows(R[r], cfg).reshape(1, 1, G, G),
                    (ctx.t("rollout_query_vit", r=r, i=query) if kp
                     else ctx.t("rollout_query", i=query)), row_labels=[""], col_labels=[""],
                    query=query, panel=3.0, colorbar_label=ctx.t("rollout_weight"),
                    key="rollout_query", where=c1)
    widgets.picture(ctx, figures.attention_table, tr.image,
                    patch_rows(R_mean, cfg).reshape(1, 1, G, G),
                    ctx.t("rollout_mean_vit") if kp else ctx.t("rollout_mean"),
                    row_labels=[""], col_labels=[""], panel=3.0,
                    colorbar_label=ctx.t("rollout_weight"), key="rollout_mean", where=c2)
    st.caption(ctx.t("rollout_caption_vit", r=r, i=query, N=N) if kp
               else ctx.t("rollout_caption", i=query))
    if kp:
        st.info(ctx.t("rollout_vit", T=T, names=", ".join(prefix_names(cfg)), r=r, i=query,
                      p=100 * float(prefix_share(R[r], kp)),
                      m=100 * float(prefix_share(R_mean, kp))))


def per_head_statistics(ctx: PageContext) -> None:
    """Mean attention distance and entropy per head and layer, beside uniform attention's."""
    cfg, tr = ctx.cfg, ctx.trace
    N, G, P, L, H = cfg.n_tokens, cfg.grid_size, cfg.patch_size, cfg.n_layers, cfg.n_heads
    T, kp = cfg.seq_len, cfg.n_prefix
    st.subheader(ctx.t("per_head"))
    distance, entropy = ctx.derived(  # [L, h] each
        "head_statistics",
        lambda: head_statistics([layer.attn for layer in tr.layers], G, P, kp))
    ref_dist, ref_ent = uniform_attention_reference(G, P, kp)
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(ctx.t("distance_text"))
        st.latex(r"D_h = \frac{1}{N}\sum_{i,j} A_{ij}\,\lVert c_i - c_j \rVert_2")
        widgets.picture(ctx, figures.value_grid, distance, ctx.t("distance_title", L=L, H=H),
                        ctx.t("head_axis"), ctx.t("layer_axis"), signed=False, fmt="{:.1f}",
                        row0=1, col0=1, key="distance")
    with c2:
        st.markdown(ctx.t("entropy_text"))
        st.latex(r"H_h = -\frac{1}{N}\sum_{i,j} A_{ij} \ln A_{ij}")
        widgets.picture(ctx, figures.value_grid, entropy, ctx.t("entropy_title", L=L, H=H),
                        ctx.t("head_axis"), ctx.t("layer_axis"), signed=False, fmt="{:.2f}",
                        row0=1, col0=1, key="entropy")
    if kp:
        st.caption(ctx.t("stats_vit", names=", ".join(prefix_names(cfg)), N=N, T=T))
    st.caption((ctx.t("uniform_vit", T=T, dist=ref_dist, ent=ref_ent) if kp
                else ctx.t("uniform", N=N, dist=ref_dist, ent=ref_ent))
               + (" " + ctx.t("random_note") if ctx.weights == "random" else ""))


def output(ctx: PageContext, r: int) -> None:
    """The encoder's output, what reads it (a classifier's head, if any)."""
    cfg, tr = ctx.cfg, ctx.trace
    T, d, L, kp = cfg.seq_len, cfg.d_model, cfg.n_layers, cfg.n_prefix
    st.subheader(ctx.t("output"))
    left, right = st.columns([3, 2], gap="large")
    widgets.matrix(ctx, tr.output, ctx.t("word_output"), key="output", where=left, highlight_row=r,
                   tokens="rows")
    with right:
        if tr.final_ln is not None:  # output = LN(x_L): the final norm, its γ and β
            st.latex(r"\underbrace{\text{%s}}_{%d \times %d} = \gamma \odot "
                     r"\frac{x_{%d} - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta"
                     % (ctx.t("word_output"), T, d, L))
        else:
            st.latex(r"\underbrace{\text{%s}}_{%d \times %d}" % (ctx.t("word_output"), T, d))
        if kp:
            st.write(ctx.t("output_vit" if tr.final_ln is not None else "output_vit_no_norm",
                           L=L, T=T, d=d, names=", ".join(prefix_names(cfg)),
                           rows=prefix_rows(ctx)))
        else:
            st.write(ctx.t("output_text", N=cfg.n_tokens, d=d))
        if ctx.model is not None:  # a checkpoint: its classifier reads this output, if any
            head = tr.params.head
            st.info(ctx.t("head_kept", n=f"{head.n_classes:,}") if head is not None
                    else ctx.t("head_none"))
        if ctx.weights == "trained" and ctx.head_model is not None:
            st.info(ctx.t("trained_note"))


def recap(ctx: PageContext, lesson_mode: bool = False) -> None:
    """The end of the walk: every step in one line each, a link to each, and where to go
    next (the pages after the walk). After a lesson's summary, the links alone."""
    if not lesson_mode:
        st.header(ctx.t("recap_title"))
        st.write(ctx.t("recap_text", n=len(STEPS)))
    with st.container(border=True):
        for info in STEPS:
            st.page_link(info.path, label=nav_label(info, ctx.lang))
            st.caption(info.takeaway_in(ctx.lang))
    st.subheader(ctx.t("next_title"))
    for info in EXTRA_PAGES:
        with st.container(border=True):
            st.page_link(info.path, label=f"**{nav_label(info, ctx.lang)}**")
            st.caption(ctx.t(f"next_{info.id}", hub=ctx.t("hub_title")))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
