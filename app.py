"""Encoder Lens — walk a Transformer encoder step by step on an image.

Run with `scripts/app` (or `streamlit run app.py`). This entry script only sets up the page
and the navigation; each step is a page in pages/, and every page sets up its own controls
through lens.state.page(), so it works however it is started.
"""

import streamlit as st

from lens.state import STEPS, current_lang

st.set_page_config(page_title="Encoder Lens", page_icon="🔍", layout="wide")
lang = current_lang()
pages = [st.Page(path, title=zh if lang == "zh" else en, url_path=step, default=(i == 0))
         for i, (step, path, en, zh) in enumerate(STEPS)]
st.navigation(pages).run()
