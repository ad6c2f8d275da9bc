"""A page's pictures as data: which function of `lens.figures` draws each, with which arrays and
words — made from a `PageContext` without Streamlit, so a step's view-models (`lens.walk`) say
what a page shows and a test, a notebook or a script (docs/examples/) draws it from a trace.

`Picture` is one figure as a call (`picture.png()` draws it); `Matrix` is a matrix as the pages
show it, its heatmap (`Matrix.picture`) beside its number window. `lens.widgets` places them on
the page (`widgets.show`, `widgets.matrix`), caching each picture by its arguments' content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from encoder_core import prefix_names

from . import figures

if TYPE_CHECKING:
    from .context import PageContext

Figure = Callable[..., bytes]  # a function of lens.figures: arrays and labels -> PNG bytes
WINDOW = 32  # side of a matrix's number window


@dataclass(frozen=True)
class Picture:
    """One figure as a call: `draw(*args, **kwargs)`, its place on the page named by `key`
    (its download's file name too: `lens.widgets.png_name`)."""

    key: str
    draw: Figure
    args: tuple = ()
    kwargs: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def png(self) -> bytes:
        """The picture's PNG bytes, drawn now (the page's are cached: `lens.widgets.render`)."""
        return self.draw(*self.args, **self.kwargs)


@dataclass(frozen=True)
class Matrix:
    """A matrix as the pages show it: a heatmap titled with its name and shape, with a number
    window beside it (`lens.widgets.matrix`). `tokens` says which axes run over a ViT's
    sequence: "rows", "both" (an attention matrix) or "" (their prefix rows ticked by name)."""

    m: np.ndarray  # [rows, cols]
    name: str
    key: str
    signed: bool = True
    xlabel: str | None = None  # None: the common "features"
    ylabel: str | None = None  # None: the common "tokens"
    colorbar_label: str = ""
    highlight_row: int | None = None
    highlight_col: int | None = None
    size: tuple[float, float] = (5.0, 4.0)
    vmax: float | None = None  # fixes the colour scale (shared with another matrix)
    tokens: str = ""

    def window(self, r0: int = 0, c0: int = 0) -> tuple[int, int, int, int] | None:
        """Where its number window sits, from row r0 and column c0 (the page's first is at
        0, 0), outlined on the heatmap: (row, column, rows, columns); None when the matrix
        fits in one."""
        rows, cols = np.atleast_2d(self.m).shape
        return (r0, c0, WINDOW, WINDOW) if rows > WINDOW or cols > WINDOW else None

    def picture(self, ctx: PageContext,
                window: tuple[int, int, int, int] | None = None) -> Picture:
        """Its heatmap, with the number window's place outlined (`window`: row, column, rows,
        columns) when the page shows one."""
        m = np.atleast_2d(self.m)
        return Picture(self.key, figures.heatmap,
                       (m, figures.matrix_title(self.name, m),
                        self.xlabel if self.xlabel is not None else ctx.t("features"),
                        self.ylabel if self.ylabel is not None else ctx.t("tokens")),
                       dict(signed=self.signed, colorbar_label=self.colorbar_label,
                            highlight_row=self.highlight_row, highlight_col=self.highlight_col,
                            size=self.size, vmax=self.vmax, window=window,
                            mean_of=ctx.t("mean_of"),
                            prefix=prefix_names(ctx.cfg) if self.tokens else [],
                            prefix_cols=self.tokens == "both"))
