"""Step 4 of 10 — the sinusoidal positional encoding, added to the embedded patches."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.explain import pe_terms
from encoder_core.views.vit_steps import similarity_mosaic
from encoder_core.views.vit_views import position_cosines
from lens import blocks, chrome, figures, widgets
from lens.context import PageContext
from lens.runner import run_page


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg, tr = ctx.cfg, ctx.trace
    N, d, G = cfg.n_tokens, cfg.d_model, cfg.grid_size


    def learned_positions() -> None:
        """The page for a ViT's learned pos_embed: the table, its similarity on the grid, the
        sum."""
        S_, n_pos = cfg.seq_len, cfg.n_pos
        first = n_pos - N  # pos_embed's row of patch 0
        prefix = (ctx.t("learned_prefix", names=", ".join(prefix_names(cfg)[:first])) if first
                  else "")
        if cfg.n_registers:
            prefix += ctx.t("learned_registers")
        st.write(ctx.t("learned_intro", n=n_pos, d=d, first=first, prefix=prefix))
        if not cfg.use_pe:
            st.warning(ctx.t("pe_off"))
        widgets.section(ctx, "pe_formula", lambda: st.latex(
            rf"\underbrace{{x_0}}_{{{S_} \times {d}}} = "
            rf"\underbrace{{\text{{tokens}}}}_{{{S_} \times {d}}} + "
            rf"\underbrace{{\text{{pos}}}}_{{{S_} \times {d}}},\qquad "
            rf"\text{{pos}}[n_{{prefix}} + i] = \text{{pos\_embed}}[{first} + i]"
            rf"\quad (i = 0 \ldots {N - 1})"))
        widgets.note_original(ctx)

        st.subheader(ctx.t("learned_matrix"))
        left, right = st.columns([2, 3])
        with left:
            query = widgets.query_picker(ctx)

        def table() -> None:
            widgets.matrix(ctx, tr.params.pos_embed, "pos_embed", key="pos_embed",
                           xlabel=ctx.t("features"), ylabel=ctx.t("tokens"),
                           highlight_row=first + query, tokens="rows" if n_pos == S_ else "")
            st.caption(ctx.t("learned_caption", row=first + query, q=query))

        widgets.section(ctx, "pe_matrix", table, where=right)
        widgets.section(ctx, "pe_similarity", lambda: learned_similarity(query))
        widgets.section(ctx, "pe_sum", lambda: learned_sum(query))


    def learned_similarity(query: int) -> None:
        """The learned positions' similarity on the grid: the mosaic, the query's tile."""
        names = ", ".join(prefix_names(cfg))
        st.subheader(ctx.t("learned_sim_title"))
        sim = ctx.derived("positions/cos", lambda: position_cosines(tr))  # [N, N] patches
        mosaic = ctx.derived("positions/mosaic", lambda: similarity_mosaic(sim, G))
        if cfg.n_prefix:
            st.write(ctx.t("learned_sim_intro", N=N, G=G, names=names))
        else:
            st.write(ctx.t("learned_sim_intro_no_prefix", N=N, G=G))
        left, right = st.columns([3, 2])
        widgets.picture(ctx, figures.position_mosaic, mosaic, G, ctx.t("mosaic_title"),
                        ctx.t("tile_col"), ctx.t("tile_row"), query=query, key="pos_mosaic",
                        where=left)
        with right:
            st.markdown(f"**{ctx.t('learned_one')}**")
            widgets.matrix(ctx, sim[query].reshape(G, G), ctx.t("learned_grid_name"),
                           key="pe_sim_grid", xlabel=ctx.t("grid_col"), ylabel=ctx.t("grid_row"),
                           colorbar_label="cos", signed=True, size=(3.8, 3.4), window=False)
            st.markdown(neighbour_facts(sim, query))


    def learned_sum(query: int) -> None:
        """tokens + pos = x0."""
        names = ", ".join(prefix_names(cfg))
        st.subheader(ctx.t("learned_sum"))
        left, right = st.columns(2)
        widgets.matrix(ctx, tr.tokens, ctx.t("word_tokens"), key="pe_tokens", where=left,
                       highlight_row=ctx.row(query), tokens="rows", window=False)
        widgets.matrix(ctx, tr.pos, "pos", key="pe_pos", where=right,
                       highlight_row=ctx.row(query), tokens="rows", window=False)
        left, right = st.columns(2)
        widgets.matrix(ctx, tr.x0, ctx.t("x0_sum" if cfg.use_pe else "x0_tokens"),
                       key="pe_x0", where=left, highlight_row=ctx.row(query), tokens="rows")
        right.caption(ctx.t("learned_sum_caption", names=names, q=query, row=ctx.row(query),
                            none=ctx.t("learned_sum_none") if cfg.n_registers else ""))


    def neighbour_facts(sim, query: int) -> str:
        """How similar the query's position is to the next one in the sequence and the one below."""
        row, column = divmod(query, G)
        facts = []
        if query + 1 < N:
            note = f" {ctx.t('no_right')}" if column == G - 1 else ""
            facts.append(ctx.t("next_in_seq", r=query + 1, note=note,
                               c=f"{sim[query, query + 1]:.3f}"))
        if row < G - 1:
            facts.append(ctx.t("below", r=query + G, c=f"{sim[query, query + G]:.3f}"))
        else:
            facts.append(ctx.t("no_below"))
        return ctx.t("query_is", q=query) + ctx.t("sep").join(facts) + ctx.t("end")


    if cfg.position == "learned":  # a ViT: its own table, no formula
        learned_positions()
        chrome.footer(ctx)
        st.stop()

    st.write(ctx.t("intro", d=d))
    if not cfg.use_pe:
        st.warning(ctx.t("pe_off"))
    st.latex(r"PE(pos, 2i) = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right),\qquad "
             r"PE(pos, 2i+1) = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
    widgets.section(ctx, "pe_formula", lambda: st.latex(
        rf"pos = 0 \ldots {N - 1},\quad i = 0 \ldots d_{{model}}/2 - 1 = {d // 2 - 1},\quad "
        rf"PE\;[{N} \times {d}]"))
    widgets.note_original(ctx)

    # --- the matrix, one value worked out, the columns as curves ---------------------------------
    matrix_box = st.container()  # above the example, drawn once its row and column are chosen
    st.subheader(ctx.t("example"))
    inputs, worked = st.columns([2, 3])
    c1, c2 = inputs.columns(2)
    pos = c1.number_input(ctx.t("ex_pos"), 0, N - 1, min(5, N - 1), step=1, key="pe_ex_pos")
    col = c2.number_input(ctx.t("ex_col"), 0, d - 1, min(2, d - 1), step=1, key="pe_ex_col")
    ex = pe_terms(pos, col, d)
    two_i = "2i" if ex.func == "sin" else "2i+1"
    inputs.latex(rf"\text{{{ctx.t('ex_col')}}}\ {col} = {two_i}\ \Rightarrow\ i = {ex.i}")
    inputs.latex(rf"\frac{{2i}}{{d_{{model}}}} = \frac{{{2 * ex.i}}}{{{d}}} = {ex.exponent:.5g}")
    with worked:
        st.latex(r"\begin{aligned}"
                 rf"PE({pos}, {col}) &= \{ex.func}\!\left(\frac{{{pos}}}"
                 rf"{{10000^{{{ex.exponent:.5g}}}}}\right) "
                 rf"= \{ex.func}\!\left(\frac{{{pos}}}{{{ex.denominator:.5g}}}\right) \\"
                 rf"&= \{ex.func}({ex.angle:.5g}) = {ex.value:.6f}"
                 r"\end{aligned}")
        blocks.stored_check(ctx, ex.value, tr.pe[pos, col], f"pe[{pos}, {col}]")
        st.caption(ctx.t("ex_caption"))


    def pe_matrix() -> None:
        """The table, its sines and cosines, and a window of its numbers."""
        st.subheader(ctx.t("pe_matrix"))
        sin_col, cos_col = st.columns(2)  # the whole width: each is read at a tablet's width
        for name, offset, where in (("sin_name", 0, sin_col), ("cos_name", 1, cos_col)):
            widgets.matrix(ctx, tr.pe[:, offset::2], ctx.t(name), key=f"pe_{offset}",
                           shows=("sines", "cosines")[offset],
                           xlabel=ctx.t("pair_i"), ylabel=ctx.t("pos"), where=where,
                           highlight_row=pos,
                           highlight_col=col // 2 if col % 2 == offset else None,
                           size=(3.6, 3.6), window=False)
        below, _ = st.columns([3, 2])
        widgets.number_window(ctx, tr.pe, "PE", key="pe", where=below)
        below.caption(ctx.t("pe_caption"))
        if d // 2 > figures.MAX_SIDE:
            below.caption(ctx.t("pe_avg"))


    def curves() -> None:
        """Columns of PE as curves over the positions."""
        st.subheader(ctx.t("curves"))
        defaults = sorted({0, 1, 2 * (d // 16), 2 * (d // 8)})
        cols = st.multiselect(ctx.t("pick_cols"), list(range(d)), default=defaults,
                              key="pe_cols", max_selections=8)
        if cols:
            labels = []
            for c in cols:
                f = "sin" if c % 2 == 0 else "cos"
                labels.append(ctx.t("curve_label", c=c, f=f, i=c // 2))
            widgets.picture(ctx, figures.lines, list(range(N)), [tr.pe[:, c] for c in cols],
                            labels, ctx.t("curves_title"), ctx.t("pos"), "PE", size=(8.0, 3.0),
                            key="pe_lines")
            st.caption(ctx.t("curves_caption", N=N))
        else:
            st.info(ctx.t("no_cols"))


    def similarity() -> None:
        """Similarity: in the sequence, and on the image."""
        st.subheader(ctx.t("similarity"))
        sim = ctx.derived("positions/cos", lambda: position_cosines(tr))  # [N, N], once
        left, right = st.columns(2)
        with left:
            widgets.matrix(ctx, sim, ctx.t("sim_name"), key="pe_sim", xlabel=ctx.t("pos_b"),
                           ylabel=ctx.t("pos_a"), colorbar_label="cos", signed=False)
        with right:
            st.write(ctx.t("sim_intro"))
            st.markdown(f"**{ctx.t('grid_title')}.** " + ctx.t("grid_intro", G=G))

        left, right = st.columns([2, 3])
        with left:
            query = widgets.query_picker(ctx)
        with right:
            widgets.matrix(ctx, sim[query].reshape(G, G), ctx.t("grid_name"),
                           key="pe_sim_grid", xlabel=ctx.t("grid_col"), ylabel=ctx.t("grid_row"),
                           colorbar_label="cos", signed=False, size=(5.0, 4.0))
            st.markdown(neighbour_facts(sim, query))


    def pe_sum() -> None:
        """x0 = X + PE."""
        st.subheader(ctx.t("sum"))
        if cfg.use_pe:
            st.latex(rf"\underbrace{{x_0}}_{{{N} \times {d}}} = "
                     rf"\underbrace{{X}}_{{{N} \times {d}}} + \underbrace{{PE}}_{{{N} \times {d}}}")
        else:
            st.latex(rf"\underbrace{{x_0}}_{{{N} \times {d}}} = "
                     rf"\underbrace{{X}}_{{{N} \times {d}}}\quad(\text{{use\_pe}} = \text{{off}})")
            st.info(ctx.t("sum_off"))
        left, right = st.columns(2)
        with left:
            widgets.matrix(ctx, tr.embedded, ctx.t("x_name"), key="pe_X",
                           xlabel=ctx.t("features"), ylabel=ctx.t("pos"))
        with right:
            widgets.matrix(ctx, tr.x0, "x0 = X + PE" if cfg.use_pe else "x0 = X", key="pe_x0",
                           xlabel=ctx.t("features"), ylabel=ctx.t("pos"))
        if cfg.use_pe:
            st.caption(ctx.t("sum_caption"))


    widgets.section(ctx, "pe_matrix", pe_matrix, where=matrix_box)
    widgets.section(ctx, "pe_curves", curves)
    widgets.section(ctx, "pe_similarity", similarity)
    widgets.section(ctx, "pe_sum", pe_sum)
    chrome.footer(ctx)


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
