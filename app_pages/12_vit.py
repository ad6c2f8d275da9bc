"""★ What a ViT looks at — the views users of real Vision Transformers ask for (issue 12):
DINO's last-layer CLS attention with "keep x % of the mass", rollout (discard ratio, head
fusion), the layer × head grid of CLS attention, attention from any patch, the token-norm map."""

import numpy as np
import streamlit as st

from encoder_core import prefix_names
from encoder_core.analysis import prefix_share
from encoder_core.vit_views import (
    DINO_KEEP,
    HEAD_FUSIONS,
    ROLLOUT_DISCARD,
    attention_rollout_row,
    cls_attention,
    discard_count,
    high_norm_tokens,
    keep_mass,
    kept_share,
    on_grid,
    patch_attention,
    patch_values,
    rollout_cls_map,
    scale_to_max,
    token_norms,
)
from lens import compute, explorer, widgets
from lens.context import page

MAX_HEADS = 12  # heads drawn side by side at once (the learner chooses which above that)
PAGE_PX = 950  # about the main column's width at 1400 px with the sidebar open

TEXT = {
    "need_vit": (
        "These views need a Vision Transformer checkpoint with a [CLS] token; the note's "
        "encoder has none. Start the app with one — `scripts/app --checkpoint FILE` (a timm, "
        "DINO, DeiT or Hugging Face ViT file) — and choose it under Weights in the sidebar.",
        "这些视图需要一个带 [CLS] 词元的 Vision Transformer 检查点；笔记的编码器没有 [CLS]。"
        "请用 `scripts/app --checkpoint FILE`（timm、DINO、DeiT 或 Hugging Face 的 ViT 文件）"
        "启动应用，再在侧边栏的“权重”中选择它。"),
    "need_vit_loaded": (
        "These views need a Vision Transformer with a [CLS] token; the note's encoder has none. "
        "Loaded on this server: {names} — choose one under Weights in the sidebar (more with "
        "`scripts/app --checkpoint FILE`).",
        "这些视图需要带 [CLS] 词元的 Vision Transformer；笔记的编码器没有 [CLS]。"
        "这台服务器已加载：{names}——请在侧边栏的“权重”中选择一个"
        "（用 `scripts/app --checkpoint FILE` 可加载更多）。"),
    "intro": (
        "{model}: {T} tokens = {prefix} + {N} patches ({G} × {G}). Every map below is laid on "
        "the patch grid, so it shows the patch columns only: the prefix tokens ({prefix}) have "
        "no place on the image and are listed beside the maps instead.",
        "{model}：{T} 个词元 = {prefix} + {N} 个图像块（{G} × {G}）。下面每张图都摆在图像块网格上，"
        "所以只显示图像块所在的列：前缀词元（{prefix}）在图像上没有位置，改为列在图旁。"),
    "role_reg": ("register {k}", "寄存器 {k}"),
    "head_n": ("head {n}", "头 {n}"),
    "weight": ("attention weight", "注意力权重"),
    # DINO
    "dino_title": ("1 · DINO: where [CLS] looks in the last layer",
                   "1 · DINO：最后一层中 [CLS] 看向哪里"),
    "dino_text": (
        "Caron et al. (DINO, 2021) show, for each head of the last layer ({L}), the [CLS] "
        "token's attention row over the patches: `attentions[0, :, 0, 1:]`. In a "
        "self-supervised ViT these maps often outline the objects. The slider keeps, per head, "
        "the fewest largest weights that together hold x % of the map's mass (DINO's "
        "`--threshold`, 60 % in its example) and colours those patches, as DINO draws its "
        "masks.",
        "Caron 等人（DINO，2021）对最后一层（第 {L} 层）的每个头，画出 [CLS] 词元在各图像块上的"
        "注意力行：`attentions[0, :, 0, 1:]`。在自监督训练的 ViT 中，这些图常常勾勒出物体的轮廓。"
        "滑块为每个头保留最少数量的最大权重，使它们合起来占该图总量的 x %（DINO 的 `--threshold`，"
        "其示例为 60 %），并像 DINO 画掩码那样给这些图像块着色。"),
    "keep_label": ("Keep x % of the mass", "保留总量的 x %"),
    "dino_maps": ("[CLS] attention, layer {l}: {h} heads", "[CLS] 注意力，第 {l} 层：{h} 个头"),
    "dino_kept": ("the patches that hold {x} % of each map's mass",
                  "每张图中占总量 {x} % 的图像块"),
    "kept_scale": ("kept (1) or not (0)", "保留（1）或不保留（0）"),
    "kept_panel": ("head {n}: {k} patches, {p:.0f} %", "头 {n}：{k} 块，{p:.0f} %"),
    "dino_caption": (
        "Row 0 of attn is the [CLS] token's. Its columns for the prefix ({prefix}) are left "
        "out of the grid, so a map sums to less than 1: per head the prefix takes {shares}. "
        "Under each kept map: how many patches it keeps and their share of the mass (at "
        "least x %).",
        "attn 的第 0 行属于 [CLS] 词元。它在前缀（{prefix}）上的列不在网格中，所以每张图的总和"
        "小于 1：各个头中前缀分别占 {shares}。每张保留图的标题给出保留的图像块数及其所占总量"
        "（至少 x %）。"),
    # rollout
    "rollout_title": ("2 · Attention rollout from [CLS]", "2 · 从 [CLS] 出发的注意力展开"),
    "rollout_text": (
        "Rollout (Abnar & Zuidema, 2020) follows attention through all {L} layers, as "
        "jacobgil/vit-explain computes it for ViTs: per layer fuse the heads (mean, max or "
        "min), set the lowest share of the fused weights to 0 — never the [CLS]→[CLS] weight "
        "— add the residual as ½·I, renormalise each row, and multiply the layers. The map "
        "is the [CLS] row of the product over the patches, divided by its largest value.",
        "展开（Abnar 与 Zuidema，2020）沿全部 {L} 层追踪注意力，按 jacobgil/vit-explain "
        "对 ViT 的算法：每层先融合各个头（平均、最大或最小），把融合后最低的一部分权重置为 0"
        "——但从不丢弃 [CLS]→[CLS] 这个权重——再以 ½·I 计入残差、每行重新归一化，然后把各层相乘。"
        "图为乘积中 [CLS] 那一行在各图像块上的值，除以其最大值。"),
    "discard_label": ("Discard ratio (the lowest share of weights set to 0)",
                      "丢弃比例（置为 0 的最低权重所占比例）"),
    "fusion_label": ("Head fusion", "头的融合方式"),
    "fusion_mean": ("mean", "平均"), "fusion_max": ("max", "最大"),
    "fusion_min": ("min", "最小"),
    "rollout_map": ("rollout, [CLS] row: {fusion}, discard {r:.2f}",
                    "展开，[CLS] 行：{fusion}，丢弃 {r:.2f}"),
    "rollout_weight": ("rollout / its max", "展开值 / 最大值"),
    "rollout_caption": (
        "Of the T² = {T2:,} fused weights of each layer, the {k:,} lowest are set to 0 (except "
        "[CLS]→[CLS]). Unlike vit-explain's code, each row is divided by its own sum (its "
        "issue #16). The prefix columns ({prefix}) are left out of the map.",
        "每层融合后的 T² = {T2:,} 个权重中，最低的 {k:,} 个置为 0（[CLS]→[CLS] 除外）。"
        "与 vit-explain 的代码不同，这里每一行除以它自己的和（见其 issue #16）。"
        "前缀列（{prefix}）不在图中。"),
    # layer × head grid
    "grid_title": ("3 · [CLS] attention in every layer and head",
                   "3 · 每一层、每个头中的 [CLS] 注意力"),
    "grid_text": (
        "Row l, column h: the [CLS] row attn_l[h, 0, patches] on the {G} × {G} grid. Early "
        "layers often spread evenly, later ones focus.",
        "第 l 行、第 h 列：[CLS] 行 attn_l[h, 0, 图像块] 摆在 {G} × {G} 网格上。"
        "前几层常常分布均匀，后几层更集中。"),
    "grid_shared": ("One colour scale for all maps", "所有图共用一个颜色刻度"),
    "grid_pic": ("[CLS] attention, {L} layers × {h} heads", "[CLS] 注意力，{L} 层 × {h} 个头"),
    "layer_label": ("layer {l}", "第 {l} 层"),
    "grid_each": ("weight / the map's largest", "权重 / 该图最大值"),
    "grid_caption_each": (
        "Each map is divided by its largest weight, so a flat map and a peaked one both show "
        "their pattern; switch on one colour scale to compare the weights themselves.",
        "每张图除以它自身的最大权重，这样平坦的图和尖锐的图都能显出自己的模式；"
        "打开“共用一个颜色刻度”可比较权重本身。"),
    "grid_caption_shared": ("All maps share one colour scale: the weights as they are.",
                            "所有图共用一个颜色刻度：权重按原值显示。"),
    # from any patch
    "patch_title": ("4 · Attention from any patch", "4 · 从任意图像块出发的注意力"),
    "patch_text": (
        "Not only [CLS]: click a patch (or point at it) to see where it looks, per head — its "
        "row attn[h, {n} + i, patches] (patch i is row {n} + i of the sequence, after the "
        "prefix).",
        "不只是 [CLS]：点击（或指向）一个图像块，看它在每个头中看向哪里——即 "
        "attn[h, {n} + i, 图像块] 这一行（图像块 i 是序列的第 {n} + i 行，位于前缀之后）。"),
    "patch_live": ("{h} heads — attention of patch {i}, layer {l}",
                   "{h} 个头——图像块 {i} 的注意力，第 {l} 层"),
    "patch_prefix": ("Patch {i}'s weight on the prefix ({prefix}), per head: {shares}.",
                     "图像块 {i} 在前缀（{prefix}）上的权重，各个头分别为：{shares}。"),
    "patch_off": (
        "The maps of every patch would be {mb:.1f} MB, over the {cap:.0f} MB a page sends to "
        "follow the pointer: click a patch (or type its row and column) to redraw them.",
        "所有图像块的注意力图共 {mb:.1f} MB，超过页面为跟随指针而发送的上限 {cap:.0f} MB："
        "点击一个图像块（或输入其行与列）以重新绘制。"),
    # token norms
    "norm_title": ("5 · Token norms: the high-norm tokens", "5 · 词元范数：高范数词元"),
    "norm_text": (
        "‖x_i‖ of every token after a layer. Darcet et al. (2024, \"Vision Transformers Need "
        "Registers\") found that large ViTs write a few background patches with norms far "
        "above the rest and use them as scratch space; registers were added to take that "
        "role. A norm map shows such patches at once.",
        "每个词元在某一层之后的 ‖x_i‖。Darcet 等人（2024，“Vision Transformers Need "
        "Registers”）发现，大型 ViT 会把少数背景图像块写成范数远高于其他的向量，并把它们当作"
        "暂存空间；寄存器（registers）正是为承担这一角色而加入的。范数图能一眼看出这样的图像块。"),
    "norm_layer": ("After layer", "第几层之后"),
    "norm_map": ("‖x_i‖ after layer {l}, per patch", "第 {l} 层之后各图像块的 ‖x_i‖"),
    "norm_prefix": ("**The prefix tokens** (not on the grid):", "**前缀词元**（不在网格上）："),
    "norm_patches": ("Patches: median {med:.2f}, largest {top:.2f} (patch {i}).",
                     "图像块：中位数 {med:.2f}，最大 {top:.2f}（图像块 {i}）。"),
    "norm_high": ("Over twice the median: patches {ids}.", "超过中位数两倍的图像块：{ids}。"),
    "norm_none": ("No patch is over twice the median norm.",
                  "没有图像块的范数超过中位数的两倍。"),
}

