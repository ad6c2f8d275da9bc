"""The logit lens, on The stack and the ViT page for weights with a classification head: the
model's own path from a hidden state to its logits (final norm, pooling, the head) applied to
the residual stream entering the first layer and after every layer
(`encoder_core.views.logit_lens`). Shown: the top classes of the prediction × the layers, each
cell coloured by the class's probability at that depth and its rank written in; then, for a
chosen depth, every patch's own token read by the head, as a map over the image.

The pure part (`lens_grid`, `patch_lens_picture`, `first_top1`) makes the pictures and
numbers from the arrays; `logit_lens_section` places them. Both lenses are computed once per
trace (`ctx.derived`); the pages declare their cost (`lens.page_costs.inside_terms`). Its
texts are its own: `lens/texts/<lang>/logit_lens.toml`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import streamlit as st

from encoder_core import predict, top_classes
from encoder_core.views.logit_lens import lens_probabilities, lens_ranks, logit_lens
from encoder_core.views.vit_views import on_grid

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts
from ..pictures import Picture
from .prediction import class_names

OWNER = "logit_lens"  # lens/texts/<lang>/logit_lens.toml
TOP_K = 5  # classes shown as rows: the prediction's top 5
PAGE_PX = 950  # about the main column's width at 1400 px with the sidebar open


def width_share(pic: Picture, most: float = 0.75) -> float:
    """The page's share a `label_grid` picture takes at about its own width (its layout, not
    drawn), between a third and `most`."""
    width = figures.label_grid_picture(*pic.args, **pic.kwargs).size[0]
    return min(max(width / PAGE_PX, 0.35), most)


def ranks(lens: np.ndarray, classes: Sequence[int]) -> np.ndarray:
    """Each class's rank (1 = the top) at every depth (`views.logit_lens.lens_ranks`, counted
    from 1). lens [L+1, n_classes] -> [k, L+1] int."""
    return np.stack([lens_ranks(lens, c) + 1 for c in classes])


def first_top1(rank_row: np.ndarray) -> int | None:
    """The first depth from which a class stays the top-1 to the end (0 = the embedding), or
    None when it is not the top-1 at the last depth. rank_row [L+1]."""
    if rank_row[-1] != 1:
        return None
    above = np.flatnonzero(rank_row != 1)  # depths where it is not the top
    return int(above[-1]) + 1 if above.size else 0


def lens_grid(t: Texts, lens: np.ndarray, classes: Sequence[int], names: Sequence[str],
              key: str) -> Picture:
    """The classes × depths grid: colour = softmax(lens[l])[c], text = the rank.
    lens [L+1, n_classes]."""
    probs = lens_probabilities(lens)[:, list(classes)].T  # [k, L+1]
    rank = ranks(lens, classes)  # [k, L+1]
    L = lens.shape[0] - 1
    cells = [[str(r) for r in row] for row in rank]
    return Picture(key, figures.label_grid,
                   (probs, cells, t("lens_grid_title", L=L), t("lens_depth_axis"),
                    t("lens_class_axis"), [names[c] for c in classes],
                    [str(l) for l in range(L + 1)]),
                   dict(colorbar_label=t("lens_prob_scale"), vmin=0.0, vmax=1.0))


def patch_lens_picture(t: Texts, image: np.ndarray, token_lens: np.ndarray, n_prefix: int,
                       G: int, depth: int, target: int, name: str, key: str,
                       ) -> tuple[Picture, float]:
    """The map of every patch's token read by the head at `depth`: the probability of class
    `target`, and where it is that token's top-1. token_lens [S, n_classes] (one depth).
    Returns the picture and the share of patches whose top-1 is `target`."""
    patches = np.asarray(token_lens[n_prefix:], np.float64)  # [N, n_classes]
    prob = lens_probabilities(patches)[:, target]  # [N]
    top = (np.argmax(patches, axis=-1) == target).astype(np.float32)  # [N]
    maps = on_grid(np.stack([prob, top]).astype(np.float32), G)  # [2, G, G]
    pic = Picture(key, figures.attention_grid,
                  (image, maps, [t("lens_patch_prob", name=name), t("lens_patch_top", name=name)],
                   t("lens_patch_title", l=depth)),
                  dict(ncols=2, vmax=1.0, colorbar_label=t("lens_patch_scale")))
    return pic, float(top.mean())


def depth_choice(t: Texts, L: int, key: str) -> int:
    """The depth the patch map reads (0 = the embedding … L = after the last layer)."""
    if st.session_state.get(key) not in range(L + 1):
        st.session_state[key] = L
    return st.select_slider(t("lens_depth"), options=list(range(L + 1)), key=key,
                            format_func=lambda l: t("lens_depth_n", l=l, L=L))


def logit_lens_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """Under a `heading` of the page's size: the text, the classes × depths grid and its
    caption, the depth chooser and the patch map."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    params, L, G, n = tr.params, cfg.n_layers, cfg.grid_size, cfg.n_prefix
    names = class_names(ctx)
    heading(t("lens_title"))
    st.write(t("lens_text", L=L))
    st.latex(r"\text{lens}_l = f_{\text{head}}\big(f_{\text{pool}}(\mathrm{LN}_f(x_l))\big),\quad "
             r"l = 0 \dots %d" % L)
    logits = ctx.derived("prediction/logits", lambda: predict(tr, params))  # [n_classes]
    top, _ = top_classes(logits, min(TOP_K, len(logits)))
    classes = [int(c) for c in top]
    lens = ctx.derived("inside/lens", lambda: logit_lens(tr, params))  # [L+1, n_classes]
    grid = lens_grid(t, lens, classes, names, f"logit_lens_{ctx.id}")
    share = width_share(grid)
    grid_at, words_at = st.columns([share, 1 - share])
    widgets.show(ctx, grid, where=grid_at, shows="logit_lens")
    rank = ranks(lens, classes)
    formed = first_top1(rank[0])
    words_at.markdown(t("lens_read", k=len(classes), L=L))
    words_at.caption(t("lens_formed", name=names[classes[0]], l=formed) if formed is not None
                     else t("lens_not_top", name=names[classes[0]]))
    st.markdown(f"**{t('lens_patch_heading')}**")
    depth = depth_choice(t, L, f"logit_lens_depth_{ctx.id}")
    tokens = ctx.derived("inside/lens_tokens",  # [L+1, S, n_classes]
                         lambda: logit_lens(tr, params, tokens=True))
    pic, share = patch_lens_picture(t, tr.image, tokens[depth], n, G, depth, classes[0],
                                    names[classes[0]], f"logit_lens_patches_{ctx.id}")
    map_at, map_words = st.columns([3, 2])
    widgets.show(ctx, pic, where=map_at, shows=f"logit_lens_patches_{depth}")
    map_words.caption(t("lens_patch_caption", name=names[classes[0]], share=100 * share,
                        l=depth, N=cfg.n_tokens))
