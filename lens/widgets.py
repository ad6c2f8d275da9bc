"""Page building blocks: cached pictures, a matrix with its caption and number window, the
query patch (the explorer's picture, or row / column inputs), the layer and head selectors, the
note's original text, PNG download buttons.

Pictures are rendered by `lens.figures` and cached by content, so a rerun that shows the same
arrays costs a look-up, not a redraw; each carries its description (`lens.describe`) as its
text alternative, a long one's parts in a table under it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from . import explorer, explorer_component, figures, keys
from .context import PageContext
from .describe import Description, describe, explorer_words
from .digests import value_key
from .i18n import Texts
from .note import note_markdown
from .pictures import WINDOW, Figure, Matrix, Picture
from .services import SERVICES
from .session import sync_url
from .steps import PAGES

Where = DeltaGenerator | None  # the container a block is drawn in; None: the page itself


def render(draw: Figure, *args: object, **kwargs: object) -> bytes:
    """PNG bytes of `draw(*args, **kwargs)` (e.g. `figures.heatmap`), cached by the function
    (its module and qualified name) and the arguments' content (`value_key`: a trace's arrays
    are digested once, not on every rerun) in the server's picture cache, which draws each
    picture once however many sessions ask for it at once."""
    key = (f"{draw.__module__}.{draw.__qualname__}", value_key(args), value_key(kwargs))
    return SERVICES.picture(key, lambda: draw(*args, **kwargs))


def png_name(ctx: PageContext, shows: str) -> str:
    """A picture's file name: the page, what it shows, the selectors that made it and the
    width, ASCII only — "multihead_grid_layer1_head3_query105_d512.png" ("scores_query105_…"
    for the picture named after its page)."""
    parts = [ctx.id, shows if shows != ctx.id else "",
             *(f"{name}{value}" for name, value in ctx.chosen),
             f"d{ctx.cfg.d_model}"]
    name = "_".join(p for p in parts if p)
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9_]", "_", name)).strip("_") + ".png"


def picture(ctx: PageContext, draw: Figure, *args: object, key: str, caption: str | None = None,
            where: Where = None, shows: str = "", **kwargs: object) -> None:
    """Render a figure, show it full width, with an optional caption and a PNG download.

    Sent as the PNG it is (`output_format="PNG"`): with "auto", Streamlit decodes every picture
    without an alpha channel and re-encodes it as a JPEG on every run (CPU per session, and
    JPEG artefacts on the cells of a heatmap). The download's file is handed over only when
    the button is pressed (its data is a callable): Streamlit would otherwise hash and store
    every picture a second time, as a download, on every run of every session. Its file is
    named by `png_name`: `shows` says what it shows (default: its key)."""
    where = where or st
    if not ctx.shows(key):
        withheld_note(ctx, where)
        return
    png = render(draw, *args, **kwargs)
    said = describe(draw, args, kwargs, ctx.lang)
    where.image(png, caption=caption, width="stretch", output_format="PNG", alt=said.alt)
    if said.long:
        description_table(ctx, said, key=key, where=where)
    where.download_button(ctx.t("download_png"), lambda: png,
                          file_name=png_name(ctx, shows or key.removeprefix(f"{ctx.id}_")),
                          mime="image/png", key=f"dl_{key}", on_click="ignore")


def description_table(ctx: PageContext, said: Description, *, key: str,
                      where: Where = None) -> None:
    """A long description's parts (`lens.describe`: each map, chart or curve) as a table, in
    an expander under its picture; built only while the expander is open."""
    t = Texts(ctx.lang, "describe")
    box = (where or st).expander(t("describe_open"), key=f"describe_open_{key}",
                                 on_change="rerun")
    if box.open:
        box.table(pd.DataFrame(list(said.parts), columns=[t("describe_item"),
                                                          t("describe_text")])
                  .set_index(t("describe_item")))


def show(ctx: PageContext, pic: Picture, *, caption: str | None = None, where: Where = None,
         shows: str = "") -> None:
    """`picture` of a view-model's `Picture` (`lens.pictures`): the figure it names, drawn with
    its arguments."""
    picture(ctx, pic.draw, *pic.args, key=pic.key, caption=caption, where=where, shows=shows,
            **pic.kwargs)


# A picture side by side on a laptop or a tablet, one part under the other in a phone's column:
# both are sent, the browser shows the one that fits (the server never learns the width).
PHONE_PX = 640
SWAP_CSS = ("<style>"
            f"@media (max-width: {PHONE_PX}px) {{ [class*='st-key-wide_'] {{ display: none }} }}"
            f"@media (min-width: {PHONE_PX + 1}px) "
            "{ [class*='st-key-tall_'] { display: none } }"
            "</style>")


def wide_or_tall(ctx: PageContext, draw: Figure, *args: object, key: str, where: Where = None,
                 **kwargs: object) -> None:
    """`picture` twice, drawn by `draw(…, tall=False)` and `draw(…, tall=True)`, in containers
    keyed `wide_<key>` and `tall_<key>`: its text legible on a laptop and on a phone alike."""
    where = where or st
    if not ctx.shows(key):
        withheld_note(ctx, where)
        return
    where.html(SWAP_CSS)
    for layout, tall in (("wide", False), ("tall", True)):
        picture(ctx, draw, *args, key=key if not tall else f"{key}_tall", shows=key,
                where=where.container(key=f"{layout}_{key}"), tall=tall, **kwargs)


def withheld_note(ctx: PageContext, where: Where = None) -> None:
    """The line in place of what a lesson's open task withholds."""
    (where or st).caption(ctx.t(ctx.withheld_text))