ctx = page("vit", TEXT)
cfg, tr = ctx.cfg, ctx.trace
if not cfg.cls_token:  # the note's encoder (or a checkpoint without [CLS]): say what is needed
    loaded = [m.id for m in compute.checkpoint_models().values() if m.cfg.cls_token]
    st.info(ctx.t("need_vit_loaded", names=", ".join(loaded)) if loaded
            else ctx.t("need_vit"))
    st.stop()

n, N, G, L, H = cfg.n_prefix, cfg.n_tokens, cfg.grid_size, cfg.n_layers, cfg.n_heads
prefix_labels = [ctx.t("role_reg", k=name[3:]) if name.startswith("REG") else f"[{name}]"
                 for name in prefix_names(cfg)]  # "[CLS]", "[DIST]", "register 1", …
prefix_text = ", ".join(prefix_labels)
model_name = ctx.model.name if ctx.model is not None else ctx.weights
st.write(ctx.t("intro", model=model_name, T=cfg.seq_len, prefix=prefix_text, N=N, G=G))
cls_maps = ctx.derived("vit/cls", lambda: np.stack(  # [L, h, N]
    [cls_attention(layer.attn, n) for layer in tr.layers]))
heads = widgets.heads_chooser(ctx, H, key="vit_heads", limit=MAX_HEADS)
k = len(heads)
titles = [ctx.ft("head_n", n=h + 1) for h in heads]


