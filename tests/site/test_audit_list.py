"""The run list: every run of the workspace, newest first, 50 a page, filtered by GET parameters."""
from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from beyond_site.runs.models import Run
from pipeline.topology import parse_shorthand
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)

ROW_IDS = re.compile(r'<td><a href="/w/acme/audit/runs/(\d+)/">')


def listed(client, query: str = "") -> list[int]:
    response = client.get(f"/w/acme/audit/{query}")
    assert response.status_code == 200
    return [int(i) for i in ROW_IDS.findall(response.content.decode())]


def queued(workspace, task: str, shorthand: str = "offline", created: datetime | None = None) -> Run:
    run = Run.objects.create(workspace=workspace, task=task, topology=parse_shorthand(shorthand).as_json())
    if created:
        # Test setup only: back-date a queued run (the record of a finished run is never changed).
        Run.objects.filter(pk=run.pk).update(created_at=created)
    return run


@pytest.fixture
def runs(acme, tmp_path) -> dict[str, int]:
    made = {
        "completed": run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}}, task="Asset register"),
        "warning": run_task(tmp_path, {1: {"executor": ["A.", "B."], "verifier": [fail("x"), fail("y")]}},
                            task="Records of processing"),
        "halted": run_task(tmp_path, {1: {"executor": ["One."], "verifier": [{"error": "crash"}, {"error": "crash"}]}},
                           task="Audit plan"),
        "failed": run_task(tmp_path, {}, planner=["nope", "nope"], task="Stakeholder email"),
    }
    ids = {name: trace["run"]["id"] for name, trace in made.items()}
    ids["queued"] = queued(acme, "Queued ISMS policy", "openrouter:z-ai/glm-5.3",
                           created=datetime(2024, 1, 15, 12, tzinfo=timezone.utc)).pk
    return ids


def test_it_lists_every_run_newest_first_with_its_columns(auditor_client, runs):
    html = auditor_client.get("/w/acme/audit/").content.decode()
    ids = [int(i) for i in ROW_IDS.findall(html)]
    assert ids == [runs["failed"], runs["halted"], runs["warning"], runs["completed"], runs["queued"]]
    row = html.split(f'/w/acme/audit/runs/{runs["warning"]}/')[1].split("</tr>")[0]
    assert "Records of processing" in row and "completed" in row
    assert "<td>1/1</td>" in row  # steps released / total
    assert "<td>1</td>" in row  # one warning: the second failure
    halted_row = html.split(f'/w/acme/audit/runs/{runs["halted"]}/')[1].split("</tr>")[0]
    assert "<td>0/1</td>" in halted_row
    queued_row = html.split(f'/w/acme/audit/runs/{runs["queued"]}/')[1].split("</tr>")[0]
    assert "offline" not in queued_row and "2024-01-15" in queued_row


@pytest.mark.parametrize("query, expected", [
    ("?status=completed", ["warning", "completed"]),
    ("?status=halted", ["halted"]),
    ("?status=failed", ["failed"]),
    ("?status=queued", ["queued"]),
    ("?status=running", []),
    ("?badge=warning", ["warning"]),
    ("?badge=halted", ["halted"]),
    ("?q=AUDIT+plan", ["halted"]),
    ("?model=glm", ["queued"]),
    ("?model=scripted", ["failed", "halted", "warning", "completed"]),
    ("?date_to=2024-12-31", ["queued"]),
    ("?date_from=2024-01-15&date_to=2024-01-15", ["queued"]),
    ("?date_from=2025-01-01", ["failed", "halted", "warning", "completed"]),
    ("?status=completed&badge=warning&q=records", ["warning"]),
])
def test_it_filters(auditor_client, runs, query, expected):
    assert listed(auditor_client, query) == [runs[name] for name in expected]


def test_an_invalid_filter_is_ignored_and_said(auditor_client, runs):
    response = auditor_client.get("/w/acme/audit/?date_from=yesterday&status=bogus")
    assert response.status_code == 200
    assert len(ROW_IDS.findall(response.content.decode())) == 5
    assert "filter ignored" in response.content.decode()


def test_an_end_date_before_the_start_is_said_and_only_the_start_filters(auditor_client, runs):
    response = auditor_client.get("/w/acme/audit/?date_from=2025-01-01&date_to=2024-12-31")
    assert "The end comes before the start (filter ignored)" in response.content.decode()
    assert listed(auditor_client, "?date_from=2025-01-01&date_to=2024-12-31") == [
        runs[name] for name in ("failed", "halted", "warning", "completed")]


@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Pacific/Pago_Pago"])
def test_the_first_and_last_days_of_the_calendar_bound_nothing(auditor_client, runs, zone):
    """Midnight of 0001-01-01 or of the day after 9999-12-31 in the viewer's zone is outside what
    Python holds: those days are every run, never a 500."""
    auditor_client.cookies["tz"] = zone
    everyone = listed(auditor_client, "")
    assert listed(auditor_client, "?date_from=0001-01-01&date_to=9999-12-31") == everyone
    assert listed(auditor_client, "?date_from=0001-01-02&date_to=9999-12-30") == everyone


def test_it_labels_offline_runs(auditor_client, acme):
    run = queued(acme, "Offline draft")
    Run.objects.filter(pk=run.pk).update(offline=True)
    html = auditor_client.get("/w/acme/audit/").content.decode()
    assert '<span class="audit-label">offline</span>' in html


def test_it_paginates_by_50_and_keeps_the_filters(auditor_client, acme):
    Run.objects.bulk_create(Run(workspace=acme, task=f"Task {i}", topology={}) for i in range(51))
    queued(acme, "Unrelated")
    first = auditor_client.get("/w/acme/audit/?q=Task").content.decode()
    assert len(ROW_IDS.findall(first)) == 50
    assert "Matching runs: 51." in first
    assert 'href="?q=Task&amp;page=2"' in first
    second = listed(auditor_client, "?q=Task&page=2")
    assert len(second) == 1
    assert listed(auditor_client, "?q=Task&page=99") == second  # past the end: the last page
