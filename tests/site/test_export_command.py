"""`beyond_export RUN_ID --format md|docx|pdf|xlsx|json [--edition client|audit] --out PATH`: what the
chat's links give, on disk."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command
from docx import Document as Docx
from openpyxl import load_workbook

from pipeline import events as ev
from pipeline.events import Event
from tests import scripting
from tests.site.chat_support import new_run, record, released, workspace_with
from tests.site.export_support import MODEL, STEP_WARNING, docx_text, rich_run
from tests.site.test_chat_exports import INVENTORY

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def run(alice):
    run = new_run(workspace_with(member=alice), alice, task="Asset register overview")
    record(run, Event(ev.BriefReady(brief=scripting.brief(1))), released(1, INVENTORY), Event(ev.RunCompleted()))
    return run


def export(*args) -> str:
    err = io.StringIO()
    call_command("beyond_export", *args, stderr=err)
    return err.getvalue()


def test_it_writes_the_docx_with_real_tables(run, tmp_path):
    out = tmp_path / "register.docx"
    assert "Wrote run" in export(str(run.pk), "--format", "docx", "--out", str(out))
    doc = Docx(io.BytesIO(out.read_bytes()))
    assert [[c.text for c in r.cells] for r in doc.tables[1].rows][1] == ["A-1", "Payroll system", "Finance"]


def test_it_writes_the_same_markdown_as_the_download(run, tmp_path, client, alice):
    out = tmp_path / "register.md"
    export(str(run.pk), "--format", "md", "--out", str(out))
    client.force_login(alice)
    assert out.read_bytes() == client.get(f"/w/{run.workspace.slug}/runs/{run.pk}/export.md").content


def test_it_writes_the_client_edition_when_asked_and_the_audit_edition_by_default(alice, tmp_path):
    run = rich_run(workspace_with(member=alice), alice)
    client, audit = tmp_path / "client.docx", tmp_path / "audit.docx"
    assert "docx, client edition" in export(str(run.pk), "--format", "docx", "--edition", "client", "--out", str(client))
    export(str(run.pk), "--format", "docx", "--out", str(audit))
    assert STEP_WARNING not in docx_text(client.read_bytes()) and MODEL not in docx_text(client.read_bytes())
    assert STEP_WARNING in docx_text(audit.read_bytes()) and MODEL in docx_text(audit.read_bytes())
    tables = tmp_path / "tables.xlsx"
    export(str(run.pk), "--format", "xlsx", "--out", str(tables))
    assert load_workbook(tables).sheetnames == ["Document", "Register of processing", "Assets"]
    with pytest.raises(CommandError):
        export(str(run.pk), "--format", "docx", "--edition", "draft", "--out", str(client))


def test_json_is_the_run_trace(run, tmp_path):
    out = tmp_path / "trace.json"
    export(str(run.pk), "--format", "json", "--out", str(out))
    trace = json.loads(out.read_text())
    assert trace["run"]["id"] == run.pk and trace["run"]["status"] == "completed"
    assert trace["steps"][0]["badge"] == "passed" and [e["type"] for e in trace["events"]] == \
        ["run_requested", "brief_ready", "step_released", "run_completed"]


def test_an_unknown_run_is_a_clear_error(tmp_path):
    with pytest.raises(CommandError, match="unknown run 999999"):
        export("999999", "--format", "md", "--out", str(tmp_path / "x.md"))
    assert not (tmp_path / "x.md").exists()


def test_an_unknown_format_or_a_missing_folder_is_refused(run, tmp_path):
    with pytest.raises(CommandError):
        export(str(run.pk), "--format", "pdfx", "--out", str(tmp_path / "x"))
    with pytest.raises(CommandError, match="does not exist"):
        export(str(run.pk), "--format", "md", "--out", str(tmp_path / "nowhere" / "x.md"))


def test_an_unfinished_runs_document_is_refused_but_its_trace_is_given(alice, tmp_path):
    run = new_run(workspace_with(member=alice), alice)
    with pytest.raises(CommandError, match="has not finished"):
        export(str(run.pk), "--format", "docx", "--out", str(tmp_path / "x.docx"))
    export(str(run.pk), "--format", "json", "--out", str(tmp_path / "x.json"))
    assert json.loads((tmp_path / "x.json").read_text())["run"]["status"] == "queued"


def test_it_exits_non_zero_from_the_command_line(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], env=env, check=True)
    done = subprocess.run([sys.executable, "manage.py", "beyond_export", "424242", "--format", "md", "--out",
                           str(tmp_path / "x.md")], capture_output=True, text=True, env=env)
    assert done.returncode == 1 and "unknown run 424242" in done.stderr
