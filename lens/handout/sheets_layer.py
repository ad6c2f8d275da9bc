"""The handout's sheets of one encoder layer and of the stack (steps 5–10), and the model's
prediction when its weights have a classification head. Each reads the layer, head and query
the learner chose (`Walk`); a pre-norm ViT's sheets say its order (x̃ = LN₁(x) first)."""

from __future__ import annotations

import numpy as np

from encoder_core import patch_rows, predict, top_classes
from encoder_core.views.analysis import head_contributions, score_divisor
from encoder_core.views.explain import (
    dot_terms,
    hidden_unit_terms,
    layer_norm_terms,
    logit_terms,
    softmax_terms,
)

from .. import figures
from .sheets import Sheet, Walk, dims, heatmap, sheet, written

MAX_HEADS = 8  # maps of a grid, as the pages show at most
MAX_LAYERS = 6  # layers of the stack's table
TOP_K = 5  # classes of the prediction


def layer_input(w: Walk, l: int) -> np.ndarray:
    """[T, d] what layer l's projections read: its input x, or LN₁(x) in pre-norm order."""
    tr = w.trace
    if w.cfg.norm_first:
        return tr.layers[l].ln_1.out
    return tr.x0 if l == 0 else tr.layers[l - 1].out


def x_name(w: Walk) -> str:
    return r"\tilde{x}" if w.cfg.norm_first else "x"


# --- 5 · Q, K, V ------------------------------------------------------------------------------

def qkv(w: Walk) -> Sheet:
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
    return sheet(w, formulas, worked, [q, k])


# --- 6 · scores and softmax -------------------------------------------------------------------

def scores(w: Walk) -> Sheet:
    cfg, l, hd, i = w.cfg, w.layer, w.head, w.row
    T, dk = cfg.seq_len, cfg.d_head
    layer, s = w.trace.layers[l], cfg.score_scale
    j = int(np.argmax(layer.attn[hd, i]))
    n = score_divisor(cfg)["n"]
    divisor = rf"\sqrt{{{n}}}" if cfg.scale != "none" else "1"
    formulas = [rf"$\mathrm{{scores}}_h = Q_h \cdot K_h^\top / {divisor}:\quad {dims(T, dk)} "
                rf"\cdot {dims(dk, T)} = {dims(T, T)}$",
                rf"$\mathrm{{attn}}_h[i, j] = \exp(\mathrm{{scores}}_h[i, j])\ /\ \sum_k "
                rf"\exp(\mathrm{{scores}}_h[i, k]):\quad {dims(T, T)},\ \sum_j "
                rf"\mathrm{{attn}}_h[i, j] = 1$",
                w.t("f_divisor", s=s)]
    dot = dot_terms(layer.q[hd, i], layer.k[hd, j], divisor=s)
    soft = softmax_terms(layer.scores[hd, i])
    worked = [w.t("w_where", l=l + 1, hd=hd + 1, i=i),
              f"scores[{i}, {j}] = q_{i} · k_{j} / {s:.4g} = ({written(dot)}) / {s:.4g}"
              f" = {dot.result:+.4f}",
              f"attn[{i}, {j}] = e^({soft.shifted[j]:.4f}) / Σ_k e^(s_{i}k − max) = "
              f"{soft.exp[j]:.4f} / {soft.total:.4f} = {soft.p[j]:.4f}",
              w.t("w_stored_pair", a=float(layer.scores[hd, i, j]),
                  b=float(layer.attn[hd, i, j])),
              w.t("w_largest", j=j)]
    common = dict(xlabel=w.t("keys"), ylabel=w.page("scores", "queries"), row=i, col=j,
                  tokens="both")
    return sheet(w, formulas, worked, [
        heatmap(w, layer.scores[hd], w.page("scores", "scores_name", l=l + 1, hd=hd + 1),
                label=w.page("scores", "score"), **common),
        heatmap(w, layer.attn[hd], w.page("scores", "attn_name", l=l + 1, hd=hd + 1),
                signed=False, label=w.page("scores", "weight"), **common)])


# --- 7 · multi-head attention -----------------------------------------------------------------

