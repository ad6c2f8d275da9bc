"""Encoder Lens — walk a Transformer encoder step by step on an image.

Run with `scripts/app` (or `streamlit run app.py`). Each step of the note is a page in pages/
(Streamlit's multipage folder, so every step has its own URL, e.g. /multihead). Every page sets
itself up through lens.context.page() — settings, sidebar, image, trace, navigation — so it
works however it is reached; this entry script only forwards to the first step, keeping the
URL's settings. It also starts warming the default trace once per process, for a server started
without `python -m lens.serve` (which `scripts/app` uses and which warms it at start).
"""

import streamlit as st

from lens.compute import warming
from lens.steps import STEPS

warming()

st.switch_page(STEPS[0].path, query_params=st.query_params.to_dict())
