"""The requirement trace on the site (docs/verifier-contract.md, "The requirement trace"): on the run's
record and trace, its audit page, the run list's column and filter, and both export editions; a
client edition of a document with gaps is confirmed first."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)

TASK = "Write a clean desk policy for the Leeds office with a 6 pm cut-off"


def run_with(tmp_path, content: str, name: str) -> dict:
    data = scripting.script({1: {"executor": [content], "verifier": [PASS]}}, task=TASK)
    path = scripting.write(tmp_path, data, name)
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", TASK, "--provider", f"scripted:{path}", "--json",
                 stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def traces(workspace, tmp_path):
    """Two runs of the task: one whose document meets every requirement, one whose document lacks the
    Leeds office and the cut-off."""
    faithful = run_with(tmp_path, "Desks in the Leeds office are cleared by 6 pm, with every clean desk policy rule.",
                        "faithful.json")
    lacking = run_with(tmp_path, "Desks are cleared at the end of the day, under this clean desk policy.", "lacking.json")
    return faithful, lacking


@pytest.fixture
def reader(client, alice, acme):
    Membership.objects.create(user=alice, workspace=acme, role=Membership.MEMBER)
    client.force_login(alice)
    return client


def test_every_run_trace_has_its_requirements_and_coverage(traces):
    faithful, lacking = traces
    assert {r["status"] for r in faithful["run"]["requirements"]} == {"met"}, faithful["run"]["requirements"]
    assert faithful["run"]["coverage"]["met"] == faithful["run"]["coverage"]["total"] > 0
    statuses = {r["text"]: r["status"] for r in lacking["run"]["requirements"]}
    assert statuses["Leeds office"] == "unmet" and statuses["6 pm"] == "unmet"
    assert lacking["run"]["coverage"]["met"] < lacking["run"]["coverage"]["total"]
    # Nothing presents it as answering the task: the recap opens with its gaps.
    assert lacking["summary"].startswith(f"Covers {lacking['run']['coverage']['met']} of ")


def test_the_run_list_shows_coverage_and_filters_the_runs_with_gaps(traces, reader):
    faithful, lacking = traces
    url = reverse("audit:runs", args=["acme"])
    page = reader.get(url).content.decode()
    assert "Requirements" in page and 'class="audit-gaps"' in page
    gaps = reader.get(url, {"requirements": "gaps"}).content.decode()
    assert f">{lacking['run']['id']}</a>" in gaps and f">{faithful['run']['id']}</a>" not in gaps
    met = reader.get(url, {"requirements": "met"}).content.decode()
    assert f">{faithful['run']['id']}</a>" in met and f">{lacking['run']['id']}</a>" not in met


def test_the_audit_page_lists_each_requirement_with_its_status(traces, reader):
    _, lacking = traces
    page = reader.get(reverse("audit:run", args=["acme", lacking["run"]["id"]])).content.decode()
    assert 'id="requirements"' in page and "audit-requirement-unmet" in page
    assert Run.objects.get(pk=lacking["run"]["id"]).requirements_gaps in page


def test_a_client_edition_of_a_document_with_gaps_is_confirmed_first(traces, reader):
    faithful, lacking = traces
    asked = reader.get(reverse("exports:confirm_docx", args=["acme", lacking["run"]["id"]]))
    assert asked.status_code == 200 and asked["Content-Type"].startswith("text/html")
    page = asked.content.decode()
    assert "does not cover the whole task" in page and Run.objects.get(pk=lacking["run"]["id"]).requirements_gaps in page
    url = reverse("exports:docx", args=["acme", lacking["run"]["id"]])
    assert f'href="{url}?edition=client"' in page
    confirmed = reader.get(url, {"edition": "client"})
    assert confirmed.status_code == 200 and "attachment" in confirmed["Content-Disposition"]
    # A document that covers the task goes straight to its download.
    whole = reader.get(reverse("exports:confirm_docx", args=["acme", faithful["run"]["id"]]))
    assert whole.status_code == 302 and whole["Location"].endswith("export.docx?edition=client")


@pytest.mark.parametrize("edition", ["client", "audit"])
def test_both_editions_say_what_the_document_does_not_cover(traces, reader, edition):
    _, lacking = traces
    url = reverse("exports:md", args=["acme", lacking["run"]["id"]])
    body = reader.get(url, {"edition": edition}).content.decode().replace("\\", "")
    assert "Covers " in body and "requirements of the task. Not covered:" in body
    for ext in ("docx", "pdf", "xlsx"):  # the audit edition's table of requirements fits every format
        response = reader.get(reverse(f"exports:{ext}", args=["acme", lacking["run"]["id"]]), {"edition": edition})
        assert response.status_code == 200 and "attachment" in response["Content-Disposition"], ext


def test_the_brief_names_the_document_and_a_member_can_rename_it(traces, reader):
    faithful, _ = traces
    run = Run.objects.get(pk=faithful["run"]["id"])
    assert faithful["brief"]["title"] == "Clean desk policy"
    assert run.conversation.title == "Clean desk policy"  # the conversation takes its document's name
    url = reverse("exports:docx", args=["acme", run.pk])
    assert reader.get(url, {"edition": "client"})["Content-Disposition"] == 'attachment; filename="clean-desk-policy-v1.docx"'
    response = reader.post(reverse("exports:rename", args=["acme", run.pk]), {"title": "ISO/IEC 27001:2022 desk rules"})
    assert response.status_code == 302
    assert reader.get(url, {"edition": "client"})["Content-Disposition"] == \
        'attachment; filename="iso-iec-27001-2022-desk-rules-v1.docx"'
    from beyond_site.workspaces.models import WorkspaceEvent
    assert WorkspaceEvent.objects.filter(action="document_renamed").exists()
