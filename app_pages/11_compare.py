"""Compare & ablate — positional encoding off, and two settings side by side (issue 4)."""

import numpy as np
import streamlit as st

from encoder_core import ConfigError, patch_rows, prefix_names
from encoder_core.analysis import (
    attention_entropy,
    fixed_permutation,
    permute_tokens,
    prefix_share,
    unshuffle,
)
from encoder_core.config import SCALES
from encoder_core.patches import shuffle_patches
from lens import widgets
from lens.context import page

TEXT = {
    "intro": (
        "Switch one thing off or compare two settings on the same image, and see what changes.",
        "关掉一个部分或对比两种设置，在同一张图像上看看有什么变化。"),
    "pe_title": ("Positional encoding on / off", "位置编码：开 / 关"),
    "pe_explain": (
        "Attention compares every patch with every other patch by content alone: nothing in "
        "Q·Kᵀ knows where a patch is. The positional encoding is the only source of position. "
        "Without it, shuffling the patches of the image only shuffles the rows of the output — "
        "the encoder sees a bag of patches.",
        "注意力只按内容比较每个图像块与其他图像块：Q·Kᵀ 中没有任何关于位置的信息。位置编码是位置"
        "信息的唯一来源。没有它，打乱图像块的顺序只会打乱输出的行——编码器看到的只是一袋图像块。"),
    "with_pe": ("with PE", "有位置编码"), "without_pe": ("without PE", "无位置编码"),
    "maps_title": ("layer {l}, query {q}: {h} heads, {what}",
                   "第 {l} 层，查询 {q}：{h} 个头，{what}"),
    "head_n": ("head {n}", "头 {n}"),
    "weight": ("attention weight", "注意力权重"),
    "one_scale_all": ("Both grids share one colour scale.", "两组图共用一个颜色刻度。"),
    "shuffle_title": ("Shuffle the patches: permutation equivariance",
                      "打乱图像块：置换等变（permutation equivariance）"),
    "equivariance": (
        "Without the positional encoding the encoder is **permutation-equivariant** (置换等变): "
        "shuffling its input rows only shuffles its output rows the same way. Below, every "
        "patch of the image is moved by one fixed permutation and the encoder runs again.",
        "没有位置编码时，编码器是**置换等变**的（permutation-equivariant）：打乱输入的行，只会以"
        "同样的方式打乱输出的行。下面用一个固定的排列移动图像的每个图像块，再运行一次编码器。"),
    "tex_shuffled": ("shuffled", "打乱后"), "tex_image": ("image", "原图"),
    "tex_without": ("(without PE)", "（无位置编码）"),
    "col_original": ("the image, query patch", "原图，查询图像块"),
    "col_moved": ("shuffled, same patch, put back", "打乱后的同一图像块，放回原位"),
    "moved_title": ("attention of patch {q} (at position {n} once shuffled), layer {l}, head {hd}",
                    "图像块 {q}（打乱后位于 {n}）的注意力，第 {l} 层，第 {hd} 个头"),
    "moved_caption": (
        "Left: where patch {q} looks in the image. Right: where the same patch looks after the "
        "shuffle (it sits at position {n} then), each weight put back on the patch it belongs "
        "to. Without PE the two maps are identical; with PE they differ, because each position "
        "adds its own vector.",
        "左：图像块 {q} 在原图中看向哪里。右：打乱之后同一个图像块（此时位于 {n}）看向哪里，"
        "每个权重都放回它所属的图像块上。没有位置编码时两幅图完全相同；有位置编码时它们不同，因为每个位置"
        "加上了自己的向量。"),
    "gap_name": ("|Enc(shuffled) − Enc(image)[perm]|, {what}",
                 "|Enc(打乱) − Enc(原图)[perm]|，{what}"),
    "gap_scale": (
        "Both difference maps share one colour scale, so the one without PE is blank: its "
        "largest difference is a rounding error of float32, whose numbers carry about 7 "
        "significant digits.",
        "两幅差值图共用一个颜色刻度，所以无位置编码的那幅是空白的：它最大的差值只是 float32 的舍入"
        "误差（float32 的数大约有 7 位有效数字）。"),
    "shuffled_image": ("the same patches, shuffled (fixed permutation)",
                       "同样的图像块，打乱顺序（固定排列）"),
    "gap_off": ("**Without PE: {gap:.2e}** — only float32 rounding: the output rows are the same "
                "rows, reordered.",
                "**无位置编码：{gap:.2e}** —— 只是 float32 舍入误差："
                "输出还是那些行，只是换了顺序。"),
    "gap_on": ("**With PE: {gap:.3f}** — as large as the output's own entries (their mean size "
               "is {typical:.3f}): the rows themselves change, the encoder knows where each patch "
               "was.",
               "**有位置编码：{gap:.3f}** —— 与输出本身的数值一样大（其平均大小为 {typical:.3f}）："
               "行本身变了，编码器知道每个图像块原来的位置。"),
    "cmp_title": ("Two settings side by side", "两种设置并排对比"),
    "cmp_what": ("Compare", "对比"),
    "cmp_a": ("setting A", "设置 A"), "cmp_b": ("setting B", "设置 B"),
    "what_n_heads": ("h — number of heads", "h — 头数"),
    "what_scale": ("score scaling", "分数缩放"),
    "what_d_model": ("d_model", "d_model"),
    "entropy": ("mean attention entropy per head (nats): {values}",
                "每个头的平均注意力熵（nats）：{values}"),
    "impossible": ("This combination is not possible: {msg}", "这个组合不可行：{msg}"),
    "trained_fixed": ("With trained weights only the scaling can be compared.",
                      "使用训练好的权重时只能对比缩放方式。"),
    # a checkpoint (a ViT): learned positions, prefix tokens (CLS), a fixed architecture
    "model_fixed": (
        "The checkpoint fixes the architecture (its weights are made for it): only the score "
        "scaling can be compared.",
        "检查点固定了架构（它的权重就是为这个架构训练的）：只能对比分数缩放方式。"),
    "pe_learned": (
        "This model's positions are learned: a vector pos_embed[t] is added to every token "
        "row ({names} included). \"Without PE\" leaves all of them out; the weights stay the "
        "checkpoint's.",
        "该模型的位置是学习得到的：每个词元行（包括 {names}）都加上一个向量 pos_embed[t]。"
        "“无位置编码”时全部去掉；权重仍是检查点的。"),
    "left_out": (
        "The weight on {names} is left out of the maps ({names} has no place on the image). "
        "It holds "
        "{on} of query patch {i}'s weight with PE and {off} without.",
        "图中去掉了 {names} 列（它在图像上没有位置）。它占查询图像块 {i} 这一行权重的比例："
        "有位置编码时 {on}，无位置编码时 {off}。"),
    "share_range": ("{lo:.3g} % to {hi:.3g} %", "{lo:.3g} % 到 {hi:.3g} %"),
    "share_one": ("{lo:.3g} %", "{lo:.3g} %"),
    "equivariance_prefix": (
        "Only the {N} patches are shuffled; {names} stays in front. Without PE the patch rows "
        "of the output are shuffled the same way and the {names} row does not change (up to "
        "float32 rounding: {names} attends to the patches as a set). The comparison below "
        "puts the patch rows back in order and keeps {names} as row 0.",
        "只打乱 {N} 个图像块；{names} 仍在最前面。没有位置编码时，输出中图像块的行以同样方式"
        "被打乱，而 {names} 这一行不变（只差 float32 舍入误差：{names} 把图像块当作一个集合来"
        "关注）。下面的对比把图像块的行"
        "放回原来的顺序，{names} 仍是第 0 行。"),
    "moved_left_out": (
        "{names} column left out of both maps: it holds {a:.3g} % (image) and {b:.3g} % "
        "(shuffled) of the row's weight without PE, {c:.3g} % and {d:.3g} % with PE.",
        "两幅图都去掉了 {names} 列：无位置编码时它占该行权重的 {a:.3g} %（原图）和 {b:.3g} %"
        "（打乱后），有位置编码时为 {c:.3g} % 和 {d:.3g} %。"),
}

