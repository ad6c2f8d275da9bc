"""The Streamlit side of Encoder Lens: shared state and controls, figures, texts.

    state.py    the settings, the image and the cached trace every page reads (one place)
    cache.py    a small bounded LRU cache shared by all sessions of one server
    figures.py  arrays -> PNG pictures (matplotlib, no Streamlit)
    widgets.py  page building blocks: a heatmap with its caption, a matrix window, a query picker
    i18n.py     English / 中文
"""
