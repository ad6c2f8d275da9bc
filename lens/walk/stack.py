"""The stack: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/stack.py`, words `lens/texts/<lang>/stack.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, encode, patch_rows

from .. import figures
from ..handout.sheets import MAX_HEADS, Sheet, drawn, make_sheet, said
from ..lesson.tasks import PAGE, Fixed, Question, Spec

if TYPE_CHECKING:
    from ..context import PageContext


REACH = ("no", "less", "equal")


def invert_patch(image: np.ndarray, patch: int, patch_size: int, grid: int) -> np.ndarray:
    """The image with one patch's pixels inverted (v → 1 − v), the rest as it was."""
    out = image.copy()
    r, c = divmod(patch, grid)
    P = patch_size
    out[r * P:(r + 1) * P, c * P:(c + 1) * P] = 1 - out[r * P:(r + 1) * P, c * P:(c + 1) * P]
    return out


def stack_reach(ctx: PageContext, fixed: Fixed) -> Question:
    """After the stack, does patch i's output row depend on a far patch j's pixels? Yes, less
    than on its own (a concept: the same answer for every model that attends): attention
    brings every patch into every row, the residual keeps each row's own first. The reveal
    inverts patch j's pixels, then patch i's, and runs the encoder again."""
    cfg, tr = ctx.cfg, ctx.trace
    G = cfg.grid_size
    i = min(fixed.query, cfg.n_tokens - 1)
    r, c = divmod(i, G)
    j = (0 if 2 * r >= G else G - 1) * G + (0 if 2 * c >= G else G - 1)  # the far corner

    def evidence() -> dict[str, object]:
        def change(k: int) -> float:
            moved = encode(invert_patch(tr.image, k, cfg.patch_size, G), cfg, tr.params)
            return float(np.linalg.norm(moved.output[ctx.row(i)] - tr.output[ctx.row(i)]))

        far, own = ctx.derived(f"lesson/reach/{i}/{j}", lambda: (change(j), change(i)))  # type: ignore[misc]
        return {"far": far, "own": own, "ratio": own / far if far > 0 else float("inf"),
                "norm": float(np.linalg.norm(tr.output[ctx.row(i)]))}

    return Question("less", {"i": i, "r": r, "c": c, "j": j, "jr": j // G, "jc": j % G,
                             "L": cfg.n_layers}, PAGE, Fixed(query=i), evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("reach", "choice", stack_reach, options=REACH),
)


# --- its sheet of the handout --------------------------------------------------------------------

MAX_LAYERS = 6  # layers of the stack's table


def spread(count: int, limit: int) -> list[int]:
    """At most `limit` of `count` indices, spread from the first to the last."""
    if count <= limit:
        return list(range(count))
    return sorted({round(k * (count - 1) / (limit - 1)) for k in range(limit)})


def formulas(cfg: EncoderConfig, final_norm: bool, output: str = "output") -> list[str]:
    """x_l = EncoderLayer_l(x_{l-1}) and the output with its shape, in LaTeX that KaTeX (the
    page's st.latex) and mathtext (the sheet, between $…$) both draw; `final_norm`: a final
    LayerNorm; `output`: its name (the page's words; mathtext cannot draw 中文)."""
    T, d, L = cfg.seq_len, cfg.d_model, cfg.n_layers
    out = rf"\underset{{{T} \times {d}}}{{\text{{{output}}}}}"
    return [r"x_l = \mathrm{EncoderLayer}_l(x_{l-1}), \quad l = 1 \dots %d" % L,
            out + (r" = \mathrm{LN}(x_{%d})" % L if final_norm else r" = x_{%d}" % L)]


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg, tr, i = ctx.cfg, ctx.trace, ctx.row(ctx.query)
    d, L, G = cfg.d_model, cfg.n_layers, cfg.grid_size
    maths = [f"${f}$" for f in formulas(cfg, tr.final_ln is not None)]  # as the page shows them
    if cfg.cls_token:
        maths.append(t("f_cls_row", d=d))
    row = tr.output[i]
    worked = [t("w_output", i=i, first=", ".join(f"{v:+.3f}" for v in row[:4]),
                  norm=float(np.linalg.norm(row)))]
    layers, heads = spread(L, MAX_LAYERS), list(range(min(cfg.n_heads, MAX_HEADS)))
    maps = np.stack([patch_rows(tr.layers[l].attn[heads, i, :], cfg).reshape(len(heads), G, G)
                     for l in layers])  # [layers, heads, G, G]
    table = drawn(
        ctx, figures.attention_table, tr.image, maps, f"attn[h, {i}, :]  ({G} × {G})",
        row_labels=[ctx.t("layer_label", l=l + 1) for l in layers],
        col_labels=[ctx.t("head_title", h=h + 1) for h in heads], query=ctx.query,
        colorbar_label=ctx.t.of("multihead")("weight"))
    return make_sheet(ctx, maths, worked, [table])
