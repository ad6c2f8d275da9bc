"""The pages: the note's steps in order, then the pages beyond them. Referred to by id.

A page's id is its URL path (/multihead) and the key of its text in the note (`lens.note`);
its title is looked up from the id in the current language.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    id: str  # the page's id and URL path, e.g. "multihead"
    path: str  # its script, e.g. "pages/07_multihead.py"
    title: tuple[str, str]  # (English, 中文)
    in_note: bool = True  # one of the note's steps (numbered, with Previous / Next)

    def title_in(self, lang: str) -> str:
        return self.title[1] if lang == "zh" else self.title[0]


STEPS: tuple[PageInfo, ...] = (
    PageInfo("overview", "pages/01_overview.py", ("Overview", "总览")),
    PageInfo("patches", "pages/02_patches.py", ("Patches", "图像块")),
    PageInfo("embedding", "pages/03_embedding.py", ("Input embedding", "输入嵌入")),
    PageInfo("positional", "pages/04_positional.py", ("Positional encoding", "位置编码")),
    PageInfo("qkv", "pages/05_qkv.py", ("Q, K, V", "生成 Q、K、V")),
    PageInfo("scores", "pages/06_scores.py", ("Scores & softmax", "注意力分数与 Softmax")),
    PageInfo("multihead", "pages/07_multihead.py", ("Multi-head attention", "多头注意力")),
    PageInfo("addnorm", "pages/08_addnorm.py", ("Add & Norm", "残差与层归一化")),
    PageInfo("ffn", "pages/09_ffn.py", ("Feed-forward", "前馈网络")),
    PageInfo("stack", "pages/10_stack.py", ("The stack", "堆叠的编码器")),
)
EXTRA_PAGES: tuple[PageInfo, ...] = (
    PageInfo("compare", "pages/11_compare.py", ("Compare & ablate", "对比与消融"), in_note=False),
)
ALL_PAGES = STEPS + EXTRA_PAGES
PAGES: dict[str, PageInfo] = {p.id: p for p in ALL_PAGES}


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
