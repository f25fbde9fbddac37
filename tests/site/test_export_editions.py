"""The two editions of a deliverable: the client's is the document alone, the audit's the same with
Beyond's account of the run; and the page furniture both carry (paper, header, footer)."""
from __future__ import annotations

import io
import re

import pytest
from django.urls import reverse
from docx import Document as Docx
from pypdf import PdfReader

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.exports.formats import FORMATS
from beyond_site.workspaces.export_settings import set_export_settings
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.site.chat_support import client_for, new_run, record, released, workspace_with
from tests.site.export_support import (MODEL, RECAP, RECAP_FINDING, RUN_WARNING, STEP_WARNING, TASK, docx_text,
                                       pdf_pages, rich_run)

pytestmark = pytest.mark.django_db(transaction=True)

TITLE = "Records of processing for the HR department"
#: What only the audit edition says: the account of the run, in any format.
AUDIT_ONLY = [STEP_WARNING, RUN_WARNING, RECAP_FINDING["detail"], RECAP, MODEL, "openrouter", "Verification",
              "This section addresses GDPR Art. 30.", "Recap of the run", "Prepared with", TASK[:60]]
#: Words a client must never meet, whatever the case.
PIPELINE_WORDS = ["verification", "verifier", "badge", "re-render", "rerender", MODEL, "warning", "recap",
                  "invented_citation", "step_contract"]


@pytest.fixture
def run(alice):
    return rich_run(workspace_with(member=alice), alice)


def text_of(ext: str, body: bytes) -> str:
    if ext == "docx":
        return docx_text(body)
    if ext == "pdf":
        return "\n".join(pdf_pages(body))
    return body.decode().replace("\\", "")  # Markdown's escapes aside


