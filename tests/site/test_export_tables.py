"""Every table prints (docs/deliverables.md, "Tables that print"): tables of 2 to 12 columns, long
cells and many rows, in both editions of every format; the PDF's pages rendered to images with
nothing drawn outside the page's text area, and no header word broken across lines."""
from __future__ import annotations

import io
import re

import pypdfium2
import pytest
from docx import Document as Docx
from pypdf import PdfReader

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports.formats import FORMATS
from beyond_site.exports.pdf import MARGIN
from tests import scripting
from tests.site.chat_support import new_run, record, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)

HEADERS = ["Identifier", "Implementation status", "Applicability", "Responsible department", "Likelihood",
           "Consequence", "Residual risk rating", "Treatment decision", "Next review date", "Supplier",
           "Contractual safeguards", "Verification evidence"]
WORDS = "the register records a supplier's contractual safeguards and the evidence checked at each review".split()


def table(columns: int, rows: int) -> str:
    header = HEADERS[:columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * columns]
    for n in range(1, rows + 1):
        cells = [f"R-{n:03d}"] + [" ".join(WORDS[(n + c) % 7:(n + c) % 7 + 2 + (c * n) % 9]) for c in range(1, columns)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_with(alice, columns: int, rows: int):
    run = new_run(workspace_with(member=alice), alice, task=f"A register of {columns} columns")
    brief = scripting.brief(2)
    brief["title"] = f"Register of {columns} columns"
    record(run, Event(ev.BriefReady(brief=brief)),
           Event(ev.StepReleased(step=1, title="Register", badge="passed", checked_by="model",
                                 content="## Register\n\nOne row per entry.\n\n" + table(columns, rows))),
           Event(ev.StepReleased(step=2, title="Review", badge="passed", checked_by="model",
                                 content="The register is reviewed every year.")),
           Event(ev.RunCompleted()))
    return run


def drawn_outside_text_area(body: bytes) -> list[str]:
    """Pages (and where) with anything drawn left or right of the text area, or below the footer."""
    found = []
    for n, page in enumerate(pypdfium2.PdfDocument(body), 1):
        w, h = page.get_size()
        scale = 1.0
        image = page.render(scale=scale).to_pil().convert("L")
        pixels = image.load()
        left, right = int((MARGIN - 3) * scale), int((w - MARGIN + 3) * scale)
        for y in range(image.height):
            if any(pixels[x, y] < 200 for x in range(0, left)) or any(pixels[x, y] < 200 for x in range(right, image.width)):
                found.append(f"page {n}, line {y}")
                break
    return found


@pytest.mark.parametrize("columns", [2, 7, 12])
def test_the_pdf_draws_nothing_outside_the_text_area_and_breaks_no_header_word(alice, columns):
    run = run_with(alice, columns, 120)
    for edition in ("client", "audit"):
        body = FORMATS["pdf"].render(run, edition)
        assert drawn_outside_text_area(body) == []
        text = "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(body)).pages)
        tokens = set(re.findall(r"[A-Za-z]+", text))
        for word in " ".join(HEADERS[:columns]).split():
            assert word in tokens, f"the header word {word!r} is broken in {edition}"
        assert "R-120" in text


@pytest.mark.parametrize("columns", [2, 7, 12])
def test_every_format_of_both_editions_exports(alice, columns):
    run = run_with(alice, columns, 110)
    for ext in ("docx", "pdf", "md", "xlsx"):
        for edition in ("client", "audit"):
            assert FORMATS[ext].render(run, edition)


def test_a_wide_docx_table_is_on_a_landscape_section_with_widths_that_keep_header_words_whole(alice):
    doc = Docx(io.BytesIO(FORMATS["docx"].render(run_with(alice, 12, 20), "client")))
    orientations = [s.orientation for s in doc.sections]
    assert 1 in orientations  # WD_ORIENT.LANDSCAPE
    [register] = [t for t in doc.tables if len(t.columns) == 12]
    widths = [cell.width for cell in register.rows[0].cells]
    assert all(w and w > 0 for w in widths)
    landscape = next(s for s in doc.sections if s.orientation == 1)
    assert sum(widths) <= landscape.page_width - landscape.left_margin - landscape.right_margin


def test_an_export_that_cannot_be_written_says_why_and_the_other_formats_still_work(alice, client, monkeypatch):
    from django.urls import reverse

    from beyond_site.exports import pdf

    run = run_with(alice, 3, 5)
    client.force_login(alice)

    def broken(deliverable, target):
        raise MemoryError("a page too large")

    monkeypatch.setattr(pdf, "write", broken)
    monkeypatch.setitem(FORMATS, "pdf", FORMATS["pdf"].__class__(
        FORMATS["pdf"].content_type, lambda run, edition="audit", options=None: broken(None, None), FORMATS["pdf"].label))
    failed = client.get(reverse("exports:pdf", args=["acme", run.pk]), {"edition": "audit"})
    assert failed.status_code == 422 and b"could not be written" in failed.content and b"MemoryError" in failed.content
    assert b"export.docx" in failed.content
    assert client.get(reverse("exports:docx", args=["acme", run.pk]), {"edition": "audit"}).status_code == 200


REGISTER = """## Statement of applicability

| Control | Applicable | Status | Last review | Score |
|---|---|---|---|---|
""" + "\n".join(f"| ISO/IEC 27001:2022 A.5.{n} (Control number {n}) | {'Yes' if n % 3 else 'No'} | "
                f"{('Implemented', 'Planned', 'Not started')[n % 3]} | 2026-0{1 + n % 9}-1{n % 9} | {n * 2} |"
                for n in range(1, 13))


def test_a_register_is_a_workbook_with_ids_apart_typed_cells_a_filter_and_lists(alice):
    import datetime as dt

    from openpyxl import load_workbook

    run = new_run(workspace_with(member=alice), alice, task="Statement of applicability")
    record(run, Event(ev.BriefReady(brief=scripting.brief(1))),
           Event(ev.StepReleased(step=1, title="SoA", badge="passed", checked_by="model", content=REGISTER)),
           Event(ev.RunCompleted()))
    book = load_workbook(io.BytesIO(FORMATS["xlsx"].render(run, "client")))
    sheet = book["Statement of applicability"]
    assert [c.value for c in sheet[1]] == ["Control", "Control name", "Applicable", "Status", "Last review", "Score"]
    assert sheet["A2"].value == "ISO/IEC 27001:2022 A.5.1" and sheet["B2"].value == "Control number 1"
    assert sheet["C2"].value is True and sheet["C4"].value is False
    assert isinstance(sheet["E2"].value, dt.datetime) and sheet["F2"].value == 2
    assert sheet.auto_filter.ref == "A1:F13" and sheet.freeze_panes == "A2"
    lists = {str(v.sqref): v.formula1 for v in sheet.data_validations.dataValidation}
    assert lists["D2:D13"] == '"Implemented,Not started,Planned"'
    assert lists["C2:C13"] is not None
