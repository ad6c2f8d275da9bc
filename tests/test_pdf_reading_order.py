"""The PDFs' text in the order it is read (issue 52, WCAG 1.3.2): neither PDF is tagged, so a
reader that follows the file (pdftotext -raw, a screen reader reading the print stream) gets
its text in the order it was drawn. The class's summary reads its title and day, then each
table's header and each row as one line — a question's title, then its shares and moves —
in the table's order, the note under the check's table, and the page's foot last; the
handout's pages end with their foot too. (pdftotext's default mode infers columns from the
layout and reads the class's tables column by column: docs/accessibility.md.)"""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest

from lens.classroom.summary import summary_pdf
from lens.handout.book import sheets_for
from lens.i18n import Texts
from lens.lesson.ahead import closed
from lens.steps import STEPS
from tests.test_class_summary import ASKED, T0, expected_lines, scripted_class, store  # noqa: F401
from tests.test_handout import default_handout
from tests.test_handout_descriptions import pdf_of

pytestmark = pytest.mark.slow  # poppler reads back what matplotlib wrote


def raw_lines(pdf: bytes, tmp_path) -> list[list[str]]:
    """Each page's lines in the file's order (pdftotext -raw), runs of spaces made one."""
    path = tmp_path / "out.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdftotext", "-raw", str(path), "-"], capture_output=True, text=True,
                         check=True).stdout
    return [[" ".join(line.split()) for line in page.splitlines() if line.strip()]
            for page in out.split("\f")[:-1]]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_class_summary_reads_row_by_row_in_the_tables_order(store, tmp_path, lang):  # noqa: F811
    code, key, _ = scripted_class(store)
    pdf = summary_pdf(code, store.result_rows(code, key), ASKED, store.check_answers(code, key),
                      lang, T0)
    [lines] = raw_lines(pdf, tmp_path)
    t = Texts(lang, "class")
    assert lines[0] == t("summary_title", code=code)
    assert lines[1].startswith("2027-01-15")
    assert lines[-1] == f"Encoder Lens · {code} · 2027-01-15 · 1"  # the foot, last
    rows = expected_lines(lang)  # the questions' rows, then the check's, each as one line
    at = [lines.index(row) for row in rows]
    assert at == sorted(at), (rows, lines)
    assert lines.index(t("summary_questions")) < at[0]
    check = lines.index(t("check_title"))
    assert at[2] < check < at[3]  # the check's heading between the two tables
    assert lines[at[-1] + 1].startswith(t("check_students_both", n=3)[:12])  # its note, next


def test_each_page_of_the_handout_ends_with_its_foot(tmp_path):
    ctx = default_handout("en").ctx
    lesson = replace(ctx, ahead=closed(STEPS[2:]))  # the overview and the patches: 3 pages
    pages = raw_lines(pdf_of(lesson, sheets_for(lesson)), tmp_path)
    assert len(pages) == 3
    for n, page in enumerate(pages, start=1):
        assert page[-1] == f"Encoder Lens · test · {n}", page[-3:]
        assert sum("Encoder Lens · test" in line for line in page) == 1
