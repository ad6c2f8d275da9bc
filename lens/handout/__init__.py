"""The walk as a handout: one PDF of the note's steps with the live numbers.

    sheets.py  `Sheet` (one step: title, takeaway, formulas with the live shapes, the worked
               entry, pictures, the lesson's answers, the note's lines), the helpers every
               step's sheet uses (`said`: the handout's words), and the prediction of weights
               with a head; each step's own sheet is `sheet(ctx)` in its module of `lens.walk`
    book.py    `handout(ctx, title, answers=…, labels=…)`: each step's sheet (its entry in
               lens.steps names it), given the page's `PageContext` with the layer, head and
               query the pages show, framed with its title, the learner's answers and its
               note, then the PDF's bytes
    pdf.py     the layout: a title page, then each sheet, on A4 (matplotlib's PDF backend)

`lens.handout.ui` is its sidebar button. This __init__ imports nothing: the registry names the
sheets without loading the PDF's layout (matplotlib's PDF backend, only when a PDF is asked).
"""
