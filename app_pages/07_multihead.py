"""Step 7 of 10 — h heads side by side, concatenated and projected: attn_out = concat · W_O."""

import numpy as np
import streamlit as st

from encoder_core import patch_rows, prefix_names
from encoder_core.analysis import (
    contribution_norms,
    head_contributions,
    head_sum_gap,
    patch_block,
    prefix_share,
)
from encoder_core.explain import affine_terms, dot_terms
from lens import blocks, chrome, explorer, meaning, widgets
from lens.context import page
from lens.latex import dims

MAX_MAPS = 16  # attention maps drawn in the grid; more heads are listed but not drawn

TEXT = {
    "intro": (
        "The attention of the previous step runs h times in parallel. Each head has its own "
        "slice of W_Q, W_K and W_V, of width d_head = d_model / h, so each head can look at "
        "different patches. The h head outputs are put side by side (concatenated) back to width "
        "d_model and mixed by one more trainable matrix, W_O.",
        "上一步的注意力并行运行 h 次。每个头有自己的一段 W_Q、W_K、W_V，"
        "宽度为 d_head = d_model / h，"
        "因此每个头可以关注不同的图像块。h 个头的输出并排拼接（concat）回宽度 d_model，"
        "再由另一个可训练矩阵 W_O 混合。"),
    "where": ("Layer {l}: h = {h} heads of width d_head = {dh}, query patch i = {i}.",
              "第 {l} 层：h = {h} 个头，每个宽度 d_head = {dh}，查询图像块 i = {i}。"),
    "grid": ("Where each head looks from patch i", "每个头从图像块 i 看向哪里"),
    "grid_title": ("{h} heads — attention of query patch {i}, layer {l}",
                   "{h} 个头——查询图像块 {i} 的注意力，第 {l} 层"),
    "grid_title_first": ("{h} heads (first {k} shown) — attention of query patch {i}, layer {l}",
                         "{h} 个头（显示前 {k} 个）——查询图像块 {i} 的注意力，第 {l} 层"),
    "head_n": ("head {n}", "头 {n}"),
    "live_title": ("{h} heads — attention of query patch {i}, layer {l}",
                   "{h} 个头——查询图像块 {i} 的注意力，第 {l} 层"),
    "live_off": (
        "The maps of every patch would be {mb:.1f} MB, over the {cap:.0f} MB a page sends to "
        "follow the pointer: click a patch (or type its row and column) to redraw them.",
        "所有图像块的注意力图共 {mb:.1f} MB，超过页面为跟随指针而发送的上限 {cap:.0f} MB："
        "点击一个图像块（或输入其行与列）以重新绘制。"),
    "weight": ("attention weight", "注意力权重"),
    "n_maps": ("h = {h} attention maps", "h = {h} 个注意力图"),
    "n_maps_first": ("h = {h} attention maps; the grid draws the first {k}.",
                     "h = {h} 个注意力图；网格只画出前 {k} 个。"),
    "grid_text": (
        "Each map is row i of one head's attn matrix, attn_h[i, :], laid back on the "
        "{G} × {G} patch grid: the weights with which patch i (outlined) mixes the values of "
        "every patch. In the live maps each map has its own colour scale (its top colour is its "
        "largest weight) and the button under them puts all on one scale. The heads differ "
        "only because their slices of W_Q and W_K differ.",
        "每张图是某个头 attn 矩阵的第 i 行 attn_h[i, :]，按 {G} × {G} 的图像块网格摆回图像上："
        "图像块 i（方框标出）以这些权重混合所有图像块的值向量。实时图中每张图各用自己的色标"
        "（最亮的颜色是它自身的最大权重），图下的按钮可让所有图共用一个色标。"
        "各个头的差别仅仅来自它们各自那段 W_Q 与 W_K。"),
    "grid_random": (
        "With random weights the heads' patterns are random too: they show that every head "
        "looks differently, not what it has learned to look for.",
        "权重是随机的，各个头的模式也是随机的：它们说明每个头的关注方式不同，而不是它学会了关注什么。"),
    "concat": ("Concatenate the heads and project with W_O", "拼接各个头并用 W_O 投影"),
    "col_j": ("Output column j (for the arithmetic below)", "输出列 j（用于下方的逐项计算）"),
    "concat_name": ("concat, layer {l}", "concat，第 {l} 层"),
    "W_O_name": ("W_O, layer {l}", "W_O，第 {l} 层"),
    "attn_out_name": ("attn_out = concat · W_O, layer {l}", "attn_out = concat · W_O，第 {l} 层"),
    "concat_x": ("feature (head blocks of {dh})", "特征（每 {dh} 列一个头）"),
    "W_O_rows": ("concat feature", "concat 特征"),
    "out_feature": ("output feature j", "输出特征 j"),
    "boundaries": ("Head blocks of concat: {blocks}.", "concat 中各个头所占的列：{blocks}。"),
    "head_cols": ("head {n} = columns {a}–{b}", "头 {n} = 第 {a}–{b} 列"),
    "concat_stripes": (
        "Vertical stripes mean that the rows are alike: where a head's attention is nearly "
        "uniform, every row of head_h is close to the mean of V_h.",
        "竖直条纹说明各行很相似：若某个头的注意力接近均匀，head_h 的每一行都接近 V_h 的平均值。"),
    "W_O_caption": (
        "W_O is d_model × d_model and randomly initialised; rows h·d_head … (h+1)·d_head − 1 "
        "receive head h+1. The line marks column j = {j}.",
        "W_O 为 d_model × d_model，随机初始化；第 h·d_head … (h+1)·d_head − 1 行接收第 h+1 个头。"
        "竖线标出第 j = {j} 列。"),
    "W_O_caption_model": (
        "W_O is d_model × d_model, as loaded from the checkpoint {name}; rows h·d_head … "
        "(h+1)·d_head − 1 receive head h+1. The line marks column j = {j}.",
        "W_O 为 d_model × d_model，取自检查点 {name}；第 h·d_head … (h+1)·d_head − 1 行接收"
        "第 h+1 个头。竖线标出第 j = {j} 列。"),
    "attn_out_caption": ("The lines mark row i = {i} and column j = {j}.",
                         "线条标出第 i = {i} 行与第 j = {j} 列。"),
    "contrib": ("What each head adds to attn_out", "每个头对 attn_out 的贡献"),
    "contrib_text": (
        "Because concat puts the heads side by side, the product splits into one term per head: "
        "head h only meets its own block of d_head rows of W_O.",
        "由于 concat 把各个头并排放置，乘积可以拆成每个头一项：第 h 个头只与 W_O 中属于它的 "
        "d_head 行相乘。"),
    "norms_title": ("‖head_h · W_O[rows of h]‖ at query patch {i}, layer {l}",
                    "查询图像块 {i} 处的 ‖head_h · W_O[h 的行]‖，第 {l} 层"),
    "norm_panel": ("contribution of each head to attn_out[{i}, :]",
                   "每个头对 attn_out[{i}, :] 的贡献"),
    "head_axis": ("head", "头"),
    "norm_axis": ("L2 norm", "L2 范数"),
    "contrib_name": ("head_h · W_O[rows of h] at patch {i}",
                     "图像块 {i} 处的 head_h · W_O[h 的行]"),
    "norms_caption": (
        "The bar height is how far each head moves the output vector of patch i; the heatmap "
        "shows the contributions themselves, one row per head. They add up to attn_out[{i}, :].",
        "柱高表示每个头把图像块 i 的输出向量推动了多远；热图给出贡献本身，每个头一行。"
        "它们加起来等于 attn_out[{i}, :]。"),
    "check_head_sum": (
        "Numerical check over all {N} × {d} entries: max |concat·W_O − Σ_h head_h·W_O[rows of h]| "
        "= {gap:.2e} (float32 rounding).",
        "在全部 {N} × {d} 个元素上的数值检验：max |concat·W_O − Σ_h head_h·W_O[h 的行]| = {gap:.2e}"
        "（float32 舍入误差）。"),
    "arith": ("The arithmetic of one entry: attn_out[{i}, {j}]",
              "逐项计算一个元素：attn_out[{i}, {j}]"),
    "arith_dot": ("as one dot product: concat_i · W_O[:, j]", "作为一个点积：concat_i · W_O[:, j]"),
    "arith_heads": ("as a sum over the heads", "作为各个头之和"),
    "W_O_h": ("W_O^(h) = the d_head = {dh} rows of W_O that receive head h.",
              "W_O^(h) = W_O 中接收第 h 个头的那 d_head = {dh} 行。"),
    # a model with prefix tokens (a ViT's CLS): its row in every matrix, left out of the maps
    "vit_row": (
        "This model puts {names} before the {N} patches: every matrix below has {T} rows, "
        "row 0 is {first} and patch i is row i + {k} (query patch {i} is row {r}).",
        "该模型在 {N} 个图像块之前放了 {names}：下面每个矩阵都有 {T} 行，第 0 行是 {first}，"
        "图像块 i 在第 i + {k} 行（查询图像块 {i} 在第 {r} 行）。"),
    "left_out": (
        "The weight on {names} is left out of these maps: {names} has no place on the image. "
        "It holds this share of query patch {i}'s weight, so each map's weights add up to the "
        "rest of the row: {shares}. Hover a map: the tooltip gives the share of the hovered "
        "patch's row.",
        "这些图里去掉了 {names} 这一列：它在图像上没有位置。它占查询图像块 {i} 这一行权重的比例"
        "如下，所以每张图的权重之和是余下的部分：{shares}。把指针移到图上，提示框会给出所指图像块"
        "那一行的这个比例。"),
    "left_out_static": (
        "The weight on {names} is left out of these maps: {names} has no place on the image. "
        "It holds this share of query patch {i}'s weight, so each map's weights add up to the "
        "rest of the row: {shares}.",
        "这些图里去掉了 {names} 这一列：它在图像上没有位置。它占查询图像块 {i} 这一行权重的比例"
        "如下，所以每张图的权重之和是余下的部分：{shares}。"),
    "share_of": ("head {n}: {p:.3g} %", "头 {n}：{p:.3g} %"),
    "prefix_tip": ("{names} (left out) {s}", "{names}（未画出）{s}"),
    "live_title_vit": ("{h} heads — attention of query patch {i}, layer {l} ({names} column "
                       "left out)",
                       "{h} 个头——查询图像块 {i} 的注意力，第 {l} 层（未画出 {names} 列）"),
    "bias_O": (
        "This model adds a bias b_O ({d} numbers) after W_O: attn_out = concat · W_O + b_O. "
        "The bias belongs to no head, so the sum over the heads gets it as one more term.",
        "该模型在 W_O 之后加上偏置 b_O（{d} 个数）：attn_out = concat · W_O + b_O。"
        "偏置不属于任何头，所以各头之和还要再加上它这一项。"),
    "bias_term": ("the bias b_O[{j}]", "偏置 b_O[{j}]"),
    "check_head_sum_bias": (
        "Numerical check over all {N} × {d} entries: max |concat·W_O + b_O − (Σ_h head_h·W_O[rows "
        "of h] + b_O)| = {gap:.2e} (float32 rounding).",
        "在全部 {N} × {d} 个元素上的数值检验："
        "max |concat·W_O + b_O − (Σ_h head_h·W_O[h 的行] + b_O)| = {gap:.2e}"
        "（float32 舍入误差）。"),
}

