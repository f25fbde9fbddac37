"""JSON exports: one run's trace, and the filtered list, as attachments with no secret in them."""
from __future__ import annotations

import json

import pytest

from beyond_site.audit import views
from beyond_site.runs.models import Run
from beyond_site.runs.selectors import run_trace
from tests.scripting import PASS, fail
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_runs(acme, tmp_path) -> list[int]:
    done = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]}}, task="Asset register")
    halted = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [fail(), {"error": "crash"}]}, },
                      task="Audit plan")
    return [done["run"]["id"], halted["run"]["id"]]


def test_the_run_export_is_the_run_trace_as_an_attachment(auditor_client, two_runs):
    run_id = two_runs[0]
    response = auditor_client.get(f"/w/acme/audit/runs/{run_id}/trace.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Content-Disposition"] == f'attachment; filename="beyond-run-{run_id}.json"'
    assert json.loads(response.content) == json.loads(json.dumps(run_trace(Run.objects.get(pk=run_id))))


def test_the_list_export_is_the_filtered_traces_newest_first(auditor_client, two_runs):
    everything = auditor_client.get("/w/acme/audit/export.json")
    assert everything["Content-Disposition"] == 'attachment; filename="beyond-runs-acme.json"'
    assert [t["run"]["id"] for t in everything.json()] == list(reversed(two_runs))
    halted = auditor_client.get("/w/acme/audit/export.json?status=halted").json()
    assert halted == [json.loads(json.dumps(run_trace(Run.objects.get(pk=two_runs[1]))))]
    assert auditor_client.get("/w/acme/audit/export.json?q=nothing-like-this").json() == []


def test_the_list_export_is_capped_and_says_so(auditor_client, two_runs, monkeypatch):
    monkeypatch.setattr(views, "EXPORT_CAP", 1)
    response = auditor_client.get("/w/acme/audit/export.json")
    assert len(response.json()) == 1
    assert response["X-Beyond-Runs-Matched"] == "2" and response["X-Beyond-Runs-Exported"] == "1"
    assert "The export holds the newest 1 of them" in auditor_client.get("/w/acme/audit/").content.decode()


def test_the_list_page_links_to_the_export_with_its_filters(auditor_client, two_runs):
    html = auditor_client.get("/w/acme/audit/?status=halted&page=1").content.decode()
    assert 'href="/w/acme/audit/export.json?status=halted"' in html


def test_exports_hold_no_secret(auditor_client, acme, two_runs, settings, monkeypatch):
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-or-test-should-never-leak")
    run = Run.objects.create(workspace=acme, task="Queued", topology={
        "planner": {"provider": "openai", "model": "m", "effort": "high",
                    "base_url": "https://user:hunter2@llm.example/v1?api_key=sk-in-url"}})
    for url in ["/w/acme/audit/export.json", f"/w/acme/audit/runs/{run.pk}/trace.json", f"/w/acme/audit/runs/{run.pk}/"]:
        body = auditor_client.get(url).content.decode()
        for secret in ("sk-or-test-should-never-leak", settings.SECRET_KEY, "hunter2", "sk-in-url"):
            assert secret not in body, (url, secret)
    trace = auditor_client.get(f"/w/acme/audit/runs/{run.pk}/trace.json").json()
    assert trace["run"]["topology"]["planner"]["base_url"] == "https://llm.example/v1"
