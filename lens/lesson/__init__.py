"""Lesson mode: on a step, predict first, then see the live model's answer.

    tasks.py     what a task is (`Spec`, `Task`, `Fixed`) and how an answer is judged
    questions.py each step's tasks, built from the live trace (no Streamlit); the registry
                 (`lens.steps`) names each step's tuple of them
    progress.py  the learner's records, their binding to a trace and their link codec
    cards.py     the cards a step draws above itself: question, answer, reveal
    course.py    the lesson over the walk: the overview's choice, the header's progress, the
                 summary at the end of The stack

Importing `lens.lesson.tasks` or `.questions` imports no Streamlit: this package's __init__
imports nothing.
"""
