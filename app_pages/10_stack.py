"""Step 10 of 10 — the stack of encoder layers: attention in every layer, rollout, output."""

import numpy as np
import streamlit as st

from encoder_core import patch_rows, prefix_names
from encoder_core.analysis import (
    attention_rollout,
    head_statistics,
    patch_block,
    prefix_share,
    rollout_mean_over_queries,
    uniform_attention_reference,
)
from lens import chrome, explorer, meaning, widgets
from lens.context import page

MAX_GRID_LAYERS = 6  # layers shown in the layer × head grid
MAX_GRID_HEADS = 8  # heads shown at once in the layer × head grid (the learner chooses which)

TEXT = {
    "intro": (
        "The encoder layer is repeated {L} times: each layer takes the previous layer's output "
        "(the first takes x0) and gives a matrix of the same shape, {N} × {d}. The weights of "
        "each layer are its own. This page looks at all layers at once.",
        "编码器层重复 {L} 次：每一层以上一层的输出为输入（第一层的输入是 x0），输出一个形状相同的 "
        "{N} × {d} 矩阵。每一层都有自己的权重。本页同时查看所有层。"),
    "grid": ("1 · Attention of the query patch in every layer and head",
             "1 · 查询图像块在每一层、每个头中的注意力"),
    "grid_text": (
        "Row l, column h: where query patch i = {i} looks in layer l, head h — its row "
        "attn[h, i, :] of {N} weights, laid back on the {G} × {G} patch grid. In the live "
        "maps each map has its own colour scale (its top colour is its largest weight); the "
        "button under them puts all on one scale, to compare their weights.",
        "第 l 行、第 h 列：查询图像块 i = {i} 在第 l 层、第 h 个头中看向哪里——即 attn[h, i, :] "
        "这一行的 {N} 个权重，重新排回 {G} × {G} 的图像块网格。实时图中每张图各用自己的色标"
        "（最亮的颜色是它自身的最大权重）；图下的按钮可让所有图共用一个色标，以便比较权重。"),
    "head_title": ("head {h}", "头 {h}"),
    "live_one": (
        "All {n} layers' maps of every patch would be too much to send: the maps that follow "
        "the pointer are those of layer {l} (chosen above); the picture below draws every "
        "layer for the chosen query patch.",
        "全部 {n} 层、所有图像块的注意力图数据量过大：跟随指针的是第 {l} 层（在上方选择）；"
        "下方的图为所选查询图像块画出每一层。"),
    "live_off": (
        "The maps of every patch would be {mb:.1f} MB for one layer, over the {cap:.0f} MB a "
        "page sends to follow the pointer: click a patch (or type its row and column) to "
        "redraw them.",
        "仅一层、所有图像块的注意力图就有 {mb:.1f} MB，"
        "超过页面为跟随指针而发送的上限 {cap:.0f} MB："
        "点击一个图像块（或输入其行与列）以重新绘制。"),
    "layer_label": ("layer {l}", "第 {l} 层"),
    "weight": ("attention weight", "注意力权重"),
    "rollout": ("2 · Attention rollout: following attention through all layers",
                "2 · 注意力展开（rollout）：沿所有层追踪注意力"),
    "rollout_text": (
        "One layer's attention says which positions of its input a position mixes. To ask "
        "which *image patches* end up in a position after all {L} layers, multiply the "
        "layers' attention matrices (Abnar & Zuidema, 2020). Each layer's heads are averaged "
        "and the residual connection is counted as attending to oneself with weight ½. This is "
        "a heuristic: it ignores the values, W_O, the feed-forward network and the norms.",
        "单层的注意力表示一个位置混合了输入中的哪些位置。要问经过全部 {L} 层后，一个位置里最终"
        "含有哪些*图像块*，就把各层的注意力矩阵相乘（Abnar 与 Zuidema，2020）。每层的各个头取平均，"
        "残差连接被看作以 ½ 的权重关注自身。这是一种启发式方法：它忽略了值向量、W_O、前馈网络和"
        "归一化。"),
    "rollout_query": ("rollout: row R[{i}, :]", "展开：第 {i} 行 R[{i}, :]"),
    "rollout_mean": ("rollout: mean of all rows", "展开：所有行的平均"),
    "rollout_weight": ("rollout weight", "展开权重"),
    "rollout_caption": (
        "Left: row i = {i} of R. Right: the mean of all rows, how much each input patch feeds "
        "the output on average. Each map has its own colour scale; each sums to 1.",
        "左：R 的第 i = {i} 行。右：所有行的平均，即每个输入图像块平均对输出贡献多少。两幅图各用"
        "自己的色标；每幅图的总和都为 1。"),
    "per_head": ("3 · Per head and layer: how far, and how spread out",
                 "3 · 每层每个头：看多远、看得多分散"),
    "distance_text": (
        "**Mean attention distance** (ViT, Figure 7): for each query, the distance in pixels "
        "to the patches it attends to, weighted by attention, then averaged over all queries. "
        "Small = local heads, large = global heads. Here A = attn_h of one layer and c_i is the "
        "centre of patch i in pixels.",
        "**平均注意力距离**（ViT 论文图 7）：对每个查询，按注意力加权的、到被关注图像块的像素距离，"
        "再对所有查询取平均。小 = 局部的头，大 = 全局的头。这里 A = 某一层的 attn_h，"
        "c_i 是图像块 i 中心的像素坐标。"),
    "entropy_text": (
        "**Entropy** of each attention row, averaged over queries: 0 nats when a row puts all "
        "its weight on one patch, ln N when it spreads evenly over all N.",
        "每一行注意力的**熵**，对所有查询取平均：一行把全部权重放在一个图像块上时为 0 nats，均匀"
        "分布在全部 N 个图像块上时为 ln N。"),
    "uniform": (
        "For comparison, attention spread evenly over all {N} patches would give a distance of "
        "{dist:.1f} px and an entropy of ln {N} = {ent:.3f} nats.",
        "作为对比，均匀分布在全部 {N} 个图像块上的注意力，距离为 {dist:.1f} 像素，熵为 "
        "ln {N} = {ent:.3f} nats。"),
    "random_note": (
        "With random weights most rows are nearly uniform, so the values sit close to that "
        "reference; trained heads differ from one another.",
        "随机权重下大多数行接近均匀分布，因此数值都接近这个参考值；训练过的头彼此不同。"),
    "distance_title": ("mean attention distance (pixels)  [{L} × {H}]",
                       "平均注意力距离（像素）  [{L} × {H}]"),
    "entropy_title": ("mean attention entropy (nats)  [{L} × {H}]",
                      "平均注意力熵（nats）  [{L} × {H}]"),
    "head_axis": ("head", "头"), "layer_axis": ("layer", "层"),
    "output": ("4 · The encoder's output", "4 · 编码器的输出"),
    "output_text": (
        "The last layer's output is the encoder's output: {N} vectors of d_model = {d}, one "
        "per patch, each now mixed with information from the whole image.",
        "最后一层的输出就是编码器的输出：{N} 个 d_model = {d} 维的向量，每个图像块一个，每个都已"
        "混入了来自整幅图像的信息。"),
    "trained_note": (
        "These weights were trained to tell shapes apart: a small classifier head reads this "
        "output matrix to decide which shape the image shows.",
        "这些权重经过训练用于区分形状：一个小的分类头读取这个输出矩阵，判断图像中是哪种形状。"),
    # a model with prefix tokens (a ViT's CLS), pre-norm, a final LayerNorm
    "vit_rows": (
        "This model's sequence has {T} tokens: {names} first ({rows}), then the {N} patches; "
        "query patch {i} is row {r}.",
        "该模型的序列有 {T} 个词元：先是 {names}（{rows}），然后是 {N} 个图像块；查询图像块 {i} "
        "在第 {r} 行。"),
    "rows_one": ("row 0", "第 0 行"),
    "rows_many": ("rows 0–{last}", "第 0–{last} 行"),
    "grid_title_vit": ("attn[h, patch {i}, patches]  ({G} × {G}, {names} left out)",
                       "attn[h, 图像块 {i}, 图像块]（{G} × {G}，未画出 {names}）"),
    "prefix_tip": ("{names} (left out) {s}", "{names}（未画出）{s}"),
    "grid_left_out": (
        "The weight on {names} is left out of every map: {names} has no place on the image. "
        "Over these layers and heads it holds {lo:.3g} % to {hi:.3g} % of query patch {i}'s "
        "weight, so each map's weights add up to the rest of the row; hover a map for its share.",
        "每张图都去掉了 {names} 列：它在图像上没有位置。在这些层和头中，它占查询图像块 {i} 这一行"
        "权重的 {lo:.3g} % 到 {hi:.3g} %，所以每张图的权重之和是余下的部分；把指针移到图上可看到"
        "各自的比例。"),
    "grid_left_out_static": (
        "The weight on {names} is left out of every map: {names} has no place on the image. "
        "Over these layers and heads it holds {lo:.3g} % to {hi:.3g} % of query patch {i}'s "
        "weight, so each map's weights add up to the rest of the row.",
        "每张图都去掉了 {names} 列：它在图像上没有位置。在这些层和头中，它占查询图像块 {i} 这一行"
        "权重的 {lo:.3g} % 到 {hi:.3g} %，所以每张图的权重之和是余下的部分。"),
    "rollout_vit": (
        "Here the rollout runs on the full {T} × {T} matrices, {names} included (a patch can "
        "reach another through {names}); the maps then show the patch part of a row: {names} "
        "holds {p:.3g} % of row {r} (query patch {i}) and {m:.3g} % of the mean over the "
        "patch queries, so each map's weights add up to the rest.",
        "这里的展开在完整的 {T} × {T} 矩阵上计算，包括 {names}（一个图像块可以经由 {names} "
        "到达另一个）；图中只画出一行里图像块的部分：{names} 占第 {r} 行（查询图像块 {i}）的 "
        "{p:.3g} %，占所有图像块查询平均的 {m:.3g} %，所以每幅图的总和是余下的部分。"),
    "rollout_caption_vit": (
        "Left: row {r} of R (query patch {i}). Right: the mean of the {N} patch queries' rows, "
        "how much each input patch feeds the patches' outputs on average. Each map has its own "
        "colour scale.",
        "左：R 的第 {r} 行（查询图像块 {i}）。右：{N} 个图像块查询行的平均，即每个输入图像块平均对"
        "各图像块的输出贡献多少。两幅图各用自己的色标。"),
    "rollout_query_vit": ("rollout: R[{r}, patches] (patch {i})",
                          "展开：R[{r}, 图像块]（图像块 {i}）"),
    "rollout_mean_vit": ("rollout: mean of the patch rows", "展开：各图像块行的平均"),
    "stats_vit": (
        "With {names}: both are averaged over the {N} patch queries; the distance runs over the "
        "patch keys ({names}'s weight adds no distance: it has no place), the entropy over the "
        "whole row of {T} keys.",
        "有 {names} 时：两者都对 {N} 个图像块查询取平均；距离只在图像块键上计算（{names} 的权重"
        "不增加距离：它没有位置），熵则在整行 {T} 个键上计算。"),
    "uniform_vit": (
        "For comparison, attention spread evenly over all {T} tokens would give a distance of "
        "{dist:.1f} px and an entropy of ln {T} = {ent:.3f} nats.",
        "作为对比，均匀分布在全部 {T} 个词元上的注意力，距离为 {dist:.1f} 像素，熵为 "
        "ln {T} = {ent:.3f} nats。"),
    "output_vit": (
        "The encoder's output is the final LayerNorm of the last layer's output: "
        "output = LN(x_{L}) with the checkpoint's γ and β, {T} vectors of d_model = {d}, {rows} "
        "for {names} and one per patch.",
        "编码器的输出是最后一层输出再经过最后的层归一化：output = LN(x_{L})，γ 和 β 取自检查点；"
        "共 {T} 个 d_model = {d} 维的向量，{rows}是 {names}，其余每个图像块一个。"),
    "output_vit_no_norm": (
        "The last layer's output is the encoder's output: {T} vectors of d_model = {d}, {rows} "
        "for {names} and one per patch.",
        "最后一层的输出就是编码器的输出：{T} 个 d_model = {d} 维的向量，{rows}是 {names}，"
        "其余每个图像块一个。"),
    "head_aside": (
        "The checkpoint's classification head ({keys}) is set aside and not used: what the app "
        "shows is the encoder's output above, not a prediction.",
        "检查点里的分类头（{keys}）被搁置，不参与计算：应用展示的是上面的编码器输出，而不是预测。"),
    "head_none": (
        "This checkpoint has no classification head: what the app shows is the encoder's output "
        "above.",
        "该检查点没有分类头：应用展示的是上面的编码器输出。"),
}

