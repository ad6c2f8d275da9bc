"""Encoder Lens — walk a Transformer encoder step by step on an image.

Run with `scripts/app` (or `streamlit run app.py`). This entry script is the router: it lists
the pages for Streamlit's own navigation (`st.navigation`: the sidebar's links, sent as one
message), titled in the learner's language and numbered in the note's order, each at its own
URL (/multihead). Every page sets itself up through lens.context.page() — settings, sidebar,
image, trace — so it works however it is reached. A link without a page lands on a hidden
page that forwards to the first step, keeping the link's settings, and starts warming the
default trace once per process for a server started without `python -m lens.serve` (which
`scripts/app` uses and which warms it at start).
"""

import streamlit as st

from lens.chrome import navigation_pages

st.navigation(navigation_pages(), expanded=True).run()