ctx = page("compare", TEXT)
cfg = ctx.cfg
kp, T = cfg.n_prefix, cfg.seq_len  # a ViT's prefix tokens (CLS, …); all tokens
names = ", ".join(prefix_names(cfg))
st.write(ctx.t("intro"))

# --- positional encoding off ---------------------------------------------------------------
st.header(ctx.t("pe_title"))
st.write(ctx.t("pe_explain"))
if cfg.position == "learned":
    st.caption(ctx.t("pe_learned", names=names or "—"))
left, right = st.columns([1, 2])
with left:
    query = widgets.query_picker(ctx)
    layer = widgets.layer_selector(ctx)
    head = widgets.head_selector(ctx)
r = ctx.row(query)  # the query patch's row of the sequence
on = ctx.variant(use_pe=True)
off = ctx.variant(use_pe=False)
G, h = cfg.grid_size, cfg.n_heads
heads = widgets.heads_chooser(ctx, h, key="compare_heads", where=left)
shown = len(heads)
maps = {pe_id: patch_rows(tr.layers[layer].attn[heads, r, :], cfg).reshape(shown, G, G)
        for pe_id, tr in (("with_pe", on), ("without_pe", off))}  # [k, G, G] the patch keys
vmax = max(float(m.max()) for m in maps.values())  # one colour scale for both
with right:
    for pe_id, m in maps.items():
        widgets.picture(ctx, "attention_grid", ctx.trace.image, m,
                        [ctx.ft("head_n", n=i + 1) for i in heads],
                        ctx.ft("maps_title", l=layer + 1, q=query, h=h, what=ctx.ft(pe_id)),
                        ncols=min(shown, 4), query=query, vmax=vmax, uniform=1 / T,
                        colorbar_label=ctx.ft("weight"), key=f"compare_{pe_id}")
    st.caption(ctx.t("one_scale_all"))
    if kp:
        def share_text(tr) -> str:
            cls = 100 * prefix_share(tr.layers[layer].attn[heads, r, :], kp)  # [k] in %
            return ctx.t("share_one" if len(cls) == 1 else "share_range",
                         lo=float(cls.min()), hi=float(cls.max()))
        st.info(ctx.t("left_out", names=names, i=query, on=share_text(on), off=share_text(off)))

