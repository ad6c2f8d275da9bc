"""The pages: the note's steps in order, then the pages beyond them. Referred to by id.

A page's id is its URL path (/multihead) and the key of its text in the note (`lens.note`);
its title is looked up from the id in the current language.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PageInfo:
    id: str  # the page's id and URL path, e.g. "multihead"
    path: str  # its script, e.g. "app_pages/07_multihead.py"
    title: tuple[str, str]  # (English, 中文)
    takeaway: tuple[str, str]  # the step in one line (English, 中文)
    in_note: bool = True  # one of the note's steps (numbered, with Previous / Next)

    def title_in(self, lang: str) -> str:
        return self.title[1] if lang == "zh" else self.title[0]

    def takeaway_in(self, lang: str) -> str:
        return self.takeaway[1] if lang == "zh" else self.takeaway[0]


STEPS: tuple[PageInfo, ...] = (
    PageInfo("overview", "app_pages/01_overview.py", ("Overview", "总览"), (
        "An encoder turns an image into N vectors, one per patch, each mixed with information "
        "from the whole image.",
        "编码器把一幅图像变成 N 个向量，每个图像块一个，每个都混入了整幅图像的信息。")),
    PageInfo("patches", "app_pages/02_patches.py", ("Patches", "图像块"), (
        "The image becomes a sequence: N patches, each flattened into one row of P·P·C numbers.",
        "图像变成一个序列：N 个图像块，每块展平成一行 P·P·C 个数。")),
    PageInfo("embedding", "app_pages/03_embedding.py", ("Input embedding", "输入嵌入"), (
        "One matrix W_E maps every patch row to a vector of width d_model — the same weights "
        "for every patch.",
        "同一个矩阵 W_E 把每一行图像块映射成宽度为 d_model 的向量——所有图像块共用同一组权重。")),
    PageInfo("positional", "app_pages/04_positional.py", ("Positional encoding", "位置编码"), (
        "Attention cannot see where a patch was; a vector added per position tells it (fixed "
        "sines and cosines in the note, learned in a ViT).",
        "注意力看不出图像块原来在哪里；给每个位置加上一个向量来告诉它（笔记中是固定的正弦/余弦，"
        "ViT 中是学出来的）。")),
    PageInfo("qkv", "app_pages/05_qkv.py", ("Q, K, V", "生成 Q、K、V"), (
        "Each token asks (q), offers (k) and carries (v): three products with trainable "
        "matrices, split into h heads.",
        "每个词元提问（q）、应答（k）并携带内容（v）：与三个可训练矩阵相乘，再分成 h 个头。")),
    PageInfo("scores", "app_pages/06_scores.py", ("Scores & softmax", "注意力分数与 Softmax"), (
        "Scores compare every query with every key; the softmax turns each row into weights "
        "that sum to 1.",
        "分数把每个查询与每个键比较；softmax 把每一行变成和为 1 的权重。")),
    PageInfo("multihead", "app_pages/07_multihead.py", ("Multi-head attention", "多头注意力"), (
        "Each head mixes the values with its own weights; the heads are put side by side and "
        "mixed by W_O.",
        "每个头用自己的权重混合值向量；各头并排拼接后由 W_O 混合。")),
    PageInfo("addnorm", "app_pages/08_addnorm.py", ("Add & Norm", "残差与层归一化"), (
        "Add the sub-layer's input back, then bring each row to mean 0 and variance 1, scaled "
        "by γ and shifted by β.",
        "把子层的输入加回去，再把每一行变成均值 0、方差 1，然后乘 γ、加 β。")),
    PageInfo("ffn", "app_pages/09_ffn.py", ("Feed-forward", "前馈网络"), (
        "The same small two-layer network on every position on its own: widen, ReLU (GELU in "
        "a ViT), project back.",
        "在每个位置上分别使用同一个两层小网络：扩宽、ReLU（ViT 中为 GELU）、投影回去。")),
    PageInfo("stack", "app_pages/10_stack.py", ("The stack", "堆叠的编码器"), (
        "The layer repeats L times; following attention through all layers shows which patches "
        "feed each output.",
        "编码器层重复 L 次；沿所有层追踪注意力，可以看出每个输出来自哪些图像块。")),
)
EXTRA_PAGES: tuple[PageInfo, ...] = (
    PageInfo("compare", "app_pages/11_compare.py", ("Compare & ablate", "对比与消融"), (
        "Switch one part off and see what it was for: without PE, order means nothing to the "
        "encoder.",
        "关掉一个部分，看看它有什么用：没有位置编码，顺序对编码器毫无意义。"), in_note=False),
    PageInfo("vit", "app_pages/12_vit.py", ("What a ViT looks at", "ViT 在看哪里"), (
        "With a real Vision Transformer: where [CLS] looks, what rollout keeps, where any "
        "patch looks, and which tokens grow large.",
        "用真实的 Vision Transformer：[CLS] 看向哪里，展开保留了什么，任意图像块看向哪里，"
        "以及哪些词元的范数变得很大。"), in_note=False),
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
