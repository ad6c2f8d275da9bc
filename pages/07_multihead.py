"""Step 7 of 10 — h heads side by side, concatenated and projected: attn_out = concat · W_O."""

import streamlit as st

from encoder_core.analysis import contribution_norms, head_contributions, head_sum_gap
from encoder_core.explain import dot_terms
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
}

ctx = page("multihead", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d, h, dh, G = cfg.n_tokens, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.grid_size


st.write(ctx.t("intro"))
widgets.note_original(ctx)
meaning.trained_attention_control(ctx)
left, right = st.columns([1, 2])
with left:
    query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer below
with right:
    l = widgets.layer_selector(ctx)
    layer, W_O = tr.layers[l], tr.params.layers[l].W_O
    st.markdown("**" + ctx.t("where", l=l + 1, h=h, dh=dh, i=query) + "**")
    st.latex(r"\text{head}_h = \mathrm{softmax}\!\left(\frac{Q_h K_h^{\top}}{s}\right) V_h:\quad "
             + dims(N, N) + r" \cdot " + dims(N, dh) + " = " + dims(N, dh))
    st.latex(r"\text{concat} = [\,\text{head}_1, \ldots, \text{head}_{" + str(h) + r"}\,]:\quad "
             + str(h) + r" \times " + dims(N, dh) + r" \rightarrow " + dims(N, d))
    st.latex(r"\text{attn\_out} = \text{concat} \cdot W_O:\quad " + dims(N, d) + r" \cdot "
             + dims(d, d) + " = " + dims(N, d))

# --- every head's attention over the image, one figure ------------------------------------------
st.subheader(ctx.t("grid"))
k = min(h, MAX_MAPS)
maps = layer.attn[:k, query, :].reshape(k, G, G)  # [k, N] -> [k, G, G]
ncols = min(k, 4)
title = (ctx.ft("grid_title", h=h, i=query, l=l + 1) if h <= MAX_MAPS
         else ctx.ft("grid_title_first", h=h, k=k, i=query, l=l + 1))
if explorer.fits(h, N):  # every head's map of every query: the maps follow the pointer
    widgets.query_explorer(ctx, lambda: explorer.Maps(
        layer.attn[None], ctx.t("live_title", h=h, i="{i}", l=l + 1), ctx.t("weight"),
        titles=[ctx.t("head_n", n=n + 1) for n in range(h)]), maps_key=f"multihead/{l}")
    st.caption(ctx.t("n_maps", h=h))
    st.write(ctx.t("grid_text", G=G))
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
if ctx.weights == "random":
    st.caption(ctx.t("grid_random"))

# --- concat, W_O, attn_out -----------------------------------------------------------------------
st.subheader(ctx.t("concat"))
j = int(st.number_input(ctx.t("col_j"), 0, d - 1, 0, step=1, key="mh_col"))
c1, c2, c3 = st.columns(3)
widgets.matrix(ctx, layer.concat, ctx.ft("concat_name", l=l + 1), key="concat", where=c1,
               xlabel=ctx.t("concat_x", dh=dh), highlight_row=query, size=(4.2, 3.8))
head_cols = [ctx.t("head_cols", n=n + 1, a=n * dh, b=(n + 1) * dh - 1) for n in range(h)]
if h > 4:
    head_cols = head_cols[:2] + ["…"] + head_cols[-1:]
c1.caption(ctx.t("boundaries", blocks=", ".join(head_cols)) + " " + ctx.t("concat_stripes"))
widgets.matrix(ctx, W_O, ctx.ft("W_O_name", l=l + 1), key="W_O", where=c2,
               xlabel=ctx.t("out_feature"), ylabel=ctx.t("W_O_rows"), highlight_col=j,
               size=(4.2, 3.8))
c2.caption(ctx.t("W_O_caption", j=j))
widgets.matrix(ctx, layer.attn_out, ctx.ft("attn_out_name", l=l + 1), key="attn_out", where=c3,
               xlabel=ctx.t("out_feature"), highlight_row=query, highlight_col=j,
               size=(4.2, 3.8))
c3.caption(ctx.t("attn_out_caption", i=query, j=j))

# --- each head's contribution -------------------------------------------------------------------
st.subheader(ctx.t("contrib"))
st.write(ctx.t("contrib_text"))
st.latex(r"\text{concat} \cdot W_O = \sum_{h=1}^{" + str(h) + r"} \text{head}_h \cdot "
         r"W_O[(h-1)\,d_\text{head} : h\,d_\text{head},\ :\,]:\quad "
         + str(h) + r" \times \big(" + dims(N, dh) + r" \cdot " + dims(dh, d) + " = "
         + dims(N, d) + r"\big)")
contrib = head_contributions(layer.heads[:, query:query + 1, :], W_O)  # [h, 1, d] at patch i
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
st.success(ctx.t("check_head_sum", N=N, d=d,
                 gap=ctx.derived(f"head_sum_gap/{l}",
                                 lambda: head_sum_gap(layer.heads, W_O, layer.attn_out))))

# --- the arithmetic of one attn_out entry ---------------------------------------------------------
st.subheader(ctx.t("arith", i=query, j=j))
c1, c2 = st.columns([3, 2])
with c1:
    st.markdown("**" + ctx.t("arith_dot") + "**")
    st.latex(r"\text{attn\_out}[i, j] = \sum_{k=0}^{d_\text{model} - 1} \text{concat}[i, k]\,"
             r"W_O[k, j]")
    sum_text = f"concat_{query} · W_O[:, {j}] = Σ_k concat[{query}, k] · W_O[k, {j}]"
    blocks.dot_listing(ctx, sum_text, dot_terms(layer.concat[query], W_O[:, j]),
                       layer.attn_out[query, j], f"attn_out[{query}, {j}]", size="d_model",
                       notes=[ctx.t("head_n", n=k // dh + 1) for k in range(d)])
with c2:
    st.markdown("**" + ctx.t("arith_heads") + "**")
    st.latex(r"\text{attn\_out}[i, j] = \sum_{h=1}^{" + str(h) + r"} "
             r"\big(\text{head}_h \cdot W_O^{(h)}\big)[i, j]")
    st.caption(ctx.t("W_O_h", dh=dh))
    w, wk = len(str(h)), len(str(d))
    blocks.sum_listing(ctx, contrib[:, 0, j], [  # [h] each head's term
        f"{ctx.t('head_n', n=f'{n + 1:>{w}}')} (k = {n * dh:>{wk}}…{(n + 1) * dh - 1:>{wk}})"
        for n in range(h)], layer.attn_out[query, j], f"attn_out[{query}, {j}]",
        first=MAX_MAPS, unit="heads")

chrome.footer(ctx)
