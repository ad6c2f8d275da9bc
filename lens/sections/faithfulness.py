"""Which map is faithful, on The stack and the ViT page for weights with a classification head:
each map of this image — the last layer's attention and the rollout read through the head's
row (`views.relevance.attention_readout`), Chefer et al.'s relevance and the gradient rollout
(`encoder_core.relevance`), and a random order beside them — orders the patches; deleting
them in that order (replaced by the image's mean colour) should make the class's probability
fall fast, inserting them into the all-mean image should make it rise fast
(`encoder_core.views.faithfulness`: Chefer, Gur & Wolf 2021's perturbation test). Shown: the
two sets of curves with their areas, a table, and the faithful map named from the areas.

The pure part (`MAPS`, `faithful`, `curves_picture`) makes the pictures and the verdict from
the curves; the Streamlit part computes them once per trace and class (`ctx.derived`) —
on a button when the page's cost says it takes long (`lens.page_costs.faithfulness`). Its
texts are its own: `lens/texts/<lang>/faithfulness.toml`."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import streamlit as st

from encoder_core import predict, relevance, top_classes
from encoder_core.views.faithfulness import deletion_curve, insertion_curve, relevance_order
from encoder_core.views.relevance import attention_readout

from .. import figures, widgets
from ..context import PageContext
from ..i18n import Texts
from ..page_costs import FAITH_STEPS
from ..page_costs import faithfulness as faithfulness_cost
from ..pictures import Picture
from .prediction import class_names

OWNER = "faithfulness"  # lens/texts/<lang>/faithfulness.toml
MAPS = ("attention", "rollout", "chefer", "gradient_rollout", "random")  # the orders compared
EXPLAINED = MAPS[:-1]  # the maps the verdict chooses among (random is the floor)
RANDOM_SEED = 0  # the random order's generator: the same order on every visit


def map_scores(ctx: PageContext, target: int) -> dict[str, np.ndarray]:
    """Each map's value per patch ([N] each), cached per trace (and class for relevance)."""
    tr = ctx.trace
    last, rolled = ctx.derived("relevance/readout", lambda: attention_readout(tr))  # [N] each
    N = ctx.cfg.n_tokens
    return {"attention": last, "rollout": rolled,
            **{m: ctx.derived(f"relevance/{m}/{target}",
                              lambda m=m: relevance(tr, tr.params, target, m))
               for m in ("chefer", "gradient_rollout")},
            "random": np.random.default_rng(RANDOM_SEED).random(N)}


def faithful(deletion: Mapping[str, float], insertion: Mapping[str, float]) -> tuple[str, str]:
    """The most faithful map by each test: the smallest deletion area (the probability falls
    first), the largest insertion area (it rises first), among `EXPLAINED`."""
    return (min(EXPLAINED, key=lambda m: deletion[m]),
            max(EXPLAINED, key=lambda m: insertion[m]))


def curves_picture(t: Texts, kind: str, curves: Mapping[str, object], name: str,
                   key: str) -> Picture:
    """One test's curves (`kind` "deletion" or "insertion"), one per map, its area in the
    legend: probability of the class against the share of patches deleted / inserted."""
    x = np.asarray(curves[MAPS[0]].fractions, np.float64)
    return Picture(key, figures.lines,
                   (x, [np.asarray(curves[m].probs, np.float64) for m in MAPS],
                    [t("faith_legend", map=t(f"faith_map_{m}"), a=float(curves[m].area))
                     for m in MAPS],
                    t(f"faith_{kind}_title", name=name), t(f"faith_{kind}_axis"),
                    t("faith_prob_axis")),
                   dict(size=(4.6, 4.8), legend_below=True))  # reads at 10 px on a phone


def faithfulness_section(ctx: PageContext,
                         heading: Callable[[str], object] = st.header) -> None:
    """Under a `heading` of the page's size: the text, the two pictures of curves, the table of
    areas and the verdict."""
    t = Texts(ctx.lang, OWNER)
    cfg, tr = ctx.cfg, ctx.trace
    params = tr.params
    heading(t("faith_title"))
    st.write(t("faith_text", N=cfg.n_tokens, steps=FAITH_STEPS))
    names = class_names(ctx)
    logits = ctx.derived("prediction/logits", lambda: predict(tr, params))  # [n_classes]
    target = int(top_classes(logits, 1)[0][0])
    seconds = faithfulness_cost(cfg).seconds
    if not widgets.run_asked(f"{ctx.id}_faith", target, seconds, t("faith_run", s=seconds),
                             t("faith_wait", s=seconds)):
        return
    scores = map_scores(ctx, target)
    curves = ctx.derived(  # one entry for the ten curves: the derived cache counts entries
        f"inside/curves/{target}/{FAITH_STEPS}",
        lambda: {kind: {m: run(tr.image, cfg, params, relevance_order(scores[m]), target,
                               FAITH_STEPS) for m in MAPS}
                 for kind, run in (("deletion", deletion_curve),
                                   ("insertion", insertion_curve))})
    left, right = st.columns(2)
    for kind, where in (("deletion", left), ("insertion", right)):
        widgets.show(ctx, curves_picture(t, kind, curves[kind], names[target],
                                         f"faith_{kind}_{ctx.id}"),
                     where=where, shows=f"faith_{kind}_{target}")
    areas = {kind: {m: float(c.area) for m, c in curves[kind].items()} for kind in curves}
    st.table([{t("faith_col_map"): t(f"faith_map_{m}"),
               t("faith_col_deletion"): f"{areas['deletion'][m]:.3f}",
               t("faith_col_insertion"): f"{areas['insertion'][m]:.3f}"} for m in MAPS],
             hide_index=True)
    by_del, by_ins = faithful(areas["deletion"], areas["insertion"])
    verdict = (t("faith_verdict_one", map=t(f"faith_map_{by_del}"), name=names[target])
               if by_del == by_ins else
               t("faith_verdict_two", d=t(f"faith_map_{by_del}"), i=t(f"faith_map_{by_ins}"),
                 name=names[target]))
    beaten = areas["deletion"][by_del] >= areas["deletion"]["random"]
    st.success(verdict + (" " + t("faith_no_better") if beaten else ""))
    st.caption(t("faith_caption"))
