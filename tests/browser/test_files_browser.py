"""The file library and the composer's attachments in Chromium: add (workspace-wide and to a
conversation), preview, download, remove; an auditor only reads; an attachment removed before
sending."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login, open_page
from tests.browser.test_chat_browser import BOX, shot

NOTE = b"# Supplier list\n\nMoorside Payroll Services handles payroll. LIBRARY-MARKER-77"
CSV = b"Supplier,Service,Owner\nMoorside Payroll,Payroll,Finance\nTrackLine,Tracking,Operations\n"


def upload(page, name: str, data: bytes, mime: str = "text/plain"):
    page.set_input_files("#files-input", files=[{"name": name, "mimeType": mime, "buffer": data}])


def row(page, name: str):
    return page.locator("tr[data-file]", has_text=name)


@pytest.mark.parametrize("width,height,label", [(1280, 860, "desktop"), (390, 844, "phone")])
def test_a_member_adds_previews_downloads_and_removes_files(page, server, width, height, label):
    base, _ = server
    page.set_viewport_size({"width": width, "height": height})
    login(page, base, "alice")
    page.goto(f"{base}/w/team/")
    open_page(page, "Files")
    expect(page).to_have_url(f"{base}/w/team/files/")
    expect(page.locator(".topbar .brand")).to_be_visible()  # the top bar says where you are, phone too
    expect(page.locator(".topbar-workspace")).to_contain_text("Team Ltd: files")
    expect(page.locator(".topbar-workspace")).to_be_visible()
    expect(row(page, "access-policy.md")).to_contain_text("carol")
    # Workspace-wide
    name = f"suppliers-{label}.md"
    upload(page, name, NOTE)
    page.select_option("#files-target", "workspace")
    page.click(".files-add-form button[type=submit]")
    expect(page.locator(".page-messages")).to_contain_text(f"Added to the whole workspace: {name}.")
    added = row(page, name)
    expect(added).to_have_attribute("data-scope", "workspace")
    expect(added).to_contain_text("Markdown")
    shot(page, f"files-{label}-library")
    # Preview: the extracted text, as the models read it
    added.locator("a", has_text=name).click()
    expect(page.locator("#file-text")).to_contain_text("LIBRARY-MARKER-77")
    # Download: the original bytes
    with page.expect_download() as download:
        page.click("a:has-text('Download the original')")
    assert open(download.value.path(), "rb").read() == NOTE
    page.go_back()
    # Removal asks first, then the row goes
    asked = []
    page.once("dialog", lambda dialog: (asked.append(dialog.message), dialog.accept()))
    row(page, name).locator("button.danger").click()
    expect(row(page, name)).to_have_count(0)
    assert asked and asked[0].startswith(f"Remove {name}?")
    page.reload()
    expect(row(page, name)).to_have_count(0)
    expect(row(page, "access-policy.md")).to_have_count(1)


def test_a_file_added_to_a_conversation_from_the_library_is_listed_in_its_composer(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/team/")
    page.fill(BOX, "Draft the supplier register")
    page.press(BOX, "Enter")
    expect(page.locator("[data-run-status]")).to_have_attribute("data-run-status", "completed", timeout=20_000)
    page.reload()  # now on the conversation's own page, whose Files link names it
    open_page(page, "Files")
    upload(page, "suppliers.csv", CSV, "text/csv")
    assert page.locator("#files-target option:checked").inner_text().startswith("The conversation")
    page.click(".files-add-form button[type=submit]")
    expect(row(page, "suppliers.csv")).to_have_attribute("data-scope", "conversation")
    row(page, "suppliers.csv").locator("td[data-label=For] a").click()
    expect(page.locator("#uploads .file-chip", has_text="suppliers.csv")).to_be_visible()


def test_a_refused_file_is_explained_by_the_form(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/team/files/")
    upload(page, "scan.pdf", b"\x89PNG\r\n\x1a\n" + bytes(200), "application/pdf")
    page.click(".files-add-form button[type=submit]")
    expect(page.locator("#files-refused")).to_contain_text("scan.pdf: This file is not a PDF: it looks like a PNG image.")
    expect(row(page, "scan.pdf")).to_have_count(0)


def test_an_auditor_reads_and_downloads_but_changes_nothing(page, server):
    base, _ = server
    login(page, base, "dave")
    page.goto(f"{base}/w/team/files/")
    expect(page.locator(".readonly-note")).to_contain_text("auditor")
    expect(page.locator(".files-add-form")).to_have_count(0)
    expect(row(page, "access-policy.md").locator("button")).to_have_count(0)
    with page.expect_download() as download:
        row(page, "access-policy.md").locator("a", has_text="Download").click()
    assert b"Managers approve every access request." in open(download.value.path(), "rb").read()
    # A forged request is refused by the server too, and the file stays.
    file_id = row(page, "access-policy.md").get_attribute("data-file")
    token = page.evaluate("() => JSON.parse(document.body.getAttribute('hx-headers'))['X-CSRFToken']")
    status = page.evaluate("""([url, token]) => fetch(url, {method: 'POST', headers: {'X-CSRFToken': token}})
                              .then(r => r.status)""", [f"{base}/w/team/files/{file_id}/remove/", token])
    assert status == 403
    page.reload()
    expect(row(page, "access-policy.md")).to_have_count(1)


def test_an_attachment_is_removed_before_sending(alice_page, server):
    base, _ = server
    page = alice_page
    page.goto(f"{base}/w/team/")
    page.set_input_files("#upload-files", files=[{"name": "draft-notes.txt", "mimeType": "text/plain",
                                                  "buffer": b"Notes for the draft."},
                                                 {"name": "keep.txt", "mimeType": "text/plain",
                                                  "buffer": b"Keep this one."}])
    chip = page.locator("#uploads .file-chip", has_text="draft-notes.txt")
    expect(chip).to_be_visible()
    expect(page.locator("#uploads .file-chip")).to_have_count(2)
    shot(page, "composer-attachments")
    chip.locator("button.file-chip-remove").click()
    expect(page.locator("#uploads")).to_contain_text("Removed: draft-notes.txt")
    expect(page.locator("#uploads .file-chip")).to_have_count(1)
    expect(page.locator("#uploads .file-chip")).to_contain_text("keep.txt")
    page.fill(BOX, "Draft a note from my notes")
    page.press(BOX, "Enter")
    expect(page.locator("[data-run-status]").last).to_have_attribute("data-run-status", "completed", timeout=20_000)
    page.goto(f"{base}/w/team/files/")
    expect(row(page, "keep.txt")).to_have_count(1)
    expect(row(page, "draft-notes.txt")).to_have_count(0)
