"""Step 6 of 10 — scores = Q·Kᵀ / s and the softmax of each row, for one layer and one head."""

import numpy as np
import streamlit as st

from encoder_core import patch_rows, prefix_names
from encoder_core.analysis import (
    attention_entropy,
    prefix_share,
    scaling_demo,
    score_divisor_text,
    uniform_attention_reference,
)
from encoder_core.explain import dot_terms, softmax_terms
from lens import blocks, blocks_rows, chrome, meaning, widgets
from lens.context import page
from lens.latex import dims, divisor_latex

TEXT = {
    "intro": (
        "Each head compares every query with every key: the score of patch i for patch j is the "
        "dot product q_i · k_j divided by a fixed number s. A softmax then turns each row of "
        "scores into weights that are positive and sum to 1 — how much patch i attends to each "
        "patch j.",
        "每个头把每个查询与每个键作比较：图像块 i 对图像块 j 的分数是点积 q_i · k_j "
        "除以一个固定的数 s。"
        "随后 softmax 把每一行分数变成为正且和为 1 的权重——图像块 i 对每个图像块 j 的关注程度。"),
    "where": ("Layer {l}, head {hd} of {h}: {N} queries × {N} keys.",
              "第 {l} 层，第 {hd} 个头（共 {h} 个）：{N} 个查询 × {N} 个键。"),
    "key_j": ("Key patch j (for the arithmetic below)", "键图像块 j（用于下方的逐项计算）"),
    "key_j_help": ("Starts at the key that query i attends to most.",
                   "初始值为查询 i 最关注的那个键。"),
    "divisor_d_k": (
        "s = √d_k = √(d_model/h): the paper's scaling (2017), d_k = {dk} is the width of one head.",
        "s = √d_k = √(d_model/h)：论文（2017）的缩放，d_k = {dk} 是一个头的宽度。"),
    "divisor_d_model": (
        "s = √d_model: the note's scaling, as written in the note (the paper uses √d_k).",
        "s = √d_model：笔记中写的缩放（论文用的是 √d_k）。"),
    "divisor_none": ("s = 1: no scaling at all (a demonstration of why one scales).",
                     "s = 1：完全不缩放（用来演示为什么要缩放）。"),
    "divisor_now": ("Now dividing by {which} — change it in the sidebar (score scaling).",
                    "当前除以 {which}——可在侧边栏（注意力分数缩放）中更改。"),
    "matrices": ("The scores and the softmax of head {hd}", "第 {hd} 个头的分数与 softmax"),
    "queries": ("query token i", "查询词元 i"),
    "scores_name": ("scores, layer {l}, head {hd}", "scores，第 {l} 层，第 {hd} 个头"),
    "attn_name": ("attn = softmax(scores), layer {l}, head {hd}",
                  "attn = softmax(scores)，第 {l} 层，第 {hd} 个头"),
    "score": ("score", "分数"),
    "weight": ("attention weight", "注意力权重"),
    "matrices_caption": (
        "Row i of the left matrix holds the scores of query i against every key; the right "
        "matrix is the same row after the softmax. The lines mark query row i = {i} and key "
        "column j = {j}.",
        "左边矩阵的第 i 行是查询 i 与所有键的分数；右边矩阵是同一行经过 softmax 之后的结果。"
        "线条标出查询行 i = {i} 与键列 j = {j}。"),
    "row": ("One query row, before and after the softmax", "一个查询行：softmax 之前与之后"),
    "row_suptitle": ("query i = {i}, layer {l}, head {hd}",
                     "查询 i = {i}，第 {l} 层，第 {hd} 个头"),
    "row_before": ("scores[{i}, :] — before the softmax (any real numbers)",
                   "scores[{i}, :] — softmax 之前（任意实数）"),
    "row_after": ("attn[{i}, :] — after the softmax (positive, sum 1)",
                  "attn[{i}, :] — softmax 之后（为正，和为 1）"),
    "key_axis": ("key patch j", "键图像块 j"),
    "row_caption": (
        "The orange bar is the query patch itself (j = i = {i}). The softmax keeps the order "
        "of the scores but exaggerates their differences: the largest score takes the most "
        "weight.",
        "橙色柱是查询图像块自身（j = i = {i}）。softmax 保持分数的大小顺序，但放大了它们的差距："
        "分数最大的键得到最多的权重。"),
    "softmax_why_max": (
        "Subtracting the row's maximum first changes nothing in the result (it cancels in the "
        "fraction) but keeps every exp ≤ 1, so nothing overflows.",
        "先减去该行的最大值不会改变结果（分子分母同时约去），但保证每个 exp ≤ 1，不会溢出。"),
    "arith": ("The arithmetic of one cell", "逐项计算一个元素"),
    "arith_score": ("One score: scores[{i}, {j}] = q_{i} · k_{j} / s",
                    "一个分数：scores[{i}, {j}] = q_{i} · k_{j} / s"),
    "arith_softmax": ("The softmax of row {i}", "第 {i} 行的 softmax"),
    "arith_score_note": (
        "q_i and k_j are rows of Q_h and K_h: the columns {c0}…{c1} of X·W_Q and X·W_K belong to "
        "head {h}.",
        "q_i 与 k_j 是 Q_h 和 K_h 的行：X·W_Q 与 X·W_K 的第 {c0}…{c1} 列属于第 {h} 个头。"),
    "scaling_shared_y": (
        "The three panels share one y axis, so a flatter row looks lower and a sharper row shows "
        "a few tall bars; the dashed line is the uniform weight 1/N = 1/{N}. The orange bar is "
        "the query itself.",
        "三个子图共用同一 y 轴：越平坦的行看起来越低，越尖锐的行则出现少数很高的柱；"
        "虚线是均匀分布的权重 1/N = 1/{N}。橙色柱是查询自身。"),
    "scaling": ("Why divide by s — and by which s?", "为什么要除以 s？除以哪个 s？"),
    "scaling_suptitle": ("softmax of row i = {i} (layer {l}, head {hd}) at three scalings",
                         "第 i = {i} 行的 softmax（第 {l} 层，第 {hd} 个头）：三种缩放"),
    "case_d_k": ("÷ √d_k = {s:.3g} (the paper)", "÷ √d_k = {s:.3g}（论文）"),
    "case_d_model": ("÷ √d_model = {s:.3g} (the note)", "÷ √d_model = {s:.3g}（笔记）"),
    "case_none": ("÷ 1 (no scaling)", "÷ 1（不缩放）"),
    "entropy_line": ("row entropy H = {e:.2f} nats", "行熵 H = {e:.2f} nats"),
    "col_scaling": ("scaling", "缩放"), "col_s": ("divisor s", "除数 s"),
    "col_row_h": ("entropy of row i (nats)", "第 i 行的熵（nats）"),
    "col_head_h": ("mean entropy of the head (nats)", "该头各行熵的平均（nats）"),
    "col_now": ("the trace uses it", "trace 使用的"),
    "yes": ("✓ (now)", "✓（当前）"),
    "entropy_caption": (
        "Entropy H = −Σ_j p_j ln p_j measures how spread a row is: 0 nats when all weight is on "
        "one key (one-hot), ln N = {lnN:.2f} nats when it is uniform over all N = {N} keys.",
        "熵 H = −Σ_j p_j ln p_j 衡量一行的分散程度：全部权重落在一个键上（one-hot）时为 0 nats，"
        "在全部 N = {N} 个键上均匀分布时为 ln N = {lnN:.2f} nats。"),
    "scaling_why": (
        "**Why divide at all?** If the d_k = {dk} entries of q and k were independent with mean "
        "0 and variance 1, the dot product q·k would have variance d_k: scores grow like √d_k. "
        "Large scores push the softmax into saturation — almost all weight on one key and "
        "gradients near 0. Dividing by √d_k brings the scores back to variance about 1.",
        "**为什么要除？** 如果 q 和 k 的 d_k = {dk} 个分量相互独立、均值为 0、方差为 1，"
        "那么点积 q·k "
        "的方差就是 d_k：分数随 √d_k 增大。过大的分数会让 softmax 饱和——几乎全部权重落在一个键上，"
        "梯度接近 0。除以 √d_k 让分数的方差回到 1 左右。"),
    "scaling_note": (
        "**The note vs the paper.** The note divides by √d_model = √{d}; the paper by √d_k = "
        "√(d_model/h) = √{dk}. Since √d_model = √d_k · √h, the note's scores are √h = √{h} "
        "times smaller than the paper's: the softmax runs at temperature √h, so its rows are "
        "flatter (higher entropy, towards the uniform ln N). Without any scaling the scores are "
        "√d_k = √{dk} times larger than the paper's: rows are sharper, close to one-hot when the "
        "softmax saturates (entropy near 0).",
        "**笔记与论文。** 笔记除以 √d_model = √{d}；论文除以 √d_k = √(d_model/h) = √{dk}。由于 "
        "√d_model = √d_k · √h，笔记的分数比论文的小 √h = √{h} 倍：相当于 softmax 的温度为 √h，"
        "所以各行更平坦（熵更高，趋向均匀分布的 ln N）。完全不缩放时，分数比论文的大 √d_k = √{dk} "
        "倍：各行更尖锐，softmax 饱和时接近 one-hot（熵接近 0）。"),
    "scaling_one_head": (
        "With h = 1 head, d_k = d_model: the note's scaling and the paper's are the same here. "
        "Choose more heads in the sidebar to see them differ.",
        "当 h = 1 时 d_k = d_model：此处笔记和论文的缩放相同。在侧边栏选择更多的头即可看到差别。"),
    "scaling_random": (
        "The weights are random, so these rows show the effect of the divisor on the softmax, "
        "not what a trained model attends to.",
        "权重是随机的，所以这些行展示的是除数对 softmax 的影响，而不是训练后的模型关注什么。"),
    # a model with prefix tokens (a ViT's CLS)
    "key_j_vit": ("Key token j, a row of the sequence: 0 is {first}, patch p is row p + {k}",
                  "键词元 j，序列中的一行：0 是 {first}，图像块 p 在第 p + {k} 行"),
    "prefix_rows": (
        "This model's sequence has {T} tokens: {names} first, then the {N} patches. The "
        "matrices are {T} × {T}, with {names} ticked by name and outlined in both the rows "
        "and the columns; query patch {i} is row {r}.",
        "该模型的序列有 {T} 个词元：先是 {names}，然后是 {N} 个图像块。矩阵为 {T} × {T}，"
        "{names} 在行和列上都按名字标注并框出；查询图像块 {i} 在第 {r} 行。"),
    "key_axis_vit": ("key token j (0 = {first}, patch p = p + {k})",
                     "键词元 j（0 = {first}，图像块 p = p + {k}）"),
    "on_grid": ("Row {r} on the image", "第 {r} 行放回图像上"),
    "on_grid_title": ("attn[{r}, patches] (query patch {i}), layer {l}, head {hd}",
                      "attn[{r}, 图像块]（查询图像块 {i}），第 {l} 层，第 {hd} 个头"),
    "on_grid_panel": ("the {N} patch keys", "{N} 个图像块键"),
    "on_grid_caption": (
        "The query's row of attn without its {names} column, laid on the {G} × {G} patch grid. "
        "{names} has no place on the image: it holds {p:.3g} % of this row's weight, so the "
        "patches shown share the other {q:.3g} %.",
        "查询这一行的 attn 去掉 {names} 列，摆回 {G} × {G} 的图像块网格。{names} 在图像上没有位置："
        "它占这一行权重的 {p:.3g} %，所以图中的图像块共享其余的 {q:.3g} %。"),
}

