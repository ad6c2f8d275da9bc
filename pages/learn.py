"""How it learns — one image and its label through the loss, back through every step (the
core's backward), then one update of the weights and what it moves. A page beyond the note,
on the shapes model (its trained weights, or its architecture at random)."""

import numpy as np
import pandas as pd
import streamlit as st

from encoder_core import EncoderTrace
from encoder_core.shapes_model.dataset import CLASS_NAMES
from encoder_core.views.explain import dot_terms
from encoder_core.views.learning import (
    attention_change,
    layer_norm_row_backward,
    logit_move,
    softmax_row_backward,
    value_gradients,
)
from lens import blocks, chrome, figures, keys, one_image, widgets
from lens.context import PageContext
from lens.latex import dims, num
from lens.runner import run_page
from lens.walk import learn as walk

J_KEYS = 6  # the keys of the Jacobian's table: the query's largest weights
# Every displayed formula is written on lines short enough (≲ 500 px at KaTeX's size) that a
# phone's column (≈ 356 px) shows it at 12 px or more (lens/layout_web/layout.js shrinks wider).
UPDATE_TEX = {  # the two updates, as training/train.py's Adam (no weight decay here)
    "sgd": r"\theta \leftarrow \theta - \eta\, \frac{\partial L}{\partial \theta}",
    "adam": r"\begin{aligned} m &\leftarrow \beta_1 m + (1-\beta_1)\, g \\ v &\leftarrow "
            r"\beta_2 v + (1-\beta_2)\, g^2 \\ \theta &\leftarrow \theta - \eta\,"
            r"\frac{m/(1-\beta_1^t)}{\sqrt{v/(1-\beta_2^t)} + \varepsilon} \end{aligned}",
}


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom."""
    st.write(ctx.t("intro"))
    if not one_image.available(ctx.services):
        st.info(ctx.t("no_model"))
        return
    w = image_and_label(ctx)
    loss(ctx, w)  # --- 1
    pooled(ctx, w)  # --- 2
    layer, head, row = back_through_a_layer(ctx, w)  # --- 3
    down_to_W_E(ctx, w)  # --- 4
    widgets.section(ctx, "update", lambda: one_update(ctx, w, layer, head, row))  # --- 5
    #                          withheld while the lesson's learn.logit is open (lens/walk/learn.py)
    chrome.footer(ctx)


def grad(name: str) -> str:
    """A gradient's name in a figure: ∂L/∂name (name: the trace's field, or a word)."""
    return f"∂L/∂{name}"


def names(ctx: PageContext) -> list[str]:
    return [ctx.t(f"class_{c}") for c in CLASS_NAMES]


def image_and_label(ctx: PageContext) -> one_image.Example:
    """The model named once, the shape number (at random weights, starting on a shape the
    model gets wrong), the image with its label and the model's answer."""
    weights = walk.page_weights(ctx)
    left, right = st.columns([3, 2], gap="large")
    shape = left.number_input(ctx.t("shape"), 0, 9999, walk.page_shape(ctx), key=keys.LEARN_SHAPE)
    w = one_image.example(ctx.services, weights, ctx.settings.seed, int(shape))
    cfg = w.cfg
    left.markdown(ctx.t(f"model_{weights}", seed=ctx.settings.seed, d=cfg.d_model,
                        h=cfg.n_heads, L=cfg.n_layers, N=cfg.n_tokens))
    if weights == "random":
        chance(ctx, left)
    answer = int(np.argmax(w.lg.probs))
    left.markdown(ctx.t("label_is", label=names(ctx)[w.label], answer=names(ctx)[answer],
                        p=float(w.lg.probs[w.label])))
    widgets.picture(ctx, figures.image_with_grid, w.image, cfg.patch_size,
                    ctx.t("image_title", label=names(ctx)[w.label]), numbers=False, size=3.2,
                    key="learn_image", where=right)
    return w


def chance(ctx: PageContext, where: widgets.Where) -> None:
    """Untrained, its answers are chance: how often it gives its commonest answer on the
    shapes from the sidebar's number, and the shape the page starts on (one it gets wrong)."""
    first = ctx.settings.sample_seed
    s = one_image.survey(ctx.services, "random", ctx.settings.seed, first)
    top, k = s.commonest()
    wrong = s.wrong()  # none: it got every one right, by chance
    where.caption(ctx.t("chance_start" if wrong else "chance", n=len(s.labels), a=first,
                        b=first + len(s.labels) - 1, top=names(ctx)[top], k=k,
                        s=wrong[0] if wrong else first))


