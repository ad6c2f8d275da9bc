"""★ What a ViT looks at — the views users of real Vision Transformers ask for:
the model's own prediction, DINO's last-layer CLS attention with "keep x % of the
mass", rollout (discard ratio, head fusion), the layer × head grid of CLS attention, attention
from any patch, the token-norm map, a class's relevance beside another's (with a head), the
PCA of the patch features and heads switched off; with a head, inside the model layer by
layer: the logit lens, the logit's shares, patching a second image in, the faithful map."""


import numpy as np
import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.analysis import prefix_share
from encoder_core.views.rollout import (
    HEAD_FUSIONS,
    ROLLOUT_DISCARD,
    attention_rollout,
    discard_count,
)
from encoder_core.views.vit_views import (
    DINO_KEEP,
    cls_attention,
    high_norm_tokens,
    keep_mass,
    kept_share,
    on_grid,
    patch_attention,
    patch_values,
    rollout_cls_map,
    scale_to_max,
    token_norms,
)
from lens import explorer, figures, widgets
from lens.context import PageContext
from lens.runner import run_page
from lens.sections.faithfulness import faithfulness_section
from lens.sections.heads_off import heads_off_section
from lens.sections.logit_lens import logit_lens_section
from lens.sections.logit_shares import logit_shares_section
from lens.sections.patching import patching_section
from lens.sections.pca import pca_section
from lens.sections.prediction import prediction
from lens.sections.relevance import relevance_section
from lens.sections.similarity import similarity_section

MAX_HEADS = 12  # heads drawn side by side at once (the learner chooses which above that)
PAGE_PX = 950  # about the main column's width at 1400 px with the sidebar open


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg, tr = ctx.cfg, ctx.trace
    if not cfg.cls_token:  # the note's encoder (or a checkpoint without [CLS]): say what is needed
        need_vit(ctx)
        return

    model_name = ctx.model.name if ctx.model is not None else ctx.weights
    st.write(ctx.t("intro", model=model_name, T=cfg.seq_len, prefix=prefix_text(ctx),
                   N=cfg.n_tokens, G=cfg.grid_size))
    prediction(ctx)  # what the model says it sees, before where it looks
    cls_maps = ctx.derived("vit/cls", lambda: np.stack(  # [L, h, N]
        [cls_attention(layer.attn, cfg.n_prefix) for layer in tr.layers]))
    heads = widgets.heads_chooser(ctx, cfg.n_heads, key="vit_heads", limit=MAX_HEADS)
    dino(ctx, cls_maps, heads)  # --- 1
    rollout(ctx)  # --- 2
    cls_grid(ctx, cls_maps, heads)  # --- 3
    patch_attention_maps(ctx, heads)  # --- 4
    token_norm_map(ctx)  # --- 5
    if tr.params.head is not None:  # why this class and not that one: relevance per patch
        relevance_section(ctx)
        inside_the_model(ctx)
    pca_section(ctx)  # --- 6 · PCA of the patch features ---------------------------------------
    similarity_section(ctx)  # --- 7 · patch similarity, live -----------------------------------
    heads_off_section(ctx)  # --- 8 · heads switched off ----------------------------------------


def inside_the_model(ctx: PageContext) -> None:
    """Layer by layer, with a head: the logit lens, the logit's shares, patching a second
    image in, and which map is faithful."""
    widgets.section(ctx, "logit_lens", lambda: logit_lens_section(ctx))  # vit.settles asks it
    logit_shares_section(ctx)
    patching_section(ctx)
    faithfulness_section(ctx)


def need_vit(ctx: PageContext) -> None:
    """One line in place of the views: the model has no [CLS] to read them from; which
    loaded checkpoint has one, or how to load one."""
    loaded = [m.id for m in ctx.services.checkpoint_models().values() if m.cfg.cls_token]
    st.info(ctx.t("need_vit_loaded", names=", ".join(loaded)) if loaded
            else ctx.t("need_vit", hub=ctx.t("hub_title")))


def prefix_labels(ctx: PageContext) -> list[str]:
    """The prefix tokens as the page names them: "[CLS]", "[DIST]", "register 1", …"""
    return [ctx.t("role_reg", k=name[3:]) if name.startswith("REG") else f"[{name}]"
            for name in prefix_names(ctx.cfg)]


def prefix_text(ctx: PageContext) -> str:
    """The prefix tokens in one line."""
    return ", ".join(prefix_labels(ctx))


def head_titles(ctx: PageContext, heads: list[int]) -> list[str]:
    """One title per head shown."""
    return [ctx.t("head_n", n=h + 1) for h in heads]


def shares_text(values: np.ndarray) -> str:
    """Shares in one line, three decimals each."""
    return ", ".join(f"{v:.3f}" for v in values)


def literal(text: str) -> str:
    """Text shown as it is in Markdown: "[CLS]: 1.0" alone on a line is a link definition."""
    return text.replace("[", r"\[").replace("]", r"\]")


