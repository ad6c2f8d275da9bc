"""Page building blocks: cached pictures, a matrix with its caption and number window, the
query-patch picker (click or row/column), the note's original text, PNG download buttons.

Pictures are rendered by `lens.figures` and cached by content, so a rerun that shows the same
arrays costs a hash, not a redraw.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from . import figures
from .note import note_markdown
from .state import Page, sync_url

WINDOW = 32  # side of the number window


@st.cache_data(max_entries=400, show_spinner=False)
def render(kind: str, *args, **kwargs) -> bytes:
    """PNG bytes of `figures.<kind>(*args, **kwargs)`, cached by the arguments' content."""
    return getattr(figures, kind)(*args, **kwargs)


def picture(ctx: Page, kind: str, *args, key: str, caption: str | None = None,
            where=None, **kwargs) -> None:
    """Render a figure, show it full width, with an optional caption and a PNG download."""
    where = where or st
    png = render(kind, *args, **kwargs)
    where.image(png, caption=caption, width="stretch")
    where.download_button(ctx.t("download_png"), png, file_name=f"{key}.png",
                          mime="image/png", key=f"dl_{key}", on_click="ignore")


def matrix(ctx: Page, m: np.ndarray, name: str, *, key: str, signed: bool = True,
           xlabel: str | None = None, ylabel: str | None = None, where=None,
           colorbar_label: str = "", window: bool = True, highlight_row: int | None = None,
           highlight_col: int | None = None, size: tuple[float, float] = (5.0, 4.0)) -> None:
    """A matrix as a heatmap titled with its name and shape, plus a 32 × 32 number window."""
    where = where or st
    m = np.atleast_2d(m)
    title = f"{name}  [{' × '.join(str(s) for s in m.shape)}]"
    xlabel = xlabel if xlabel is not None else ctx.t("features")
    ylabel = ylabel if ylabel is not None else ctx.t("tokens")
    if ctx.lang == "zh" and not figures.HAS_CJK_FONT:
        xlabel, ylabel = "j", "i"
    picture(ctx, "heatmap", m, title, xlabel, ylabel, signed=signed, where=where, key=key,
            colorbar_label=colorbar_label, highlight_row=highlight_row,
            highlight_col=highlight_col, size=size)
    kr = -(-m.shape[0] // figures.MAX_SIDE)
    kc = -(-m.shape[1] // figures.MAX_SIDE)
    if kr > 1 or kc > 1:
        where.caption(ctx.t("block_avg", kr=kr, kc=kc))
    if window:
        number_window(ctx, m, name, key=key, signed=signed, where=where)


def number_window(ctx: Page, m: np.ndarray, name: str, *, key: str, signed: bool = True,
                  where=None) -> None:
    """An expander with any 32 × 32 block of `m` at full resolution, as a table."""
    where = where or st
    with where.expander(f"{ctx.t('window')} — {name}"):
        r_max = max(0, m.shape[0] - WINDOW)
        c_max = max(0, m.shape[1] - WINDOW)
        c1, c2 = st.columns(2)
        r0 = c1.number_input(ctx.t("window_rows"), 0, r_max, 0, step=WINDOW // 2,
                             key=f"win_r_{key}") if r_max else 0
        c0 = c2.number_input(ctx.t("window_cols"), 0, c_max, 0, step=WINDOW // 2,
                             key=f"win_c_{key}") if c_max else 0
        block = np.asarray(m[r0:r0 + WINDOW, c0:c0 + WINDOW], dtype=np.float64)
        st.dataframe(
            {f"{c0 + j}": block[:, j] for j in range(block.shape[1])},
            height=min(36 * (block.shape[0] + 1), 420),
        )
        st.caption(f"{name}[{r0}:{r0 + block.shape[0]}, {c0}:{c0 + block.shape[1]}]")


def query_picker(ctx: Page, where=None) -> int:
    """Choose the query patch by clicking the image or with row/column inputs (kept in sync)."""
    from streamlit_image_coordinates import streamlit_image_coordinates

    where = where or st
    cfg = ctx.cfg
    G, S = cfg.grid_size, cfg.image_size
    N = cfg.n_tokens
    query = int(min(max(st.session_state.get("query", 0), 0), N - 1))
    click = st.session_state.get("query_click")
    if click and click != st.session_state.get("_last_click"):
        col = int(click["x"] / max(click.get("width", S), 1) * G)
        row = int(click["y"] / max(click.get("height", S), 1) * G)
        query = min(max(row, 0), G - 1) * G + min(max(col, 0), G - 1)
        st.session_state["query"] = query  # first the query, then mark the click as handled
        st.session_state["_last_click"] = click
    st.session_state["query"] = query
    st.session_state["query_row"], st.session_state["query_col"] = divmod(query, G)
    sync_url()  # a click changed the query after page() wrote the URL

    def from_row_col() -> None:
        st.session_state["query"] = (st.session_state["query_row"] * G
                                     + st.session_state["query_col"])

    picture = figures.clickable_grid(ctx.trace.image, cfg.patch_size, highlight=query)
    with where.container():
        st.markdown(f"**{ctx.t('query')} = {query}**")
        streamlit_image_coordinates(picture, key="query_click", width=320)
        st.caption(ctx.t("click_hint"))
        c1, c2 = st.columns(2)
        c1.number_input(ctx.t("query_row"), 0, G - 1, step=1, key="query_row",
                        on_change=from_row_col)
        c2.number_input(ctx.t("query_col"), 0, G - 1, step=1, key="query_col",
                        on_change=from_row_col)
    return int(st.session_state["query"])


def note_original(ctx: Page, where=None) -> None:
    """The note's original Chinese text for this step, collapsible, beside the explanation."""
    where = where or st
    text = note_markdown(ctx.step)
    with where.expander(ctx.t("note_original")):
        st.markdown(text if text else ctx.t("note_none"))