def loss(ctx: PageContext, w: one_image.Example) -> None:
    """L = −log p_y with its value; p and dL/dlogits = p − onehot."""
    lg, K = w.lg, len(CLASS_NAMES)
    st.subheader(ctx.t("loss_title"))
    st.write(ctx.t("loss_text"))
    y = w.label
    st.latex(r"L = -\log p_{%d} = -\log %s = %s" % (y, num(lg.probs[y]), num(lg.loss)))
    st.latex(r"\begin{aligned} \underbrace{\frac{\partial L}{\partial\,\mathrm{logits}}}_{%s} &= "
             r"p - \mathrm{onehot}(%d) \\ &= [%s] \end{aligned}"
             % (dims(K), y, ",\\ ".join(num(v) for v in lg.d_logits)))
    widgets.wide_or_tall(ctx, figures.bar_panels, np.stack([lg.probs, lg.d_logits]),
                    [ctx.t("p_title"), ctx.t("dlogits_title")], ctx.t("class_axis"),
                    ctx.t("value_axis"), ctx.t("loss_figure", loss=lg.loss), sharey=False,
                    tick_labels=names(ctx), highlight=y, key="learn_loss")
    st.caption(ctx.t("loss_caption"))


def pooled(ctx: PageContext, w: one_image.Example) -> None:
    """dL/dpooled = dL/dlogits · W_headᵀ, then dL/doutput: each row gets it / N."""
    lg, N, d = w.lg, w.cfg.n_tokens, w.cfg.d_model
    st.subheader(ctx.t("pooled_title"))
    st.latex(r"\underbrace{\frac{\partial L}{\partial\,\mathrm{pooled}}}_{%s} = "
             r"\frac{\partial L}{\partial\,\mathrm{logits}}\,W_\mathrm{head}^\top" % dims(d))
    st.latex(r"\underbrace{\frac{\partial L}{\partial\,\mathrm{output}}}_{%s} = \frac{1}{%d}\,"
             r"\frac{\partial L}{\partial\,\mathrm{pooled}} \text{ %s}"
             % (dims(N, d), N, ctx.t("tex_each_row")))
    st.write(ctx.t("pooled_text", N=N))
    left, right = st.columns(2, gap="large")
    widgets.picture(ctx, figures.bar_panels, lg.d_pooled[None], [ctx.t("dpooled_panel")],
                    ctx.t("features"), grad(ctx.t("word_pooled")), ctx.t("dpooled_title", d=d),
                    size=(5.0, 3.0),
                    key="learn_dpooled", where=left)
    j = int(np.argmax(np.abs(lg.d_pooled)))
    with left:
        blocks.dot_product(ctx, r"\frac{\partial L}{\partial\,\mathrm{pooled}_{%d}}" % j,
                           dot_terms(lg.d_logits, w.params.head.W_head[j]), lg.d_pooled[j],
                           grad(ctx.t("word_pooled")))
    widgets.matrix(ctx, lg.grads.output, grad(ctx.t("word_output")), key="learn_doutput",
                   where=right, colorbar_label=ctx.t("grad_label"))


def back_through_a_layer(ctx: PageContext, w: one_image.Example) -> tuple[int, int, int]:
    """One layer (the last by default) in reverse: the FFN, the Add & Norm with one row's
    LayerNorm backward, the attention with one query row's softmax Jacobian."""
    cfg, tr, g = w.cfg, w.trace, w.lg.grads
    st.subheader(ctx.t("layer_title"))
    st.write(ctx.t("layer_text", L=cfg.n_layers))
    c1, c2, c3 = st.columns(3)
    t = ctx.t  # the widgets keep their format_func until the next run: not ctx (the trace)
    layer = c1.selectbox(t("layer"), range(cfg.n_layers), index=cfg.n_layers - 1,
                         format_func=lambda l: t("layer_label", l=l + 1), key=keys.LEARN_LAYER)
    head = c2.selectbox(t("head"), range(cfg.n_heads),
                        format_func=lambda h: t("head_title", h=h + 1), key=keys.LEARN_HEAD)
    row = int(c3.number_input(ctx.t("row"), 0, cfg.n_tokens - 1, cfg.n_tokens // 2,
                              key="learn_row"))
    ctx = ctx.choose(layer=layer + 1, head=head + 1, query=row)
    gl, tl, p = g.layers[layer], tr.layers[layer], w.params.layers[layer]

    st.markdown(ctx.t("ffn_title", l=layer + 1))
    st.latex(r"\begin{aligned} \frac{\partial L}{\partial\,\mathrm{ffn\_out}} &= \frac{\partial L}"
             r"{\partial\,\mathrm{resid}_2} \\ \frac{\partial L}{\partial h} &= \frac{\partial L}"
             r"{\partial\,\mathrm{ffn\_out}}\,W_2^\top \odot \mathbb{1}[h > 0] \end{aligned}")
    left, right = st.columns(2, gap="large")
    widgets.matrix(ctx, gl.ffn_out, grad("ffn_out"), key="learn_dffn_out", where=left,
                   highlight_row=row, colorbar_label=ctx.t("grad_label"))
    widgets.matrix(ctx, gl.ffn_hidden, grad("ffn_hidden"), key="learn_dhidden", where=right,
                   highlight_row=row, colorbar_label=ctx.t("grad_label"))

    st.markdown(ctx.t("norm_title", l=layer + 1, i=row))
    layer_norm_row(ctx, layer_norm_row_backward(tl.resid_2[row], p.gamma_2, cfg.ln_eps,
                                                gl.out[row]), gl.resid_2[row])

    st.markdown(ctx.t("attn_title", l=layer + 1, h=head + 1, i=row))
    softmax_row(ctx, softmax_row_backward(tl.attn[head, row], gl.attn[head, row]), layer, head,
                row, w)
    return layer, head, row