def section(ctx: PageContext, key: str, draw: Callable[[], None], where: Where = None) -> None:
    """`draw()` in a container keyed `shown_<key>`; while an open task of the lesson withholds
    `key`, one line that says it follows the answer instead — nothing of it is drawn or sent."""
    where = where or st
    if not ctx.shows(key):
        withheld_note(ctx, where)
        return
    with where.container(key=f"shown_{key}"):
        draw()


def matrix(ctx: PageContext, m: np.ndarray, name: str, *, key: str, signed: bool = True,
           xlabel: str | None = None, ylabel: str | None = None, where: Where = None,
           colorbar_label: str = "", window: bool = True, highlight_row: int | None = None,
           highlight_col: int | None = None, size: tuple[float, float] = (5.0, 4.0),
           vmax: float | None = None, tokens: str = "", shows: str = "") -> None:
    """A matrix as a heatmap titled with its name and shape, plus a 32 × 32 number window;
    `vmax` fixes the colour scale (to share it with another matrix). `tokens` says which axes
    run over a ViT's sequence: "rows", "both" (an attention matrix) or "" — their prefix rows
    (CLS, …) are then ticked by name and outlined."""
    where = where or st
    m = np.atleast_2d(m)
    box = None  # where the number window sits, outlined on the heatmap
    if window and (m.shape[0] > WINDOW or m.shape[1] > WINDOW):
        box = (_window_start(key, "r", m.shape[0]), _window_start(key, "c", m.shape[1]),
               WINDOW, WINDOW)
    kr = -(-m.shape[0] // figures.MAX_SIDE)
    kc = -(-m.shape[1] // figures.MAX_SIDE)
    shrunk = ctx.t("block_avg", kr=kr, kc=kc) if kr > 1 or kc > 1 else None
    heatmap = Matrix(m, name, key, signed=signed, xlabel=xlabel, ylabel=ylabel,
                     colorbar_label=colorbar_label, highlight_row=highlight_row,
                     highlight_col=highlight_col, size=size, vmax=vmax, tokens=tokens)
    show(ctx, heatmap.picture(ctx, box), caption=shrunk, where=where, shows=shows)
    if window:
        number_window(ctx, m, name, key=key, signed=signed, where=where, vmax=vmax)


def show_matrix(ctx: PageContext, mat: Matrix, *, where: Where = None, window: bool = True,
                shows: str = "") -> None:
    """`matrix` of a view-model's `Matrix` (`lens.pictures`)."""
    matrix(ctx, mat.m, mat.name, key=mat.key, signed=mat.signed, xlabel=mat.xlabel,
           ylabel=mat.ylabel, where=where, colorbar_label=mat.colorbar_label, window=window,
           highlight_row=mat.highlight_row, highlight_col=mat.highlight_col, size=mat.size,
           vmax=mat.vmax, tokens=mat.tokens, shows=shows)


def _window_start(key: str, axis: str, size: int) -> int:
    """The number window's first row ("r") or column ("c") as its input holds it."""
    value = st.session_state.get(keys.window_start(axis, key), 0)
    return int(min(max(value, 0), max(0, size - WINDOW)))


def number_window(ctx: PageContext, m: np.ndarray, name: str, *, key: str, signed: bool = True,
                  where: Where = None, vmax: float | None = None) -> None:
    """An expander with any 32 × 32 block of `m` at full resolution: a table coloured with the
    heatmap's colour map and scale, every cell shown, four decimals; its place is outlined on
    the heatmap. The table is built only while the expander is open (opening it reruns the
    page): a styled table costs ~0.1 s to send, most of a cached page's time otherwise."""
    where = where or st
    box = where.expander(f"{ctx.t('window')} — {name}", key=f"win_open_{key}",
                         on_change="rerun")
    if not box.open:
        return
    with box:
        r_max = max(0, m.shape[0] - WINDOW)
        c_max = max(0, m.shape[1] - WINDOW)
        c1, c2 = st.columns(2)
        r0 = c1.number_input(ctx.t("window_rows"), 0, r_max, 0, step=WINDOW // 2,
                             key=keys.window_start("r", key)) if r_max else 0
        c0 = c2.number_input(ctx.t("window_cols"), 0, c_max, 0, step=WINDOW // 2,
                             key=keys.window_start("c", key)) if c_max else 0
        block = np.asarray(m[r0:r0 + WINDOW, c0:c0 + WINDOW], dtype=np.float64)
        if vmax is None:
            vmin, vmax = figures.colour_limits(figures.block_average(m)[0], signed)
        else:
            vmin = -vmax if signed else 0.0
        table = pd.DataFrame(block, index=range(r0, r0 + block.shape[0]),
                             columns=[str(c0 + j) for j in range(block.shape[1])])
        styled = table.style.background_gradient(
            cmap=figures.SIGNED_CMAP if signed else figures.PROB_CMAP, vmin=vmin, vmax=vmax,
            axis=None).format("{:+.4f}")
        st.dataframe(styled, height=35 * (block.shape[0] + 1) + 3)
        st.caption(ctx.t("window_caption", name=name, r0=r0, r1=r0 + block.shape[0], c0=c0,
                         c1=c0 + block.shape[1]))


def query_inputs(ctx: PageContext, where: Where = None) -> int:
    """The query patch: a commit of the picture (click, tap, arrow keys) applied once, then
    shown and editable as row / column inputs (the keyboard's way), kept in sync."""
    state = st.session_state
    G = ctx.cfg.grid_size
    query = ctx.settings.query
    commit = explorer_component.committed(keys.QUERY_CLICK)
    if commit and commit != state.get(keys.LAST_CLICK):
        query = min(max(int(commit["query"]), 0), G * G - 1)
        state[keys.QUERY] = query  # first the query, then mark the commit as handled
        state[keys.LAST_CLICK] = commit
    state[keys.QUERY] = query
    state[keys.QUERY_ROW], state[keys.QUERY_COL] = divmod(query, G)
    sync_url()  # a commit changed the query after page() wrote the link

    def from_row_col() -> None:
        state[keys.QUERY] = state[keys.QUERY_ROW] * G + state[keys.QUERY_COL]

    with (where or st).container():
        st.markdown(f"**{ctx.t('query')} = {query}**")
        row = st.container(horizontal=True)  # one block, not a row of two columns
        row.number_input(ctx.t("query_row"), 0, G - 1, step=1, key=keys.QUERY_ROW,
                         on_change=from_row_col)
        row.number_input(ctx.t("query_col"), 0, G - 1, step=1, key=keys.QUERY_COL,
                         on_change=from_row_col)
    return int(state[keys.QUERY])


def query_explorer(ctx: PageContext,
                   maps: Callable[[], explorer.Maps] | None = None,
                   where: Where = None, *, maps_key: str = "") -> None:
    """The picture that picks the query; with `maps`, every map follows the hovered patch.

    `maps` is a function that builds the maps and `maps_key` names them within this trace
    (e.g. f"multihead/{layer}"). The payload is built once per (image, maps, query, language)
    for every session, neither rebuilt nor hashed on a rerun; the picker alone (no maps) once
    per (image, its size, channels and patch grid, query, language), whatever the weights."""
    text = {"hint": ctx.t("hover_hint" if maps is not None else "click_hint"),
            "aria": ctx.t("picker_aria"), "patch": ctx.t("patch_tip", i="{i}", r="{r}", c="{c}"),
            "weight": ctx.t("weight_tip"), "zoom": ctx.t("zoom_tip"),
            "zoom_close": ctx.t("zoom_close")}
    if maps is not None:
        text.update(enlarge=ctx.t("enlarge_hint"), each_max=ctx.t("scale_each_max"),
                    to_shared=ctx.t("scale_to_shared"), to_each=ctx.t("scale_to_each"),
                    below=ctx.t("maps_below"), describe=explorer_words(ctx.lang))
    query = int(st.session_state.get(keys.QUERY, ctx.settings.query))  # after a commit
    cfg = ctx.cfg
    if maps is None:
        key = (ctx.image_key, cfg.image_size, cfg.channels, cfg.patch_size, "picker", ctx.lang,
               query)
    else:
        key = (ctx.image_key, cfg, ctx.weights_id, maps_key, ctx.lang, query)
    blob = ctx.services.payload(key, lambda: explorer.payload(
        ctx.trace.image, cfg.grid_size, query, text, maps() if maps is not None else None))
    explorer_component.show(blob, key=keys.QUERY_CLICK, where=where)


def query_picker(ctx: PageContext, where: Where = None) -> int:
    """Choose the query patch by clicking (tapping) the image or with row/column inputs."""
    where = where or st
    with where.container():
        picture = st.container()  # above the inputs, drawn once the commit is applied
        query = query_inputs(ctx)
        query_explorer(ctx, where=picture)
    return query


def layer_selector(ctx: PageContext, where: Where = None) -> int:
    """A layer selector (shown 1…L), kept across pages. Returns the 0-based layer."""
    return _index_selector(ctx, "layer", ctx.cfg.n_layers, where)


def head_selector(ctx: PageContext, where: Where = None) -> int:
    """A head selector (shown 1…h), kept across pages. Returns the 0-based head."""
    return _index_selector(ctx, "head", ctx.cfg.n_heads, where)


def heads_chooser(ctx: PageContext, count: int, *, key: str, limit: int = 8,
                  where: Where = None) -> list[int]:
    """The heads a grid shows (0-based): all `count` when they are at most `limit`; else the
    learner's choice of at most `limit` (the first `limit` by default, and when none is chosen),
    with a caption saying how many there are."""
    return _chooser(ctx, count, key=key, limit=limit, default=list(range(limit)),
                    names=("heads_shown", "head_number", "heads_caption"), where=where)


def layers_chooser(ctx: PageContext, count: int, *, key: str, limit: int = 6,
                   where: Where = None) -> list[int]:
    """The layers a grid shows (0-based): all `count` when they are at most `limit`; else the
    learner's choice of at most `limit`, by default spread evenly from the first layer to the
    last (12 layers, limit 6: 1, 3, 5, 8, 10, 12), with a caption saying how many there are."""
    spread = sorted({round(i * (count - 1) / (limit - 1)) for i in range(limit)}) \
        if limit > 1 else [count - 1]
    return _chooser(ctx, count, key=key, limit=limit, default=spread,
                    names=("layers_shown", "layer_number", "layers_caption"), where=where)


def _chooser(ctx: PageContext, count: int, *, key: str, limit: int, default: list[int],
             names: tuple[str, str, str], where: Where = None) -> list[int]:
    if count <= limit:
        return list(range(count))
    where = where or st
    shown, item, caption = names
    texts = ctx.t  # not ctx itself: the widget keeps its format_func (PageContext.t)
    if [i for i in st.session_state.get(key, default) if not 0 <= i < count]:
        st.session_state[key] = default  # the count changed: a kept choice may name one gone
    chosen = where.multiselect(ctx.t(shown, k=limit, n=count), list(range(count)),
                               default=default if key not in st.session_state else None,
                               max_selections=limit, key=key,
                               format_func=lambda i: texts(item, n=i + 1))
    chosen = sorted(chosen) or default
    where.caption(ctx.t(caption, n=count, k=len(chosen), limit=limit))
    return chosen


def feature_layer(ctx: PageContext, key: str, label: str,
                  name: Callable[[int], str]) -> int | None:
    """Which features a view reads: a layer's output (0-based), or None for the encoder's
    output — after its final norm when there is one (then offered beside the layers as index
    L), else the last layer's. `name(i)` words option i; it is kept by the widget, so it must
    not hold the context (its Texts, not ctx)."""
    L = ctx.cfg.n_layers
    options = list(range(L)) + ([L] if ctx.trace.final_ln is not None else [])
    if len(options) == 1:
        return None
    if st.session_state.get(key) not in options:  # new, or another model's layers
        st.session_state[key] = options[-1]
    chosen = st.select_slider(label, options=options, key=key, format_func=name)
    return None if chosen == options[-1] else chosen



def section_layer(ctx: PageContext, owner: str, words: str) -> int | None:
    """`feature_layer` for a page section (`lens.sections`): keyed `<owner>_layer_<page>`,
    worded by its texts `<words>_layer`, `<words>_output` and `<words>_layer_n`."""
    L, t = ctx.cfg.n_layers, Texts(ctx.lang, owner)  # kept by the widget: not ctx
    return feature_layer(ctx, f"{owner}_layer_{ctx.id}", t(f"{words}_layer"),
                         lambda i: t(f"{words}_output") if i == L
                         else t(f"{words}_layer_n", l=i + 1, L=L))

def _index_selector(ctx: PageContext, key: str, count: int, where: Where = None) -> int:
    chosen = 0 if count == 1 else (where or st).select_slider(
        ctx.t(key), options=list(range(count)), key=key,
        format_func=lambda i: f"{i + 1} / {count}")
    return chosen


def index_input(label: str, count: int, *, key: str, start: int, where: Where = None,
                help: str | None = None) -> int:
    """A whole-number input 0 … count − 1 that starts at `start` (and again whenever its value
    no longer fits, e.g. after the number of tokens changed)."""
    if not 0 <= st.session_state.get(key, -1) < count:
        st.session_state[key] = int(start)
    return int((where or st).number_input(label, 0, count - 1, step=1, key=key, help=help))


def note_original(ctx: PageContext, where: Where = None) -> None:
    """The note's original Chinese text for this step, collapsible, beside the explanation."""
    where = where or st
    text = note_markdown(PAGES[ctx.id].note)
    with where.expander(ctx.t("note_original")):
        st.markdown(text if text else ctx.t("note_none"))


AUTO_SECONDS = 3.0  # work predicted longer runs on a button, not on every visit (`run_asked`)


def run_asked(key: str, subject: object, seconds: float, run_label: str,
              wait_label: str) -> bool:
    """Whether to compute a section's work now: at once when predicted short (`seconds` ≤
    AUTO_SECONDS), else once its button (`run_label`) is pressed for this `subject` (a class,
    an image B), kept while the subject stays; until then `wait_label` says why it waits."""
    if seconds <= AUTO_SECONDS:
        return True
    done = f"{key}_asked"
    if st.session_state.get(done) == subject:
        return True
    if st.button(run_label, key=f"{key}_run"):
        st.session_state[done] = subject
        return True
    st.caption(wait_label)
    return False