def shares_text(values: np.ndarray) -> str:
    return ", ".join(f"{v:.3f}" for v in values)


def literal(text: str) -> str:
    """Text shown as it is in Markdown: "[CLS]: 1.0" alone on a line is a link definition."""
    return text.replace("[", r"\[").replace("]", r"\]")


def about(width_px: int):
    """Where a picture about `width_px` wide goes: a column near that width, or the full
    width when it is nearly that wide anyway (a picture of two heads is not blown up)."""
    share = width_px / PAGE_PX
    return st.columns([share, 1 - share])[0] if share < 0.85 else st.container()


# --- 1 · DINO: the last layer's [CLS] attention, keep x % of the mass -------------------------
st.header(ctx.t("dino_title"))
st.write(ctx.t("dino_text", L=L))
st.latex(r"a_h[j] = \text{attn}_{%d}[h,\ 0,\ %d + j], \quad j = 0 \dots %d" % (L, n, N - 1))
keep = st.slider(ctx.t("keep_label"), 0, 100, round(100 * DINO_KEEP), step=5, key="vit_keep")
last = cls_maps[-1, heads]  # [k, N]
kept = ctx.derived(f"vit/keep/{heads}/{keep}", lambda: keep_mass(last, keep / 100))  # [k, N]
share = kept_share(last, kept)  # [k]
ncols = min(k, 3 if k <= 6 else 4)  # rows of at most 3 (4): each map readable on a phone
maps_at, kept_at = st.columns(2) if k > 1 else (about(377), about(377))  # side by side
widgets.picture(ctx, "attention_grid", tr.image, on_grid(last, G), titles,
                ctx.ft("dino_maps", l=L, h=H), ncols=ncols,
                colorbar_label=ctx.ft("weight"), key="vit_dino", where=maps_at)
