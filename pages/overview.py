"""The whole pipeline at the current settings."""

import streamlit as st

from encoder_core import prefix_names
from encoder_core.views.analysis import (
    channel_values,
    parameter_count,
    pipeline_steps,
    score_divisor,
)
from encoder_core.views.vit_steps import pixel_stats_guess, vit_differences
from lens import chrome, figures, widgets
from lens.context import PageContext
from lens.i18n import worded
from lens.pipeline_words import pipeline_captions, pipeline_stages
from lens.prediction import prediction
from lens.runner import run_page
from lens.session import set_settings


def vit_formulas(cfg, image: str, pixels: str, patches: str, output: str) -> list[str]:
    """The pipeline in LaTeX, in the order a ViT runs it (`image`, `pixels`, `patches`,
    `output`: the words, translated)."""
    tex = []
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
    tex.append(r"%s\;[%d \times %d]" % (out, cfg.seq_len, cfg.d_model))
    if cfg.cls_token:
        tex.append(r"\text{%s}[\text{CLS}]\;[1 \times %d]" % (output, cfg.d_model))
    return tex


def pipeline_picture(ctx: PageContext, captions: list[str], stages: list[str]) -> None:
    """The pipeline: wide on a laptop or a tablet, tall on a phone (its text legible on both)."""
    widgets.wide_or_tall(ctx, figures.pipeline, ctx.trace.image, ctx.cfg.patch_size, captions,
                         stages, key="pipeline")


def pipeline_rows(cfg, t, lang: str) -> list[tuple[str, str, str, str]]:
    """The pipeline table's cells, a row per step: (step, formula, shapes, parameters), worded
    by `t` (the page's texts) in `lang`."""
    return [(t(f"step_{s.id}"), worded(s.formula, lang), worded(s.shape, lang),
             f"{s.n_params:,}" + (t("per_layer") if s.per_layer and s.n_params else ""))
            for s in pipeline_steps(cfg)]


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg = ctx.cfg
    N, d = cfg.n_tokens, cfg.d_model
    vit = bool(vit_differences(cfg))  # a real ViT's steps (the note's encoder: none)
    st.markdown(ctx.t("what_to_do"))
    pipeline_picture(ctx, pipeline_captions(ctx.t, cfg), pipeline_stages(ctx.t, cfg))
    if vit:
        model = ctx.model
        st.write(ctx.t("vit_intro", name=model.name if model else "ViT", N=N, S=cfg.seq_len))
    else:
        st.write(ctx.t("intro"))
    widgets.note_original(ctx)

    st.subheader(ctx.t("pipeline"))
    columns = [ctx.t(c) for c in ("col_step", "col_formula", "col_shape", "col_params")]
    rows = [dict(zip(columns, row, strict=True)) for row in pipeline_rows(cfg, ctx.t, ctx.lang)]
    st.table(rows, hide_index=True)  # static, every cell wrapped in full (a grid cut long ones)
    st.caption(ctx.t("total", n=parameter_count(cfg), L=cfg.n_layers))

    st.subheader(ctx.t("images"))
    left, right = st.columns([3, 2])
    with left:
        widgets.picture(ctx, figures.image_pair, ctx.original, ctx.trace.image,
                        (ctx.t("original"), ctx.t("received")), key="images",
                        axis_labels=(ctx.t("pixels_x"), ctx.t("pixels_y")))
        colour = ctx.t("grey_luma") if cfg.channels == 1 else ctx.t("rgb_kept")
        st.caption(ctx.t("images_caption", S=cfg.image_size, colour=colour))
    with right:
        st.latex(r"\text{%s}\;[%d \times %d \times %d] \rightarrow \text{%s}\;[%d \times %d]"
                 % (ctx.t("tex_image"), cfg.image_size, cfg.image_size, cfg.channels,
                    ctx.t("word_patches"), cfg.n_tokens, cfg.patch_dim))
        if vit:
            for tex in vit_formulas(cfg, ctx.t("tex_image"), ctx.t("tex_pixels"),
                                    ctx.t("word_patches"), ctx.t("stage_output")):
                st.latex(tex)
        else:
            st.latex(r"x_0 = \text{%s}\cdot W_E + PE" % ctx.t("word_patches"))
            st.latex(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{MultiHead}(x))")
            if cfg.use_ffn:
                st.latex(r"x \leftarrow \mathrm{LayerNorm}(x + \mathrm{FFN}(x))")
            st.latex(r"\text{%s}\;[%d \times %d]" % (ctx.t("stage_output"), cfg.n_tokens,
                                                        cfg.d_model))

    if ctx.trace.params.head is not None:  # a checkpoint's head, the shapes model's
        prediction(ctx, heading=st.subheader)

    if vit:
        st.subheader(ctx.t("vit_diffs"))
        values = dict(mean=channel_values(cfg.pixel_mean), std=channel_values(cfg.pixel_std),
                      S=cfg.seq_len, R=cfg.n_registers, n=cfg.n_pos, d=d, eps=cfg.ln_eps)
        lines = [ctx.t("diff_" + name, **values) for name in vit_differences(cfg)]
        why = pixel_stats_guess(ctx.model.info if ctx.model else None)
        if why and lines and vit_differences(cfg)[0] == "pixels":
            lines[0] += " " + ctx.t("stats_inferred", why=why)
        st.markdown("\n".join(f"- {line}" for line in lines))

    st.subheader(ctx.t("deviations"))
    divisor = ctx.t(f"word_divisor_{cfg.scale}", **score_divisor(cfg))
    c1, c2 = st.columns(2)
    with c1:
        st.markdown(ctx.t("dev_scale", now=divisor))
        note_scale = cfg.scale == "d_model"
        st.button(ctx.t("use_paper") if note_scale else ctx.t("use_note"), key="dev_scale_btn",
                  on_click=set_settings, kwargs={"scale": "d_k" if note_scale else "d_model"})
    with c2:
        st.markdown(ctx.t("dev_ffn", now=ctx.t("on") if cfg.use_ffn else ctx.t("off")))
        if not vit:  # a checkpoint fixes its architecture, FFN included
            st.button(ctx.t("use_note") if cfg.use_ffn else ctx.t("use_paper"), key="dev_ffn_btn",
                      on_click=set_settings, kwargs={"use_ffn": not cfg.use_ffn})
    st.markdown(ctx.t("dev_wq"))
    if not vit:
        st.markdown(ctx.t("dev_cls"))

    chrome.footer(ctx)


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
