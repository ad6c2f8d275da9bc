"""Step 4 of 10 — the sinusoidal positional encoding, added to the embedded patches."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.analysis import cosine_similarity
from encoder_core.explain import pe_terms
from encoder_core.vit_steps import similarity_mosaic
from encoder_core.vit_views import position_similarity
from lens import blocks, chrome, figures, widgets
from lens.context import page

TEXT = {
    "intro": (
        "Multiplying by W_E treats every patch alike: the embedding alone does not say where a "
        "patch was. The positional encoding PE gives each position pos (the patch number, "
        "row-major: left to right, then top to bottom) its own fixed vector of width "
        "d_model = {d}, which is added to the patch's embedding. It is computed from a formula, "
        "not learned. Each pair of columns (2i, 2i+1) is one sine and one cosine of the same "
        "frequency; the frequency falls from one turn per 2π ≈ 6.3 positions at i = 0 to "
        "almost nothing at the last columns.",
        "乘以 W_E 对每个图像块一视同仁：单靠嵌入无法知道图像块原来在哪里。位置编码 PE 给每个位置 "
        "pos（图像块编号，行优先：从左到右，再从上到下）一个自己的、宽度为 d_model = {d} 的固定"
        "向量，并把它加到该图像块的嵌入上。它由公式计算，不是学出来的。每一对列 (2i, 2i+1) 是"
        "同一频率的一个正弦和一个余弦；频率从 i = 0 时每 2π ≈ 6.3 个位置转一圈，一直降到最后几列"
        "几乎不变。"),
    "pe_off": (
        "The positional encoding is switched off in the sidebar: x0 = X, nothing is added, and "
        "the encoder cannot tell where a patch was (shuffling the patches would only shuffle "
        "the output rows). The PE is still shown below so you can study it.",
        "侧边栏中已关闭位置编码：x0 = X，不加任何东西，编码器无法知道图像块原来的位置（打乱图像块"
        "只会同样地打乱输出的行）。下面仍然展示 PE，供学习之用。"),
    "pe_matrix": ("The PE matrix", "PE 矩阵"),
    "pe_caption": (
        "Row pos is the vector added to patch pos, shown as its sine columns 2i and its cosine "
        "columns 2i+1 side by side (each picture is exact: no column is mixed with another). "
        "Small i oscillate fast along pos, larger i ever more slowly; at the largest i the "
        "sines stay near 0 and the cosines near 1 for every position.",
        "第 pos 行是加到第 pos 个图像块上的向量，这里把它的正弦列 2i 与余弦列 2i+1 分开并排显示"
        "（每幅图都是精确的：没有任何两列被混在一起）。i 小的列沿 pos 快速振荡，i 越大变化越慢；"
        "在最大的 i，对所有位置，正弦列都接近 0，余弦列都接近 1。"),
    "sin_name": ("sines: PE[:, 2i]", "正弦：PE[:, 2i]"),
    "cos_name": ("cosines: PE[:, 2i+1]", "余弦：PE[:, 2i+1]"),
    "pair_i": ("pair i (frequency)", "第 i 对（频率）"),
    "pos": ("position pos (patch number)", "位置 pos（图像块编号）"),
    "curves": ("A few columns as curves along pos", "几列沿 pos 的曲线"),
    "pick_cols": ("Columns to plot", "要画的列"),
    "curve_label": ("column {c}: {f}, i = {i}", "第 {c} 列：{f}，i = {i}"),
    "curves_title": ("PE[pos, column] for the chosen columns", "所选列的 PE[pos, 列]"),
    "curves_caption": (
        "Each pair of columns 2i, 2i+1 shares one frequency 1/10000^(2i/d_model): a sine and a "
        "cosine a quarter turn apart. Small i: fast waves that tell nearby positions apart; "
        "large i: slow waves that change little over all {N} positions.",
        "每一对列 2i、2i+1 共用同一个频率 1/10000^(2i/d_model)：一个正弦和一个相差四分之一周期"
        "的余弦。i 小：快速振荡，能区分相邻的位置；i 大：缓慢变化，在全部 {N} 个位置上几乎不变。"),
    "ex_caption": ("The chosen row pos and column are outlined on the PE matrix.",
                   "所选的第 pos 行和列已在 PE 矩阵上框出。"),
    "pe_avg": (
        "With d_model over 512 each picture averages neighbouring pairs i (sines with sines, "
        "cosines with cosines); the number window and the curves below show the exact values.",
        "d_model 超过 512 时，每幅图把相邻的 i 平均（正弦与正弦、余弦与余弦）；数值窗口和下面的"
        "曲线给出精确的值。"),
    "no_cols": ("Choose at least one column.", "请至少选择一列。"),
    "example": ("One value, worked out", "算出一个数"),
    "ex_pos": ("pos", "pos"),
    "ex_col": ("column", "列"),
    "similarity": ("Which positions look alike", "哪些位置彼此相似"),
    "sim_intro": (
        "The cosine similarity cos(PE_a, PE_b) = PE_a·PE_b / (‖PE_a‖‖PE_b‖) of every pair of "
        "rows. Every row has the same length √(d_model/2), and the dot product depends only on "
        "the distance b − a, so the matrix is the same along every diagonal: positions close "
        "in the sequence are similar, and the similarity broadly falls off (with ripples) as "
        "the distance grows.",
        "每一对行的余弦相似度 cos(PE_a, PE_b) = PE_a·PE_b / (‖PE_a‖‖PE_b‖)。每一行的长度都是 "
        "√(d_model/2)，而点积只取决于距离 b − a，所以矩阵沿每条对角线都相同：序列中相近的位置"
        "彼此相似，距离越大，相似度大体上越低（带有起伏）。"),
    "sim_name": ("cos(PE_a, PE_b)", "cos(PE_a, PE_b)"),
    "pos_a": ("position a", "位置 a"),
    "pos_b": ("position b", "位置 b"),
    "grid_title": ("Seen on the image", "在图像上看"),
    "grid_intro": (
        "But the sequence is the image read row by row. Patch pos and pos + 1 are neighbours "
        "in the image, except at the end of a grid row, where pos + 1 is the first patch of the "
        "next row, on the far left. The patch just below, pos + {G}, is {G} positions away in "
        "the sequence, so its PE is much less similar than its closeness in the image would "
        "suggest. The map below shows the similarity of the query patch's PE to every patch's PE, "
        "laid out on the {G} × {G} grid (the brightest cell, cos = 1, is the query itself): "
        "the similar patches form a band along the query's row, spilling over the row ends, "
        "not a round blob around the query.",
        "但这个序列是把图像逐行读出来的。图像块 pos 和 pos + 1 在图像中是相邻的，除了在网格一行的"
        "末尾：那里 pos + 1 是下一行最左边的第一个图像块。正下方的图像块 pos + {G} 在序列中相距 "
        "{G} 个位置，所以它的 PE 远不如它在图像中的距离所暗示的那样相似。下图把查询图像块的 PE "
        "与每个图像块的 PE 的相似度排在 {G} × {G} 的网格上（最亮的格子 cos = 1，就是查询块本身）："
        "相似的图像块沿查询块所在的行形成一条"
        "带子，并越过行尾延伸，而不是围绕查询块的一个圆斑。"),
    "grid_name": ("cos(PE_query, PE_pos) on the grid", "cos(PE_query, PE_pos) 排在网格上"),
    "grid_col": ("grid column", "网格列"),
    "grid_row": ("grid row", "网格行"),
    "sep": ("; ", "；"), "end": (".", "。"),
    "query_is": ("Query patch {q}: ", "查询图像块 {q}："),
    "next_in_seq": ("the next in the sequence, {r}{note}, has cos = {c}",
                    "序列中的下一个图像块 {r}{note}，cos = {c}"),
    "below": ("the patch just below, {r}, has cos = {c}", "正下方的图像块 {r}，cos = {c}"),
    "no_right": ("(on the next grid row, far left)", "（在下一行的最左边）"),
    "no_below": ("it is on the bottom row, with no patch below", "它在最下面一行，下方没有图像块"),
    "sum": ("Adding it: x0 = X + PE", "相加：x0 = X + PE"),
    "sum_caption": (
        "X = embedded (the previous step) plus PE, element by element. Compare the colour "
        "scales: how much the PE (values in [−1, 1]) changes x0 depends on how large the "
        "entries of X are; where they are small, the PE's stripes show through.",
        "X = embedded（上一步的结果）与 PE 逐元素相加。比较两者的颜色刻度：PE（取值在 [−1, 1]）"
        "对 x0 的改变有多大，取决于 X 的元素有多大；X 小的地方，PE 的条纹清晰可见。"),
    "sum_off": ("use_pe is off: x0 = X, the same matrix as the embedding.",
                "use_pe 已关闭：x0 = X，与嵌入矩阵完全相同。"),
    # a ViT's learned position embedding
    "learned_intro": (
        "Multiplying by W_E treats every patch alike: the embedding alone does not say where a "
        "patch was. This Vision Transformer **learned** its positions: pos_embed [{n} × {d}] is "
        "a table of trainable numbers, one row per position, adjusted in training together with "
        "all the other weights. They were not computed from a formula: no sine or cosine made "
        "them. Row {first} goes to patch 0 (the patches in row-major order){prefix}.",
        "乘以 W_E 对每个图像块一视同仁：单靠嵌入无法知道图像块原来在哪里。这个 Vision "
        "Transformer 的位置是**学出来的**：pos_embed [{n} × {d}] 是一张可训练的数表，每个位置"
        "一行，在训练中与其他所有权重一起调整。它们不是用公式算出来的：没有用到正弦或余弦。"
        "第 {first} 行加到图像块 0 上（图像块按行优先排列）{prefix}。"),
    "learned_prefix": ("; the row(s) before it go to {names}", "；它之前的行加到 {names} 上"),
    "learned_registers": ("; the registers get none", "；寄存器词元不加位置"),
    "learned_matrix": ("The learned position embedding pos_embed", "学到的位置嵌入 pos_embed"),
    "learned_caption": (
        "Row {row} (patch {q}, the query) is outlined. Each row is the vector added to one "
        "token; what the numbers mean is whatever training found useful.",
        "已框出第 {row} 行（图像块 {q}，即查询块）。每一行是加到一个词元上的向量；这些数的含义"
        "就是训练发现有用的东西。"),
    "learned_sim_title": ("Which positions look alike, on the image grid",
                          "哪些位置彼此相似：排在图像网格上"),
    "learned_sim_intro": (
        "The cosine similarity cos(pos_embed_p, pos_embed_q) of each patch p's row with every "
        "patch q's row, as in the ViT paper's figure 7: tile (r, c) belongs to the patch in grid "
        "row r, column c, and each cell inside it is another patch, where that patch sits in "
        "the image (its own cell is 1). Nothing told the model that the {N} patches form a "
        "{G} × {G} grid; a well-trained ViT finds it, and its tiles show a bright spot around "
        "the patch and often its row and column. Random or little-trained weights show noise. "
        "The {names} row of pos_embed has no place on the grid: it is left out here.",
        "每个图像块 p 的行与每个图像块 q 的行的余弦相似度 cos(pos_embed_p, pos_embed_q)，如 ViT "
        "论文的图 7：第 (r, c) 个小图属于网格第 r 行、第 c 列的图像块，小图中的每个格子是另一个"
        "图像块，放在它在图像中的位置（它自己的格子为 1）。没有人告诉模型这 {N} 个图像块组成一个 "
        "{G} × {G} 的网格；训练充分的 ViT 会自己发现，小图中会在该图像块周围、并常常沿它的行和列"
        "出现亮斑。随机或训练很少的权重则只显示噪声。pos_embed 的 {names} 行在网格上没有位置："
        "这里不显示。"),
    "learned_sim_intro_no_prefix": (
        "The cosine similarity cos(pos_embed_p, pos_embed_q) of each patch p's row with every "
        "patch q's row, as in the ViT paper's figure 7: tile (r, c) belongs to the patch in grid "
        "row r, column c, and each cell inside it is another patch, where that patch sits in "
        "the image (its own cell is 1). Nothing told the model that the {N} patches form a "
        "{G} × {G} grid; a well-trained ViT finds it, and its tiles show a bright spot around "
        "the patch and often its row and column. Random or little-trained weights show noise.",
        "每个图像块 p 的行与每个图像块 q 的行的余弦相似度 cos(pos_embed_p, pos_embed_q)，如 ViT "
        "论文的图 7：第 (r, c) 个小图属于网格第 r 行、第 c 列的图像块，小图中的每个格子是另一个"
        "图像块，放在它在图像中的位置（它自己的格子为 1）。没有人告诉模型这 {N} 个图像块组成一个 "
        "{G} × {G} 的网格；训练充分的 ViT 会自己发现，小图中会在该图像块周围、并常常沿它的行和列"
        "出现亮斑。随机或训练很少的权重则只显示噪声。"),
    "mosaic_title": ("cos(pos_embed_p, pos_embed_q), one tile per patch p",
                     "cos(pos_embed_p, pos_embed_q)，每个图像块 p 一个小图"),
    "tile_row": ("grid row of patch p", "图像块 p 的网格行"),
    "tile_col": ("grid column of patch p", "图像块 p 的网格列"),
    "learned_grid_name": ("cos(pos_embed_query, pos_embed_q) on the grid",
                          "cos(pos_embed_query, pos_embed_q) 排在网格上"),
    "learned_one": ("The query patch's tile, enlarged (it is outlined in the mosaic)",
                    "查询图像块的小图，放大显示（在拼图中已框出）"),
    "learned_sum": ("Adding it: x0 = tokens + pos", "相加：x0 = tokens + pos"),
    "learned_sum_caption": (
        "tokens (the previous step: {names} and the embedded patches) plus pos, row by row: pos "
        "holds the pos_embed row of each token{none}. The {names} row is labelled and outlined; "
        "patch {q} is row {row}.",
        "tokens（上一步：{names} 与嵌入后的图像块）与 pos 逐行相加：pos 保存每个词元对应的 "
        "pos_embed 行{none}。{names} 行已标出并加框；图像块 {q} 在第 {row} 行。"),
    "learned_sum_none": (" (zero for the registers)", "（寄存器为零）"),
}

ctx = page("positional", TEXT)

cfg, tr = ctx.cfg, ctx.trace
N, d, G = cfg.n_tokens, cfg.d_model, cfg.grid_size


def learned_positions() -> None:
    """The page for a ViT's learned pos_embed: the table, its similarity on the grid, the sum."""
    S_, n_pos = cfg.seq_len, cfg.n_pos
    first = n_pos - N  # pos_embed's row of patch 0
    names = ", ".join(prefix_names(cfg))
    prefix = ctx.t("learned_prefix", names=", ".join(prefix_names(cfg)[:first])) if first else ""
    if cfg.n_registers:
        prefix += ctx.t("learned_registers")
    st.write(ctx.t("learned_intro", n=n_pos, d=d, first=first, prefix=prefix))
    if not cfg.use_pe:
        st.warning(ctx.t("pe_off"))
    st.latex(rf"\underbrace{{x_0}}_{{{S_} \times {d}}} = "
             rf"\underbrace{{\text{{tokens}}}}_{{{S_} \times {d}}} + "
             rf"\underbrace{{\text{{pos}}}}_{{{S_} \times {d}}},\qquad "
             rf"\text{{pos}}[n_{{prefix}} + i] = \text{{pos\_embed}}[{first} + i]"
             rf"\quad (i = 0 \ldots {N - 1})")
    widgets.note_original(ctx)

    st.subheader(ctx.t("learned_matrix"))
    left, right = st.columns([2, 3])
    with left:
        query = widgets.query_picker(ctx)
    with right:
        widgets.matrix(ctx, tr.params.pos_embed, "pos_embed", key="pos_embed",
                       xlabel=ctx.t("features"), ylabel=ctx.t("tokens"),
                       highlight_row=first + query, tokens="rows" if n_pos == S_ else "")
        st.caption(ctx.t("learned_caption", row=first + query, q=query))

    st.subheader(ctx.t("learned_sim_title"))
    sim = ctx.derived("positions/cos", lambda: position_similarity(  # [N, N] patches only
        tr.params.pos_embed, first))
    mosaic = ctx.derived("positions/mosaic", lambda: similarity_mosaic(sim, G))
    if cfg.n_prefix:
        st.write(ctx.t("learned_sim_intro", N=N, G=G, names=names))
    else:
        st.write(ctx.t("learned_sim_intro_no_prefix", N=N, G=G))
    left, right = st.columns([3, 2])
    widgets.picture(ctx, "position_mosaic", mosaic, G, ctx.ft("mosaic_title"),
                    ctx.ft("tile_col"), ctx.ft("tile_row"), query=query, key="pos_mosaic",
                    where=left)
    with right:
        st.markdown(f"**{ctx.t('learned_one')}**")
        widgets.matrix(ctx, sim[query].reshape(G, G), ctx.ft("learned_grid_name"),
                       key="pe_sim_grid", xlabel=ctx.t("grid_col"), ylabel=ctx.t("grid_row"),
                       colorbar_label="cos", signed=True, size=(5.0, 4.0), window=False)
        st.markdown(neighbour_facts(sim, query))

    st.subheader(ctx.t("learned_sum"))
    left, right = st.columns(2)
    widgets.matrix(ctx, tr.tokens, "tokens", key="pe_tokens", where=left,
                   highlight_row=ctx.row(query), tokens="rows", window=False)
    widgets.matrix(ctx, tr.pos, "pos", key="pe_pos", where=right,
                   highlight_row=ctx.row(query), tokens="rows", window=False)
    left, right = st.columns(2)
    widgets.matrix(ctx, tr.x0, "x0 = tokens + pos" if cfg.use_pe else "x0 = tokens",
                   key="pe_x0", where=left, highlight_row=ctx.row(query), tokens="rows")
    right.caption(ctx.t("learned_sum_caption", names=names, q=query, row=ctx.row(query),
                        none=ctx.t("learned_sum_none") if cfg.n_registers else ""))


