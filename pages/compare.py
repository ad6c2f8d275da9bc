"""Compare & ablate — positional encoding off, and two settings side by side."""

import numpy as np
import streamlit as st

from encoder_core import ConfigError, patch_rows, prefix_names
from encoder_core.config import SCALES
from encoder_core.pipeline.patches import shuffle_patches
from encoder_core.trace import EncoderTrace
from encoder_core.views.analysis import (
    attention_entropy,
    fixed_permutation,
    permute_tokens,
    prefix_share,
    unshuffle,
)
from lens import figures, keys, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.settings import Settings

# "Two settings side by side": what can be compared, its options and the two shown first.
CMP_OPTIONS = {"n_heads": [1, 2, 4, 8, 16], "scale": list(SCALES), "d_model": [64, 128, 256, 512]}
CMP_DEFAULTS = {"n_heads": (4, 8), "scale": ("d_k", "d_model"), "d_model": (128, 512)}


def plan(settings: Settings) -> list[tuple[str, Settings]]:
    """The traces this page computes besides its own, as (image tag, settings): the
    positional encoding on and off, for the image and its shuffled patches, and the two
    settings side by side (as their controls hold them) — so that the run reserves their
    memory before it starts (lens.admission)."""
    state = st.session_state
    what = state.get(keys.COMPARE_WHAT, "n_heads")
    fixed = settings.architecture is not None  # weights made for one architecture
    what = "scale" if fixed or what not in CMP_OPTIONS else what
    sides = [state.get(keys.compare_side(side, what), default)
             for side, default in zip("ab", CMP_DEFAULTS[what], strict=True)]
    return [(tag, settings.replace(use_pe=pe)) for tag in ("", "/shuffled")
            for pe in (True, False)] + [("", settings.replace(**{what: v})) for v in sides]


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    st.write(ctx.t("intro"))
    query, layer, base = pe_off(ctx)
    ctx = ctx.choose(query=query, layer=layer + 1)  # the pictures below name them
    shuffled_patches(ctx, query, layer, base)
    two_settings(ctx, query, layer)


def pe_off(ctx: PageContext) -> tuple[int, int, dict[str, EncoderTrace]]:
    """The query's attention with the positional encoding on and off, one colour scale for
    both; returns the query and layer chosen, and the two traces by "with_pe", "without_pe"."""
    cfg = ctx.cfg
    kp, T = cfg.n_prefix, cfg.seq_len  # a ViT's prefix tokens (CLS, …); all tokens
    names = ", ".join(prefix_names(cfg))
    st.header(ctx.t("pe_title"))
    st.write(ctx.t("pe_explain"))
    if cfg.position == "learned":
        st.caption(ctx.t("pe_learned", names=names or "—"))
    left, right = st.columns([1, 2])
    with left:
        query = widgets.query_picker(ctx)
        layer = widgets.layer_selector(ctx)
    ctx = ctx.choose(query=query, layer=layer + 1)
    r = ctx.row(query)  # the query patch's row of the sequence
    on = ctx.variant(use_pe=True)
    off = ctx.variant(use_pe=False)
    G, h = cfg.grid_size, cfg.n_heads
    heads = widgets.heads_chooser(ctx, h, key="compare_heads", where=left)
    shown = len(heads)
    maps = {pe_id: patch_rows(tr.layers[layer].attn[heads, r, :], cfg).reshape(shown, G, G)
            for pe_id, tr in (("with_pe", on), ("without_pe", off))}  # [k, G, G] the patch keys
    vmax = max(float(m.max()) for m in maps.values())  # one colour scale for both
    with right:
        for pe_id, m in maps.items():
            widgets.picture(ctx, figures.attention_grid, ctx.trace.image, m,
                            [ctx.t("head_n", n=i + 1) for i in heads],
                            ctx.t("maps_title", l=layer + 1, q=query, h=h, what=ctx.t(pe_id)),
                            ncols=min(shown, 4), width=6.6, query=query, vmax=vmax, uniform=1 / T,
                            colorbar_label=ctx.t("weight"), key=f"compare_{pe_id}")
        st.caption(ctx.t("one_scale_all"))
        if kp:
            st.info(ctx.t("left_out", names=names, i=query,
                          on=share_text(ctx, on, layer, heads, r),
                          off=share_text(ctx, off, layer, heads, r)))
    return query, layer, {"with_pe": on, "without_pe": off}