ctx = page("stack", TEXT)
cfg, tr = ctx.cfg, ctx.trace
N, d, G, P = cfg.n_tokens, cfg.d_model, cfg.grid_size, cfg.patch_size
L, H = cfg.n_layers, cfg.n_heads
T, kp = cfg.seq_len, cfg.n_prefix  # tokens in the sequence (= N without prefix tokens)
names = ", ".join(prefix_names(cfg))
rows = ctx.t("rows_one") if kp == 1 else ctx.t("rows_many", last=kp - 1)  # the prefix's rows
st.write(ctx.t("intro", L=L, N=T, d=d))
widgets.note_original(ctx)
meaning.trained_attention_control(ctx)

top_left, top_right = st.columns([2, 3], gap="large")
with top_left:
    query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer below
r = ctx.row(query)  # the query patch's row of the sequence
with top_right:
    st.latex(r"x_l = \mathrm{EncoderLayer}_l(x_{l-1}), \quad l = 1 \dots %d" % L)
    if tr.final_ln is not None:
        st.latex(r"\underbrace{\text{output}}_{%d \times %d} = \mathrm{LN}(x_{%d})" % (T, d, L))
    else:
        st.latex(r"\underbrace{\text{output}}_{%d \times %d} = x_{%d}" % (T, d, L))
    if kp:
        st.caption(ctx.t("vit_rows", T=T, names=names, N=N, i=query, r=r, rows=rows))

