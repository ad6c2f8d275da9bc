"""Lesson mode: on a step, predict first, then see the live model's answer.

    tasks.py     what a task is (`Spec`, `Task`, `Fixed`), how an answer is judged, where its
                 words are (`task_texts`) and what the steps' tasks share (no Streamlit); each
                 step's own tasks are in its module of `lens.walk`, named by `lens.steps`
    progress.py  the learner's records, their binding to a trace and their link codec
    cards.py     the cards a step draws above itself: question, answer, reveal
    course.py    the lesson over the walk: the overview's choice, the header's progress, the
                 summary at the end of The stack

Importing `lens.lesson.tasks` imports no Streamlit: this package's __init__ imports nothing.
"""