def share_text(ctx: PageContext, tr: EncoderTrace, layer: int, heads: list[int], r: int) -> str:
    """The shown heads' share of row r's weight on the prefix tokens, in %, as a range."""
    cls = 100 * prefix_share(tr.layers[layer].attn[heads, r, :], ctx.cfg.n_prefix)  # [k] in %
    return ctx.t("share_one" if len(cls) == 1 else "share_range",
                 lo=float(cls.min()), hi=float(cls.max()))


def prefix_percent(tr: EncoderTrace, layer: int, head: int, row: int, kp: int) -> float:
    """% of the row's weight on the prefix tokens."""
    return 100 * float(prefix_share(tr.layers[layer].attn[head, row], kp))


def shuffled_patches(ctx: PageContext, query: int, layer: int,
                     base: dict[str, EncoderTrace]) -> None:
    """The patches shuffled: without the positional encoding the encoder's output moves
    with them (equivariance), with it it does not."""
    cfg = ctx.cfg
    kp, T, G = cfg.n_prefix, cfg.seq_len, cfg.grid_size
    names = ", ".join(prefix_names(cfg))
    st.subheader(ctx.t("shuffle_title"))
    st.markdown(ctx.t("equivariance"))
    head = widgets.head_selector(ctx, where=st.columns([1, 2])[0])  # drives this section only
    ctx = ctx.choose(head=head + 1)
    st.latex(r"\mathrm{Enc}(\text{%s}) = \mathrm{Enc}(\text{%s})[\text{perm}]\quad\text{%s}"
             % (ctx.t("tex_shuffled"), ctx.t("tex_image"), ctx.t("tex_without")))
    if kp:
        st.caption(ctx.t("equivariance_prefix", N=cfg.n_tokens, names=names))
    perm = fixed_permutation(cfg.n_tokens)
    shuffled = shuffle_patches(ctx.trace.image, cfg.patch_size, perm)
    moved_to = int(np.flatnonzero(perm == query)[0])  # where the query patch sits once shuffled
    moved = {pe_id: ctx.variant(image=shuffled, image_tag="/shuffled", use_pe=pe_id == "with_pe")
             for pe_id in ("with_pe", "without_pe")}
    rows = ("without_pe", "with_pe")
    rows_of = {"image": ctx.row(query), "shuffled": ctx.row(moved_to)}  # the query's row
    table = np.stack([np.stack([  # [2 settings, 2 images, G, G], head `head`, the patch keys
        patch_rows(base[pe].layers[layer].attn[head, rows_of["image"]], cfg).reshape(G, G),
        unshuffle(patch_rows(moved[pe].layers[layer].attn[head, rows_of["shuffled"]], cfg),
                  perm).reshape(G, G)]) for pe in rows])
    c1, c2 = st.columns([1, 2])
    with c1:
        widgets.picture(ctx, figures.image_with_grid, shuffled, cfg.patch_size,
                        ctx.t("shuffled_image"), numbers=False, size=3.4, key="shuffled",
                        axis_labels=(ctx.t("pixels_x"), ctx.t("pixels_y")))
    with c2:
        widgets.picture(ctx, figures.attention_table, ctx.trace.image, table,
                        ctx.t("moved_title", q=query, n=moved_to, l=layer + 1, hd=head + 1),
                        row_labels=[ctx.t(r) for r in rows],
                        col_labels=[ctx.t("col_original"), ctx.t("col_moved")], query=query,
                        panel=2.2, colorbar_label=ctx.t("weight"), uniform=1 / T,
                        key="moved_maps")
        st.caption(ctx.t("moved_caption", q=query, n=moved_to))
        if kp:
            st.caption(ctx.t(
                "moved_left_out", names=names,
                a=prefix_percent(base["without_pe"], layer, head, rows_of["image"], kp),
                b=prefix_percent(moved["without_pe"], layer, head, rows_of["shuffled"], kp),
                c=prefix_percent(base["with_pe"], layer, head, rows_of["image"], kp),
                d=prefix_percent(moved["with_pe"], layer, head, rows_of["shuffled"], kp)))
    output_gaps(ctx, base, moved, perm)


