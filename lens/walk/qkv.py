"""Q, K, V: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/qkv.py`, words `lens/texts/<lang>/qkv.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from encoder_core.views.explain import dot_terms

from ..handout.sheets import Sheet, Walk, dims, heatmap, layer_input, make_sheet, written, x_name
from ..lesson.tasks import PAGE, Fixed, Spec, Task

if TYPE_CHECKING:
    from ..context import PageContext


def qkv_d_head(ctx: PageContext, fixed: Fixed) -> Task:
    """Each head's queries, keys and values are d_model / h wide."""
    cfg = ctx.cfg
    return Task("qkv.d_head", "number", (float(ctx.trace.layers[0].q.shape[-1]),),
                {"d": cfg.d_model, "h": cfg.n_heads, "dk": cfg.d_head}, PAGE, fixed)


def qkv_params(ctx: PageContext, fixed: Fixed) -> Task:
    """W_Q: d_model × d_model numbers (all heads side by side), and b_Q when present."""
    cfg = ctx.cfg
    lp = ctx.trace.params.layers[0]
    bias = lp.b_Q.size if cfg.qkv_bias and lp.b_Q is not None else 0
    return Task("qkv.params", "number", (float(lp.W_Q.size + bias),),
                {"d": cfg.d_model, "h": cfg.n_heads, "dk": cfg.d_head, "w": int(lp.W_Q.size),
                 "b": bias}, PAGE, fixed, variant="_bias" if bias else "")


TASKS: tuple[Spec, ...] = (
    Spec("qkv.d_head", "number", qkv_d_head),
    Spec("qkv.params", "number", qkv_params),
)


# --- its sheet of the handout --------------------------------------------------------------------

def sheet(w: Walk) -> Sheet:
    cfg, l, hd, i = w.cfg, w.layer, w.head, w.row
    T, d, dh = cfg.seq_len, cfg.d_model, cfg.d_head
    layer, lp = w.trace.layers[l], w.trace.params.layers[l]
    a, b = hd * dh, (hd + 1) * dh
    xs, bias = x_name(w), lp.b_Q is not None
    formulas = ([r"$\tilde{x} = \mathrm{LN}_1(x)$"] if cfg.norm_first else []) + [
        rf"$Q = {xs} \cdot W_Q,\ K = {xs} \cdot W_K,\ V = {xs} \cdot W_V"
        + (r" \ (+\, b_Q, b_K, b_V)" if bias else "")
        + rf":\quad {dims(T, d)} \cdot {dims(d, d)} = {dims(T, d)}$",
        rf"$Q_{{{hd + 1}}} = {xs} \cdot W_Q[:, {a}\!:\!{b}]:\quad {dims(T, d)} \cdot "
        rf"{dims(d, dh)} = {dims(T, dh)}$"]
    x = layer_input(w, l)
    terms = dot_terms(x[i], lp.W_Q[:, a])
    b0 = float(lp.b_Q[a]) if bias else 0.0
    plus = f" + b_Q[{a}]" if bias else ""
    worked = [w.t("w_where", l=l + 1, hd=hd + 1, i=i),
              f"q[{i}, 0] = x[{i}] · W_Q[:, {a}]{plus} = {written(terms)}"
              + (f" + ({b0:.3f})" if bias else "") + f" = {terms.total + b0:+.4f}",
              w.t("w_stored", v=float(layer.q[hd, i, 0]))]
    q = heatmap(w, layer.q[hd], f"Q_{hd + 1} ({w.t('layer_n', l=l + 1)})", row=i,
                xlabel=w.t("column_of_head"), tokens="rows")
    k = heatmap(w, layer.k[hd], f"K_{hd + 1} ({w.t('layer_n', l=l + 1)})", row=i,
                xlabel=w.t("column_of_head"), tokens="rows")
    return make_sheet(w, formulas, worked, [q, k])
