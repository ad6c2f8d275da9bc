"""The registry of pages: the one place a page is named. The note's steps in order, then the
pages beyond them; everything else refers to a page by its id.

A page's id is its URL path (/multihead), the name of its text files
(`lens/texts/<lang>/multihead.toml`, whose `title` and `takeaway` are the page's) and the key
of its text in the note (`lens.note`). Its module is `pages/<id>_page.py`: the suffix keeps the
file's pages-folder name ("multihead_page") from ever being a URL path, which would let a first
visit of a fresh server run the page without the entry script (see `lens.context.run_page`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .i18n import translate

PAGES_PACKAGE = "pages"


@dataclass(frozen=True)
class PageInfo:
    id: str  # the page's id and URL path, e.g. "multihead"
    in_note: bool = True  # one of the note's steps (numbered, with Previous / Next)

    @property
    def module(self) -> str:
        """Its module, e.g. "pages.multihead_page"."""
        return f"{PAGES_PACKAGE}.{self.id}_page"

    @property
    def path(self) -> str:
        """Its script, relative to the app's folder, e.g. "pages/multihead_page.py"."""
        return self.module.replace(".", "/") + ".py"

    def title_in(self, lang: str) -> str:
        return translate("title", lang, self.id)

    def takeaway_in(self, lang: str) -> str:
        """The step in one line."""
        return translate("takeaway", lang, self.id)


STEPS: tuple[PageInfo, ...] = tuple(PageInfo(i) for i in (
    "overview", "patches", "embedding", "positional", "qkv", "scores", "multihead", "addnorm",
    "ffn", "stack"))
EXTRA_PAGES: tuple[PageInfo, ...] = (PageInfo("compare", in_note=False),
                                     PageInfo("vit", in_note=False))
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