def output_gaps(ctx: PageContext, base: dict[str, EncoderTrace],
                moved: dict[str, EncoderTrace], perm: np.ndarray) -> None:
    """The shuffled image's output against the image's with its patch rows shuffled, with
    and without the positional encoding."""
    rows = ("without_pe", "with_pe")
    # [T, d] each: the shuffled image's output against the image's with its patch rows shuffled
    gaps = {pe: np.abs(moved[pe].output - permute_tokens(base[pe].output, perm,
                                                         ctx.cfg.n_prefix)) for pe in rows}
    c1, c2 = st.columns(2)
    top = max(float(g.max()) for g in gaps.values())
    for pe, where in zip(rows, (c1, c2), strict=True):
        widgets.matrix(ctx, gaps[pe], ctx.t("gap_name", what=ctx.t(pe)), key=f"gap_{pe}",
                       signed=False, where=where, colorbar_label="|Δ|", window=False, vmax=top,
                       tokens="rows")
    st.markdown(ctx.t("gap_off", gap=float(gaps["without_pe"].max())))
    st.markdown(ctx.t("gap_on", gap=float(gaps["with_pe"].max()),
                      typical=float(np.abs(base["with_pe"].output).mean())))
    st.caption(ctx.t("gap_scale"))


def two_settings(ctx: PageContext, query: int, layer: int) -> None:
    """Two settings side by side: the query's maps under each, one colour scale for both."""
    cfg = ctx.cfg
    r, G = ctx.row(query), cfg.grid_size
    st.header(ctx.t("cmp_title"))
    fixed = ctx.weights == "trained" or ctx.model is not None  # weights made for one architecture
    choices = ["scale"] if fixed else ["n_heads", "scale", "d_model"]
    if ctx.model is not None:
        st.caption(ctx.t("model_fixed"))
    elif ctx.weights == "trained":
        st.caption(ctx.t("trained_fixed"))
    texts = ctx.t  # a widget keeps its format_func: never through ctx (the trace)
    what = st.radio(ctx.t("cmp_what"), choices, horizontal=True, key=keys.COMPARE_WHAT,
                    format_func=lambda w: texts(f"what_{w}"))
    options, defaults = CMP_OPTIONS[what], CMP_DEFAULTS[what]
    ca, cb = st.columns(2)

    def named(v: object) -> str:  # the scale in the sidebar's words, not its id ("d_k")
        return texts(f"setting_scale_{v}") if what == "scale" else str(v)

    values = (ca.selectbox(ctx.t("cmp_a"), options, index=options.index(defaults[0]),
                           key=keys.compare_side("a", what), format_func=named),
              cb.selectbox(ctx.t("cmp_b"), options, index=options.index(defaults[1]),
                           key=keys.compare_side("b", what), format_func=named))
    sides = []  # (column, value, trace, heads shown, their maps [k, G, G]) of each possible side
    for side, col, value in zip("ab", (ca, cb), values, strict=True):
        with col:
            try:
                tr = ctx.variant(**{what: value})
            except ConfigError as err:
                st.warning(ctx.t("impossible", msg=err))
                continue
            shown_v = widgets.heads_chooser(ctx, tr.config.n_heads, key=f"cmp_heads_{side}")
            maps = patch_rows(tr.layers[layer].attn[shown_v, r, :], cfg).reshape(-1, G, G)
            sides.append((col, value, tr, shown_v, maps))
    # one colour scale for A and B: the same colour is the same weight on both sides
    top = max((float(maps.max()) for *_, maps in sides), default=None)
    for col, value, tr, shown_v, maps in sides:
        with col:
            widgets.picture(ctx, figures.attention_grid, tr.image, maps,
                            [ctx.t("head_n", n=i + 1) for i in shown_v],
                            ctx.t("maps_title", l=layer + 1, q=query, h=tr.config.n_heads,
                                   what=ctx.t(f"setting_{what}" + (f"_{value}" if what == "scale"
                                                                   else ""), v=value)),
                            ncols=min(len(shown_v), 2), query=query, vmax=top,
                            colorbar_label=ctx.t("weight"), key=f"cmp_{what}_{value}")
            ent = attention_entropy(tr.layers[layer].attn[:, cfg.n_prefix:, :])  # [h], patches
            st.caption(ctx.t("entropy", values=", ".join(f"{ent[i]:.2f}" for i in shown_v)))
    if len(sides) == 2:
        st.caption(ctx.t("cmp_one_scale"))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render, plan)
