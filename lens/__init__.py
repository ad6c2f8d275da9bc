"""The Streamlit side of Encoder Lens: one job a module (see docs/code-map.md for each in full;
tests/test_module_maps.py checks that this map names every module and package of lens/).

A page run, top to bottom:
    entry.py      the installed app's script (app.py at the top of a checkout is its twin)
    router.py     the app's navigation: st.navigation over the registry, under every page run
    runner.py     run_page(): sets a page up as its role sees it, calls its render(ctx), ends it
    roles.py      the role of a run, chosen once: a learner, a class's student, its teacher
    context.py    PageContext (frozen; no Streamlit), Plan: what a page and its sheet receive
    services.py   what a page reaches beyond its trace: the caches, the gate, the models
    steps.py      the registry of pages (pages/<id>.py), by id, in the note's order (pure)
    walk/         per step: its lesson tasks, its formulas, its handout sheet (pure)
    sections/     the page sections several pages draw (PCA, similarity, relevance, …; inside
                  the model: logit_lens.py, logit_shares.py, patching.py, faithfulness.py)
    sidebar.py    the controls; chrome.py: notices, header and footer, the trace export
    widgets.py    a picture, a matrix with its number window, the query picker, selectors
    pictures.py   a page's pictures as data (Picture, Matrix), drawn without Streamlit
    describe.py   what a picture shows, in words and numbers: its text alternative (no Streamlit)
    blocks.py     the worked arithmetic shared by the pages (blocks_rows.py: softmax, layer norm)

The settings and the words:
    settings.py   Settings: every setting, typed; links; the rules; no Streamlit
    session.py    the session's settings and the link kept in sync; keys.py: session keys
    i18n.py       English / 中文 from texts/<lang>/<owner>.toml; note.py the note's text;
                  latex.py numbers for LaTeX; pipeline_words.py the pipeline's captions

What the server keeps and computes, shared by every session:
    resources.py  the bounded caches, the compute gate, the held values, the memory budget
    cache.py      the LRU cache that computes a key once; digests.py keys by content
    compute_gate.py  how many computations run at once; fair_queue.py the line they wait in
    admission.py  the memory budget a run reserves from; page_costs.py what each page derives
    images.py     uploads decoded once, thumbnails; model_weights.py: random, trained, ViTs
    traces.py     the forward passes, a run's cost, the warmed default; serve.py the launcher
    models.py     the ViT checkpoints given on the command line; hub/ the named public ones
    one_image.py  How it learns: one image through the model and back, a run of steps

In the browser:
    explorer.py   the explorer's payload (pure); explorer_component.py the component that
                  shows it (explorer_web/: its HTML, CSS and JavaScript)
    connection_js.py  the page without its server: the app's own notice, back by itself
    layout_js.py  wide formulas fitted, a new page at its top, a tablet's sidebar collapsed
    scroll_js.py  what to read next (a verdict, a result) scrolled into view, once
    figures/      arrays -> PNG pictures (no Streamlit)

Packages with a pure part and a Streamlit part (`ui`):
    lesson/       lesson mode: tasks, progress, the concept check; lesson/ui/ its cards
    classroom/    a live class: its store, rules, tally, results; classroom/ui/ its pages
    handout/      the walk as a PDF: sheets, book, layout; handout/ui.py the sidebar's button
"""
