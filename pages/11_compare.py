"""Compare & ablate — positional encoding off, and two settings side by side (issue 4)."""

import streamlit as st

from encoder_core import ConfigError
from encoder_core.analysis import attention_entropy, fixed_permutation, permutation_gap
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
    "shuffle_title": ("Shuffle the patches", "打乱图像块"),
    "shuffled_image": ("the same patches, shuffled (fixed permutation)",
                       "同样的图像块，打乱顺序（固定排列）"),
    "gap": ("max |output(shuffled) − output[perm]|", "max |输出(打乱) − 输出[perm]|"),
    "gap_off": ("**Without PE: {gap:.2e}** — only float32 rounding: the output rows are the same "
                "rows, reordered.",
                "**无位置编码：{gap:.2e}** —— 只是 float32 舍入误差："
                "输出还是那些行，只是换了顺序。"),
    "gap_on": ("**With PE: {gap:.3f}** — the rows themselves change: the encoder knows where each "
               "patch was.",
               "**有位置编码：{gap:.3f}** —— 行本身变了：编码器知道每个图像块原来的位置。"),
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
}

ctx = page("compare", TEXT)
cfg = ctx.cfg
st.write(ctx.t("intro"))

# --- positional encoding off ---------------------------------------------------------------
st.header(ctx.t("pe_title"))
st.write(ctx.t("pe_explain"))
left, right = st.columns([1, 2])
with left:
    query = widgets.query_picker(ctx)
    layer = widgets.layer_selector(ctx)
on = ctx.variant(use_pe=True)
off = ctx.variant(use_pe=False)
G, h = cfg.grid_size, cfg.n_heads
shown = min(h, 8)
with right:
    for pe_id, tr in (("with_pe", on), ("without_pe", off)):
        maps = tr.layers[layer].attn[:shown, query, :].reshape(shown, G, G)
        widgets.picture(ctx, "attention_grid", tr.image, maps,
                        [f"head {i + 1}" for i in range(shown)],
                        ctx.t("maps_title", l=layer + 1, q=query, h=h, what=ctx.t(pe_id)),
                        ncols=min(shown, 4), query=query, key=f"compare_{pe_id}")

st.subheader(ctx.t("shuffle_title"))
perm = fixed_permutation(cfg.n_tokens)
shuffled = shuffle_patches(ctx.trace.image, cfg.patch_size, perm)
gaps = {}
for use_pe in (False, True):
    base = on if use_pe else off
    moved = ctx.variant(image=shuffled, image_tag="/shuffled", use_pe=use_pe)
    gaps[use_pe] = permutation_gap(moved.output, base.output, perm)
c1, c2 = st.columns([1, 2])
with c1:
    widgets.picture(ctx, "image_with_grid", shuffled, cfg.patch_size, ctx.t("shuffled_image"),
                    numbers=False, key="shuffled")
with c2:
    st.latex(r"\text{perm: patch } n \text{ of the shuffled image} = \text{patch perm}[n]")
    st.latex(r"\max\,\lvert \mathrm{Enc}(\text{shuffled}) - \mathrm{Enc}(\text{image})"
             r"[\text{perm}] \rvert")
    st.markdown(ctx.t("gap_off", gap=gaps[False]))
    st.markdown(ctx.t("gap_on", gap=gaps[True]))

# --- two settings side by side -------------------------------------------------------------
st.header(ctx.t("cmp_title"))
choices = ["scale"] if ctx.weights == "trained" else ["n_heads", "scale", "d_model"]
if ctx.weights == "trained":
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
for col, value in zip((ca, cb), values, strict=True):
    with col:
        try:
            tr = ctx.variant(**{what: value})
        except ConfigError as err:
            st.warning(ctx.t("impossible", msg=err))
            continue
        hv = tr.config.n_heads
        k = min(hv, 8)
        maps = tr.layers[layer].attn[:k, query, :].reshape(k, G, G)
        widgets.picture(ctx, "attention_grid", tr.image, maps,
                        [f"head {i + 1}" for i in range(k)],
                        ctx.t("maps_title", l=layer + 1, q=query, h=hv, what=f"{what} = {value}"),
                        ncols=min(k, 4), query=query, key=f"cmp_{what}_{value}")
        ent = attention_entropy(tr.layers[layer].attn)
        st.caption(ctx.t("entropy", values=", ".join(f"{e:.2f}" for e in ent[:k])))
