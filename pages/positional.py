"""The sinusoidal positional encoding, added to the embedded patches."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.explain import pe_terms
from encoder_core.views.vit_steps import similarity_mosaic
from encoder_core.views.vit_views import position_cosines
from lens import blocks, chrome, figures, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.walk import positional as walk


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    if ctx.cfg.position == "learned":  # a ViT: its own table, no formula
        learned_positions(ctx)
    else:  # the note's encoder: the sinusoids
        sinusoidal(ctx)
    chrome.footer(ctx)


# --- a ViT's learned positions ----------------------------------------------------------------

def learned_positions(ctx: PageContext) -> None:
    """The page for a ViT's learned pos_embed: the table, its similarity on the grid, the
    sum."""
    cfg = ctx.cfg
    N, d, n_pos = cfg.n_tokens, cfg.d_model, cfg.n_pos
    first = n_pos - N  # pos_embed's row of patch 0
    prefix = (ctx.t("learned_prefix", names=", ".join(prefix_names(cfg)[:first])) if first
              else "")
    if cfg.n_registers:
        prefix += ctx.t("learned_registers")
    st.write(ctx.t("learned_intro", n=n_pos, d=d, first=first, prefix=prefix))
    if not cfg.use_pe:
        st.warning(ctx.t("pe_off"))
    # the handout's sheet shows the same
    widgets.section(ctx, "pe_formula", lambda: st.latex(walk.formulas(cfg)[0]))
    widgets.note_original(ctx)

    st.subheader(ctx.t("learned_matrix"))
    left, right = st.columns([2, 3])
    with left:
        query = widgets.query_picker(ctx)
    ctx = ctx.choose(query=query)
    widgets.section(ctx, "pe_matrix", lambda: learned_table(ctx, first, query), where=right)
    widgets.section(ctx, "pe_similarity", lambda: learned_similarity(ctx, query))
    widgets.section(ctx, "pe_sum", lambda: learned_sum(ctx, query))


def learned_table(ctx: PageContext, first: int, query: int) -> None:
    """The learned table pos_embed, the query's row highlighted."""
    widgets.matrix(ctx, ctx.trace.params.pos_embed, "pos_embed", key="pos_embed",
                   xlabel=ctx.t("features"), ylabel=ctx.t("tokens"),
                   highlight_row=first + query,
                   tokens="rows" if ctx.cfg.n_pos == ctx.cfg.seq_len else "")
    st.caption(ctx.t("learned_caption", row=first + query, q=query))


def learned_similarity(ctx: PageContext, query: int) -> None:
    """The learned positions' similarity on the grid: the mosaic, the query's tile."""
    cfg, tr = ctx.cfg, ctx.trace
    N, G = cfg.n_tokens, cfg.grid_size
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
        st.markdown(neighbour_facts(ctx, sim, query))


def learned_sum(ctx: PageContext, query: int) -> None:
    """tokens + pos = x0."""
    cfg, tr = ctx.cfg, ctx.trace
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


def neighbour_facts(ctx: PageContext, sim, query: int) -> str:
    """How similar the query's position is to the next one in the sequence and the one below."""
    N, G = ctx.cfg.n_tokens, ctx.cfg.grid_size
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


# --- the note's sinusoidal encoding -----------------------------------------------------------

def sinusoidal(ctx: PageContext) -> None:
    """The formula, the matrix with one value worked out, its columns as curves, how alike
    two positions are, and the sum with the embedded patches."""
    cfg = ctx.cfg
    st.write(ctx.t("intro", d=cfg.d_model))
    if not cfg.use_pe:
        st.warning(ctx.t("pe_off"))
    definition, ranges, _ = walk.formulas(cfg)  # the handout's sheet shows the same
    st.latex(definition)
    widgets.section(ctx, "pe_formula", lambda: st.latex(ranges))
    widgets.note_original(ctx)

    # --- the matrix, one value worked out, the columns as curves ---------------------------------
    matrix_box = st.container()  # above the example, drawn once its row and column are chosen
    pos, col = worked_example(ctx)
    widgets.section(ctx, "pe_matrix", lambda: pe_matrix(ctx, pos, col), where=matrix_box)
    widgets.section(ctx, "pe_curves", lambda: curves(ctx))
    widgets.section(ctx, "pe_similarity", lambda: similarity(ctx))
    widgets.section(ctx, "pe_sum", lambda: pe_sum(ctx))


