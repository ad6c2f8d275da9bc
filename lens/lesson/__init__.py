"""Lesson mode: on a step, predict first, then see the live model's answer.

The package's own modules are its pure part (no Streamlit: tested without a running app); its
Streamlit part, what a learner sees, is the subpackage `ui`.

    tasks.py     what a task is (`Spec`, `Task`, `Fixed`), how an answer is judged, where its
                 words are (`task_texts`) and what the steps' tasks share; each step's own
                 tasks are in its module of `lens.walk`, named by `lens.steps`
    progress.py  the learner's records, their binding to a trace and their link codec
    concepts.py  the concept check's six questions, before and after the lesson, and the gain
    ahead.py     the steps with a question still ahead: what other places keep closed
    ui/          cards.py (a step's cards: question, answer, reveal), check.py (the concept
                 check taken alone), course.py (the lesson over the walk)

This package's __init__ imports nothing.
"""
