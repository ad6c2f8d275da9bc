"""Wide formulas on narrow screens: every displayed formula (st.latex) wider than its column is
drawn smaller until it fits — down to half its size, below which it scrolls sideways as before.

One `st.components.v2` component (in the page, not an iframe) mounted once per page in the
sidebar: its script watches the page (new formulas after a rerun, a resized window) and sets
the font size of each KaTeX display of the main pane that overflows. It carries no data and no text.
"""

from __future__ import annotations

import streamlit as st

MIN_SCALE = 0.5  # the smallest a formula is drawn, relative to its own size

JS = r"""
export default function (component) {
  const MIN = %(min)s;
  let queued = false;
  function fit() {
    queued = false;
    const main = document.querySelector('[data-testid="stMain"]');  // looked up each time:
    if (!main) return;                                               // it may come later
    for (const box of main.querySelectorAll(".katex-display")) {
      const k = box.querySelector(":scope > .katex");
      if (!k) continue;
      k.style.fontSize = "";  // its own size first
      const need = box.scrollWidth, have = box.clientWidth;
      if (have > 0 && need > have + 1) {
        const px = parseFloat(getComputedStyle(k).fontSize);
        k.style.fontSize = (px * Math.max(MIN, (have - 2) / need)).toFixed(2) + "px";
        k.dataset.fitted = "1";
      } else {
        delete k.dataset.fitted;
      }
    }
  }
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(fit); } };
  // formulas drawn or redrawn anywhere (style changes are attributes: not watched); the
  // explorer's own repaints on hover are left out
  const outside = (r) => {
    const e = r.target.nodeType === 1 ? r.target : r.target.parentElement;
    return !(e && e.closest(".el-root"));
  };
  const mo = new MutationObserver((records) => { if (records.some(outside)) later(); });
  mo.observe(document.body, { childList: true, subtree: true, characterData: true });
  const ro = new ResizeObserver(later);  // the window or the sidebar changed the width
  ro.observe(document.documentElement);
  later();
  return () => { mo.disconnect(); ro.disconnect(); };
}
""" % {"min": MIN_SCALE}

_component = st.components.v2.component(
    "encoder_lens_formula_fit", html='<div data-testid="el-formula-fit"></div>', js=JS)


def fit_formulas() -> None:
    """Mount the formula fitter (once per page run, at the end of the sidebar)."""
    with st.sidebar:
        _component(key="formula_fit")