def multihead(w: Walk) -> Sheet:
    cfg, tr, l, i = w.cfg, w.trace, w.layer, w.row
    T, d, h, dk, G = cfg.seq_len, cfg.d_model, cfg.n_heads, cfg.d_head, cfg.grid_size
    layer, lp = tr.layers[l], tr.params.layers[l]
    bias = " + b_O" if lp.b_O is not None else ""
    formulas = [rf"$\mathrm{{head}}_h = \mathrm{{softmax}}(Q_h K_h^\top / s)\, V_h:\quad "
                rf"{dims(T, T)} \cdot {dims(T, dk)} = {dims(T, dk)}$",
                rf"$\mathrm{{concat}} = [\mathrm{{head}}_1, \ldots, \mathrm{{head}}_{{{h}}}]:"
                rf"\quad {h} \times {dims(T, dk)} \rightarrow {dims(T, d)}$",
                rf"$\mathrm{{attn\_out}} = \mathrm{{concat}} \cdot W_O{bias}:\quad {dims(T, d)}"
                rf" \cdot {dims(d, d)} = {dims(T, d)}$"]
    # what each head adds: head_h[i] · W_O[rows of h, 0], as the multi-head page sums them
    parts = [float(p) for p in head_contributions(layer.heads[:, i:i + 1], lp.W_O)[:, 0, 0]]
    b0 = float(lp.b_O[0]) if lp.b_O is not None else 0.0
    shown = " + ".join(f"({p:+.3f})" for p in parts[:MAX_HEADS]) + (" + …" if h > MAX_HEADS
                                                                      else "")
    worked = [w.t("w_heads_sum", i=i, l=l + 1, h=h),
              f"attn_out[{i}, 0] = Σ_h head_h[{i}] · W_O[rows of h, 0]{bias and ' + b_O[0]'}"
              f" = {shown}" + (f" + ({b0:+.3f})" if bias else "")
              + f" = {sum(parts) + b0:+.4f}",
              w.t("w_stored", v=float(layer.attn_out[i, 0]))]
    k = min(h, MAX_HEADS)
    maps = patch_rows(layer.attn[:k, i, :], cfg).reshape(k, G, G)
    title = w.page("multihead", "grid_title" if h <= MAX_HEADS else "grid_title_first", h=h,
                   k=k, i=w.query, l=l + 1)
    grid = figures.attention_grid(tr.image, maps, [w.page("multihead", "head_n", n=n + 1)
                                                   for n in range(k)], title,
                                  ncols=min(k, 4), query=w.query,
                                  colorbar_label=w.page("multihead", "weight"))
    return sheet(w, formulas, worked, [grid])


# --- 8 · Add & Norm ---------------------------------------------------------------------------