def layer_norm_row(ctx: PageContext, ln, stored: np.ndarray) -> None:
    """One row's LayerNorm backward with its numbers (`LayerNormRow`), checked against the
    backward's own dL/dresid_2 of that row."""
    d = len(ln.x)
    st.latex(r"\begin{aligned} \mu &= %s,\quad \sigma^2 = %s \\ r &= \frac{1}{\sqrt{\sigma^2 + "
             r"\varepsilon}} = %s \end{aligned}" % (num(ln.mean), num(ln.var), num(ln.rstd)))
    st.latex(r"\begin{aligned} d\hat{x} &= dy \odot \gamma \\ d\sigma^2 &= -\tfrac12 r^2 "
             r"\textstyle\sum_j d\hat{x}_j \hat{x}_j = %s \\ d\mu &= -r \textstyle\sum_j "
             r"d\hat{x}_j = %s \end{aligned}" % (num(ln.d_var), num(ln.d_mean)))
    st.latex(r"\begin{aligned} \underbrace{dx}_{%s} &= r\,\big(d\hat{x} - \overline{d\hat{x}} - "
             r"\hat{x}\,\overline{d\hat{x}\odot\hat{x}}\big) \\ &= %s\,\big(d\hat{x} - (%s) - "
             r"\hat{x}\,(%s)\big) \end{aligned}"
             % (dims(d), num(ln.rstd), num(ln.mean_d_normed), num(ln.mean_d_normed_x)))
    widgets.wide_or_tall(ctx, figures.bar_panels, np.stack([ln.d_out, ln.d_normed, ln.dx]),
                    [grad("y"), f"{grad('x̂')} = {grad('y')} ⊙ γ", grad("x")],
                    ctx.t("features"), ctx.t("grad_label"),
                    ctx.t("norm_figure"), sharey=False, size=(10.0, 3.4), key="learn_ln_row")
    j = int(np.argmax(np.abs(ln.dx)))
    with blocks.folded(ctx):
        st.latex(r"\begin{aligned} dx_{%d} &= %s\,\big(%s - (%s) \\ &\qquad - (%s)(%s)\big) "
                 r"\\ &= %s \end{aligned}"
                 % (j, num(ln.rstd), num(ln.d_normed[j]), num(ln.mean_d_normed),
                    num(ln.normed[j]), num(ln.mean_d_normed_x), num(ln.dx[j])))
        blocks.stored_check(ctx, float(ln.dx[j]), float(stored[j]), grad("resid_2"))


