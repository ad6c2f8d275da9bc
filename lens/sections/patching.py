"""Activation patching, on The stack and the ViT page for weights with a classification head:
run this image (A), replace the residual stream entering a layer at one token with a second
image's (B: the built-in photo, a generated shape, an upload), finish the pass, and read the
probability of B's class (`encoder_core.views.patching.patching_map`). Shown: the two images,
then one map per layer over A — which patch, put in at which depth, carries B's class.

The pure part (`patching_picture`, `carrier`) makes the picture and its numbers; the
Streamlit part chooses B (with clear words for a bad upload), computes once per (A, B) trace
pair (`ctx.derived`; B's trace through `ctx.services`) — on a button when the page's cost
says it takes long (`lens.page_costs.patching`) — and places them. Its texts are its own:
`lens/texts/<lang>/patching.toml`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from encoder_core import EncoderTrace, ImageError, predict
from encoder_core.views.logit_lens import lens_probabilities
from encoder_core.views.patching import patching_map
from encoder_core.views.vit_views import on_grid

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts
from ..page_costs import patching as patching_cost
from ..pictures import Picture
from .prediction import class_names

OWNER = "patching"  # lens/texts/<lang>/patching.toml
SOURCES = ("shape", "photo", "upload")  # where image B comes from
UPLOAD_TYPES = ["png", "jpg", "jpeg", "webp", "bmp", "tif", "tiff", "gif"]  # the sidebar's


def carrier(pmap: np.ndarray, n_prefix: int) -> tuple[int, int, float]:
    """The (layer, patch) whose patching gives B's class the most probability, and that
    probability. pmap [L, S] (prefix rows first); the patch row-major, 0-based."""
    patches = pmap[:, n_prefix:]  # [L, N]
    l, i = np.unravel_index(int(np.argmax(patches)), patches.shape)
    return int(l), int(i), float(patches[l, i])


def patching_picture(t: Texts, image: np.ndarray, pmap: np.ndarray, n_prefix: int, G: int,
                     name: str, key: str) -> Picture:
    """One map per layer over image A: the probability of B's class when B's token of that
    patch replaces A's in the stream entering the layer. pmap [L, S]."""
    L = pmap.shape[0]
    maps = on_grid(np.asarray(pmap[:, n_prefix:], np.float32), G)  # [L, G, G]
    return Picture(key, figures.attention_grid,
                   (image, maps, [t("patch_layer_n", l=l + 1) for l in range(L)],
                    t("patch_map_title", name=name)),
                   dict(ncols=min(L, 4), colorbar_label=t("patch_scale"),
                        width=5.0 if L > 1 else 3.4))


def second_image(ctx: PageContext, t: Texts) -> tuple[str, bytes] | None:
    """Image B chosen by the learner: (its name, its file bytes), or None while an upload is
    missing or unusable (the reason said)."""
    texts = t  # kept by the widget: never ctx
    left, right = st.columns([1, 1])
    source = left.radio(t("patch_source"), SOURCES, horizontal=True,
                        key=f"{ctx.id}_patching_source",
                        format_func=lambda s: texts(f"patch_source_{s}"))
    if source == "photo":
        return t("patch_name_photo"), ctx.services.builtin_photo()
    if source == "shape":
        seed = int(right.number_input(t("patch_seed"), 0, 10_000, ctx.settings.sample_seed + 1,
                                      step=1, key=f"{ctx.id}_patching_seed"))
        return t("patch_name_shape", seed=seed), ctx.services.sample_png(seed)
    upload = right.file_uploader(t("patch_upload"), type=UPLOAD_TYPES,
                                 key=f"{ctx.id}_patching_upload")
    if upload is None:
        st.info(t("patch_upload_hint"))
        return None
    return upload.name, upload.getvalue()


def trace_of(ctx: PageContext, data: bytes) -> EncoderTrace:
    """B's trace with the page's model (cached as every trace). Raises ImageError."""
    cfg, sv = ctx.cfg, ctx.services
    _, model_input = sv.decode_image(data, cfg.image_size, cfg.channels)
    return sv.trace_for(sv.content_key(data), model_input, cfg, ctx.trace.params,
                        ctx.weights_id)


def patching_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """Under a `heading` of the page's size: the text, image B's choice, A and B, the maps."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    params, L, G, n = tr.params, cfg.n_layers, cfg.grid_size, cfg.n_prefix
    heading(t("patch_title"))
    st.write(t("patch_text", L=L, S=cfg.seq_len))
    st.latex(r"x^{A}_{l}[i] \leftarrow x^{B}_{l}[i]\ \ (l = 1 \dots %d),\quad "
             r"m[l, i] = \mathrm{softmax}(z'_{l,i})[c_B]" % L)
    chosen = second_image(ctx, t)
    if chosen is None:
        return
    b_name, data = chosen
    try:
        tr_b = trace_of(ctx, data)
    except ImageError as err:
        st.error(t("patch_bad_upload", name=b_name, msg=str(err)))
        return
    names = class_names(ctx)
    logits_a = ctx.derived("prediction/logits", lambda: predict(tr, params))  # [n_classes]
    logits_b = predict(tr_b, params)  # [n_classes], a matrix product
    a_class, b_class = int(np.argmax(logits_a)), int(np.argmax(logits_b))
    both, _ = st.columns([3, 2])  # A and B side by side, each titled with its class, in pixels
    rgb = [np.ascontiguousarray(np.broadcast_to(im, (*im.shape[:2], 3)))  # grey as RGB
           for im in (tr.image, tr_b.image)]
    widgets.picture(ctx, figures.image_pair, rgb[0], rgb[1],
                    (t("patch_a", name=names[a_class]), t("patch_b", name=names[b_class])),
                    axis_labels=(t("patch_px_x"), t("patch_px_y")), key=f"patching_ab_{ctx.id}",
                    where=both)
    if a_class == b_class:
        st.info(t("patch_same_class", name=names[a_class]))
    b_key = ctx.services.content_key(data)
    seconds = patching_cost(cfg).seconds
    if not widgets.run_asked(f"{ctx.id}_patching", b_key, seconds, t("patch_run", s=seconds),
                             t("patch_wait", s=seconds)):
        return
    pmap = ctx.derived(f"inside/patching/{b_key}/{b_class}",  # [L, S]
                       lambda: patching_map(tr, tr_b, params, b_class))
    widgets.show(ctx, patching_picture(t, tr.image, pmap, n, G, names[b_class],
                                       f"patching_{ctx.id}"),
                 where=st.columns([3, 2])[0] if L <= 2 else None,
                 shows=f"patching_{b_class}")
    l, i, p = carrier(pmap, n)
    base = float(lens_probabilities(logits_a)[b_class])  # A's own probability of B's class
    st.caption(t("patch_caption", name=names[b_class], l=l + 1, i=i, p=100 * p, a=100 * base,
                 cls=(t("patch_cls", p=100 * float(pmap[:, 0].max())) if cfg.cls_token else "")))
