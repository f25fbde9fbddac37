"""The file library (/w/<slug>/files/): members add (workspace-wide or to a conversation), preview,
download and remove files; auditors read only; non-members get 404; removing keeps what past model
calls were given. And the composer's attachment removal."""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from beyond_site.workspaces import knowledge, originals
from beyond_site.workspaces.models import Blob, Conversation, Document, WorkspaceEvent
from tests.site.chat_support import client_for, workspace_with
from tests.site.context_support import workspace_state
from tests.site.test_extraction import PNG, make_pdf
from tests.site.workbooks import inventory_xlsx

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def acme(alice, bob, carol):
    workspace = workspace_with("acme", admin=alice, member=bob, auditor=carol)
    knowledge.add_document(workspace, "policy.md", b"# Access policy\n\nManagers approve access.", user=alice)
    return workspace


def test_the_library_lists_every_file_with_its_facts(acme, bob):
    conversation = Conversation.objects.create(workspace=acme, title="Inventory review")
    knowledge.add_document(acme, "inventory.xlsx", inventory_xlsx(), user=bob, conversation=conversation)
    knowledge.add_document(acme, "scope.pdf", make_pdf("Scope one", "Scope two"), user=bob)
    html = client_for(bob).get("/w/acme/files/").content.decode()
    rows = html.split("data-file=")[1:]
    assert len(rows) == 3
    xlsx = next(r for r in rows if "inventory.xlsx" in r)
    assert "Excel" in xlsx and "2 sheets" in xlsx and "bob" in xlsx and "Inventory review" in xlsx
    assert 'data-scope="conversation"' in xlsx
    pdf = next(r for r in rows if "scope.pdf" in r)
    assert "2 pages" in pdf and "Whole workspace" in pdf and 'data-scope="workspace"' in pdf


def test_a_member_adds_files_workspace_wide_and_to_a_conversation(acme, bob):
    conversation = Conversation.objects.create(workspace=acme, title="Suppliers")
    client = client_for(bob)
    response = client.post("/w/acme/files/add/", {"target": "workspace",
                                                  "files": [SimpleUploadedFile("a.txt", b"Workspace fact.")]})
    assert response.status_code == 302
    response = client.post("/w/acme/files/add/", {"target": str(conversation.pk),
                                                  "files": [SimpleUploadedFile("b.csv", b"Supplier,Owner\nX,Y\n")]},
                           follow=True)
    assert "Added to the conversation “Suppliers”: b.csv." in response.content.decode()
    assert Document.objects.get(name="a.txt").conversation is None
    assert Document.objects.get(name="b.csv").conversation == conversation


def test_the_same_bytes_under_a_new_name_are_said_to_be_there_already_not_added(acme, bob):
    client = client_for(bob)
    same = b"# Access policy\n\nManagers approve access."
    response = client.post("/w/acme/files/add/", {"target": "workspace",
                                                  "files": [SimpleUploadedFile("policy-v2.md", same)]}, follow=True)
    html = response.content.decode()
    assert "policy-v2.md has the same content as policy.md, already in the library (in the whole workspace): " \
           "nothing was added." in html
    assert "Added to" not in html
    assert list(Document.objects.values_list("name", flat=True)) == ["policy.md"]
    response = client.post("/w/acme/files/add/", {"target": "workspace", "files": [
        SimpleUploadedFile("policy.md", same), SimpleUploadedFile("new.txt", b"Something new.")]}, follow=True)
    html = response.content.decode()
    assert "Added to the whole workspace: new.txt." in html
    assert "policy.md is already in the library (in the whole workspace): nothing was added." in html


def test_a_deleted_conversation_is_not_offered_nor_accepted(acme, bob):
    kept = Conversation.objects.create(workspace=acme, title="Kept thread")
    gone = Conversation.objects.create(workspace=acme, title="Deleted thread", deleted_at=timezone.now())
    client = client_for(bob)
    html = client.get("/w/acme/files/").content.decode()
    assert f'value="{kept.pk}"' in html and "Kept thread" in html
    assert f'value="{gone.pk}"' not in html and "Deleted thread" not in html
    response = client.post("/w/acme/files/add/", {"target": str(gone.pk),
                                                  "files": [SimpleUploadedFile("c.txt", b"Late fact.")]})
    assert response.status_code == 404 and not Document.objects.filter(name="c.txt").exists()


def test_a_refused_file_is_named_next_to_the_form_and_changes_nothing(acme, bob):
    before = workspace_state(acme)
    response = client_for(bob).post("/w/acme/files/add/", {"target": "workspace",
                                                           "files": [SimpleUploadedFile("scan.pdf", PNG)]})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="files-refused"' in html
    assert "scan.pdf: This file is not a PDF: it looks like a PNG image." in html
    assert workspace_state(acme) == before


