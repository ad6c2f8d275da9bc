"""The Streamlit side of Encoder Lens: one job a module (see README.md, "What is where").

    settings.py   Settings: every setting, typed; links; the rules; no Streamlit
    session.py    the session's settings and the link kept in sync; keys.py: session keys
    context.py    PageContext, Where, Plan: what a page and its sections receive (no frame)
    runner.py     run_page(): sets a page up and calls its render(ctx) with its PageContext
    resources.py  what the server keeps for all sessions: bounded caches, compute gate, budget
    images.py     uploads decoded once, thumbnails; model_weights.py: random, trained, ViTs
    traces.py     the forward passes shared by every session, a run's cost, the warmed default
    sidebar.py    the controls; chrome.py: the navigation's pages, notices, header, export
    steps.py      the registry of pages (pages/<id>.py), by id, in the note's order
    widgets.py    a picture, a matrix with its number window, the query picker, selectors
    explorer.py   the picture that picks the query; with maps, they follow the pointer in the
                  browser (explorer_web/: its HTML, CSS and JavaScript); its similarity mode
                  (similarity_view.py: every patch's cosine with the pointed one)
    layout_js.py  in the browser: wide formulas fitted, a new page at its top, a tablet's
                  sidebar collapsed (layout_web/layout.js)
    blocks.py     the worked arithmetic shared by the pages (blocks_rows.py: softmax, layer norm)
    meaning.py    the attention pages' trained-model button and training-step slider
    figures/      arrays -> PNG pictures (no Streamlit; heatmaps, images raster; charts matplotlib)
    i18n.py       English / 中文 from texts/<lang>/<owner>.toml; note.py the note's text;
                  latex.py numbers for LaTeX
"""