ctx = page("scores", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d, h, dk, G = cfg.n_tokens, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.grid_size
T, kp = cfg.seq_len, cfg.n_prefix  # tokens in the sequence (= N without prefix tokens)
names = ", ".join(prefix_names(cfg))
s = cfg.score_scale


st.write(ctx.t("intro"))
widgets.note_original(ctx)
meaning.trained_attention_control(ctx)
left, right = st.columns([1, 2])
with left:
    query = widgets.query_picker(ctx)
i = ctx.row(query)  # the query patch's row of the sequence (after CLS, …)
with right:
    c1, c2 = st.columns(2)
    l = widgets.layer_selector(ctx, c1)
    head = widgets.head_selector(ctx, c2)
    layer = tr.layers[l]
    row_attn = layer.attn[head, i]  # [T]
    key_label = (ctx.t("key_j_vit", first=prefix_names(cfg)[0], k=kp) if kp
                 else ctx.t("key_j"))
    j = widgets.index_input(key_label, T, key="scores_key_j",
                            start=int(np.argmax(row_attn)), help=ctx.t("key_j_help"))
    st.markdown("**" + ctx.t("where", l=l + 1, hd=head + 1, h=h, N=T) + "**")
    st.latex(r"\text{scores}_h = \frac{Q_h \cdot K_h^{\top}}{s}:\quad " + dims(T, dk)
             + r" \cdot " + dims(dk, T) + " = " + dims(T, T))
    st.latex(divisor_latex(cfg))
    st.latex(r"\text{attn}_h[i, j] = \frac{\exp(\text{scores}_h[i, j])}"
             r"{\sum_{k} \exp(\text{scores}_h[i, k])}:\quad " + dims(T, T)
             + r",\;\; \textstyle\sum_j \text{attn}_h[i, j] = 1")
    if kp:
        st.caption(ctx.t("prefix_rows", T=T, names=names, N=N, i=query, r=i))
    st.caption(ctx.t(f"divisor_{cfg.scale}", dk=dk) + " "
               + ctx.t("divisor_now", which=score_divisor_text(cfg)))

# --- the two matrices -------------------------------------------------------------------------
st.subheader(ctx.t("matrices", hd=head + 1))
c1, c2 = st.columns(2)
widgets.matrix(ctx, layer.scores[head], ctx.ft("scores_name", l=l + 1, hd=head + 1), key="scores",
               signed=True, xlabel=ctx.t("keys"), ylabel=ctx.t("queries"), where=c1,
               colorbar_label=ctx.ft("score"), highlight_row=i, highlight_col=j,
               size=(5.0, 4.4), tokens="both")
widgets.matrix(ctx, layer.attn[head], ctx.ft("attn_name", l=l + 1, hd=head + 1), key="attn",
               signed=False, xlabel=ctx.t("keys"), ylabel=ctx.t("queries"), where=c2,
               colorbar_label=ctx.ft("weight"), highlight_row=i, highlight_col=j,
               size=(5.0, 4.4), tokens="both")
st.caption(ctx.t("matrices_caption", i=i, j=j))

if kp:  # the query's row on the image: the patch keys only, the prefix's share said
    st.subheader(ctx.t("on_grid", r=i))
    c1, c2 = st.columns([2, 3])
    share = float(prefix_share(row_attn, kp))
    widgets.picture(ctx, "attention_grid", tr.image, patch_rows(row_attn, cfg).reshape(1, G, G),
                    [ctx.ft("on_grid_panel", N=N)],
                    ctx.ft("on_grid_title", r=i, i=query, l=l + 1, hd=head + 1), ncols=1,
                    query=query, colorbar_label=ctx.ft("weight"), uniform=1 / T,
                    key="scores_grid", where=c1)
    c2.info(ctx.t("on_grid_caption", names=names, G=G, p=100 * share, q=100 * (1 - share)))

# --- one row before and after the softmax ------------------------------------------------------
st.subheader(ctx.t("row"))
c1, c2 = st.columns([3, 2])
key_axis = (ctx.ft("key_axis_vit", first=prefix_names(cfg)[0], k=kp) if kp
            else ctx.ft("key_axis"))
widgets.picture(ctx, "bars", [layer.scores[head, i], row_attn],
                [ctx.ft("row_before", i=i), ctx.ft("row_after", i=i)],
                key_axis, [ctx.ft("score"), ctx.ft("weight")],
                ctx.ft("row_suptitle", i=i, l=l + 1, hd=head + 1),
                highlight=i, key="row_bars", where=c1)
with c2:
    st.write(ctx.t("row_caption", i=i))

# --- the arithmetic of one score and of one softmax row ---------------------------------------
st.subheader(ctx.t("arith"))
st.markdown("**" + ctx.t("arith_score", i=i, j=j) + "**")
c1, c2 = st.columns([3, 2])
q_i, k_j = layer.q[head, i], layer.k[head, j]  # [d_k] each
blocks.dot_listing(ctx, f"q_{i} · k_{j} = Σ_k q_{i}[k] · k_{j}[k]",
                   dot_terms(q_i, k_j, divisor=s), layer.scores[head, i, j],
                   f"scores[{i}, {j}]", size="d_k", divisor=score_divisor_text(cfg),
                   where=c1)
with c2:
    st.latex(r"\text{scores}[i, j] = \frac{1}{s}\sum_{k=0}^{d_k - 1} q_i[k]\,k_j[k]")
    st.caption(ctx.t("arith_score_note", h=head + 1, c0=head * dk, c1=(head + 1) * dk - 1))

st.markdown("**" + ctx.t("arith_softmax", i=i) + "**")
c1, c2 = st.columns([3, 2])
blocks_rows.softmax_row(ctx, softmax_terms(layer.scores[head, i]), layer.attn[head, i],
                        i, j, where=c1)
with c2:
    st.latex(r"\text{attn}[i, j] = \frac{e^{\,s_{ij} - m}}{\sum_k e^{\,s_{ik} - m}},"
             r"\quad m = \max_k s_{ik}")
    st.caption(ctx.t("softmax_why_max"))

# --- scaling: √d_k vs √d_model vs 1 ------------------------------------------------------------
st.subheader(ctx.t("scaling"))
cases = ctx.derived(f"scaling/{l}/{head}",  # this head only
                    lambda: scaling_demo(layer.q[head:head + 1], layer.k[head:head + 1], d))
head_entropy = [float(attention_entropy(c.attn)[0]) for c in cases]
ln_N = uniform_attention_reference(G, cfg.patch_size, kp)[1]  # ln T
titles = [ctx.ft(f"case_{c.name}", s=c.divisor) + "\n"
          + ctx.ft("entropy_line", e=float(c.entropy[0, i])) for c in cases]
widgets.picture(ctx, "bar_panels", np.stack([c.attn[0, i] for c in cases]), titles,
                key_axis, ctx.ft("weight"),
                ctx.ft("scaling_suptitle", i=i, l=l + 1, hd=head + 1), highlight=i,
                uniform_line=True, size=(12.0, 3.4), key="scaling")
rows = [{ctx.t("col_scaling"): ctx.t(f"case_{c.name}", s=c.divisor),
         ctx.t("col_s"): round(c.divisor, 4),
         ctx.t("col_row_h"): round(float(c.entropy[0, i]), 3),
         ctx.t("col_head_h"): round(e, 3),
         ctx.t("col_now"): ctx.t("yes") if c.name == cfg.scale else ""}
        for c, e in zip(cases, head_entropy, strict=True)]
st.dataframe(rows, hide_index=True, width="stretch")
st.caption(ctx.t("entropy_caption", lnN=ln_N, N=T) + " " + ctx.t("scaling_shared_y", N=T))
st.markdown(ctx.t("scaling_why", dk=dk))
st.markdown(ctx.t("scaling_note", d=d, dk=dk, h=h))
if h == 1:
    st.info(ctx.t("scaling_one_head"))
if ctx.weights == "random":
    st.caption(ctx.t("scaling_random"))

chrome.footer(ctx)
