"""Patch similarity, live, on every page that shows it (The stack, ★ What a ViT looks
at): point at a patch and every patch is coloured by the cosine similarity of its feature row to
the pointed one's, at the chosen layer, prefix tokens left out (`encoder_core.views.similarity`).

The browser repaints it on every hover with no rerun: the similarity explorer
(`lens.explorer.similarity_payload`) carries the patches' unit rows as float16 and takes the
dot products itself; a click (a tap, the arrow keys) keeps the patch. Rows too big to send
(`explorer.rows_fit`) fall back to the picker alone and a map the server draws of the patch
clicked, with a caption that says why. The unit rows are computed once per trace and layer
(`ctx.derived`). Its texts are its own: `lens/texts/<lang>/similarity.toml`."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.similarity import cosine_map, unit_rows

from .. import explorer, explorer_component, figures, keys, widgets
from ..context import PageContext
from ..i18n import Texts

OWNER = "similarity"  # lens/texts/<lang>/similarity.toml



def click_key(ctx: PageContext) -> str:
    """The session-state key of this page's similarity explorer ({"commit": …})."""
    return f"similarity_click_{ctx.id}"


def layer_choice(ctx: PageContext) -> int | None:
    """The features compared (`widgets.section_layer`)."""
    return widgets.section_layer(ctx, OWNER, "sim")


def pointed(ctx: PageContext) -> int:
    """The patch the map is of: the last one clicked in this section, else the page's query."""
    N = ctx.cfg.n_tokens
    commit = explorer_component.committed(click_key(ctx))
    patch = commit["query"] if commit else st.session_state.get(keys.QUERY, ctx.settings.query)
    return min(max(int(patch), 0), N - 1)


def similarity_section(ctx: PageContext, heading: Callable[[str], object] = st.header) -> None:
    """The patch similarity under a `heading` of the page's size: the text, the layer chooser
    and the live map (or, over the explorer's cap, the picker and the server's map)."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    N, d, G, n = cfg.n_tokens, cfg.d_model, cfg.grid_size, cfg.n_prefix
    heading(t("sim_title"))
    st.write(t("sim_text", N=N, d=d))
    st.latex(r"u_i = \frac{x_i}{\lVert x_i \rVert_2}, \qquad \cos(x_i, x_j) = u_i \cdot u_j"
             r" \in [-1, 1] \quad (i, j < %d)" % N)
    if n:
        st.caption(t("sim_prefix", prefix=", ".join(prefix_names(cfg)), n=n))
    layer = layer_choice(ctx)
    if layer is not None:
        where = t("sim_layer_n", l=layer + 1, L=cfg.n_layers)
    else:
        where = t("sim_output" if tr.final_ln is not None else "sim_output_last",
                    L=cfg.n_layers)
    unit = ctx.derived(f"similarity/{layer}", lambda: unit_rows(tr, layer))  # [N, d] float32
    patch = pointed(ctx)
    live = explorer.rows_fit(N, d)
    text = {"aria": ctx.t("picker_aria"), "patch": ctx.t("patch_tip", i="{i}", r="{r}", c="{c}"),
            "weight": t("sim_weight"), "zoom": ctx.t("zoom_tip"),
            "zoom_close": ctx.t("zoom_close"),
            "hint": t("sim_hint" if live else "sim_click_hint")}
    base = (ctx.image_key, cfg, ctx.weights_id, f"similarity/{layer}", ctx.lang, patch)
    if live:  # the rows travel: the browser takes the dot products on every hover
        text.update(title=t("sim_map_title", i="{i}", where=where),
                    colorbar=t("sim_scale_fixed"), colorbar_row=t("sim_scale_row"),
                    to_row=t("sim_to_row"), to_fixed=t("sim_to_fixed"))
        blob = ctx.services.payload(base, lambda: explorer.similarity_payload(
            tr.image, G, patch, text, unit))
        explorer_component.show_similarity(blob, key=click_key(ctx))
        st.caption(t("sim_caption"))
    else:  # too many values to send: the picture picks, the server draws the map
        blob = ctx.services.payload((*base, "picker"), lambda: explorer.payload(
            tr.image, G, patch, text))
        left, right = st.columns(2)
        explorer_component.show_similarity(blob, key=click_key(ctx), where=left)
        right.caption(t("sim_off", N=N, d=d, mb=explorer.rows_bytes(N, d) / 2**20,
                          cap=explorer.MAX_BYTES / 2**20))
        cos = cosine_map(unit, patch)  # [N]; its own value, 1, is the top of the scale
        widgets.picture(ctx, figures.attention_grid, tr.image, cos.reshape(1, G, G), [""],
                        t("sim_map_title", i=patch, where=where), ncols=1, query=patch,
                        colorbar_label=t("sim_scale_row"),
                        vmin=min(float(cos.min()), 1 - 1e-6), vmax=1.0, key="similarity_map",
                        where=right)
    if ctx.weights == "random":
        st.caption(t("sim_random"))