widgets.picture(ctx, "attention_grid", tr.image, on_grid(kept.astype(np.float32), G),
                [ctx.ft("kept_panel", n=h + 1, k=int(kept[i].sum()), p=100 * share[i])
                 for i, h in enumerate(heads)],
                ctx.ft("dino_kept", x=keep), ncols=ncols, vmax=1.0,
                colorbar_label=ctx.ft("kept_scale"), key="vit_dino_kept", where=kept_at)
st.caption(ctx.t("dino_caption", prefix=prefix_text,
                 shares=shares_text(prefix_share(tr.layers[-1].attn[heads, 0, :], n))))

# --- 2 · rollout with a discard ratio and a head fusion ---------------------------------------
st.header(ctx.t("rollout_title"))
st.write(ctx.t("rollout_text", L=L))
st.latex(r"a_l = \mathrm{rows}\!\left(\tfrac{1}{2}\big(\mathrm{discard}(\mathrm{fuse}_h"
         r"\,\text{attn}_l) + I\big)\right),\quad R = a_{%d} \cdots a_1,\quad "
         r"m = \frac{R[0,\ %d:]}{\max R[0,\ %d:]}" % (L, n, n))
c1, c2 = st.columns([1, 2])
ratio = round(c1.slider(ctx.t("discard_label"), 0.0, 0.99, ROLLOUT_DISCARD, step=0.01,
                        key="vit_discard"), 2)
fusion = c1.radio(ctx.t("fusion_label"), HEAD_FUSIONS, horizontal=True, key="vit_fusion",
                  format_func=lambda f: ctx.t(f"fusion_{f}"))
rollout = ctx.derived(f"vit/rollout/{fusion}/{ratio:.2f}", lambda: rollout_cls_map(
    attention_rollout_row([layer.attn for layer in tr.layers], fusion, ratio), n))  # [N]
widgets.picture(ctx, "attention_table", tr.image, on_grid(rollout, G)[None, None],
                ctx.ft("rollout_map", fusion=ctx.ft(f"fusion_{fusion}"), r=ratio),
                row_labels=[""], col_labels=[""], panel=3.0,
                colorbar_label=ctx.ft("rollout_weight"), key="vit_rollout", where=c2)