# --- 1 · layer × head grid ------------------------------------------------------------------
st.subheader(ctx.t("grid"))
st.write(ctx.t("grid_text", i=query, N=T, G=G))
layers = widgets.layers_chooser(ctx, L, key="stack_layers", limit=MAX_GRID_LAYERS)
heads = widgets.heads_chooser(ctx, H, key="stack_heads", limit=MAX_GRID_HEADS)
n_l, n_h = len(layers), len(heads)
row_labels = [ctx.t("layer_label", l=l + 1) for l in layers]
col_labels = [ctx.t("head_title", h=h + 1) for h in heads]
live = list(layers) if explorer.fits(n_l * n_h, N) else []
if not live and explorer.fits(n_h, N):  # one layer fits: the one chosen here
    live = [widgets.layer_selector(ctx)]
    st.caption(ctx.t("live_one", l=live[0] + 1, n=n_l))
if live:  # every query's row of the layers sent: the maps follow the pointer
    widgets.query_explorer(ctx, lambda: explorer.Maps(
        # [layers, n_h, N, N]: patch queries × patch keys
        np.stack([patch_block(tr.layers[l].attn[heads], kp) for l in live]),
        (ctx.t("grid_title_vit", i="{i}", G=G, names=names) if kp
         else f"attn[h, {{i}}, :]  ({G} × {G})"), ctx.t("weight"),
        row_labels=[ctx.t("layer_label", l=l + 1) for l in live], col_labels=col_labels,
        prefix=(np.stack([prefix_share(tr.layers[l].attn[heads, kp:, :], kp) for l in live])
                if kp else None),  # [layers, n_h, N]
        prefix_tip=ctx.t("prefix_tip", names=names, s="{s}"), seq_len=T),
        maps_key=f"stack/{live}/{heads}")
