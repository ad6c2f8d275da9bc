"""The registry of pages: the one place a page is named, and where each finds its parts. The
note's steps in order, then the pages beyond them; everything else refers to a page by its id.

A page's id is its URL path (/multihead), its module (`pages/multihead.py`: its `render`) and
the name of its text files (`lens/texts/<lang>/multihead.toml`, whose `title` and `takeaway`
are the page's, its lesson tasks' words too). Its entry holds, by reference, every other part it
has: a step's lesson tasks and handout sheet (its module of `lens.walk`: `multihead.TASKS`,
`multihead.sheet`), its derived work for the memory budget (`lens.page_costs`) and its lines of
the note (`lens.note`). Every part is named in every entry — None where the page has none (a
page beyond the note has no sheet and no lines of the note) — so none is forgotten
(tests/test_steps.py checks what each kind of page needs). The entry binds the page's tasks to
it: a task is declared once, by its name within the page (`Spec("shift", …)` in
`lens/walk/scores.py`), and its id is "scores.shift" (`Spec.id`; `TASKS` finds a task by it).

A page beyond the note may have lesson tasks too, built in its own module of `lens.walk`
(/learn: `learn.TASKS`): lesson mode asks them on that page like a step's. They are not the
walk's: the lesson's progress and summary count the note's steps only (`lens.lesson.ui.course`),
and a class asks the note's steps only (`class_tasks_for`).

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

from dataclasses import KW_ONLY, dataclass
from pathlib import Path

from encoder_core import EncoderConfig

from . import page_costs
from .handout.sheets import Builder
from .i18n import Texts
from .lesson.tasks import Spec, bind
from .note import Ranges
from .page_costs import Terms
from .walk import (
    addnorm,
    embedding,
    ffn,
    learn,
    multihead,
    overview,
    patches,
    positional,
    qkv,
    scores,
    stack,
    vit,
)

PAGES_PACKAGE = "pages"
# Where the pages package is: beside this package, in the checkout and installed alike (setuptools
# puts lens/ and pages/ in the same site-packages). A page's path is absolute so that it does not
# depend on the entry script's folder, which Streamlit resolves a relative one against: the
# checkout's app.py sits beside pages/, the package's lens/entry.py does not.
APP_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PageInfo:
    id: str  # the page's id and URL path, e.g. "multihead"
    _: KW_ONLY
    tasks: tuple[Spec, ...] | None  # its lesson tasks, in the order asked (lens.walk.<id>)
    sheet: Builder | None  # its sheet of the handout (lens.walk.<id>)
    note: Ranges | None  # its lines of the note (() where the note has none: the FFN)
    costs: Terms | None  # what it derives on top of its trace (lens.page_costs), for the
    #                      memory budget; None: it only indexes the trace
    in_note: bool = True  # one of the note's steps (numbered, with Previous / Next)
    # the overview's pipeline rows (encoder_core.views.analysis step ids) whose numbers this
    # step's questions ask for, besides the row named like it (lens.lesson.ahead)
    rows: tuple[str, ...] = ()
    stem: str = ""  # its file's stem when the id cannot be one ("class": "_class")

    def __post_init__(self) -> None:
        # its tasks are declared by name in its module of lens.walk: here they get their page
        object.__setattr__(self, "tasks", bind(self.id, self.tasks))

    @property
    def module(self) -> str:
        """Its module, e.g. "pages.multihead"."""
        return f"{PAGES_PACKAGE}.{self.stem or self.id}"

    @property
    def path(self) -> str:
        """Its script's absolute path, e.g. "<APP_ROOT>/pages/multihead.py" (st.Page,
        st.switch_page and st.page_link take it from any entry script)."""
        return str(APP_ROOT.joinpath(*self.module.split("."))) + ".py"

    def title_in(self, lang: str) -> str:
        return Texts(lang, self.id)("title")

    def takeaway_in(self, lang: str) -> str:
        """The step in one line."""
        return Texts(lang, self.id)("takeaway")


STEPS: tuple[PageInfo, ...] = (
    PageInfo("overview", tasks=overview.TASKS, sheet=overview.sheet, note=((1, 94),),
             costs=None),
    PageInfo("patches", tasks=patches.TASKS, sheet=patches.sheet, note=((5, 8),), costs=None,
             rows=("normalise",)),
    PageInfo("embedding", tasks=embedding.TASKS, sheet=embedding.sheet, note=((5, 13),),
             costs=None, rows=("prefix",)),
    PageInfo("positional", tasks=positional.TASKS, sheet=positional.sheet, note=((15, 26),),
             costs=page_costs.positional),
    PageInfo("qkv", tasks=qkv.TASKS, sheet=qkv.sheet, note=((27, 35),), costs=None),
    PageInfo("scores", tasks=scores.TASKS, sheet=scores.sheet, note=((36, 48),),
             costs=page_costs.scores, rows=("softmax",)),
    PageInfo("multihead", tasks=multihead.TASKS, sheet=multihead.sheet, note=((49, 59),),
             costs=page_costs.multihead, rows=("heads", "concat")),
    PageInfo("addnorm", tasks=addnorm.TASKS, sheet=addnorm.sheet, note=((60, 90),),
             costs=page_costs.addnorm,
             rows=("addnorm_1", "addnorm_2", "add_1", "add_2", "ln_1", "ln_2")),
    PageInfo("ffn", tasks=ffn.TASKS, sheet=ffn.sheet, note=(), costs=page_costs.ffn),
    PageInfo("stack", tasks=stack.TASKS, sheet=stack.sheet, note=((27, 28), (91, 94)),
             costs=page_costs.stack, rows=("output", "final_norm")),
)
EXTRA_PAGES: tuple[PageInfo, ...] = (
    PageInfo("learn", tasks=learn.TASKS, sheet=None, note=None, costs=page_costs.learn,
             in_note=False),
    PageInfo("compare", tasks=None, sheet=None, note=None, costs=page_costs.compare,
             in_note=False),
    PageInfo("vit", tasks=vit.TASKS, sheet=None, note=None, costs=page_costs.vit,
             in_note=False),
    PageInfo("class", tasks=None, sheet=None, note=None, costs=None, in_note=False,
             stem="_class"),
)
ALL_PAGES = STEPS + EXTRA_PAGES
PAGES: dict[str, PageInfo] = {p.id: p for p in ALL_PAGES}
TASKS: dict[str, Spec] = {s.id: s for p in ALL_PAGES for s in p.tasks or ()}  # by task id


def tasks_for(page_id: str, cfg: EncoderConfig) -> list[Spec]:
    """The tasks page `page_id` asks for this model, in order ([] for a page without any)."""
    return [s for s in PAGES[page_id].tasks or () if s.applies(cfg)]


def class_tasks_for(page_id: str, cfg: EncoderConfig) -> list[Spec]:
    """The tasks a class asks on page `page_id`: a step's (the teacher opens the note's steps
    only); [] beyond the note."""
    return tasks_for(page_id, cfg) if PAGES[page_id].in_note else []


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


def nav_label(info: PageInfo, lang: str) -> str:
    """The navigation's label: "7. Multi-head attention" for a step, "★ Compare & ablate" after."""
    k = step_number(info.id)
    return f"★ {info.title_in(lang)}" if k is None else f"{k}. {info.title_in(lang)}"
