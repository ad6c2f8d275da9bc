"""What a picture shows, in words: its text alternative, made from the very call that draws it.

A picture of the app is a call of a `lens.figures` function (`lens.pictures.Picture`: the
function, its arrays and its words). `describe(draw, args, kwargs, lang)` reads that call and
says what the picture is and what a sighted learner reads off it, with the numbers of the
arrays it is drawn from — a heatmap: its range and its largest cells; an attention map: the
query, its three strongest patches with their weights and the weight on the query itself; a
bar chart: its bars' values —, in the page's language (`texts/<lang>/describe.toml`). The
titles and labels are the figure's own strings, never recomputed: what a lesson withholds from
a figure's words is withheld from its description too, and no shape is stated that the figure
does not show. A figure without a describer of its own still gets its title and the range of
its first array (`fallback`). Pure: no Streamlit (`lens.widgets.picture` passes the text as
the image's `alt`, and a long description's rows to a table beside it; the handout prints
`Description.text` under each picture of its PDF); the live explorer
(lens/explorer_web/explorer.js) describes its maps in the browser with the same words
(`explorer_words`).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from . import figures
from .i18n import Texts

ALT_PANELS = 8  # maps (charts, curves) an alt text describes one by one; more: in the table
ALT_BARS = 16  # bars an alt text lists one by one
TOP = 3  # strongest patches (largest cells) named


@dataclass(frozen=True)
class Description:
    """A picture's text alternative (`alt`, one paragraph) and its parts, one (part, text)
    row each (a map, a chart, a curve), for a table beside the picture; `long` when the alt
    leaves some parts to that table, then `whole` says every part in one paragraph (where
    no table is beside it: the handout's PDF)."""

    alt: str
    parts: tuple[tuple[str, str], ...] = ()
    long: bool = False
    whole: str = ""

    @property
    def text(self) -> str:
        """The description in one paragraph with every part: `alt`, or `whole` when long."""
        return self.whole if self.long else self.alt


Args = Mapping[str, object]  # the figure call's arguments by parameter name, defaults filled
Describer = Callable[[Texts, Args], Description]


def number(v: float) -> str:
    """A value as a description writes it: three significant digits ("0.0213", "−1.5",
    "12345"), a true minus sign, no "−0"."""
    v = float(v)
    if not np.isfinite(v):
        return str(v)
    text = f"{v:.0f}" if 1e4 <= abs(v) < 1e7 else f"{v:.3g}"
    return "0" if text in ("-0", "0") else text.replace("-", "−")


def largest(values: np.ndarray, k: int = TOP, *, by_size: bool = False) -> list[int]:
    """Flat indices of the k largest entries of `values` (by absolute value with `by_size`),
    largest first, the lower index first among equals."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    key = np.abs(flat) if by_size else flat
    return [int(i) for i in np.argsort(-key, kind="stable")[:k]]


def token_name(i: int, prefix: Sequence[str]) -> str:
    """Row (column) i of a token axis as the figure ticks it: a prefix row by name ("CLS"),
    else its patch number (i − len(prefix))."""
    return str(prefix[i]) if i < len(prefix) else str(i - len(prefix))


def joined(t: Texts, key: str, texts: Sequence[str]) -> str:
    """Texts joined the page language's way: "alt_sentences" ("a b" / "ab"), "alt_clauses"
    ("a; b" / "a；b") or "alt_items" ("a, b" / "a，b")."""
    return functools.reduce(lambda a, b: t(key, a=a, b=b), texts) if texts else ""


def sentence(t: Texts, text: str) -> str:
    """A clause made a sentence: "text." / "text。"."""
    return t("alt_sentence", s=text)


def _range(t: Texts, key: str, m: np.ndarray, **values: object) -> str:
    """Text `key` with the range of m ({lo}, {hi}) and `values`."""
    m = np.asarray(m, dtype=np.float64)
    lo, hi = (number(np.min(m)), number(np.max(m))) if m.size else ("–", "–")
    return t(key, lo=lo, hi=hi, **values)


def _cells(t: Texts, m: np.ndarray, by_size: bool, rows: Callable[[int], str],
           cols: Callable[[int], str]) -> str:
    """The largest cells of a matrix m [rows, cols], named as the figure ticks them."""
    out = []
    for i in largest(m, by_size=by_size):
        r, c = divmod(i, m.shape[1])
        out.append(t("alt_at_cell", v=number(m[r, c]), r=rows(r), c=cols(c)))
    return joined(t, "alt_clauses", out)


def _largest(t: Texts, signed: bool) -> str:
    """"Largest in size" for a signed matrix (its cells by absolute value), else "Largest"."""
    return t("alt_largest_size" if signed else "alt_largest")


def heatmap(t: Texts, a: Args) -> Description:
    """`figures.heatmap`: its title, axes, range, its three largest cells (by size when signed)
    and the outlined row or column's range."""
    m = np.atleast_2d(np.asarray(a["m"], dtype=np.float64))
    prefix = list(a["prefix"])
    named = len(m) <= figures.MAX_SIDE  # block-averaged axes tick no names
    rows = (lambda r: token_name(r, prefix)) if named else str
    cols = (lambda c: token_name(c, prefix)) if named and a["prefix_cols"] else str
    text = [_range(t, "alt_heatmap", m, title=a["title"], xlabel=a["xlabel"],
                   ylabel=a["ylabel"], largest=_largest(t, bool(a["signed"])),
                   top=_cells(t, m, bool(a["signed"]), rows, cols))]
    if a["highlight_row"] is not None and 0 <= int(a["highlight_row"]) < m.shape[0]:
        r = int(a["highlight_row"])
        text.append(_range(t, "alt_highlight_row", m[r], r=rows(r)))
    if a["highlight_col"] is not None and 0 <= int(a["highlight_col"]) < m.shape[1]:
        c = int(a["highlight_col"])
        text.append(_range(t, "alt_highlight_col", m[:, c], c=cols(c)))
    return Description(joined(t, "alt_sentences", text))


def row_heatmap(t: Texts, a: Args) -> Description:
    """`figures.row_heatmap`: one row per label, each row's largest entry."""
    m = np.atleast_2d(np.asarray(a["m"], dtype=np.float64))
    labels = [str(s) for s in a["row_labels"]]
    tops = []
    for label, row in zip(labels, m if m.size else [], strict=False):
        c = largest(row, 1, by_size=bool(a["signed"]))[0]
        tops.append(t("alt_row_top", label=label, v=number(row[c]), c=c))
    return Description(_range(t, "alt_row_heatmap", m, title=a["title"],
                              rows=joined(t, "alt_items", labels), xlabel=a["xlabel"],
                              largest=_largest(t, bool(a["signed"])),
                              top=joined(t, "alt_clauses", tops)))


def value_grid(t: Texts, a: Args) -> Description:
    """`figures.value_grid`: its range and largest cells, rows and columns numbered from
    row0 and col0 as its ticks are."""
    m = np.atleast_2d(np.asarray(a["m"], dtype=np.float64))
    r0, c0 = int(a["row0"]), int(a["col0"])
    top = _cells(t, m, bool(a["signed"]), lambda r: str(r0 + r), lambda c: str(c0 + c))
    return Description(_range(t, "alt_value_grid", m, title=a["title"], xlabel=a["xlabel"],
                              ylabel=a["ylabel"], largest=_largest(t, bool(a["signed"])),
                              top=top))


def _panel(t: Texts, name: str, w: np.ndarray, query: int | None) -> str:
    """One map over the patches w [G, G]: its strongest patches (and the query's own value)."""
    flat = np.asarray(w, dtype=np.float64).ravel()
    top = joined(t, "alt_items", [t("alt_patch_value", i=i, v=number(flat[i]))
                                  for i in largest(flat)])
    text = t("alt_panel", name=name, top=top) if name else t("alt_panel_unnamed", top=top)
    if query is not None and 0 <= query < flat.size:
        text += t("alt_panel_self", own=number(flat[query]))
    return text


def _maps(t: Texts, title: str, names: list[str], maps: np.ndarray, lo: float, hi: float,
          query: int | None, mark: int | None) -> Description:
    """Maps over the patches (maps [k, G, G], named): the summary, each map's strongest
    patches — in the alt up to ALT_PANELS maps, all of them in the parts."""
    q = "" if query is None else t("alt_attention_query", q=query)
    head = [t("alt_attention", title=title, k=len(maps), lo=number(lo), hi=number(hi),
              query=q)]
    if mark is not None:
        head.append(t("alt_attention_mark", m=mark))
    parts = tuple((name, _panel(t, name, w, query)) for name, w in zip(names, maps,
                                                                          strict=True))
    return _parts(t, head, parts)


def _parts(t: Texts, head: list[str], parts: Sequence[tuple[str, str]]) -> Description:
    """The description of a picture of several parts (maps, charts, curves): its head
    sentences, then up to ALT_PANELS parts one sentence each; all parts for the table and,
    when some are left out of the alt, in `whole`."""
    every = [sentence(t, text) for _, text in parts]
    shown, more = every[:ALT_PANELS], len(parts) - ALT_PANELS
    if more <= 0:
        return Description(joined(t, "alt_sentences", head + shown), tuple(parts))
    alt = joined(t, "alt_sentences", [*head, *shown, t("alt_panels_more", n=more)])
    return Description(alt, tuple(parts), long=True,
                       whole=joined(t, "alt_sentences", head + every))


def attention_grid(t: Texts, a: Args) -> Description:
    """`figures.attention_grid`: maps [k, G, G] titled one by one, on one colour scale."""
    maps = np.asarray(a["maps"], dtype=np.float64)
    hi = float(a["vmax"]) if a["vmax"] is not None else float(np.max(maps, initial=0.0))
    labels = a["row_labels"]
    ncols = max(1, min(int(a["ncols"]), len(maps)))
    names = [str(s) for s in a["titles"]]
    if labels is not None:  # each row labelled: "layer 2 · head 1"
        names = [f"{labels[i // ncols]} · {n}" if n else str(labels[i // ncols])
                 for i, n in enumerate(names)]
    return _maps(t, str(a["title"]), names, maps, float(a["vmin"]), hi, a["query"], a["mark"])


def attention_table(t: Texts, a: Args) -> Description:
    """`figures.attention_table`: maps [rows, cols, G, G], named by their row and column."""
    maps = np.asarray(a["maps"], dtype=np.float64)
    rows, cols = maps.shape[:2]
    hi = float(a["vmax"]) if a["vmax"] is not None else float(np.max(maps, initial=0.0))
    names = [" · ".join(s for s in (str(a["row_labels"][r]), str(a["col_labels"][c])) if s)
             for r in range(rows) for c in range(cols)]
    return _maps(t, str(a["title"]), names, maps.reshape(rows * cols, *maps.shape[2:]),
                 0.0, hi, a["query"], None)


def _chart(t: Texts, name: str, v: np.ndarray, xlabel: str, ticks: Sequence[str] | None,
           highlight: int | None) -> str:
    """One bar chart v [n]: its range, largest bar, each bar when at most ALT_BARS, and the
    highlighted bar."""
    v = np.asarray(v, dtype=np.float64).ravel()
    if not v.size:
        return name
    label = (lambda i: str(ticks[i])) if ticks is not None else str
    at = "alt_bar_named" if ticks is not None else "alt_bar_at"  # "circle: 0.8", "0.8 at 3"
    top = t(at, v=number(v[largest(v, 1)[0]]), i=label(largest(v, 1)[0]))
    text = _range(t, "alt_bar_chart", v, name=name, n=len(v), xlabel=xlabel, top=top)
    if len(v) <= ALT_BARS:
        text += t("alt_bar_values", values=joined(
            t, "alt_items", [t(at, v=number(x), i=label(i)) for i, x in enumerate(v)]))
    if highlight is not None and 0 <= highlight < len(v):
        text += t("alt_bar_highlight", i=label(highlight), v=number(v[highlight]))
    return text


def _charts(t: Texts, title: str, parts: list[tuple[str, str]]) -> Description:
    head = t("alt_bars", title=title, k=len(parts)) if len(parts) > 1 else \
        t("alt_title", title=title)
    return _parts(t, [head], parts)


def bars(t: Texts, a: Args) -> Description:
    """`figures.bars`: bar charts one under the other, each titled and with its y label."""
    parts = [(str(name), _chart(t, str(name), v, str(a["xlabel"]), None, a["highlight"]))
             for name, v in zip(a["titles"], a["values"], strict=False)]
    return _charts(t, str(a["suptitle"]), parts)


def bar_panels(t: Texts, a: Args) -> Description:
    """`figures.bar_panels`: bar charts side by side, one per row of values [k, n]."""
    values = np.atleast_2d(np.asarray(a["values"], dtype=np.float64))
    ticks = a["tick_labels"]
    parts = [(str(name), _chart(t, str(name), v, str(a["xlabel"]), ticks, a["highlight"]))
             for name, v in zip(a["titles"], values, strict=False)]
    return _charts(t, str(a["suptitle"]), parts)


def lines(t: Texts, a: Args) -> Description:
    """`figures.lines`: each curve's first and last value and its range."""
    x = np.asarray(a["x"], dtype=np.float64).ravel()
    parts = []
    for name, y in zip(a["labels"], a["ys"], strict=False):
        y = np.asarray(y, dtype=np.float64).ravel()
        parts.append((str(name), _range(t, "alt_line", y, name=name, first=number(y[0]),
                                        last=number(y[-1]))))
    head = t("alt_lines", title=a["title"], k=len(parts), xlabel=a["xlabel"],
             ylabel=a["ylabel"], x0=number(x[0]) if x.size else "",
             x1=number(x[-1]) if x.size else "")
    return _parts(t, [head], parts)


def answer_counts(t: Texts, a: Args) -> Description:
    """`figures.answer_counts`: each answer's count, "right" where the figure marks it."""
    right = list(a["right"]) or [False] * len(a["labels"])
    counts = joined(t, "alt_clauses", [
        t("alt_answer_right" if ok else "alt_answer_count", label=label, n=n)
        for label, n, ok in zip(a["labels"], a["counts"], right, strict=False)])
    return Description(t("alt_answer_counts", title=a["title"], counts=counts))


def pipeline(t: Texts, a: Args) -> Description:
    """`figures.pipeline`: its three captions and the encoder's stages, as drawn."""
    return Description(t("alt_pipeline", captions=joined(t, "alt_clauses",
                                                         [str(c) for c in a["captions"]]),
                         stages=" → ".join(str(s) for s in a["stages"])))


def image_with_grid(t: Texts, a: Args) -> Description:
    """`figures.image_with_grid`: the patch size its axes (in pixels) show, the numbers, the
    outlined and the framed patch."""
    numbers = t("alt_image_numbers") if a["numbers"] else ""
    text = [t("alt_image_grid", title=a["title"], p=a["patch_size"], numbers=numbers)]
    if a["highlight"] is not None:
        text.append(t("alt_image_highlight", i=a["highlight"]))
    if a["mark"] is not None:
        text.append(t("alt_attention_mark", m=a["mark"]))
    return Description(joined(t, "alt_sentences", text))


def image_pair(t: Texts, a: Args) -> Description:
    """`figures.image_pair`: its two titles."""
    left, right = (str(s) for s in a["titles"])
    return Description(t("alt_image_pair", left=left, right=right))


def patch_gallery(t: Texts, a: Args) -> Description:
    """`figures.patch_gallery`: how many tiles it shows."""
    n = min(len(a["patches"]), int(a["max_patches"]))
    return Description(t("alt_gallery", title=a["title"], n=n))


def position_mosaic(t: Texts, a: Args) -> Description:
    """`figures.position_mosaic`: its range and the query's tile."""
    q = "" if a["query"] is None else t("alt_mosaic_query", q=a["query"])
    return Description(_range(t, "alt_mosaic", np.asarray(a["mosaic"]), title=a["title"],
                              query=q))


def fallback(t: Texts, a: Args) -> Description:
    """Any other figure: its first string argument (its title) and the range of its first
    array, or just "a picture"."""
    title = next((v for v in a.values() if isinstance(v, str) and v), "")
    array = next((np.asarray(v, dtype=np.float64) for v in a.values()
                  if isinstance(v, np.ndarray) and v.size), None)
    if array is None:
        return Description(t("alt_title", title=title) if title else t("alt_none"))
    return Description(_range(t, "alt_fallback", array, title=title))


DESCRIBERS: dict[Callable[..., bytes], Describer] = {
    figures.heatmap: heatmap, figures.row_heatmap: row_heatmap,
    figures.value_grid: value_grid, figures.attention_grid: attention_grid,
    figures.attention_table: attention_table, figures.bars: bars,
    figures.bar_panels: bar_panels, figures.lines: lines,
    figures.answer_counts: answer_counts, figures.pipeline: pipeline,
    figures.image_with_grid: image_with_grid, figures.image_pair: image_pair,
    figures.patch_gallery: patch_gallery, figures.position_mosaic: position_mosaic,
}


def explorer_words(lang: str) -> dict[str, object]:
    """The words the attention explorer (lens/explorer_web/explorer.js) describes its maps with
    as the query moves, as templates with one-letter placeholders ({a}: the map's name, {b}:
    its strongest patches, {o}: its weight on the patch itself; words, never code names, in the
    page's language): the same texts as a picture's description, so that both say it alike.
    The table the explorer shows on demand (one row per map: its TOP strongest patches and
    its weight on the query) takes its button's words (`show`, `hide`), its caption ({t}: the
    maps' title) and its column heads (`map`, `top`, `own_col`) from here too."""
    t = Texts(lang, "describe")
    return {"patch": t("alt_patch_value", i="{i}", v="{v}"),
            "panel": t("alt_panel", name="{a}", top="{b}"),
            "own": t("alt_panel_self", own="{o}"), "more": t("alt_panels_more", n="{n}"),
            "sentence": t("alt_sentence", s="{s}"), "items": t("alt_items", a="", b=""),
            "sentences": t("alt_sentences", a="", b=""), "shown": ALT_PANELS,
            "show": t("table_show"), "hide": t("table_hide"),
            "caption": t("table_caption", title="{t}"), "map": t("table_map"),
            "top": [t(f"table_top_{k + 1}") for k in range(TOP)], "own_col": t("table_own")}


def arguments(draw: Callable[..., bytes], args: Sequence[object],
              kwargs: Mapping[str, object]) -> dict[str, object]:
    """The call `draw(*args, **kwargs)`'s arguments by parameter name, defaults filled in."""
    bound = inspect.signature(draw).bind(*args, **kwargs)
    bound.apply_defaults()
    return dict(bound.arguments)


def after_name(name: str, alt: str, lang: str) -> str:
    """A description `alt` after the `name` a page's heading gives a figure drawn without a
    title: "<name>. <alt>" in the language's own punctuation."""
    t = Texts(lang, "describe")
    return t("alt_sentences", a=t("alt_sentence", s=name), b=alt)


def describe(draw: Callable[..., bytes], args: Sequence[object],
             kwargs: Mapping[str, object], lang: str) -> Description:
    """The description of the picture `draw(*args, **kwargs)` in `lang`."""
    describer = DESCRIBERS.get(draw, fallback)
    return describer(Texts(lang, "describe"), arguments(draw, args, kwargs))