def about(width_px: int):
    """Where a picture about `width_px` wide goes: a column near that width, or the full
    width when it is nearly that wide anyway (a picture of two heads is not blown up)."""
    share = width_px / PAGE_PX
    return st.columns([share, 1 - share])[0] if share < 0.85 else st.container()


def dino(ctx: PageContext, cls_maps: np.ndarray, heads: list[int]) -> None:
    """DINO: the last layer's [CLS] attention, keep x % of the mass."""
    cfg, tr = ctx.cfg, ctx.trace
    n, N, G, L, H = cfg.n_prefix, cfg.n_tokens, cfg.grid_size, cfg.n_layers, cfg.n_heads
    k = len(heads)
    st.header(ctx.t("dino_title"))
    st.write(ctx.t("dino_text", L=L))
    st.latex(r"a_h[j] = \text{attn}_{%d}[h,\ 0,\ %d + j], \quad j = 0 \dots %d" % (L, n, N - 1))
    keep = st.slider(ctx.t("keep_label"), 0, 100, round(100 * DINO_KEEP), step=5, key="vit_keep")
    last = cls_maps[-1, heads]  # [k, N]
    kept = ctx.derived(f"vit/keep/{heads}/{keep}", lambda: keep_mass(last, keep / 100))  # [k, N]
    share = kept_share(last, kept)  # [k]
    ncols = min(k, 3 if k <= 6 else 4)  # rows of at most 3 (4): each map readable on a phone
    maps_at, kept_at = st.columns(2) if k > 1 else (about(377), about(377))  # side by side
    widgets.picture(ctx, figures.attention_grid, tr.image, on_grid(last, G),
                    head_titles(ctx, heads), ctx.t("dino_maps", l=L, h=H), ncols=ncols,
                    colorbar_label=ctx.t("weight"), key="vit_dino", where=maps_at)
    widgets.picture(ctx, figures.attention_grid, tr.image, on_grid(kept.astype(np.float32), G),
                    [ctx.t("kept_panel", n=h + 1, k=int(kept[i].sum()), p=100 * share[i])
                     for i, h in enumerate(heads)],
                    ctx.t("dino_kept", x=keep), ncols=ncols, vmax=1.0,
                    colorbar_label=ctx.t("kept_scale"), key="vit_dino_kept", where=kept_at)
    st.caption(ctx.t("dino_caption", prefix=prefix_text(ctx),
                     shares=shares_text(prefix_share(tr.layers[-1].attn[heads, 0, :], n))))


def rollout(ctx: PageContext) -> None:
    """Rollout of the [CLS] row, with a discard ratio and a head fusion."""
    cfg, tr = ctx.cfg, ctx.trace
    n, G, L = cfg.n_prefix, cfg.grid_size, cfg.n_layers
    st.header(ctx.t("rollout_title"))
    st.write(ctx.t("rollout_text", L=L))
    st.latex(r"a_l = \mathrm{rows}\!\left(\tfrac{1}{2}\big(\mathrm{discard}(\mathrm{fuse}_h"
             r"\,\text{attn}_l) + I\big)\right),\quad R = a_{%d} \cdots a_1,\quad "
             r"m = \frac{R[0,\ %d:]}{\max R[0,\ %d:]}" % (L, n, n))
    c1, c2 = st.columns([1, 2])
    ratio = round(c1.slider(ctx.t("discard_label"), 0.0, 0.99, ROLLOUT_DISCARD, step=0.01,
                            key="vit_discard"), 2)
    texts = ctx.t  # a widget keeps its format_func: never through ctx (the trace)
    fusion = c1.radio(ctx.t("fusion_label"), HEAD_FUSIONS, horizontal=True, key="vit_fusion",
                      format_func=lambda f: texts(f"fusion_{f}"))
    cls_map = ctx.derived(f"vit/rollout/{fusion}/{ratio:.2f}", lambda: rollout_cls_map(
        attention_rollout([layer.attn for layer in tr.layers], fusion, ratio, row=0), n))  # [N]
    widgets.picture(ctx, figures.attention_table, tr.image, on_grid(cls_map, G)[None, None],
                    ctx.t("rollout_map", fusion=ctx.t(f"fusion_{fusion}"), r=ratio),
                    row_labels=[""], col_labels=[""], panel=3.0,
                    colorbar_label=ctx.t("rollout_weight"), key="vit_rollout", where=c2)
    c1.caption(ctx.t("rollout_caption", T2=cfg.seq_len**2, k=discard_count(cfg.seq_len, ratio),
                     prefix=prefix_text(ctx)))