st.subheader(ctx.t("shuffle_title"))
st.markdown(ctx.t("equivariance"))
st.latex(r"\mathrm{Enc}(\text{%s}) = \mathrm{Enc}(\text{%s})[\text{perm}]\quad\text{%s}"
         % (ctx.t("tex_shuffled"), ctx.t("tex_image"), ctx.t("tex_without")))
if kp:
    st.caption(ctx.t("equivariance_prefix", N=cfg.n_tokens, names=names))
perm = fixed_permutation(cfg.n_tokens)
shuffled = shuffle_patches(ctx.trace.image, cfg.patch_size, perm)
moved_to = int(np.flatnonzero(perm == query)[0])  # where the query patch sits once shuffled
moved = {pe_id: ctx.variant(image=shuffled, image_tag="/shuffled", use_pe=pe_id == "with_pe")
         for pe_id in ("with_pe", "without_pe")}
base = {"with_pe": on, "without_pe": off}
rows = ("without_pe", "with_pe")
rows_of = {"image": r, "shuffled": ctx.row(moved_to)}  # the query patch's row, each image
table = np.stack([np.stack([  # [2 settings, 2 images, G, G], head `head`, the patch keys
    patch_rows(base[pe].layers[layer].attn[head, rows_of["image"]], cfg).reshape(G, G),
    unshuffle(patch_rows(moved[pe].layers[layer].attn[head, rows_of["shuffled"]], cfg),
              perm).reshape(G, G)]) for pe in rows])
c1, c2 = st.columns([1, 2])
with c1:
    widgets.picture(ctx, "image_with_grid", shuffled, cfg.patch_size, ctx.ft("shuffled_image"),
                    numbers=False, key="shuffled",
                    axis_labels=(ctx.ft("pixels_x"), ctx.ft("pixels_y")))
