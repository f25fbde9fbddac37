"""Exports of a finished run: Markdown and DOCX with badges, warnings, halts and citations."""
from __future__ import annotations

import io

import pytest
from django.test import Client
from docx import Document as Docx

from pipeline import events as ev
from pipeline.events import Event
from tests import scripting
from tests.site.chat_support import new_run, record, released, workspace_with

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def finished(alice):
    workspace = workspace_with(member=alice)
    run = new_run(workspace, alice, task='Access "policy" / v2 <draft>')
    brief = scripting.brief(3, citations=[
        {"id": "C1", "framework": "ISO/IEC 27001:2022", "ref": "A.5.15", "title": "Access control"},
        {"id": "C2", "framework": "GDPR", "ref": "Art. 32", "title": "Security of processing"}])
    record(run, Event(ev.BriefReady(brief=brief)),
           released(1, "## Scope\n\nAll **staff**.\n\n- one\n- two"),
           released(2, "Managers approve.", badge="warning", warnings=["Issues: [step_contract] misses B"]),
           Event(ev.StepHalted(step=3, reason="the verifier gave no parseable verdict")),
           Event(ev.RunHalted(step=3, reason="step 3: the verifier gave no parseable verdict")))
    return run


def get(alice, run, ext):
    client = Client()
    client.force_login(alice)
    return client.get(f"/w/{run.workspace.slug}/runs/{run.pk}/export.{ext}")


def test_markdown_export(finished, alice):
    response = get(alice, finished, "md")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="beyond-run-{finished.pk}-access-policy-v2-draft.md"'
    text = response.content.decode()
    assert "## Step 1: Part 1" in text and "**Badge:** Passed:" in text and "All **staff**." in text
    assert "**Badge:** Warning:" in text and "> **Warning:** Issues: [step_contract] misses B" in text
    assert "**Badge:** Halted:" in text and "the verifier gave no parseable verdict" in text
    assert "| C2 | GDPR | Art. 32 | Security of processing |" in text
    assert "verified" not in text.lower()


def test_docx_export(finished, alice):
    response = get(alice, finished, "docx")
    assert response.status_code == 200 and response["Content-Disposition"].endswith('.docx"')
    doc = Docx(io.BytesIO(response.content))
    text = "\n".join(p.text for p in doc.paragraphs)
    assert "Step 2: Part 2" in text and "Warning: Issues: [step_contract] misses B" in text
    assert "Badge: Halted" in text and "All staff." in text
    cells = [c.text for row in doc.tables[0].rows for c in row.cells]
    assert cells[:4] == ["ID", "Framework", "Reference", "Title"] and "A.5.15" in cells


def test_an_unfinished_run_cannot_be_exported_yet(alice):
    run = new_run(workspace_with(member=alice), alice)
    assert get(alice, run, "md").status_code == 409


def test_exports_are_404_for_non_members(finished, bob):
    assert get(bob, finished, "md").status_code == 404
    assert get(bob, finished, "docx").status_code == 404
