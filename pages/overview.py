"""The whole pipeline at the current settings."""

import streamlit as st

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
from lens.runner import run_page
from lens.sections.prediction import prediction
from lens.session import set_settings
from lens.walk import overview as walk


def pipeline_picture(ctx: PageContext, captions: list[str], stages: list[str]) -> None:
    """The pipeline: wide on a laptop or a tablet, tall on a phone (its text legible on both)."""
    widgets.wide_or_tall(ctx, figures.pipeline, ctx.trace.image, ctx.cfg.patch_size, captions,
                         stages, key="pipeline")


def pipeline_rows(cfg, t, lang: str, ahead: frozenset[str] = frozenset(),
                  ) -> list[tuple[str, str, str, str]]:
    """The pipeline table's cells, a row per step: (step, formula, shapes, parameters), worded
    by `t` (the page's texts) in `lang`. In the lesson a row whose step (or a step before it)
    has a question `ahead` (`lens.lesson.ahead`) shows its step's name alone: the table fills
    in row by row."""
    def row(s) -> tuple[str, str, str, str]:
        if s.id in ahead:
            return (t(f"step_{s.id}"), *(t("row_ahead"),) * 3)
        return (t(f"step_{s.id}"), worded(s.formula, lang), worded(s.shape, lang),
                f"{s.n_params:,}" + (t("per_layer") if s.per_layer and s.n_params else ""))

    return [row(s) for s in pipeline_steps(cfg)]


def render(ctx: PageContext) -> None:
    """Everything below the header, top to bottom (the header and the sidebar are
    drawn by `run_page`)."""
    cfg = ctx.cfg
    N, d = cfg.n_tokens, cfg.d_model
    vit = bool(vit_differences(cfg))  # a real ViT's steps (the note's encoder: none)
    st.markdown(ctx.t("what_to_do"))
    shapes = ctx.knows("multihead")  # the patches', x0's, the output's shapes
    pipeline_picture(ctx, pipeline_captions(ctx.t, cfg, shapes),
                     pipeline_stages(ctx.t, cfg, shapes))
    if vit:
        model = ctx.model
        st.write(ctx.t("vit_intro", name=model.name if model else "ViT", N=N, S=cfg.seq_len))
    else:
        st.write(ctx.t("intro"))
    widgets.note_original(ctx)

    st.subheader(ctx.t("pipeline"))
    columns = [ctx.t(c) for c in ("col_step", "col_formula", "col_shape", "col_params")]
    rows = [dict(zip(columns, row, strict=True))
            for row in pipeline_rows(cfg, ctx.t, ctx.lang, ctx.ahead)]
    st.table(rows, hide_index=True)  # static, every cell wrapped in full (a grid cut long ones)
    if ctx.ahead:
        st.caption(ctx.t("rows_ahead"))
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
        for tex in walk.formulas(cfg, ctx.t("tex_image"), ctx.t("tex_pixels"),
                                 ctx.t("word_patches"), ctx.t("stage_output"), shapes):
            st.latex(tex)  # the handout's sheet shows the same

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

    deviations(ctx, vit)
    chrome.footer(ctx)


def deviations(ctx: PageContext, vit: bool) -> None:
    """Where the app departs from the note, with a switch to the note's variant (in the lesson,
    once Q, K, V's and the scores' questions are done: two of these answer them)."""
    cfg = ctx.cfg
    st.subheader(ctx.t("deviations"))
    if not ctx.knows("scores"):  # they answer qkv.slip and scores.divisor
        st.caption(ctx.t("dev_ahead"))
        return
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


if __name__ == "__main__":  # Streamlit runs a page file as __main__
    run_page(__file__, render)