with c2:
    widgets.picture(ctx, "attention_table", ctx.trace.image, table,
                    ctx.ft("moved_title", q=query, n=moved_to, l=layer + 1, hd=head + 1),
                    row_labels=[ctx.ft(r) for r in rows],
                    col_labels=[ctx.ft("col_original"), ctx.ft("col_moved")], query=query,
                    panel=2.2, colorbar_label=ctx.ft("weight"), uniform=1 / T,
                    key="moved_maps")
    st.caption(ctx.t("moved_caption", q=query, n=moved_to))
    if kp:
        def cls(tr, row: int) -> float:  # % of the row's weight on the prefix tokens
            return 100 * float(prefix_share(tr.layers[layer].attn[head, row], kp))
        st.caption(ctx.t("moved_left_out", names=names,
                         a=cls(base["without_pe"], rows_of["image"]),
                         b=cls(moved["without_pe"], rows_of["shuffled"]),
                         c=cls(base["with_pe"], rows_of["image"]),
                         d=cls(moved["with_pe"], rows_of["shuffled"])))
# [T, d] each: the shuffled image's output against the image's with its patch rows shuffled
gaps = {pe: np.abs(moved[pe].output - permute_tokens(base[pe].output, perm, kp)) for pe in rows}
c1, c2 = st.columns(2)
top = max(float(g.max()) for g in gaps.values())
for pe, where in zip(rows, (c1, c2), strict=True):
    widgets.matrix(ctx, gaps[pe], ctx.ft("gap_name", what=ctx.ft(pe)), key=f"gap_{pe}",
                   signed=False, where=where, colorbar_label="|Δ|", window=False, vmax=top,
                   tokens="rows")
st.markdown(ctx.t("gap_off", gap=float(gaps["without_pe"].max())))
st.markdown(ctx.t("gap_on", gap=float(gaps["with_pe"].max()),
                  typical=float(np.abs(on.output).mean())))
st.caption(ctx.t("gap_scale"))

# --- two settings side by side -------------------------------------------------------------
st.header(ctx.t("cmp_title"))
fixed = ctx.weights == "trained" or ctx.model is not None  # weights made for one architecture
choices = ["scale"] if fixed else ["n_heads", "scale", "d_model"]
if ctx.model is not None:
    st.caption(ctx.t("model_fixed"))
elif ctx.weights == "trained":
    st.caption(ctx.t("trained_fixed"))
what = st.radio(ctx.t("cmp_what"), choices, horizontal=True, key="cmp_what",
                format_func=lambda w: ctx.t(f"what_{w}"))
options = {"n_heads": [1, 2, 4, 8, 16], "scale": list(SCALES),
           "d_model": [64, 128, 256, 512]}[what]
defaults = {"n_heads": (4, 8), "scale": ("d_k", "d_model"), "d_model": (128, 512)}[what]
ca, cb = st.columns(2)
values = (ca.selectbox(ctx.t("cmp_a"), options, index=options.index(defaults[0]),
                       key=f"cmp_a_{what}"),
          cb.selectbox(ctx.t("cmp_b"), options, index=options.index(defaults[1]),
                       key=f"cmp_b_{what}"))
for side, col, value in zip("ab", (ca, cb), values, strict=True):
    with col:
        try:
            tr = ctx.variant(**{what: value})
        except ConfigError as err:
            st.warning(ctx.t("impossible", msg=err))
            continue
        hv = tr.config.n_heads
        shown_v = widgets.heads_chooser(ctx, hv, key=f"cmp_heads_{side}")
        k = len(shown_v)
        maps = patch_rows(tr.layers[layer].attn[shown_v, r, :], cfg).reshape(k, G, G)
        widgets.picture(ctx, "attention_grid", tr.image, maps,
                        [ctx.ft("head_n", n=i + 1) for i in shown_v],
                        ctx.ft("maps_title", l=layer + 1, q=query, h=hv,
                               what=f"{what} = {value}"),
                        ncols=min(k, 4), query=query, colorbar_label=ctx.ft("weight"),
                        key=f"cmp_{what}_{value}")
        ent = attention_entropy(tr.layers[layer].attn[:, kp:, :])  # [h] over the patch queries
        st.caption(ctx.t("entropy", values=", ".join(f"{ent[i]:.2f}" for i in shown_v)))