c1.caption(ctx.t("rollout_caption", T2=cfg.seq_len**2, k=discard_count(cfg.seq_len, ratio),
                 prefix=prefix_text))

# --- 3 · the layer × head grid of [CLS] attention ---------------------------------------------
st.header(ctx.t("grid_title"))
st.write(ctx.t("grid_text", G=G))
shared = st.toggle(ctx.t("grid_shared"), key="vit_grid_shared")
grid = cls_maps[:, heads] if shared else scale_to_max(cls_maps[:, heads])  # [L, k, N]
panel = 1.0 if L * k > 24 else 1.25  # inches of one map
widgets.picture(ctx, "attention_table", tr.image, on_grid(grid, G),
                ctx.ft("grid_pic", L=L, h=k), row_labels=[ctx.ft("layer_label", l=l + 1)
                                                           for l in range(L)],
                col_labels=titles, panel=panel,
                colorbar_label=ctx.ft("weight" if shared else "grid_each"), key="vit_grid",
                where=about(round(190 + 106 * panel * k)))  # attention_table's width
st.caption(ctx.t("grid_caption_shared" if shared else "grid_caption_each"))

# --- 4 · attention from any patch --------------------------------------------------------------
st.header(ctx.t("patch_title"))
st.write(ctx.t("patch_text", n=n))
left, right = st.columns([1, 2])
with left:
    query = widgets.query_inputs(ctx)  # the picture that picks it is the explorer
    l = widgets.layer_selector(ctx)
attn = tr.layers[l].attn  # [h, T, T]
if explorer.fits(k, N):  # every patch's row over the patches: the maps follow the pointer
    widgets.query_explorer(ctx, lambda: explorer.Maps(
        attn[heads][:, n:, n:][None], ctx.t("patch_live", h=H, i="{i}", l=l + 1),
        ctx.t("weight"), titles=[ctx.t("head_n", n=h + 1) for h in heads]),
        maps_key=f"vit/patch/{l}/{heads}", where=right)
else:  # too many values to send: the picture picks, the server draws the maps
    widgets.query_explorer(ctx, where=left)
    right.caption(ctx.t("patch_off", mb=explorer.map_bytes(k, N) / 2**20,
                        cap=explorer.MAX_BYTES / 2**20))
    widgets.picture(ctx, "attention_grid", tr.image,
                    on_grid(patch_attention(attn[heads], n, query), G), titles,
                    ctx.ft("patch_live", h=H, i=query, l=l + 1), ncols=min(k, 4), query=query,
                    colorbar_label=ctx.ft("weight"), key="vit_patch", where=right)
st.caption(ctx.t("patch_prefix", i=query, prefix=prefix_text,
                 shares=shares_text(prefix_share(attn[heads, n + query, :], n))))

# --- 5 · the token-norm map --------------------------------------------------------------------
st.header(ctx.t("norm_title"))
st.write(ctx.t("norm_text"))
st.latex(r"\lVert x_i \rVert_2 = \sqrt{\textstyle\sum_k x_{ik}^2}")
norms = ctx.derived("vit/norms", lambda: np.stack(  # [L, T]
    [token_norms(layer.out) for layer in tr.layers]))
c1, c2 = st.columns([1, 1])
after = c1.select_slider(ctx.t("norm_layer"), options=list(range(L)), value=L - 1,
                         key="vit_norm_layer", format_func=lambda i: f"{i + 1} / {L}")
on_patches = patch_values(norms[after], n)  # [N]
widgets.picture(ctx, "attention_table", tr.image, on_grid(on_patches, G)[None, None],
                ctx.ft("norm_map", l=after + 1), row_labels=[""], col_labels=[""], panel=3.0,
                colorbar_label="‖x_i‖", key="vit_norms", where=c1)
with c2:
    st.markdown(ctx.t("norm_prefix"))
    st.markdown("\n".join(f"- {literal(name)}: {norms[after, i]:.2f}"
                          for i, name in enumerate(prefix_labels)))
    biggest = int(np.argmax(on_patches))
    st.markdown(ctx.t("norm_patches", med=float(np.median(on_patches)),
                      top=float(on_patches[biggest]), i=biggest))
    high = high_norm_tokens(on_patches)
    st.caption(ctx.t("norm_high", ids=", ".join(str(i) for i in high)) if high.size
               else ctx.t("norm_none"))