def worked_example(ctx: PageContext) -> tuple[int, int]:
    """One value PE(pos, col) worked out, against the trace; returns the (pos, col) chosen."""
    N, d = ctx.cfg.n_tokens, ctx.cfg.d_model
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
        blocks.stored_check(ctx, ex.value, ctx.trace.pe[pos, col], f"pe[{pos}, {col}]")
        st.caption(ctx.t("ex_caption"))
    return pos, col


def pe_matrix(ctx: PageContext, pos: int, col: int) -> None:
    """The table, its sines and cosines, and a window of its numbers."""
    pe, d = ctx.trace.pe, ctx.cfg.d_model
    st.subheader(ctx.t("pe_matrix"))
    sin_col, cos_col = st.columns(2)  # the whole width: each is read at a tablet's width
    for name, offset, where in (("sin_name", 0, sin_col), ("cos_name", 1, cos_col)):
        widgets.matrix(ctx, pe[:, offset::2], ctx.t(name), key=f"pe_{offset}",
                       shows=("sines", "cosines")[offset],
                       xlabel=ctx.t("pair_i"), ylabel=ctx.t("pos"), where=where,
                       highlight_row=pos,
                       highlight_col=col // 2 if col % 2 == offset else None,
                       size=(3.6, 3.6), window=False)
    below, _ = st.columns([3, 2])
    widgets.number_window(ctx, pe, "PE", key="pe", where=below)
    below.caption(ctx.t("pe_caption"))
    if d // 2 > figures.MAX_SIDE:
        below.caption(ctx.t("pe_avg"))


def curves(ctx: PageContext) -> None:
    """Columns of PE as curves over the positions."""
    N, d, pe = ctx.cfg.n_tokens, ctx.cfg.d_model, ctx.trace.pe
    st.subheader(ctx.t("curves"))
    defaults = sorted({0, 1, 2 * (d // 16), 2 * (d // 8)})
    cols = st.multiselect(ctx.t("pick_cols"), list(range(d)), default=defaults,
                          key="pe_cols", max_selections=8)
    if cols:
        labels = []
        for c in cols:
            f = "sin" if c % 2 == 0 else "cos"
            labels.append(ctx.t("curve_label", c=c, f=f, i=c // 2))
        widgets.picture(ctx, figures.lines, list(range(N)), [pe[:, c] for c in cols],
                        labels, ctx.t("curves_title"), ctx.t("pos"), "PE", size=(8.0, 3.0),
                        key="pe_lines")
        st.caption(ctx.t("curves_caption", N=N))
    else:
        st.info(ctx.t("no_cols"))


def similarity(ctx: PageContext) -> None:
    """Similarity: in the sequence, and on the image."""
    tr, G = ctx.trace, ctx.cfg.grid_size
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
    ctx = ctx.choose(query=query)
    with right:
        widgets.matrix(ctx, sim[query].reshape(G, G), ctx.t("grid_name"),
                       key="pe_sim_grid", xlabel=ctx.t("grid_col"), ylabel=ctx.t("grid_row"),
                       colorbar_label="cos", signed=False, size=(5.0, 4.0))
        st.markdown(neighbour_facts(ctx, sim, query))


def pe_sum(ctx: PageContext) -> None:
    """x0 = X + PE."""
    cfg, tr = ctx.cfg, ctx.trace
    st.subheader(ctx.t("sum"))
    st.latex(walk.formulas(cfg)[-1])  # the handout's sheet shows the same
    if not cfg.use_pe:
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


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
