"""Lesson mode's Streamlit part: what a learner sees of the lesson (the package's other modules
import no Streamlit).

    cards.py     the cards a step draws above itself: question, answer, reveal
    check.py     the concept check before and after the lesson (its questions: `concepts.py`)
    course.py    the lesson over the walk: the overview's choice, the header's progress, the
                 summary at the end of The stack
"""
