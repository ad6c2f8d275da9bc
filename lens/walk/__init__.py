"""The note's steps, one module each: what a step asks in lesson mode and what it prints in the
handout — `lens/walk/<id>.py` holds its tasks (`TASKS`: a tuple of `lens.lesson.tasks.Spec`,
each built from the live trace) and its handout sheet (`sheet(ctx) -> Sheet`, given the
context its page receives: `lens.context.PageContext`), beside its page `pages/<id>.py` and its
words `lens/texts/<lang>/<id>.toml`. Its entry in `lens.steps` names them all.

No module here imports Streamlit (tests/test_app_layering.py): the tasks and sheets are data
and numbers, built and tested without a running app. What several steps share is in
`lens.lesson.tasks` (`shape_task`, `mistake`, …) and `lens.handout.sheets` (`said`,
`heatmap`, `make_sheet`, …). This __init__ imports nothing.
"""