def squashed(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("ext", ["docx", "pdf", "md"])
def test_the_client_edition_is_the_document_alone(run, ext):
    text = text_of(ext, FORMATS[ext].render(run, "client"))
    for said in AUDIT_ONLY:
        assert squashed(said) not in squashed(text), said
    for word in PIPELINE_WORDS:
        assert word not in text.lower(), word
    # The title page's facts, the body, and the approved citations as references.
    for fact in ("Organisation", "Acme", "Version", "Status", "Draft", "Classification", "Internal",
                 "Payroll", "Managers approve the register every", "A-070", "References", "Records of processing activities"):
        assert fact in text, fact


@pytest.mark.parametrize("ext", ["docx", "pdf", "md"])
def test_the_audit_edition_has_everything_the_client_edition_leaves_out(run, ext):
    text = squashed(text_of(ext, FORMATS[ext].render(run, "audit")))
    for said in AUDIT_ONLY:
        assert squashed(said) in text, said
    assert "Appendix: approved citations" in text and "Payroll" in text and "A-070" in text


def test_the_client_docx_has_no_comments_and_the_audit_docx_comments_the_warned_section(run):
    client = Docx(io.BytesIO(FORMATS["docx"].render(run, "client")))
    assert list(client.comments) == []
    audit = Docx(io.BytesIO(FORMATS["docx"].render(run, "audit")))
    assert [(c.author, c.text) for c in audit.comments] == [("Beyond verification", f"Warning: {STEP_WARNING}")]


def test_the_title_is_short_and_the_task_is_on_the_audit_title_page_only(run):
    client = Docx(io.BytesIO(FORMATS["docx"].render(run, "client")))
    assert [(p.style.name, p.text) for p in client.paragraphs[:6]] == [
        ("Title", TITLE), ("Normal", "Organisation: Acme"), ("Normal", "Version: 1"),
        ("Normal", f"Date: {run.finished_at.date().isoformat()}"), ("Normal", "Status: Draft"),
        ("Normal", "Classification: Internal")]
    audit = Docx(io.BytesIO(FORMATS["docx"].render(run, "audit")))
    assert [p.text for p in audit.paragraphs[:2]] == [TITLE, f"Task: {TASK}"]
    assert client.core_properties.title == TITLE and client.core_properties.content_status == "Draft"


def section_size(body: bytes) -> tuple[float, float]:
    """The page in centimetres, to the millimetre (Word stores twentieths of a point)."""
    section = Docx(io.BytesIO(body)).sections[0]
    return round(section.page_width.cm, 2), round(section.page_height.cm, 2)


def pdf_size(body: bytes) -> set[tuple[int, int]]:
    return {(round(float(p.mediabox.width)), round(float(p.mediabox.height))) for p in PdfReader(io.BytesIO(body)).pages}


def test_pages_are_a4_unless_the_workspace_says_letter(run):
    for edition in ("client", "audit"):
        assert section_size(FORMATS["docx"].render(run, edition)) == (21.0, 29.7)
        assert pdf_size(FORMATS["pdf"].render(run, edition)) == {(595, 842)}
    set_export_settings(run.workspace, paper="letter")
    run.refresh_from_db()
    assert section_size(FORMATS["docx"].render(run, "client")) == (21.59, 27.94)
    assert pdf_size(FORMATS["pdf"].render(run, "client")) == {(612, 792)}


def test_every_docx_page_has_the_title_in_its_header_and_page_fields_in_its_footer(run):
    doc = Docx(io.BytesIO(FORMATS["docx"].render(run, "client")))
    assert len(doc.sections) == 1  # one section: its header and footer are on every page
    section = doc.sections[0]
    assert not section.different_first_page_header_footer
    assert section.header.paragraphs[0].text == TITLE
    footer = section.footer.paragraphs[0]
    assert footer.text.startswith("Version 1 · Draft · Internal\tPage ")
    fields = re.findall(r'<w:fldSimple w:instr=" (\w+) ">', footer._p.xml)
    assert fields == ["PAGE", "NUMPAGES"]
    assert squashed(re.sub(r"<[^>]+>", "", footer._p.xml)).endswith("Page 1 of 1")  # until Word counts


def test_every_pdf_page_has_the_header_and_the_footer_with_page_n_of_m(run):
    pages = pdf_pages(FORMATS["pdf"].render(run, "audit"))
    assert len(pages) >= 3  # the long table runs over a page
    for n, text in enumerate(pages, start=1):
        lines = text.splitlines()
        assert lines[0] == TITLE
        assert lines[-1] == f"Version 1 · Draft · Internal Page {n} of {len(pages)}"


def test_the_classification_and_organisation_come_from_the_workspace(run):
    set_export_settings(run.workspace, classification="Confidential", organisation="Acme Health SAS")
    run.refresh_from_db()
    doc = Docx(io.BytesIO(FORMATS["docx"].render(run, "client")))
    assert doc.sections[0].footer.paragraphs[0].text.startswith("Version 1 · Draft · Confidential\t")
    assert "Organisation: Acme Health SAS" in [p.text for p in doc.paragraphs]
    set_export_settings(run.workspace, classification="")
    run.refresh_from_db()
    text = FORMATS["md"].render(run, "client").decode()
    assert "Classification" not in text


def test_the_download_links_give_either_edition_and_refuse_an_unknown_one(run, alice):
    client = client_for(alice)
    base = f"/w/{run.workspace.slug}/runs/{run.pk}"
    clean = client.get(f"{base}/export.pdf?edition=client")
    assert clean.status_code == 200 and clean["Content-Type"] == "application/pdf"
    assert clean["Content-Disposition"] == 'attachment; filename="records-of-processing-for-the-hr-department-v1.pdf"'
    assert clean.content == FORMATS["pdf"].render(run, "client")
    audit = client.get(f"{base}/export.pdf")
    assert audit["Content-Disposition"] == f'attachment; filename="beyond-run-{run.pk}-records-of-processing-for-the-hr-department.pdf"'
    assert client.get(f"{base}/export.docx?edition=both").status_code == 400


def test_the_audit_run_page_offers_both_editions_in_every_format(run, bob):
    Membership.objects.create(user=bob, workspace=run.workspace, role=Membership.AUDITOR)
    page = client_for(bob).get(reverse("audit:run", args=[run.workspace.slug, run.pk])).content.decode()
    assert "Version 1 of its conversation's document · Draft" in page
    for edition in ("client", "audit"):
        for ext in ("docx", "pdf", "md", "xlsx"):
            assert f'/runs/{run.pk}/export.{ext}?edition={edition}"' in page
    assert client_for(bob).get(f"/w/{run.workspace.slug}/runs/{run.pk}/export.xlsx?edition=audit").status_code == 200


def test_a_section_not_released_is_named_in_plain_words_in_the_client_edition(alice):
    run = new_run(workspace_with(member=alice), alice, task="Access note")
    record(run, Event(ev.BriefReady(brief=scripting.brief(2))), released(1, "Managers approve."),
           Event(ev.StepHalted(step=2, reason="the verifier gave no parseable verdict")),
           Event(ev.RunHalted(step=2, reason="step 2: the verifier gave no parseable verdict")))
    client = FORMATS["md"].render(run, "client").decode()
    assert "## Part 2\n\n*This section is not included in this version of the document.*" in client
    assert "verifier" not in client and "halt" not in client
    audit = FORMATS["md"].render(run, "audit").decode()
    assert "*This section was not released: it could not be inspected (the verifier gave no parseable verdict).*" in audit