def softmax_row(ctx: PageContext, sm, layer: int, head: int, row: int,
                w: one_image.Example) -> None:
    """dL/dattn of the head, then one query row through the softmax's Jacobian."""
    g, tl, N = w.lg.grads.layers[layer], w.trace.layers[layer], w.cfg.n_tokens
    st.latex(r"\begin{aligned} \frac{\partial L}{\partial\,\mathrm{attn}} &= \frac{\partial L}"
             r"{\partial\,\mathrm{heads}}\,V^\top \\ \underbrace{J}_{%s} &= \mathrm{diag}(a) - "
             r"a\,a^\top \end{aligned}" % dims(N, N))
    st.latex(r"\begin{aligned} \frac{\partial L}{\partial\,\mathrm{scores}_{%d}} &= J\,"
             r"\frac{\partial L}{\partial\,\mathrm{attn}_{%d}} \\ &= a \odot \Big(\frac{\partial L}"
             r"{\partial\,\mathrm{attn}_{%d}} - %s\Big) \end{aligned}"
             % (row, row, row, num(sm.weighted)))
    left, right = st.columns(2, gap="large")
    widgets.matrix(ctx, g.attn[head], ctx.t("dattn_name", l=layer + 1, h=head + 1),
                   key="learn_dattn", where=left,
                   xlabel=ctx.t("keys_axis"), ylabel=ctx.t("queries_axis"), highlight_row=row,
                   colorbar_label=ctx.t("grad_label"))
    widgets.matrix(ctx, sm.J, ctx.t("j_title", i=row), key="learn_jacobian", where=right,
                   xlabel=ctx.t("keys_axis"), ylabel=ctx.t("keys_axis"),
                   colorbar_label=ctx.t("jacobian_label"))
    widgets.wide_or_tall(ctx, figures.bar_panels, np.stack([sm.a, sm.d_attn, sm.d_scores]),
                    [ctx.t("a_panel", i=row), ctx.t("dattn_panel"), ctx.t("dscores_panel")],
                    ctx.t("keys_axis"), ctx.t("value_axis"),
                    ctx.t("softmax_figure", l=layer + 1, h=head + 1, i=row),
                    sharey=False, size=(10.0, 3.4), key="learn_softmax_row")
    vg = value_gradients(tl.attn[head], g.heads[head])
    least, most = int(np.argmin(vg.received)), int(np.argmax(vg.received))
    widgets.section(ctx, "value_grads", lambda: st.caption(ctx.t(  # withheld while the
        "value_grads", least=least, r_least=vg.received[least],  # lesson's learn.value is open
        n_least=vg.dv_norm[least], most=most, r_most=vg.received[most], N_rows=N,
        n_most=vg.dv_norm[most])))
    top = sm.largest(J_KEYS)
    st.caption(ctx.t("j_table", k=len(top), i=row))
    st.dataframe(pd.DataFrame(sm.J[np.ix_(top, top)], index=[str(k) for k in top],
                              columns=[str(k) for k in top]).style.format("{:+.2e}"))
    j = int(top[np.argmax(sm.a[top])])
    with blocks.folded(ctx):
        st.latex(r"\begin{aligned} J_{%d,%d} &= a_{%d}(1 - a_{%d}) = %s \\ \frac{\partial L}"
                 r"{\partial\,\mathrm{scores}_{%d,%d}} &= %s\,\big(%s - (%s)\big) \\ &= %s "
                 r"\end{aligned}"
                 % (j, j, j, j, num(sm.J[j, j]), row, j, num(sm.a[j]), num(sm.d_attn[j]),
                    num(sm.weighted), num(sm.d_scores[j])))
        blocks.stored_check(ctx, float(sm.d_scores[j]), float(g.scores[head, row, j]),
                            grad("scores"))
    # its own fold, not inside this one (a fold in a fold leaves a phone 287 px for the formula)
    blocks.dot_product(ctx, r"\frac{\partial L}{\partial a_{%d}}" % j,  # a: query row's weights
                       dot_terms(g.heads[head, row], tl.v[head, j]), g.attn[head, row, j],
                       grad("attn"))


def down_to_W_E(ctx: PageContext, w: one_image.Example) -> None:
    """dL/dx0 and dL/dW_E = patchesᵀ · dL/dx0, one entry written out."""
    g, tr = w.lg.grads, w.trace
    st.subheader(ctx.t("embed_title"))
    st.latex(r"\underbrace{\frac{\partial L}{\partial W_E}}_{%s} = \mathrm{patches}^\top\,"
             r"\frac{\partial L}{\partial x_0}" % dims(*g.params.W_E.shape))
    left, right = st.columns(2, gap="large")
    widgets.matrix(ctx, g.x0, grad("x0"), key="learn_dx0", where=left,
                   colorbar_label=ctx.t("grad_label"))
    widgets.matrix(ctx, g.params.W_E, grad("W_E"), key="learn_dW_E", where=right,
                   xlabel=ctx.t("features"), ylabel=ctx.t("pixel_axis"),
                   colorbar_label=ctx.t("grad_label"))
    k, j = np.unravel_index(int(np.argmax(np.abs(g.params.W_E))), g.params.W_E.shape)
    blocks.dot_product(ctx, r"\frac{\partial L}{\partial W_{E}[%d, %d]}" % (k, j),
                       dot_terms(tr.patches[:, k], g.x0[:, j]), g.params.W_E[k, j], grad("W_E"))


