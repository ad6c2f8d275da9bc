"""A live class: the teacher asks, every student predicts, the class sees its answers
beside the model's.

The package's own modules are its pure part (no Streamlit: tested without a running app); its
Streamlit part, the class page's parts and a student's and the teacher's cards, is the
subpackage `ui`.

    store.py          the state every server process of a class shares (SQLite by default,
                      PostgreSQL for several machines): what a page may do with it
    check_store.py    the concept check's part of the store; results_store.py: the results'
    database.py       its tables and the engine, one SQLAlchemy Core code path
    rules.py          what a class allows: join codes, nicknames, an answer's `Rule`, refusals
    asking.py         the lesson's tasks as a class asks them
    tally.py          one task's answers counted for the teacher
    results.py        the results as CSV; summary.py: the class on one PDF page
    room.py           what the projector and the teacher's remote read (token, counts, countdown)
    ui/               member, join, teacher, student, view, concept_check, projector, remote
"""
