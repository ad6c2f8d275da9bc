"""The registry of pages: the one place a page is named. The note's steps in order, then the
pages beyond them; everything else refers to a page by its id.

A page's id is its URL path (/multihead), its module (`pages/multihead.py`), the name of its
text files (`lens/texts/<lang>/multihead.toml`, whose `title` and `takeaway` are the page's)
and the key of its text in the note (`lens.note`).

Why the module is named exactly as the URL path: while a folder `pages/` exists, a fresh
server's first visit runs in Streamlit's pages-folder mode, which looks the URL up among the
files of `pages/` by their pages-folder names (file stems). Found, it runs that file alone —
and the page hands over to app.py, which opens it with the app's own navigation
(`lens.runner.run_page`). Not found (a file named otherwise, e.g. `multihead_page.py`), the
learner gets Streamlit's "Page not found" dialog over the page.

One page cannot be named so: /class, whose module name would be a Python keyword. Its file is
`pages/_class.py` (`PageInfo.stem`): Streamlit's pages-folder name leaves out a leading number
and underscores (`source_util.page_icon_and_name`), so that file's pages-folder name is "class".
"""

from __future__ import annotations

from dataclasses import dataclass

from . import page_costs
from .i18n import translate
from .page_costs import Terms

PAGES_PACKAGE = "pages"


@dataclass(frozen=True)
class PageInfo:
    id: str  # the page's id and URL path, e.g. "multihead"
    in_note: bool = True  # one of the note's steps (numbered, with Previous / Next)
    stem: str = ""  # its file's stem when the id cannot be one ("class": "_class")
    costs: Terms | None = None  # what it derives on top of its trace (lens.page_costs), for
    #                             the memory budget; None: it only indexes the trace

    @property
    def module(self) -> str:
        """Its module, e.g. "pages.multihead"."""
        return f"{PAGES_PACKAGE}.{self.stem or self.id}"

    @property
    def path(self) -> str:
        """Its script, relative to the app's folder, e.g. "pages/multihead.py"."""
        return self.module.replace(".", "/") + ".py"

    def title_in(self, lang: str) -> str:
        return translate("title", lang, self.id)

    def takeaway_in(self, lang: str) -> str:
        """The step in one line."""
        return translate("takeaway", lang, self.id)


STEPS: tuple[PageInfo, ...] = (
    PageInfo("overview"),
    PageInfo("patches"),
    PageInfo("embedding"),
    PageInfo("positional", costs=page_costs.positional),
    PageInfo("qkv"),
    PageInfo("scores", costs=page_costs.scores),
    PageInfo("multihead", costs=page_costs.multihead),
    PageInfo("addnorm", costs=page_costs.addnorm),
    PageInfo("ffn", costs=page_costs.ffn),
    PageInfo("stack", costs=page_costs.stack),
)
EXTRA_PAGES: tuple[PageInfo, ...] = (
    PageInfo("compare", in_note=False, costs=page_costs.compare),
    PageInfo("vit", in_note=False, costs=page_costs.vit),
    PageInfo("class", in_note=False, stem="_class"),
)
ALL_PAGES = STEPS + EXTRA_PAGES
PAGES: dict[str, PageInfo] = {p.id: p for p in ALL_PAGES}


def page_for_script(path: str) -> PageInfo | None:
    """The page whose script is `path` (absolute or relative), or None."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return next((p for p in ALL_PAGES if p.path.rsplit("/", 1)[-1] == name), None)


def step_number(page_id: str) -> int | None:
    """1-based position among the note's steps; None for a page beyond them."""
    ids = [p.id for p in STEPS]
    return ids.index(page_id) + 1 if page_id in ids else None


def neighbours(page_id: str) -> tuple[PageInfo | None, PageInfo | None]:
    """(previous step, next step) of a step page; (None, None) beyond the note."""
    k = step_number(page_id)
    if k is None:
        return None, None
    return (STEPS[k - 2] if k > 1 else None), (STEPS[k] if k < len(STEPS) else None)
