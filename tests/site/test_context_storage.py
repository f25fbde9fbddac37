"""What a run stores of its context: content-addressed, so unchanged documents are stored once."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db.models import Sum

from beyond_site.runs.context_audit import calls_that_saw
from beyond_site.runs.models import Run
from beyond_site.workspaces import knowledge
from beyond_site.workspaces.models import Blob, Workspace
from tests import scripting
from tests.scripting import PASS
from tests.site.context_support import ON_TOPIC, paragraphs

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def workspace():
    workspace = Workspace.objects.create(slug="acme", name="Acme")
    knowledge.add_memory(workspace, "Acme runs three clinics.")
    knowledge.add_document(workspace, "backups.md", ("FACT-BACKUP-KEY " + paragraphs(ON_TOPIC, 400)).encode())
    return workspace


def run_once(tmp_path, name: str) -> Run:
    path = scripting.write(tmp_path, scripting.script({1: {"executor": ["Done."], "verifier": [PASS]}},
                                                      task="Draft a backup procedure"), name)
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", "Draft a backup procedure",
                 "--provider", f"scripted:{path}", "--json", stdout=out)
    return Run.objects.get(pk=json.loads(out.getvalue())["run"]["id"])


def stored_bytes() -> int:
    return Blob.objects.aggregate(total=Sum("size"))["total"] or 0


def test_a_memory_added_between_two_runs_does_not_store_the_documents_again(workspace, tmp_path):
    document_bytes = len(workspace.documents.get().text.encode())
    assert document_bytes > 100_000
    run_once(tmp_path, "one.json")
    before = stored_bytes(), Blob.objects.count()
    knowledge.add_memory(workspace, "A new fact: backups are tested monthly.")
    run_once(tmp_path, "two.json")
    growth = stored_bytes() - before[0]
    assert growth < 20_000, growth  # prompts, memories, brief and drafts; not the 100 kB document
    assert Blob.objects.count() - before[1] < 15


def test_calls_that_saw_finds_the_planner_and_executor_calls_only(workspace, tmp_path):
    run = run_once(tmp_path, "one.json")
    assert [c.role for c in calls_that_saw(run, "FACT-BACKUP-KEY")] == ["planner", "executor"]
    assert [c.role for c in calls_that_saw(run, "fact-backup-key")] == ["planner", "executor"]
    assert calls_that_saw(run, "fact-backup-key", exact=True) == []
    assert calls_that_saw(run, "") == []
    assert {c.role for c in calls_that_saw(run, "Done.")} >= {"verifier"}  # the draft is the verifier's to see
