"""Unsourced specifics end to end: a scripted run through `beyond_run` (the chat's code path) with
planted drafts, its trace, the run list's count and filter, the chat's markers and Sources panel,
the audit page and the export."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from beyond_site.chat.fragments import snapshot
from beyond_site.runs.models import Run
from beyond_site.runs.unsourced import mark_unsourced
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.pipeline.specifics_fixture import planted, planted_brief
from tests.scripting import PASS

pytestmark = pytest.mark.django_db(transaction=True)

RECAP = "Notify the controller within a day, and the supervisory authority within 72 hours."


def beyond_run(tmp_path, data: dict, task: str) -> dict:
    path = scripting.write(tmp_path, data)
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--task", task, "--provider", f"scripted:{path}", "--json",
                 stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def planted_run(acme, tmp_path) -> dict:
    data = planted()
    for memory in data["memories"]:
        call_command("beyond_workspace", "add-memory", "acme", memory, stdout=io.StringIO())
    for file in data["files"]:
        (tmp_path / file["name"]).write_text(file["text"], encoding="utf-8")
        call_command("beyond_workspace", "add-file", "acme", str(tmp_path / file["name"]), stdout=io.StringIO())
    steps = {int(k): {"executor": [draft], "verifier": [PASS]} for k, draft in data["drafts"].items()}
    script = scripting.script(steps, planner=[json.dumps(planted_brief(data))], summarizer=[RECAP])
    return {"data": data, "trace": beyond_run(tmp_path, script, data["task"])}


@pytest.fixture
def member_client(alice, acme) -> Client:
    Membership.objects.create(user=alice, workspace=acme, role=Membership.MEMBER)
    client = Client()
    client.force_login(alice)
    return client


def test_the_trace_lists_every_planted_specific_and_links_every_faithful_one(planted_run):
    data, trace = planted_run["data"], planted_run["trace"]
    assert trace["run"]["status"] == "completed"
    for step in trace["steps"]:
        k = str(step["index"])
        assert {(u["text"], u["kind"]) for u in step["unsourced"]} == {(t, kind) for s, t, kind in data["invented"] if s == k}
        linked = {(text, src["kind"]) for src in step["sources"] for text in src["specifics"]}
        assert linked == {(t, source) for s, t, _, source in data["faithful"] if s == k}
        assert all(set(src) >= {"kind", "ref", "text"} for src in step["sources"]) and step["specifics_read"]
    file_sources = [src for step in trace["steps"] for src in step["sources"] if src["kind"] == "file"]
    assert {src["ref"] for src in file_sources} == {"breach-policy.md"}
    assert "within 24 h of becoming aware" in file_sources[0]["text"]
    assert trace["summary_unsourced"] == [{"text": "72 hours", "kind": "duration"}]
    assert trace["run"]["unsourced_count"] == len(data["invented"]) + 1
    assert [e for e in trace["events"] if e["type"] == "specifics_listed"][-1]["step"] is None


def test_the_run_list_counts_them_and_filters_the_runs_that_have_some(planted_run, acme, tmp_path, member_client):
    clean = beyond_run(tmp_path, scripting.script({1: {"executor": ["Part one, as planned."], "verifier": [PASS]}}),
                       "A clean note")
    planted_id = planted_run["trace"]["run"]["id"]
    page = member_client.get("/w/acme/audit/").content.decode()
    assert f'data-unsourced="{len(planted_run["data"]["invented"]) + 1}"' in page and 'data-unsourced="0"' in page
    filtered = member_client.get("/w/acme/audit/?unsourced=on").content.decode()
    assert f"/w/acme/audit/runs/{planted_id}/" in filtered
    assert f"/w/acme/audit/runs/{clean['run']['id']}/" not in filtered


def test_the_chat_marks_each_unsourced_specific_and_shows_the_sources_of_the_others(planted_run):
    html, _, finished = snapshot(planted_run["trace"]["run"]["id"])
    assert finished
    assert '<mark class="unsourced" tabindex="0" data-kind="duration"' in html
    assert ">72 hours</mark>" in html and ">Marc Dubois</mark>" in html and ">€40,000</mark>" in html
    assert ">24 hours</mark>" not in html  # sourced: not marked
    assert 'id="run-%d-step-1-specifics"' % planted_run["trace"]["run"]["id"] in html
    assert "breach-policy.md" in html and "within 24 h of becoming aware" in html
    assert 'id="run-%d-recap-specifics"' % planted_run["trace"]["run"]["id"] in html


def test_the_audit_page_lists_them_per_step(planted_run, member_client):
    run_id = planted_run["trace"]["run"]["id"]
    page = member_client.get(f"/w/acme/audit/runs/{run_id}/").content.decode()
    assert page.count("<h4>Unsourced specifics</h4>") == 4  # three steps and the recap
    assert '<mark class="unsourced">Northwind Security Ltd</mark>' in page
    assert "Lex Conseil SAS" in page  # the memory passage that states the DPO's details


def test_the_export_lists_them_per_section(planted_run, member_client):
    run_id = planted_run["trace"]["run"]["id"]
    md = member_client.get(f"/w/acme/runs/{run_id}/export.md").content.decode()
    appendix = md.split("## Appendix: unsourced specifics", 1)[1]
    assert "| 2\\. Part 2 | Marc Dubois | person's name |" in appendix
    assert "| Recap | 72 hours | duration or deadline |" in appendix
    assert "10 specifics found in no source." in appendix


def test_a_marker_adds_no_markup_from_the_text_it_marks():
    html = mark_unsourced('<p>Call &lt;b&gt;x&lt;/b&gt; now</p>', [
        {"text": "<b>x</b>", "kind": 'person" onmouseover="alert(1)'}])
    assert html.count("<mark") == 1 and "onmouseover=\"alert" not in html and "<b>" not in html
    assert "&lt;b&gt;x&lt;/b&gt;</mark>" in html


def test_a_run_from_before_the_reading_shows_no_panel(planted_run):
    run = Run.objects.get(pk=planted_run["trace"]["run"]["id"])
    run.steps.update(unsourced=None, sources=None)
    html, _, _ = snapshot(run.pk)
    assert 'id="run-%d-step-1-specifics"' % run.pk not in html and "<mark" not in html.split("recap")[0]