def one_update(ctx: PageContext, w: one_image.Example, layer: int, head: int, row: int) -> None:
    """One step of SGD or Adam: the loss, the prediction and a head's map before and after,
    and what moved (after − before); ten more steps and the loss curve. The session keeps a
    run per shape and setting (`one_image.kept`), so coming back to a shape finds its steps."""
    st.subheader(ctx.t("update_title"))
    st.write(ctx.t("update_text"))
    c1, c2 = st.columns(2)
    optimiser = c1.radio(ctx.t("optimiser"), ("sgd", "adam"), horizontal=True,
                         format_func=lambda o, t=ctx.t: t(f"opt_{o}"), key="learn_optimiser")
    lr = c2.select_slider(ctx.t("step_size"), one_image.STEP_SIZES[optimiser],
                          value=one_image.DEFAULT_SIZE[optimiser], key=f"learn_lr_{optimiser}")
    st.latex(UPDATE_TEX[optimiser])
    settings = (*w.of, optimiser, lr)
    more = 10 if st.button(ctx.t("ten_more"), key="learn_more") else 0
    runs = st.session_state.get(keys.LEARN_RUN)
    run = one_image.run(w, (runs or {}).get(settings), settings, optimiser, lr, more)
    st.session_state[keys.LEARN_RUN] = one_image.kept(runs, run)  # the session keeps its runs
    steps = len(run.losses) - 1
    after_trace, after_logits, after_p = one_image.after(w, run.params)
    a, b = st.columns(2)
    a.metric(ctx.t("loss_before"), f"{run.losses[0]:.4g}")
    b.metric(ctx.t("loss_after", n=steps), f"{run.losses[-1]:.4g}",
             delta=f"{run.losses[-1] - run.losses[0]:+.3g}", delta_color="inverse")
    widgets.wide_or_tall(ctx, figures.bar_panels, np.stack([w.lg.probs, after_p]),
                         [ctx.t("before"), ctx.t("after", n=steps)], ctx.t("class_axis"), "p",
                         ctx.t("prediction_figure"), tick_labels=names(ctx), highlight=w.label,
                         key="learn_prediction")
    direction, delta = logit_move(w.lg.logits, after_logits, w.label)
    st.caption(ctx.t(f"logit_{direction}", label=names(ctx)[w.label], n=steps,
                     a=float(w.lg.logits[w.label]), b=float(after_logits[w.label]), delta=delta))
    what_moved(ctx, w, after_trace, layer, head, row, steps)
    left, right = st.columns([3, 2], gap="large")
    widgets.picture(ctx, figures.lines, np.arange(steps + 1), [np.array(run.losses)],
                    [ctx.t("loss_legend")], ctx.t("curve_figure"), ctx.t("step_axis"),
                    ctx.t("loss_axis"), size=(5.0, 3.6), key="learn_curve", where=left)
    right.caption(ctx.t("update_caption", max=one_image.MAX_STEPS, kept=one_image.KEPT))


def what_moved(ctx: PageContext, w: one_image.Example, after_trace: EncoderTrace, layer: int,
               head: int, row: int, steps: int) -> None:
    """The chosen head's map of the query before and after (one shared scale), beside their
    difference after − before (a diverging scale of its own, symmetric around 0, the largest
    change outlined), and the largest change in numbers: in this map, and anywhere."""
    G = w.cfg.grid_size
    before = w.trace.layers[layer].attn[head, row]  # [N]
    after = after_trace.layers[layer].attn[head, row]  # [N]
    change = attention_change(w.trace, after_trace)
    here = change.delta[layer, head, row]  # [N] after − before
    j = int(np.argmax(np.abs(here)))
    # both pictures ≤ 494 px wide as drawn: their text ≥ 10 px in a phone's column (356 px)
    left, right = st.columns(2, gap="large")
    widgets.picture(ctx, figures.attention_table, w.image,
                    np.stack([before, after]).reshape(1, 2, G, G),
                    ctx.t("map_figure", l=layer + 1, h=head + 1, i=row), row_labels=[""],
                    col_labels=[ctx.t("before"), ctx.t("after", n=steps)], query=row, panel=1.7,
                    colorbar_label=ctx.t("weight"), key="learn_maps", where=left)
    widgets.picture(ctx, figures.heatmap, here.reshape(G, G),
                    ctx.t("change_figure", n=steps), ctx.t("patch_col"), ctx.t("patch_row"),
                    signed=True, colorbar_label=ctx.t("change_label"), size=(4.4, 4.0),
                    window=(j // G, j % G, 1, 1), key="learn_change", where=right)
    st.markdown(ctx.t("moved", n=steps, v=float(here[j]), j=j, r=j // G, c=j % G,
                      a=float(before[j]), b=float(after[j]), V=change.value, L=change.layer + 1,
                      H=change.head + 1, I=change.query, J=change.key))


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
