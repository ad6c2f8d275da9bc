"""Overview: its lesson tasks (`TASKS`, in the order asked) and its handout sheet
(`sheet`); page `pages/overview.py`, words `lens/texts/<lang>/overview.toml`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from encoder_core import EncoderConfig, prefix_names
from encoder_core.views.analysis import channel_values, parameter_count, pipeline_steps
from encoder_core.views.vit_steps import vit_differences

from .. import figures
from ..handout.sheets import Sheet, drawn, make_sheet, said
from ..i18n import Texts, worded
from ..lesson.tasks import PAGE, Fixed, Question, Spec
from ..pipeline_words import pipeline_captions, pipeline_stages

if TYPE_CHECKING:
    from ..context import PageContext


def prefix_variant(cfg: EncoderConfig) -> str:
    return "_vit" if cfg.n_prefix else ""


def overview_tokens(ctx: PageContext, fixed: Fixed) -> Question:
    """How many tokens the encoder reads: (S/P)² patches (and a ViT's prefix tokens)."""
    cfg = ctx.cfg
    mistakes: list[tuple[str, object]] = [("side", (float(cfg.grid_size),)),
                                          ("pixels", (float(cfg.patch_size ** 2),))]
    if cfg.n_prefix:
        mistakes.append(("prefix", (float(cfg.n_tokens),)))  # the patches, no [CLS]
    else:
        mistakes.append(("cls", (float(cfg.n_tokens + 1),)))  # a ViT's [CLS] added
    return Question((float(ctx.trace.x0.shape[0]),),
                    {"S": cfg.image_size, "P": cfg.patch_size, "G": cfg.grid_size,
                     "N": cfg.n_tokens, "T": cfg.seq_len, "k": cfg.n_prefix,
                     "PP": cfg.patch_size ** 2},
                    PAGE, fixed, variant=prefix_variant(cfg), mistakes=tuple(mistakes))


OUTPUTS = ("class", "one_vector", "per_token")


def own_parts(rows: np.ndarray) -> np.ndarray:
    """[N, d] each row minus the mean of all rows: what a token has of its own (on random
    weights the output's rows share a large common part, cosine ~0.98 between any two)."""
    rows = rows.astype(np.float64)
    return rows - rows.mean(axis=0)


def cosines(rows: np.ndarray, i: int) -> np.ndarray:
    """[N] the cosine of row i with every row (0 for a zero row)."""
    rows = rows.astype(np.float64)
    norms = np.linalg.norm(rows, axis=1) * np.linalg.norm(rows[i])
    return np.divide(rows @ rows[i], norms, out=np.zeros(len(rows)), where=norms > 0)


def overview_output(ctx: PageContext, fixed: Fixed) -> Question:
    """What the encoder gives back: one vector per token — not one for the image, not a class
    (a concept: the same answer for every model); the reveal measures how different two of
    the output's rows are."""
    cfg, tr = ctx.cfg, ctx.trace
    i = min(fixed.query, cfg.n_tokens - 1)
    own = own_parts(tr.output[cfg.n_prefix:])  # [N, d] each patch's row minus the mean row
    j = int(np.argmin(cosines(own, i)))  # the patch whose own part is least like i's

    def evidence() -> dict[str, object]:
        out = tr.output[cfg.n_prefix:].astype(np.float64)
        return {"T": cfg.seq_len, "d": cfg.d_model, "L": cfg.n_layers,
                "cos": float(cosines(own, i)[j]),  # the own parts': < 0.9, whatever the weights
                "cos_rows": float(cosines(out, i)[j]),  # the whole rows' (random weights: ~1)
                "gap": float(np.abs(out[i] - out[j]).max())}

    return Question("per_token", {"i": i, "j": j, "L": cfg.n_layers}, PAGE, Fixed(query=i),
                    evidence=evidence)


TASKS: tuple[Spec, ...] = (
    Spec("tokens", "number", overview_tokens),
    Spec("output", "choice", overview_output, options=OUTPUTS),
)


# --- its sheet of the handout --------------------------------------------------------------------

def formulas(cfg: EncoderConfig, image: str = "image", pixels: str = "pixels",
             patches: str = "patches", output: str = "output", shapes: bool = True,
             ) -> list[str]:
    """The pipeline in LaTeX that KaTeX (the page's st.latex) and mathtext (the sheet, between
    $…$) both draw: the image into patches, then the note's encoder or, for a ViT, the steps in
    the order it runs them. `image`, `pixels`, `patches`, `output`: the words (the page's,
    translated; mathtext cannot draw 中文). Without `shapes` (a lesson whose questions ask for
    them) the patches' and the output's shapes are named, not counted."""
    rows, width = ((str(cfg.n_tokens), str(cfg.patch_dim)) if shapes
                   else ("N", r"P \cdot P \cdot C"))
    tex = [r"\text{%s}\;[%d \times %d \times %d] \rightarrow \text{%s}\;[%s \times %s]"
           % (image, cfg.image_size, cfg.image_size, cfg.channels, patches, rows, width)]
    if not vit_differences(cfg):  # the note's encoder
        tex.append(r"x_0 = \text{%s}\cdot W_E + PE" % patches)
        tex.append(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{MultiHead}(x))")
        if cfg.use_ffn:
            tex.append(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{FFN}(x))")
        tex.append(r"\text{%s}\;[%s \times %s]" % (output, rows, cfg.d_model if shapes
                                                      else r"d_{\mathrm{model}}"))
        return tex
    if cfg.normalises_pixels:
        tex.append(r"\text{%s} = (\text{%s} - \text{pixel\_mean}) \,/\, \text{pixel\_std}"
                   % (pixels, image))
    embed = r"\text{%s}\cdot W_E" % patches + (" + b_E" if cfg.patch_bias else "")
    pos = ((r" + E_{pos}" if cfg.position == "learned" else " + PE") if cfg.use_pe else "")
    names = r",\ ".join(rf"x_{{\text{{{n}}}}}" for n in prefix_names(cfg))
    tex.append(rf"x_0 = [\,{names};\ {embed}\,]{pos}" if cfg.n_prefix else rf"x_0 = {embed}{pos}")
    ls = (r"\mathrm{ls}_1 \odot ", r"\mathrm{ls}_2 \odot ") if cfg.layer_scale else ("", "")
    tex.append(rf"x \leftarrow x + {ls[0]}\mathrm{{MultiHead}}(\mathrm{{LN}}_1(x))")
    if cfg.use_ffn:
        tex.append(rf"x \leftarrow x + {ls[1]}\mathrm{{FFN}}(\mathrm{{LN}}_2(x))")
    out = (r"\text{%s} = \mathrm{LN}(x)" if cfg.final_norm else r"\text{%s} = x") % output
    seq, d = (str(cfg.seq_len), str(cfg.d_model)) if shapes else ("T", r"d_{\mathrm{model}}")
    tex.append(r"%s\;[%s \times %s]" % (out, seq, d))
    if cfg.cls_token:
        tex.append(r"\text{%s}[\text{CLS}]\;[1 \times %s]" % (output, d))
    return tex


def sheet(ctx: PageContext) -> Sheet:
    t = said(ctx)
    cfg = ctx.cfg
    d, L = cfg.d_model, cfg.n_layers
    o = Texts(ctx.lang, "overview")
    shapes = ctx.knows("multihead")  # as the page: the lesson's answers named
    pipeline = drawn(ctx, figures.pipeline, ctx.trace.image, cfg.patch_size,
                     pipeline_captions(o, cfg, shapes), pipeline_stages(o, cfg, shapes))
    maths = [f"${f}$" for f in formulas(cfg, shapes=shapes)]  # as the page shows them
    for s in pipeline_steps(cfg):  # the table's rows that are open (the page's, row by row)
        if ctx.knows(s.id):
            maths.append(f"{o('step_' + s.id)}:  {worded(s.shape, ctx.lang)}")
    worked = [t("w_parameters", n=parameter_count(cfg), L=L)]
    lines = [o("diff_" + name, mean=channel_values(cfg.pixel_mean),
               std=channel_values(cfg.pixel_std), S=cfg.seq_len,
               R=cfg.n_registers, n=cfg.n_pos, d=d, eps=cfg.ln_eps)
             for name in vit_differences(cfg)]
    # the page shows the whole note; here each step has its own part: the note's title only
    return make_sheet(ctx, maths, worked, [pipeline], lines, note_head=2)