def addnorm(w: Walk) -> Sheet:
    cfg, tr, l, i = w.cfg, w.trace, w.layer, w.row
    T, d = cfg.seq_len, cfg.d_model
    layer, lp = tr.layers[l], tr.params.layers[l]
    x = tr.x0 if l == 0 else tr.layers[l - 1].out
    normed_in = x if cfg.norm_first else layer.resid_1  # [T, d] what LN_1 normalises
    formulas = [r"$\mathrm{LN}(x) = \gamma \odot (x - \mu)\,/\,\sqrt{\sigma^2 + \varepsilon}"
                rf" + \beta,\quad \gamma, \beta: [{d}],\ \varepsilon = {cfg.ln_eps:g}$"]
    if cfg.norm_first:
        formulas += [rf"$\tilde{{x}} = \mathrm{{LN}}_1(x):\ {dims(T, d)},\quad \mathrm{{resid\_1}}"
                     rf" = x + \mathrm{{attn\_out}}(\tilde{{x}}):\ {dims(T, d)}$"]
    else:
        formulas += [rf"$\mathrm{{resid\_1}} = x + \mathrm{{attn\_out}}:\ {dims(T, d)} + "
                     rf"{dims(T, d)},\quad \mathrm{{ln\_1}} = \mathrm{{LN}}_1(\mathrm{{resid\_1}})"
                     rf":\ {dims(T, d)}$"]
    ln = layer_norm_terms(normed_in[i], lp.gamma_1, lp.beta_1, cfg.ln_eps)
    what = "x" if cfg.norm_first else "resid_1"
    worked = [w.t("w_row", i=i, l=l + 1, what=what),
              f"μ = Σ_k {what}[{i}, k] / {d} = {ln.mean:+.4f},   "
              f"σ² = Σ_k ({what}[{i}, k] − μ)² / {d} = {ln.var:.4f}",
              f"x̂[0] = ({ln.x[0]:+.4f} − {ln.mean:+.4f}) / √({ln.var:.4f} + {cfg.ln_eps:g}) = "
              f"{ln.normed[0]:+.4f},   out[0] = γ[0]·x̂[0] + β[0] = {float(lp.gamma_1[0]):.4f}"
              f" · {ln.normed[0]:+.4f} + {float(lp.beta_1[0]):+.4f} = {ln.out[0]:+.4f}",
              w.t("w_stored", v=float(layer.ln_1.out[i, 0])),
              w.t("w_moments_after", m=float(layer.ln_1.normed[i].mean()),
                  v=float(layer.ln_1.normed[i].var()))]
    moments = figures.bars([layer.ln_1.mean, layer.ln_1.var],
                           [f"μ ({what})", f"σ² ({what})"], w.t("tokens"), ["μ", "σ²"],
                           w.t("moments_title", what=what, l=l + 1), highlight=i)
    out = heatmap(w, layer.ln_1.out, "ln_1.out", row=i, tokens="rows")
    return sheet(w, formulas, worked, [moments, out])


# --- 9 · the feed-forward network -------------------------------------------------------------

ACTIVATION = {"relu": r"\mathrm{ReLU}", "gelu": r"\mathrm{GELU}", "gelu_tanh": r"\mathrm{GELU}"}


def ffn(w: Walk) -> Sheet:
    cfg, tr, l, i = w.cfg, w.trace, w.layer, w.row
    T, d, dff = cfg.seq_len, cfg.d_model, cfg.d_ff
    layer, lp = tr.layers[l], tr.params.layers[l]
    if not cfg.use_ffn or layer.ffn_hidden is None:
        return sheet(w, [], [w.t("w_ffn_off")], [])
    act = ACTIVATION[cfg.activation]
    x = layer.ln_2.out if cfg.norm_first else layer.ln_1.out  # [T, d] the FFN's input
    src = "ln_2.out" if cfg.norm_first else "ln_1.out"
    formulas = [rf"$\mathrm{{FFN}}(x) = {act}(x W_1 + b_1)\, W_2 + b_2$"
                + (r",  $\mathrm{ReLU}(z) = \max(0, z)$" if cfg.activation == "relu" else ""),
                rf"${dims(T, d)} \cdot {dims(d, dff)} \rightarrow {dims(T, dff)} \rightarrow "
                rf"{dims(T, dff)} \cdot {dims(dff, d)} = {dims(T, d)}$",
                (rf"$\mathrm{{resid\_2}} = \mathrm{{resid\_1}} + \mathrm{{FFN}}"
                 rf"(\mathrm{{LN}}_2(\mathrm{{resid\_1}})):\ {dims(T, d)}$") if cfg.norm_first else
                (rf"$\mathrm{{ln\_2}} = \mathrm{{LN}}_2(\mathrm{{ln\_1}} + \mathrm{{FFN}}"
                 rf"(\mathrm{{ln\_1}})):\ {dims(T, d)}$")]
    j = int(np.argmax(layer.ffn_hidden[i]))
    unit = hidden_unit_terms(x[i], lp.W_1, lp.b_1, j, cfg.activation)
    name = "ReLU" if cfg.activation == "relu" else "GELU"
    worked = [w.t("w_unit", i=i, j=j, l=l + 1),
              f"ffn_hidden[{i}, {j}] = {name}({src}[{i}] · W_1[:, {j}] + b_1[{j}]) = "
              f"{name}({written(unit.dot)} + ({unit.bias:+.3f})) = {name}({unit.pre:+.4f}) = "
              f"{unit.hidden:+.4f}",
              w.t("w_stored", v=float(layer.ffn_hidden[i, j]))]
    return sheet(w, formulas, worked, [
        heatmap(w, layer.ffn_hidden, f"ffn_hidden ({w.t('layer_n', l=l + 1)})", row=i,
                xlabel=w.page("ffn", "hidden_unit"), signed=cfg.activation != "relu",
                tokens="rows"),
        heatmap(w, layer.ffn_out, f"ffn_out ({w.t('layer_n', l=l + 1)})", row=i,
                tokens="rows")])


