"""Django admin: workspaces editable by staff; the run record read-only for everyone (append-only)."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from beyond_site.runs.models import Run
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.models import Memory, Workspace, WorkspaceEvent
from tests.site.context_support import conversation_with_history, queued_run

pytestmark = pytest.mark.django_db

WORKSPACE_MODELS = ["workspace", "membership", "memory", "document", "frameworkpack", "workspaceevent",
                    "conversation"]
RUN_MODELS = ["run", "step", "attempt", "verdict", "modelcall", "runevent", "contextrecord"]


@pytest.fixture
def run():
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    knowledge.add_memory(workspace, "A fact.")
    knowledge.add_document(workspace, "policy.md", b"# Policy\n\nText.")
    return queued_run(workspace, "Draft a note", conversation_with_history(workspace, "hi"))


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser("root", "root@example.com", "correct horse battery staple")


@pytest.mark.parametrize("app, model", [("workspaces", m) for m in WORKSPACE_MODELS] +
                         [("runs", m) for m in RUN_MODELS])
def test_every_changelist_loads_for_staff(client, staff, run, app, model):
    client.force_login(staff)
    assert client.get(reverse(f"admin:{app}_{model}_changelist")).status_code == 200


def test_the_run_record_is_read_only_even_for_a_superuser(client, staff, run):
    client.force_login(staff)
    page = client.get(reverse("admin:runs_run_changelist")).content.decode()
    assert reverse("admin:runs_run_add") not in page
    assert client.get(reverse("admin:runs_run_add")).status_code == 403
    change = reverse("admin:runs_run_change", args=[run.pk])
    assert client.get(change).status_code == 200  # viewable
    assert client.post(change, {"task": "rewritten", "status": "completed"}).status_code == 403
    assert client.post(reverse("admin:runs_run_delete", args=[run.pk]), {"post": "yes"}).status_code == 403
    run.refresh_from_db()
    assert run.task == "Draft a note" and Run.objects.filter(pk=run.pk).exists()


def test_a_staff_user_with_view_permissions_can_browse_runs(client, django_user_model, run):
    auditor = django_user_model.objects.create_user("ada", password="correct horse battery staple", is_staff=True)
    auditor.user_permissions.add(*Permission.objects.filter(content_type__app_label="runs",
                                                            codename__startswith="view_"))
    client.force_login(auditor)
    assert client.get(reverse("admin:runs_run_changelist")).status_code == 200
    assert client.get(reverse("admin:runs_run_change", args=[run.pk])).status_code == 200
    assert client.get(reverse("admin:workspaces_workspace_changelist")).status_code == 403


def test_staff_can_edit_a_memory_and_is_recorded_as_its_editor(client, staff, run):
    client.force_login(staff)
    memory = run.workspace.memories.get()
    response = client.post(reverse("admin:workspaces_memory_change", args=[memory.pk]),
                           {"workspace": run.workspace.pk, "text": "An edited fact."})
    assert response.status_code == 302
    memory.refresh_from_db()
    assert memory.text == "An edited fact." and memory.updated_by == staff
    assert WorkspaceEvent.objects.get(action="memory_edited").user == staff
    client.post(reverse("admin:workspaces_memory_delete", args=[memory.pk]), {"post": "yes"})
    assert not Memory.objects.exists()
    assert WorkspaceEvent.objects.get(action="memory_deleted").user == staff


def test_a_workspace_change_page_loads(client, staff, run):
    client.force_login(staff)
    assert client.get(reverse("admin:workspaces_workspace_change", args=[run.workspace.pk])).status_code == 200
    document = run.workspace.documents.get()
    assert client.get(reverse("admin:workspaces_document_change", args=[document.pk])).status_code == 200