def cls_grid(ctx: PageContext, cls_maps: np.ndarray, heads: list[int]) -> None:
    """The layer × head grid of [CLS] attention, each map to its own maximum or shared."""
    G, L, k = ctx.cfg.grid_size, ctx.cfg.n_layers, len(heads)
    st.header(ctx.t("grid_title"))
    st.write(ctx.t("grid_text", G=G))
    shared = st.toggle(ctx.t("grid_shared"), key="vit_grid_shared")
    grid = cls_maps[:, heads] if shared else scale_to_max(cls_maps[:, heads])  # [L, k, N]
    panel = 1.0 if L * k > 24 else 1.25  # inches of one map
    widgets.picture(ctx, figures.attention_table, ctx.trace.image, on_grid(grid, G),
                    ctx.t("grid_pic", L=L, h=k), row_labels=[ctx.t("layer_label", l=l + 1)
                                                               for l in range(L)],
                    col_labels=head_titles(ctx, heads), panel=panel,
                    colorbar_label=ctx.t("weight" if shared else "grid_each"), key="vit_grid",
                    where=about(round(190 + 106 * panel * k)))  # attention_table's width
    st.caption(ctx.t("grid_caption_shared" if shared else "grid_caption_each"))


def patch_attention_maps(ctx: PageContext, heads: list[int]) -> None:
    """Attention from any patch: live in the explorer when it fits, drawn by the server
    otherwise."""
    cfg, tr = ctx.cfg, ctx.trace
    n, N, G, H, k = cfg.n_prefix, cfg.n_tokens, cfg.grid_size, cfg.n_heads, len(heads)
    titles = head_titles(ctx, heads)
    st.header(ctx.t("patch_title"))
    st.write(ctx.t("patch_text", n=n))
    left, right = st.columns([1, 2])
    with left:
        query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer
        l = widgets.layer_selector(ctx)
    ctx = ctx.choose(layer=l + 1)
    attn = tr.layers[l].attn  # [h, T, T]
    if explorer.fits(k, N):  # every patch's row over the patches: the maps follow the pointer
        widgets.query_explorer(ctx, lambda: explorer.Maps(
            attn[heads][:, n:, n:][None], ctx.t("patch_live", h=H, i="{i}", l=l + 1),
            ctx.t("weight"), titles=[ctx.t("head_n", n=h + 1) for h in heads]),
            maps_key=f"vit/patch/{l}/{heads}", where=right)
    else:  # too many values to send: the picture picks, the server draws the maps
        widgets.query_explorer(ctx, where=left)
        right.caption(ctx.t("patch_off", mb=explorer.map_bytes(k, N) / 2**20,
                            cap=explorer.MAX_BYTES / 2**20))
        widgets.picture(ctx, figures.attention_grid, tr.image,
                        on_grid(patch_attention(attn[heads], n, query), G), titles,
                        ctx.t("patch_live", h=H, i=query, l=l + 1), ncols=min(k, 4), query=query,
                        colorbar_label=ctx.t("weight"), key="vit_patch", where=right)
    st.caption(ctx.t("patch_prefix", i=query, prefix=prefix_text(ctx),
                     shares=shares_text(prefix_share(attn[heads, n + query, :], n))))


def token_norm_map(ctx: PageContext) -> None:
    """The token-norm map after a chosen layer, the prefix tokens' norms beside it."""
    cfg, tr = ctx.cfg, ctx.trace
    n, G, L = cfg.n_prefix, cfg.grid_size, cfg.n_layers
    st.header(ctx.t("norm_title"))
    st.write(ctx.t("norm_text"))
    st.latex(r"\lVert x_i \rVert_2 = \sqrt{\textstyle\sum_k x_{ik}^2}")
    norms = ctx.derived("vit/norms", lambda: np.stack(  # [L, T]
        [token_norms(layer.out) for layer in tr.layers]))
    c1, c2 = st.columns([1, 1])
    after = c1.select_slider(ctx.t("norm_layer"), options=list(range(L)), value=L - 1,
                             key="vit_norm_layer", format_func=lambda i: f"{i + 1} / {L}")
    on_patches = patch_values(norms[after], n)  # [N]
    # a heatmap, not an overlay: its colour scale spans the norms' own range (norms of 10–13
    # on a scale from 0 would be one colour)
    widgets.picture(ctx, figures.heatmap, on_grid(on_patches, G),
                    f"{ctx.t('norm_map', l=after + 1)}  [{G} × {G}]", ctx.t("norm_col"),
                    ctx.t("norm_row"), signed=False, colorbar_label=ctx.t("norm_scale"),
                    size=(4.8, 4.2), mean_of=ctx.t("mean_of"), key="vit_norms", where=c1)
    c1.caption(ctx.t("norm_range", lo=float(np.min(on_patches)), hi=float(np.max(on_patches)),
                     G=G))
    with c2:
        st.markdown(ctx.t("norm_prefix"))
        st.markdown("\n".join(f"- {literal(name)}: {norms[after, i]:.2f}"
                              for i, name in enumerate(prefix_labels(ctx))))
        biggest = int(np.argmax(on_patches))
        st.markdown(ctx.t("norm_patches", med=float(np.median(on_patches)),
                          top=float(on_patches[biggest]), i=biggest))
        high = high_norm_tokens(on_patches)
        st.caption(ctx.t("norm_high", ids=", ".join(str(i) for i in high)) if high.size
                   else ctx.t("norm_none"))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