@pytest.mark.parametrize("target", ["foreign", "abc"])
def test_a_conversation_of_another_workspace_or_a_malformed_one_is_not_a_target(acme, bob, dave, target):
    other = workspace_with("globex", member=dave)
    foreign = Conversation.objects.create(workspace=other, title="Theirs")
    value = str(foreign.pk) if target == "foreign" else target
    response = client_for(bob).post("/w/acme/files/add/", {"target": value,
                                                           "files": [SimpleUploadedFile("a.txt", b"Fact.")]})
    assert response.status_code == 404 and not Document.objects.filter(name="a.txt").exists()


def test_preview_shows_the_extracted_text_escaped(acme, bob):
    document = knowledge.add_document(acme, "x.md", b"# Title\n\n<script>alert(1)</script> | row", user=bob)[0]
    html = client_for(bob).get(f"/w/acme/files/{document.pk}/").content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt; | row" in html and "<script>alert" not in html


def test_download_gives_the_original_bytes_as_an_attachment(acme, carol):
    data = inventory_xlsx()
    document = knowledge.add_document(acme, "Ünïcode inventory.xlsx", data)[0]
    response = client_for(carol).get(f"/w/acme/files/{document.pk}/download/")
    assert response.status_code == 200 and response.getvalue() == data  # streamed from the store
    assert response["Content-Type"] == document.mime
    assert response["Content-Disposition"].startswith("attachment; filename*=utf-8''")


def test_removing_a_file_is_logged_and_removes_its_original_keeping_what_model_calls_were_given(
        acme, bob, django_capture_on_commit_callbacks):
    document = Document.objects.get(name="policy.md")
    given = Blob.objects.create(sha256="f" * 64, size=4, data=b"text", kept_for_audit=True)  # a run's context part
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(bob).post(f"/w/acme/files/{document.pk}/remove/", **HTMX)
    assert response.status_code == 200 and response.content == b""
    assert not Document.objects.filter(pk=document.pk).exists()
    assert not originals.exists(document.sha256) and Blob.objects.filter(pk=given.pk).exists()
    event = WorkspaceEvent.objects.get(action="document_deleted")
    assert event.user == bob and event.detail["name"] == "policy.md"


def test_an_auditor_reads_but_cannot_add_or_remove(acme, carol):
    client = client_for(carol)
    document = Document.objects.get(name="policy.md")
    html = client.get("/w/acme/files/").content.decode()
    assert "policy.md" in html and "files/add/" not in html and "/remove/" not in html
    before = workspace_state(acme)
    assert client.post("/w/acme/files/add/", {"files": [SimpleUploadedFile("a.txt", b"x")]}).status_code == 403
    assert client.post(f"/w/acme/files/{document.pk}/remove/").status_code == 403
    assert workspace_state(acme) == before


def test_non_members_get_404_everywhere(acme, dave):
    client = client_for(dave)
    document = Document.objects.get(name="policy.md")
    for url in ("/w/acme/files/", f"/w/acme/files/{document.pk}/", f"/w/acme/files/{document.pk}/download/"):
        assert client.get(url).status_code == 404
    assert client.post(f"/w/acme/files/{document.pk}/remove/").status_code == 404
    assert Document.objects.filter(pk=document.pk).exists()


def test_a_file_of_another_workspace_is_404(acme, bob, dave):
    other = workspace_with("globex", member=dave)
    theirs = knowledge.add_document(other, "theirs.txt", b"Their secret.")[0]
    assert client_for(bob).get(f"/w/acme/files/{theirs.pk}/").status_code == 404
    assert client_for(bob).post(f"/w/acme/files/{theirs.pk}/remove/").status_code == 404


# ---------------------------------------------------------------------------- composer attachments

def test_an_attachment_is_listed_and_removed_before_sending(acme, bob):
    conversation = Conversation.objects.create(workspace=acme, title="Draft")
    upload = knowledge.add_document(acme, "notes.txt", b"Draft notes.", conversation=conversation)[0]
    client = client_for(bob)
    page = client.get(f"/w/acme/c/{conversation.pk}/").content.decode()
    assert f'data-attachment="{upload.pk}"' in page and f"/w/acme/attachments/{upload.pk}/remove/" in page
    response = client.post(f"/w/acme/attachments/{upload.pk}/remove/", **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and 'id="uploads"' in html and "Removed: notes.txt" in html
    assert "data-attachment" not in html and not Document.objects.filter(pk=upload.pk).exists()


def test_a_workspace_file_is_not_removed_through_the_composer(acme, bob):
    document = Document.objects.get(name="policy.md")
    assert client_for(bob).post(f"/w/acme/attachments/{document.pk}/remove/", **HTMX).status_code == 404
    assert Document.objects.filter(pk=document.pk).exists()


def test_an_auditor_cannot_remove_an_attachment(acme, carol):
    conversation = Conversation.objects.create(workspace=acme, title="Draft")
    upload = knowledge.add_document(acme, "notes.txt", b"Draft notes.", conversation=conversation)[0]
    assert client_for(carol).post(f"/w/acme/attachments/{upload.pk}/remove/", **HTMX).status_code == 403
    assert Document.objects.filter(pk=upload.pk).exists()