if live != layers:  # the server draws the layers the explorer does not carry
    if not live:
        widgets.query_explorer(ctx)
        st.caption(ctx.t("live_off", mb=explorer.map_bytes(n_h, N) / 2**20,
                         cap=explorer.MAX_BYTES / 2**20))
    maps = np.stack([patch_rows(tr.layers[l].attn[heads, r, :], cfg).reshape(n_h, G, G)
                     for l in layers])  # [n_l, n_h, G, G]: the patch keys of row r
    share = (1.25 * n_h + 1.6) / (1.25 * MAX_GRID_HEADS + 1.6)  # the figure's width, relative
    where = st.columns([share, 1 - share])[0] if share < 0.9 else st  # few heads: not blown up
    widgets.picture(ctx, "attention_table", tr.image, maps,
                    (ctx.ft("grid_title_vit", i=query, G=G, names=names) if kp
                     else f"attn[h, {query}, :]  ({G} × {G})"),
                    where=where, row_labels=row_labels, col_labels=col_labels, query=query,
                    colorbar_label=ctx.t("weight"), key="grid")
if kp:  # what the maps leave out, for the chosen query
    cls = np.stack([prefix_share(tr.layers[l].attn[heads, r, :], kp) for l in layers])
    st.info(ctx.t("grid_left_out" if live else "grid_left_out_static", names=names,
                  lo=100 * cls.min(), hi=100 * cls.max(), i=query))

# --- 2 · attention rollout ------------------------------------------------------------------
st.subheader(ctx.t("rollout"))
st.write(ctx.t("rollout_text", L=L))
st.latex(r"\hat{A}_l = \tfrac{1}{2}\,\mathrm{mean}_h(\text{attn}_l) + \tfrac{1}{2}\,I, \qquad"
         r" R = \hat{A}_{%d} \cdots \hat{A}_1 \quad [%d \times %d]" % (L, T, T))
