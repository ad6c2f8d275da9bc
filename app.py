"""Encoder Lens — walk a Transformer encoder step by step on an image.

Run with `scripts/app` (or `streamlit run app.py`). This entry script is the router: it lists
the pages of `lens.steps` (the registry; their modules are in pages/) for Streamlit's own
navigation (`st.navigation`: the sidebar's links, sent as one message), titled in the learner's
language and numbered in the note's order, each at its own URL (/multihead). Every page sets
itself up through lens.context.run_page() — settings, sidebar, image, trace — so it works
however it is reached; one run without this script hands over to it. A link without a page lands
on a hidden page that forwards to the first step, keeping the link's settings, and starts
warming the default trace once per process for a server started without `python -m lens.serve`
(which `scripts/app` uses and which warms it at start)."""

import streamlit as st

from lens import keys
from lens.chrome import navigation_pages

st.session_state[keys.ENTRY] = True  # the page's run_page() checks it: run through the router
st.navigation(navigation_pages(), expanded=True).run()
