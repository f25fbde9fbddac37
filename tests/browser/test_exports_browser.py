"""In Chromium: the chat's export menu gives both editions in every format (each download opened and
checked), the document is marked final from the chat, and copy puts a step, a table and the whole
document on the clipboard with a visible confirmation."""
from __future__ import annotations

import io

import pytest
from docx import Document as Docx
from openpyxl import load_workbook
from playwright.sync_api import expect

from tests.browser.conftest import login, seeded_server
from tests.site.export_support import MODEL, RECAP_FINDING, STEP_WARNING, docx_text, pdf_pages

TITLE = "Records of processing for the HR department"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with seeded_server(tmp_path_factory, "exports") as (base, ids):
        yield base, ids


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "permissions": ["clipboard-read", "clipboard-write"], "accept_downloads": True}


@pytest.fixture
def run(page, server, csp_errors):
    base, ids = server
    login(page, base, "alice")
    page.goto(f"{base}/w/deliver/c/{ids['conversation']}/")
    article = page.locator(f"#run-{ids['run']}")
    expect(article).to_have_attribute("data-run-status", "completed")
    yield article
    assert csp_errors == []


def download(page, article, edition: str, ext: str):
    menu = article.locator(".export-menu")
    if menu.get_attribute("open") is None:
        menu.locator("summary").click()
    with page.expect_download() as info:
        article.locator(f'[data-export="{edition}-{ext}"]').click()
    return info.value


def text_of(ext: str, body: bytes) -> str:
    if ext == "docx":
        return docx_text(body)
    if ext == "pdf":
        return " ".join(" ".join(pdf_pages(body)).split())
    if ext == "xlsx":
        book = load_workbook(io.BytesIO(body))
        return "\n".join(str(c.value) for sheet in book for row in sheet.iter_rows() for c in row)
    return body.decode().replace("\\", "")


@pytest.mark.parametrize("edition", ["client", "audit"])
def test_the_export_menu_gives_every_format_of_both_editions(page, run, edition):
    expect(run.locator(".export-panel")).to_be_hidden()
    for ext in ("docx", "pdf", "md", "xlsx"):
        got = download(page, run, edition, ext)
        body = open(got.path(), "rb").read()
        text = text_of(ext, body)
        if edition == "client":
            assert got.suggested_filename == f"records-of-processing-for-the-hr-department-v1.{ext}"
        else:
            assert got.suggested_filename.endswith(f"-records-of-processing-for-the-hr-department.{ext}")
        assert TITLE in text and "Payroll" in text and "Draft" in text
        for words in (STEP_WARNING, MODEL, RECAP_FINDING["detail"]):  # the audit edition's, in every format
            assert (words in text) == (edition == "audit"), (ext, words)
    assert body[:2] == b"PK" and load_workbook(io.BytesIO(body)).sheetnames == [
        "Document", "Register of processing", "Assets"]


def test_marking_the_document_final_changes_the_chat_and_the_exports(page, run, server):
    expect(run.locator("[data-document-status]")).to_have_text("Version 1 · Draft")
    run.locator('[data-action="mark-final"]').click()
    expect(page.locator(".page-messages")).to_contain_text("Version 1 is marked final")
    article = page.locator(f"#run-{server[1]['run']}")
    expect(article.locator("[data-document-status]")).to_have_attribute("data-document-status", "final")
    got = download(page, article, "client", "docx")
    footer = Docx(got.path()).sections[0].footer.paragraphs[0].text
    assert footer.startswith("Version 1 · Final · Internal\tPage ")
    article.locator('[data-action="reopen"]').click()
    expect(page.locator(".page-messages")).to_contain_text("Version 1 is a draft again")


def clipboard(page) -> str:
    return page.evaluate("navigator.clipboard.readText()")


def test_copy_puts_a_step_a_table_and_the_document_on_the_clipboard(page, run):
    step = run.locator('[data-step="2"]')
    step.locator('button[data-copy="step"]').click()
    expect(step.locator('button[data-copy="step"]')).to_have_text("Step copied")
    expect(page.locator("#copy-status")).to_have_text("Step copied")
    assert clipboard(page) == "## Part 2\n\nManagers approve the register every *year*.\n"
    expect(step.locator('button[data-copy="step"]')).to_have_text("Copy", timeout=5000)  # back after a while

    table = run.locator('[data-step="1"] button[data-copy="table"]')
    table.click()
    expect(table).to_have_text("Table copied")
    rows = clipboard(page).splitlines()
    assert rows[:3] == ["Activity\tLegal basis\tRetention (years)\tReview date",
                        "Payroll\tArt. 6(1)(b)\t6\t2027-03-14", "Recruitment\tArt. 6(1)(a)\t2\t2026-11-30"]
    assert rows[3] == "'=HYPERLINK(\"http://evil.example\",\"x\")\tConsent\t1\tn/a"  # pasted as text, not a formula
    assert run.locator('[data-step="3"] button[data-copy="table"]').count() == 1

    whole = run.locator('button[data-copy="document"]')
    whole.click()
    expect(whole).to_have_text("Document copied")
    text = clipboard(page)
    assert text.startswith(f"# {TITLE}\n\n**Organisation:** Deliver SAS  \n**Version:** 1  \n")
    assert "## Register of processing" in text and STEP_WARNING not in text and "| A-070 |" in text
