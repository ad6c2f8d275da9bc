"""The walk as a handout: one PDF of the note's steps with the live numbers.

    sheets.py  `Walk` (the trace and the learner's choices), `Sheet` (one step: title,
               takeaway, formulas with the live shapes, the worked entry, pictures, the
               lesson's answers, the note's lines), the helpers every step's sheet uses, and
               the prediction of weights with a head; each step's own sheet is `sheet` in its
               module of `lens.walk`
    book.py    `handout(walk, title)`: each step's sheet (its entry in lens.steps names it)
               framed with its title, answers and note, then the PDF's bytes
    pdf.py     the layout: a title page, then each sheet, on A4 (matplotlib's PDF backend)

`lens.handout_ui` is its sidebar button. This __init__ imports nothing: the registry names the
sheets without loading the PDF's layout (matplotlib's PDF backend, only when a PDF is asked).
"""