ctx = page("multihead", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d, h, dh, G = cfg.n_tokens, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.grid_size
T, kp = cfg.seq_len, cfg.n_prefix  # rows of every per-token array (= N without prefix tokens)
names = ", ".join(prefix_names(cfg))


st.write(ctx.t("intro"))
widgets.note_original(ctx)
meaning.trained_attention_control(ctx)
left, right = st.columns([1, 2])
with left:
    query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer below
r = ctx.row(query)  # the query patch's row of every per-token array
with right:
    l = widgets.layer_selector(ctx)
    layer, W_O, b_O = tr.layers[l], tr.params.layers[l].W_O, tr.params.layers[l].b_O
    st.markdown("**" + ctx.t("where", l=l + 1, h=h, dh=dh, i=query) + "**")
    if kp:
        st.caption(ctx.t("vit_row", names=names, N=N, T=T, first=prefix_names(cfg)[0], k=kp,
                         i=query, r=r))
# the shapes at the page's full width: in the column they were drawn at half size on a tablet
st.latex(r"\text{head}_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^{\top}}{s}\right) V_h:\quad "
         + dims(T, T) + r" \cdot " + dims(T, dh) + " = " + dims(T, dh))
st.latex(r"\text{concat} = [\,\text{head}_1, \ldots, \text{head}_{" + str(h) + r"}\,]:\quad "
         + str(h) + r" \times " + dims(T, dh) + r" \rightarrow " + dims(T, d))
st.latex(r"\text{attn\_out} = \text{concat} \cdot W_O" + (" + b_O" if b_O is not None else "")
         + r":\quad " + dims(T, d) + r" \cdot " + dims(d, d)
         + (r" + " + dims(d) if b_O is not None else "") + " = " + dims(T, d))

# --- every head's attention over the image, one figure ------------------------------------------
st.subheader(ctx.t("grid"))
k = min(h, MAX_MAPS)
maps = patch_rows(layer.attn[:k, r, :], cfg).reshape(k, G, G)  # [k, N] -> [k, G, G]
shares = prefix_share(layer.attn[:, r, :], kp)  # [h] the query row's weight on CLS, …
share_text = ", ".join(ctx.t("share_of", n=n + 1, p=100 * shares[n]) for n in range(h))
ncols = min(k, 4)
title = (ctx.ft("grid_title", h=h, i=query, l=l + 1) if h <= MAX_MAPS
         else ctx.ft("grid_title_first", h=h, k=k, i=query, l=l + 1))
if explorer.fits(h, N):  # every head's map of every query: the maps follow the pointer
    widgets.query_explorer(ctx, lambda: explorer.Maps(
        patch_block(layer.attn, kp)[None],  # [1, h, N, N] patch queries × patch keys
        (ctx.t("live_title_vit", h=h, i="{i}", l=l + 1, names=names) if kp
         else ctx.t("live_title", h=h, i="{i}", l=l + 1)), ctx.t("weight"),
        titles=[ctx.t("head_n", n=n + 1) for n in range(h)],
        prefix=prefix_share(layer.attn[:, kp:, :], kp)[None] if kp else None,  # [1, h, N]
        prefix_tip=ctx.t("prefix_tip", names=names, s="{s}"), seq_len=T),
        maps_key=f"multihead/{l}")
    st.caption(ctx.t("n_maps", h=h))
    st.write(ctx.t("grid_text", G=G))
    if kp:
        st.info(ctx.t("left_out", names=names, i=query, shares=share_text))
else:  # too many values to send: the picture picks, the maps are drawn by the server
    widgets.query_explorer(ctx)
    st.caption(ctx.t("live_off", mb=explorer.map_bytes(h, N) / 2**20,
                     cap=explorer.MAX_BYTES / 2**20))
    c1, c2 = st.columns([max(ncols, 2), 5 - min(ncols, 3)])
    widgets.picture(ctx, "attention_grid", tr.image, maps,
                    [ctx.ft("head_n", n=n + 1) for n in range(k)], title, ncols=ncols,
                    query=query, colorbar_label=ctx.ft("weight"), key="mh_grid", where=c1)
    with c2:
        st.caption(ctx.t("n_maps", h=h) if h <= MAX_MAPS else ctx.t("n_maps_first", h=h, k=k))
        st.write(ctx.t("grid_text", G=G))
        if kp:
            st.info(ctx.t("left_out_static", names=names, i=query, shares=share_text))
if ctx.weights == "random":
    st.caption(ctx.t("grid_random"))

# --- concat, W_O, attn_out -----------------------------------------------------------------------
st.subheader(ctx.t("concat"))
j = int(st.number_input(ctx.t("col_j"), 0, d - 1, 0, step=1, key="mh_col"))
c1, c2, c3 = st.columns(3)
widgets.matrix(ctx, layer.concat, ctx.ft("concat_name", l=l + 1), key="concat", where=c1,
               xlabel=ctx.t("concat_x", dh=dh), highlight_row=r, size=(4.2, 3.8), tokens="rows")
head_cols = [ctx.t("head_cols", n=n + 1, a=n * dh, b=(n + 1) * dh - 1) for n in range(h)]
if h > 4:
    head_cols = head_cols[:2] + ["…"] + head_cols[-1:]
c1.caption(ctx.t("boundaries", blocks=", ".join(head_cols)) + " " + ctx.t("concat_stripes"))
widgets.matrix(ctx, W_O, ctx.ft("W_O_name", l=l + 1), key="W_O", where=c2,
               xlabel=ctx.t("out_feature"), ylabel=ctx.t("W_O_rows"), highlight_col=j,
               size=(4.2, 3.8))
c2.caption(ctx.t("W_O_caption", j=j) if ctx.model is None else
           ctx.t("W_O_caption_model", j=j, name=ctx.model.id))
widgets.matrix(ctx, layer.attn_out, ctx.ft("attn_out_name", l=l + 1), key="attn_out", where=c3,
               xlabel=ctx.t("out_feature"), highlight_row=r, highlight_col=j,
               size=(4.2, 3.8), tokens="rows")
c3.caption(ctx.t("attn_out_caption", i=r, j=j))
if b_O is not None:
    st.caption(ctx.t("bias_O", d=d))

# --- each head's contribution -------------------------------------------------------------------
st.subheader(ctx.t("contrib"))
st.write(ctx.t("contrib_text"))
st.latex(r"\text{concat} \cdot W_O = \sum_{h=1}^{" + str(h) + r"} \text{head}_h \cdot "
         r"W_O[(h-1)\,d_\text{head} : h\,d_\text{head},\ :\,]:\quad "
         + str(h) + r" \times \big(" + dims(T, dh) + r" \cdot " + dims(dh, d) + " = "
         + dims(T, d) + r"\big)")
contrib = head_contributions(layer.heads[:, r:r + 1, :], W_O)  # [h, 1, d] at the query's row
norms = contribution_norms(contrib)[:, 0]  # [h]
c1, c2 = st.columns(2)
widgets.picture(ctx, "bar_panels", norms[None, :], [ctx.ft("norm_panel", i=query)],
                ctx.ft("head_axis"), ctx.ft("norm_axis"), ctx.ft("norms_title", i=query, l=l + 1),
                tick_labels=[str(n + 1) for n in range(h)], size=(5.0, 3.4),
                key="contrib_norms", where=c1)
widgets.picture(ctx, "row_heatmap", contrib[:, 0, :], ctx.ft("contrib_name", i=query),
                ctx.ft("out_feature"), ctx.ft("head_axis"), [str(n + 1) for n in range(h)],
                highlight_col=j, mean_of=ctx.ft("mean_of"), key="contrib", where=c2)
widgets.number_window(ctx, contrib[:, 0, :], ctx.ft("contrib_name", i=query), key="contrib",
                      where=c2)
st.caption(ctx.t("norms_caption", i=query))
st.success(ctx.t("check_head_sum" if b_O is None else "check_head_sum_bias", N=T, d=d,
                 gap=ctx.derived(f"head_sum_gap/{l}",
                                 lambda: head_sum_gap(layer.heads, W_O, layer.attn_out, b_O))))

# --- the arithmetic of one attn_out entry ---------------------------------------------------------
st.subheader(ctx.t("arith", i=r, j=j))
c1, c2 = st.columns([3, 2])
plus_b = r" + b_O[j]" if b_O is not None else ""
with c1:
    st.markdown("**" + ctx.t("arith_dot") + "**")
    st.latex(r"\text{attn\_out}[i, j] = \sum_{k=0}^{d_\text{model} - 1} \text{concat}[i, k]\,"
             r"W_O[k, j]" + plus_b)
    notes = [ctx.t("head_n", n=k // dh + 1) for k in range(d)]
    if b_O is None:
        sum_text = f"concat_{r} · W_O[:, {j}] = Σ_k concat[{r}, k] · W_O[k, {j}]"
        terms, size = dot_terms(layer.concat[r], W_O[:, j]), "d_model"
    else:  # the bias as one more product: 1 × b_O[j] (k = d_model)
        sum_text = (f"concat_{r} · W_O[:, {j}] + b_O[{j}] = Σ_k concat[{r}, k] · W_O[k, {j}]"
                    f" + 1 × b_O[{j}]")
        terms, size = affine_terms(layer.concat[r], W_O[:, j], b_O[j]), "d_model + 1"
        notes.append(ctx.t("bias_term", j=j))
    blocks.dot_listing(ctx, sum_text, terms, layer.attn_out[r, j], f"attn_out[{r}, {j}]",
                       size=size, notes=notes)
with c2:
    st.markdown("**" + ctx.t("arith_heads") + "**")
    st.latex(r"\text{attn\_out}[i, j] = \sum_{h=1}^{" + str(h) + r"} "
             r"\big(\text{head}_h \cdot W_O^{(h)}\big)[i, j]" + plus_b)
    st.caption(ctx.t("W_O_h", dh=dh))
    w, wk = len(str(h)), len(str(d))
    values = contrib[:, 0, j]  # [h] each head's term
    labels = [f"{ctx.t('head_n', n=f'{n + 1:>{w}}')} (k = {n * dh:>{wk}}…{(n + 1) * dh - 1:>{wk}})"
              for n in range(h)]
    if b_O is not None:  # the bias belongs to no head: one more term
        values, labels = np.append(values, b_O[j]), [*labels, ctx.t("bias_term", j=j)]
    blocks.sum_listing(ctx, values, labels, layer.attn_out[r, j], f"attn_out[{r}, {j}]",
                       first=MAX_MAPS + 1, unit="heads")

chrome.footer(ctx)
