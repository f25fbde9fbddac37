"""An Excel inventory uploaded through the chat reaches the planner's and every executor's request
as table rows (checked on the requests a fake OpenRouter received); hostile workbooks are refused
at the upload with a clear message, and nothing changes."""
from __future__ import annotations

import httpx
import pytest
from channels.db import database_sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from pipeline.context import render_context
from beyond_site.runs import jobs
from beyond_site.runs.models import Run
from beyond_site.runs.queue import claim_run, start_run
from beyond_site.runs.runner import execute_run, starting
from beyond_site.workspaces.reading import READ_TASK
from beyond_site.workspaces.models import Conversation, Document, Membership, Workspace
from tests.site.context_support import workspace_state
from tests.site.test_context_markers import TOPOLOGY, FakeOpenRouter, everything_sent
from tests.site.workbooks import bomb_xlsx, external_link_xlsx, huge_dimension_xlsx, inventory_xlsx

pytestmark = pytest.mark.django_db(transaction=True)

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
HTMX = {"HTTP_HX_REQUEST": "true"}
ROWS = ["| XL-001 | Payroll system | Software | Finance | PayServe (hosted) | Confidential | 2025-10-01 | 1200 |",
        "| XL-002 | Staff laptops \\| fleet | Hardware | IT | Lyon office | Internal | 2025-11-04 | 640 |"]


@pytest.fixture
def workspace(monkeypatch, alice):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-dummy")
    workspace = Workspace.objects.create(slug="acme", name="Acme", topology=TOPOLOGY)
    Membership.objects.create(user=alice, workspace=workspace, role=Membership.MEMBER)
    return workspace


def upload(user, name: str, data: bytes, conversation=None):
    client = Client()
    client.force_login(user)
    form = {"files": [SimpleUploadedFile(name, data, content_type=XLSX)]}
    if conversation is not None:
        form["conversation"] = str(conversation.pk)
    return client.post("/w/acme/upload/", form, **HTMX)


async def test_an_uploaded_inventory_reaches_the_planner_and_executors_as_table_rows(workspace, alice):
    response = await database_sync_to_async(upload)(alice, "inventory.xlsx", inventory_xlsx("SHEET-MARKER-4720"))
    assert response.status_code == 200 and b"Attached: inventory.xlsx" in response.content
    conversation = await database_sync_to_async(Conversation.objects.get)(workspace=workspace)
    document = await database_sync_to_async(Document.objects.get)()
    await database_sync_to_async(jobs.run_now)(READ_TASK, document_id=document.pk)  # the background's reading
    fake = FakeOpenRouter(n_steps=2, task="Draft our asset register")
    run, _ = await database_sync_to_async(start_run)(workspace, "Draft our asset register", user=alice,
                                                     conversation=conversation)
    assert await database_sync_to_async(claim_run)(run.pk, "test-runner")
    assert await execute_run(run.pk, "test-runner", transport=httpx.MockTransport(fake)) == Run.COMPLETED
    assert len(fake.bodies["planner"]) == 1 and len(fake.bodies["executor"]) == 2
    for body in fake.bodies["planner"] + fake.bodies["executor"]:
        lines = everything_sent(body).split("\n")
        assert "## Sheet: Inventory" in lines and all(row in lines for row in ROWS)
        assert "|  |  |  |  |  |  |  | 2140 |" in lines  # the total, as Excel cached it
    for body in fake.bodies["verifier"]:
        assert "SHEET-MARKER-4720" not in everything_sent(body)


@pytest.mark.parametrize("name,build,words", [
    ("bomb.xlsx", bomb_xlsx, "This Excel workbook was refused because"),
    ("linked.xlsx", external_link_xlsx, "Break Link"),
])
def test_a_hostile_workbook_is_refused_at_the_upload_and_nothing_changes(workspace, alice, name, build, words):
    conversation = Conversation.objects.create(workspace=workspace, title="Inventory")
    before = workspace_state(workspace)
    response = upload(alice, name, build(), conversation)
    html = response.content.decode()
    assert response.status_code == 200 and "This file was not attached" in html
    assert f"{name}: " in html and words in html
    assert workspace_state(workspace) == before and not Document.objects.exists()


def test_a_workbook_too_large_to_parse_is_attached_then_fails_with_the_reason_and_reaches_no_run(workspace, alice):
    # What only the parser finds (a sheet's declared dimension past the limit) is found off the
    # request: the upload is answered, then the file is marked failed, with the words to fix it.
    conversation = Conversation.objects.create(workspace=workspace, title="Inventory")
    response = upload(alice, "huge.xlsx", huge_dimension_xlsx(), conversation)
    assert response.status_code == 200 and "Attached: huge.xlsx" in response.content.decode()
    document = Document.objects.get()
    assert jobs.run_now(READ_TASK, document_id=document.pk) == Document.FAILED
    document.refresh_from_db()
    assert "which is the limit" in document.failure and document.text == "" and not document.chunks.exists()
    listed = Client()
    listed.force_login(alice)
    html = listed.get(f"/w/acme/c/{conversation.pk}/uploads/", **HTMX).content.decode()
    assert "could not be read: " in html and "which is the limit" in html
    run, _ = start_run(workspace, "Draft our asset register", user=alice, conversation=conversation)
    assert "huge.xlsx" not in render_context(starting(run.pk).context)
