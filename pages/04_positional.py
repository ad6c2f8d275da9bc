"""Step 4 of 10 — the sinusoidal positional encoding, added to the embedded patches."""

import streamlit as st

from encoder_core.analysis import cosine_similarity
from encoder_core.explain import pe_terms
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
}

ctx = page("positional", TEXT)

cfg, tr = ctx.cfg, ctx.trace
N, d, G = cfg.n_tokens, cfg.d_model, cfg.grid_size
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
row, column = divmod(query, G)
with right:
    widgets.matrix(ctx, sim[query].reshape(G, G), ctx.ft("grid_name"), key="pe_sim_grid",
                   xlabel=ctx.t("grid_col"), ylabel=ctx.t("grid_row"), colorbar_label="cos",
                   signed=False, size=(5.0, 4.0))
facts = []
if query + 1 < N:
    note = f" {ctx.t('no_right')}" if column == G - 1 else ""
    facts.append(ctx.t("next_in_seq", r=query + 1, note=note, c=f"{sim[query, query + 1]:.3f}"))
if row < G - 1:
    facts.append(ctx.t("below", r=query + G, c=f"{sim[query, query + G]:.3f}"))
else:
    facts.append(ctx.t("no_below"))
with right:
    st.markdown(ctx.t("query_is", q=query) + ctx.t("sep").join(facts) + ctx.t("end"))

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