# [T, T]: on the full matrices, the prefix tokens (CLS) included
R = ctx.derived("rollout", lambda: attention_rollout([layer.attn for layer in tr.layers]))
R_mean = rollout_mean_over_queries(R, kp)  # [T] the mean of the patch queries' rows
c1, c2 = st.columns(2)
widgets.picture(ctx, "attention_table", tr.image, patch_rows(R[r], cfg).reshape(1, 1, G, G),
                (ctx.ft("rollout_query_vit", r=r, i=query) if kp
                 else ctx.t("rollout_query", i=query)), row_labels=[""], col_labels=[""],
                query=query, panel=3.0, colorbar_label=ctx.t("rollout_weight"),
                key="rollout_query", where=c1)
widgets.picture(ctx, "attention_table", tr.image,
                patch_rows(R_mean, cfg).reshape(1, 1, G, G),
                ctx.ft("rollout_mean_vit") if kp else ctx.t("rollout_mean"),
                row_labels=[""], col_labels=[""], panel=3.0,
                colorbar_label=ctx.t("rollout_weight"), key="rollout_mean", where=c2)
st.caption(ctx.t("rollout_caption_vit", r=r, i=query, N=N) if kp
           else ctx.t("rollout_caption", i=query))
if kp:
    st.info(ctx.t("rollout_vit", T=T, names=names, r=r, i=query,
                  p=100 * float(prefix_share(R[r], kp)), m=100 * float(prefix_share(R_mean, kp))))

# --- 3 · distance and entropy per head and layer --------------------------------------------
st.subheader(ctx.t("per_head"))
distance, entropy = ctx.derived(  # [L, h] each
    "head_statistics",
    lambda: head_statistics([layer.attn for layer in tr.layers], G, P, kp))
ref_dist, ref_ent = uniform_attention_reference(G, P, kp)
c1, c2 = st.columns(2)
with c1:
    st.markdown(ctx.t("distance_text"))
    st.latex(r"D_h = \frac{1}{N}\sum_{i,j} A_{ij}\,\lVert c_i - c_j \rVert_2")
    widgets.picture(ctx, "value_grid", distance, ctx.t("distance_title", L=L, H=H),
                    ctx.t("head_axis"), ctx.t("layer_axis"), signed=False, fmt="{:.1f}",
                    row0=1, col0=1, key="distance")
with c2:
    st.markdown(ctx.t("entropy_text"))
    st.latex(r"H_h = -\frac{1}{N}\sum_{i,j} A_{ij} \ln A_{ij}")
    widgets.picture(ctx, "value_grid", entropy, ctx.t("entropy_title", L=L, H=H),
                    ctx.t("head_axis"), ctx.t("layer_axis"), signed=False, fmt="{:.2f}",
                    row0=1, col0=1, key="entropy")
if kp:
    st.caption(ctx.t("stats_vit", names=names, N=N, T=T))
st.caption((ctx.t("uniform_vit", T=T, dist=ref_dist, ent=ref_ent) if kp
            else ctx.t("uniform", N=N, dist=ref_dist, ent=ref_ent))
           + (" " + ctx.t("random_note") if ctx.weights == "random" else ""))

# --- 4 · the output -------------------------------------------------------------------------
st.subheader(ctx.t("output"))
left, right = st.columns([3, 2], gap="large")
widgets.matrix(ctx, tr.output, "output", key="output", where=left, highlight_row=r,
               tokens="rows")
with right:
    if tr.final_ln is not None:  # output = LN(x_L): the final norm, its γ and β
        st.latex(r"\underbrace{\text{output}}_{%d \times %d} = \gamma \odot "
                 r"\frac{x_{%d} - \mu}{\sqrt{\sigma^2 + \varepsilon}} + \beta" % (T, d, L))
    else:
        st.latex(r"\underbrace{\text{output}}_{%d \times %d}" % (T, d))
    if kp:
        st.write(ctx.t("output_vit" if tr.final_ln is not None else "output_vit_no_norm",
                       L=L, T=T, d=d, names=names, rows=rows))
    else:
        st.write(ctx.t("output_text", N=N, d=d))
    if ctx.model is not None:  # a checkpoint: its classifier, if any, is not used
        aside = [k for k in ctx.model.info.set_aside if "mask_token" not in k]  # head keys
        st.info(ctx.t("head_aside", keys=", ".join(aside)) if aside else ctx.t("head_none"))
    if ctx.weights == "trained" and ctx.head_model is not None:
        st.info(ctx.t("trained_note"))

chrome.footer(ctx)
