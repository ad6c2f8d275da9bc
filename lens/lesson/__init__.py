"""Lesson mode: on a step, predict first, then see the live model's answer.

    tasks.py     each step's tasks built from the live trace and judged (no Streamlit); the
                 registry (`lens.steps`) names each step's tuple of them
    progress.py  the learner's records, their binding to a trace and their link codec
    cards.py     the cards a page draws above itself, the header's progress, the summary at
                 the end of The stack

Importing `lens.lesson.tasks` imports no Streamlit: this package's __init__ imports nothing.
"""