# --- 10 · the stack ---------------------------------------------------------------------------

def spread(count: int, limit: int) -> list[int]:
    """At most `limit` of `count` indices, spread from the first to the last."""
    if count <= limit:
        return list(range(count))
    return sorted({round(k * (count - 1) / (limit - 1)) for k in range(limit)})


def stack(w: Walk) -> Sheet:
    cfg, tr, i = w.cfg, w.trace, w.row
    T, d, L, G = cfg.seq_len, cfg.d_model, cfg.n_layers, cfg.grid_size
    out = r"\mathrm{LN}(x_{%d})" % L if tr.final_ln is not None else "x_{%d}" % L
    formulas = [rf"$x_l = \mathrm{{EncoderLayer}}_l(x_{{l-1}}),\quad l = 1, \ldots, {L}$",
                rf"$\mathrm{{output}} = {out}:\quad {dims(T, d)}$"]
    if cfg.cls_token:
        formulas.append(w.t("f_cls_row", d=d))
    row = tr.output[i]
    worked = [w.t("w_output", i=i, first=", ".join(f"{v:+.3f}" for v in row[:4]),
                  norm=float(np.linalg.norm(row)))]
    layers, heads = spread(L, MAX_LAYERS), list(range(min(cfg.n_heads, MAX_HEADS)))
    maps = np.stack([patch_rows(tr.layers[l].attn[heads, i, :], cfg).reshape(len(heads), G, G)
                     for l in layers])  # [layers, heads, G, G]
    table = figures.attention_table(
        tr.image, maps, f"attn[h, {i}, :]  ({G} × {G})",
        row_labels=[w.page("stack", "layer_label", l=l + 1) for l in layers],
        col_labels=[w.page("stack", "head_title", h=h + 1) for h in heads], query=w.query,
        colorbar_label=w.page("multihead", "weight"))
    return sheet(w, formulas, worked, [table])


# --- the prediction (weights with a classification head) --------------------------------------

def prediction(w: Walk) -> Sheet | None:
    """The top classes and the top logit written out; None without a head."""
    tr, params = w.trace, w.trace.params
    if params.head is None:
        return None
    logits = predict(tr, params)  # [n_classes]
    classes, probs = top_classes(logits, min(TOP_K, params.head.n_classes))
    names = list(w.labels) or [f"class {c}" for c in range(params.head.n_classes)]
    top = logit_terms(tr, params, int(classes[0]))
    lines = [f"{k + 1}. {names[c]}   {100 * p:.2f} %   (logit {logits[c]:+.4f})"
             for k, (c, p) in enumerate(zip(classes, probs, strict=True))]
    formulas = [rf"$\mathrm{{logit}}_c = \mathrm{{pooled}} \cdot W_{{head}}[:, c] + b_c:\quad "
                rf"{dims(1, params.head.W_head.shape[0])} \cdot "
                rf"{dims(params.head.W_head.shape[0], params.head.n_classes)}$",
                r"$p = \mathrm{softmax}(\mathrm{logits})$"]
    dot = top.rows[0]
    worked = [w.t("w_logit", c=names[int(classes[0])]),
              f"logit = {written(dot)} + ({top.biases[0]:+.3f}) = {dot.total + top.biases[0]:+.4f}",
              w.t("w_stored", v=top.logit)]
    return Sheet(step="prediction", title=w.t("prediction_title"),
                 takeaway=w.t("prediction_takeaway"), formulas=tuple(formulas),
                 worked=tuple(worked), pictures=(), lines=tuple(lines))