def neighbour_facts(sim, query: int) -> str:
    """How similar the query's position is to the next one in the sequence and the one below."""
    row, column = divmod(query, G)
    facts = []
    if query + 1 < N:
        note = f" {ctx.t('no_right')}" if column == G - 1 else ""
        facts.append(ctx.t("next_in_seq", r=query + 1, note=note,
                           c=f"{sim[query, query + 1]:.3f}"))
    if row < G - 1:
        facts.append(ctx.t("below", r=query + G, c=f"{sim[query, query + G]:.3f}"))
    else:
        facts.append(ctx.t("no_below"))
    return ctx.t("query_is", q=query) + ctx.t("sep").join(facts) + ctx.t("end")


if cfg.position == "learned":  # a ViT: its own table, no formula
    learned_positions()
    chrome.footer(ctx)
    st.stop()

st.write(ctx.t("intro", d=d))
if not cfg.use_pe:
    st.warning(ctx.t("pe_off"))
st.latex(r"PE(pos, 2i) = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right),\qquad "
         r"PE(pos, 2i+1) = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
st.latex(rf"pos = 0 \ldots {N - 1},\quad i = 0 \ldots d_{{model}}/2 - 1 = {d // 2 - 1},\quad "
         rf"PE\;[{N} \times {d}]")
widgets.note_original(ctx)

# --- the matrix, one value worked out, the columns as curves ---------------------------------
matrix_box = st.container()  # above the example, drawn once its row and column are chosen
st.subheader(ctx.t("example"))
inputs, worked = st.columns([2, 3])
c1, c2 = inputs.columns(2)
pos = c1.number_input(ctx.t("ex_pos"), 0, N - 1, min(5, N - 1), step=1, key="pe_ex_pos")
col = c2.number_input(ctx.t("ex_col"), 0, d - 1, min(2, d - 1), step=1, key="pe_ex_col")
ex = pe_terms(pos, col, d)
two_i = "2i" if ex.func == "sin" else "2i+1"
inputs.latex(rf"\text{{{ctx.t('ex_col')}}}\ {col} = {two_i}\ \Rightarrow\ i = {ex.i}")
inputs.latex(rf"\frac{{2i}}{{d_{{model}}}} = \frac{{{2 * ex.i}}}{{{d}}} = {ex.exponent:.5g}")
with worked:
    st.latex(r"\begin{aligned}"
             rf"PE({pos}, {col}) &= \{ex.func}\!\left(\frac{{{pos}}}"
             rf"{{10000^{{{ex.exponent:.5g}}}}}\right) "
             rf"= \{ex.func}\!\left(\frac{{{pos}}}{{{ex.denominator:.5g}}}\right) \\"
             rf"&= \{ex.func}({ex.angle:.5g}) = {ex.value:.6f}"
             r"\end{aligned}")
    blocks.stored_check(ctx, ex.value, tr.pe[pos, col], f"pe[{pos}, {col}]")
    st.caption(ctx.t("ex_caption"))
with matrix_box:
    st.subheader(ctx.t("pe_matrix"))
    sin_col, cos_col = st.columns(2)  # the whole width: each panel is read at a tablet's width
    for name, offset, where in (("sin_name", 0, sin_col), ("cos_name", 1, cos_col)):
        widgets.matrix(ctx, tr.pe[:, offset::2], ctx.ft(name), key=f"pe_{offset}",
                       xlabel=ctx.t("pair_i"), ylabel=ctx.t("pos"), where=where,
                       highlight_row=pos, highlight_col=col // 2 if col % 2 == offset else None,
                       size=(3.6, 3.6), window=False)
    below, _ = st.columns([3, 2])
    widgets.number_window(ctx, tr.pe, "PE", key="pe", where=below)
    below.caption(ctx.t("pe_caption"))
    if d // 2 > figures.MAX_SIDE:
        below.caption(ctx.t("pe_avg"))

st.subheader(ctx.t("curves"))
defaults = sorted({0, 1, 2 * (d // 16), 2 * (d // 8)})
cols = st.multiselect(ctx.t("pick_cols"), list(range(d)), default=defaults, key="pe_cols",
                      max_selections=8)
if cols:
    labels = []
    for c in cols:
        f = "sin" if c % 2 == 0 else "cos"
        labels.append(ctx.ft("curve_label", c=c, f=f, i=c // 2))
    widgets.picture(ctx, "lines", list(range(N)), [tr.pe[:, c] for c in cols], labels,
                    ctx.ft("curves_title"), ctx.ft("pos"), "PE", key="pe_lines")
    st.caption(ctx.t("curves_caption", N=N))
else:
    st.info(ctx.t("no_cols"))

# --- similarity: in the sequence, and on the image -------------------------------------------
st.subheader(ctx.t("similarity"))
sim = cosine_similarity(tr.pe)  # [N, N]
left, right = st.columns(2)
with left:
    widgets.matrix(ctx, sim, ctx.ft("sim_name"), key="pe_sim", xlabel=ctx.t("pos_b"),
                   ylabel=ctx.t("pos_a"), colorbar_label="cos", signed=False)
with right:
    st.write(ctx.t("sim_intro"))
    st.markdown(f"**{ctx.t('grid_title')}.** " + ctx.t("grid_intro", G=G))

left, right = st.columns([2, 3])
with left:
    query = widgets.query_picker(ctx)
with right:
    widgets.matrix(ctx, sim[query].reshape(G, G), ctx.ft("grid_name"), key="pe_sim_grid",
                   xlabel=ctx.t("grid_col"), ylabel=ctx.t("grid_row"), colorbar_label="cos",
                   signed=False, size=(5.0, 4.0))
    st.markdown(neighbour_facts(sim, query))

# --- the sum -----------------------------------------------------------------------------------
st.subheader(ctx.t("sum"))
if cfg.use_pe:
    st.latex(rf"\underbrace{{x_0}}_{{{N} \times {d}}} = \underbrace{{X}}_{{{N} \times {d}}}"
             rf" + \underbrace{{PE}}_{{{N} \times {d}}}")
else:
    st.latex(rf"\underbrace{{x_0}}_{{{N} \times {d}}} = \underbrace{{X}}_{{{N} \times {d}}}"
             r"\quad(\text{use\_pe} = \text{off})")
    st.info(ctx.t("sum_off"))
left, right = st.columns(2)
with left:
    widgets.matrix(ctx, tr.embedded, "X = embedded", key="pe_X", xlabel=ctx.t("features"),
                   ylabel=ctx.t("pos"))
with right:
    widgets.matrix(ctx, tr.x0, "x0 = X + PE" if cfg.use_pe else "x0 = X", key="pe_x0",
                   xlabel=ctx.t("features"), ylabel=ctx.t("pos"))
if cfg.use_pe:
    st.caption(ctx.t("sum_caption"))

chrome.footer(ctx)
