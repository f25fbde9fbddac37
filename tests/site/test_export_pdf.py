"""The PDF export: a valid file laid out like the DOCX, whose extracted text reads as the document."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from pypdf import PdfReader

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports.formats import FORMATS
from tests import scripting
from tests.site.chat_support import new_run, record, released, workspace_with
from tests.site.export_support import ROWS, STEP_WARNING, pdf_pages, rich_run

pytestmark = pytest.mark.django_db(transaction=True)

TITLE = "Records of processing for the HR department"


@pytest.fixture
def run(alice):
    return rich_run(workspace_with(member=alice), alice)


def body_lines(pages: list[str]) -> list[str]:
    """The pages' text without each page's header (first line) and footer (last line)."""
    return [line for text in pages for line in text.splitlines()[1:-1]]


def body_text(pages: list[str]) -> str:
    """The pages' text as one line (a wrapped line is one space)."""
    return " ".join(body_lines(pages))


def in_order(text: str, pieces: list[str]) -> bool:
    at = 0
    for piece in pieces:
        found = text.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def test_it_is_a_valid_pdf_with_the_documents_properties(run):
    body = FORMATS["pdf"].render(run, "client")
    assert body.startswith(b"%PDF-") and body.rstrip().endswith(b"%%EOF")
    reader = PdfReader(io.BytesIO(body))
    assert reader.metadata.title == TITLE and reader.metadata.author == "Beyond"
    fonts = {f["/BaseFont"] for page in reader.pages for f in page["/Resources"]["/Font"].values()}
    assert fonts and all("DejaVuSans" in name for name in fonts)  # embedded, not a Latin-1 core font


def test_the_text_reads_in_order_every_step_and_every_table_cell(run):
    text = body_text(pdf_pages(FORMATS["pdf"].render(run, "client")))
    assert in_order(text, [TITLE, "Organisation: Acme", "Version: 1", "Status: Draft", "Classification: Internal",
                           "Register of processing", "The register covers “every” processing activity — as agreed",
                           "Activity", "Legal basis", "Retention (years)", "Payroll", "Art. 6(1)(b)", "6", "2027-03-14",
                           "Recruitment", "Art. 6(1)(a)", "2", "2026-11-30", "Consent", "n/a",
                           "Part 2", "Managers approve the register every year.", "Assets", "ID", "Asset", "Owner",
                           *(f"A-{n:03d} Laptop {n} IT team {n % 4}" for n in range(1, ROWS + 1)),
                           "References", "GDPR", "Art. 30", "Records of processing activities"])
    # The client's references are those the document cites; the audit edition lists every approved one.
    assert "A.5.34" not in text and "A.5.34" in body_text(pdf_pages(FORMATS["pdf"].render(run, "audit")))
    # Curly quotes, dashes and names in other scripts are set in the shipped font, not dropped.
    assert "Zoë Łukasiewicz and" in text and "Дмитрий Соколов." in text


def test_a_long_table_repeats_its_header_row_on_every_page_it_runs_over(run):
    pages = pdf_pages(FORMATS["pdf"].render(run, "client"))
    with_rows = [n for n, text in enumerate(pages) if "A-0" in text]
    assert len(with_rows) >= 2
    for n in with_rows[1:]:  # a continuation page opens with the header row, under the page header
        assert pages[n].splitlines()[1] == "ID Asset Owner"


def test_the_audit_editions_notes_stand_under_their_sections_heading(run):
    text = body_text(pdf_pages(FORMATS["pdf"].render(run, "audit")))
    assert in_order(text, ["Verification", "Register of processing", "Part 2",
                           f"Note 1: Warning: {STEP_WARNING}", "Managers approve the register"])


def test_lists_code_links_and_an_unbroken_line_are_laid_out(alice):
    run = new_run(workspace_with(member=alice), alice, task="Access note")
    content = ("## Access\n\n1. First *item*\n2. Second with a [link](https://example.org/a)\n   - nested point\n\n"
               "```\nchmod 600 key.pem\n```\n\n> Quoted text.\n\nEvidence: " + "x" * 400 + "\n")
    record(run, Event(ev.BriefReady(brief=scripting.brief(1))), released(1, content), Event(ev.RunCompleted()))
    body = FORMATS["pdf"].render(run, "client")
    text = body_text(pdf_pages(body))
    assert in_order(text, ["Access", "1.", "First item", "2.", "Second with a link", "•", "nested point",
                           "chmod 600 key.pem", "Quoted text.", "Evidence:"])
    assert "".join(body_lines(pdf_pages(body))).count("x" * 400) == 1  # wrapped across lines, not lost
    links = [a.get_object()["/A"]["/URI"] for page in PdfReader(io.BytesIO(body)).pages
             for a in page.get("/Annots", [])]
    assert links == ["https://example.org/a"]


def test_the_command_writes_a_pdf(run, tmp_path):
    out = tmp_path / "ropa.pdf"
    call_command("beyond_export", str(run.pk), "--format", "pdf", "--edition", "client", "--out", str(out),
                 stderr=io.StringIO())
    assert out.read_bytes() == FORMATS["pdf"].render(run, "client")
