"""The run page shows the whole record: topology, brief, drafts, verdicts, calls, events, halts."""
from __future__ import annotations

import re

import pytest

from beyond_site.runs.models import ModelCall, Run, RunEvent, Step
from tests.scripting import PASS, brief, fail
from tests.site.audit_support import run_task

pytestmark = pytest.mark.django_db(transaction=True)

BADGE = re.compile(r'class="audit-badge[^"]*"[^>]*>([^<]*)<')  # its tooltip (title) may follow


def page(client, run_id: int) -> str:
    response = client.get(f"/w/acme/audit/runs/{run_id}/")
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_drafts_verdicts_rerenders_calls_and_events(auditor_client, tmp_path):
    trace = run_task(tmp_path, {
        1: {"executor": ["First try.", "Managers approve access."], "verifier": [fail("Who approves?"), PASS]},
        2: {"executor": ["Draft A.", "Draft B."], "verifier": [fail("missing A"), fail("still missing B")]},
    })
    html = page(auditor_client, trace["run"]["id"])
    for text in ["First try.", "Managers approve access.", "Draft A.", "Draft B.", "Who approves?",
                 "still missing B", "Attempt 2 (re-render)", "passed after re-render", "A.5.15", "Access control",
                 "Audience: all staff.", "Deliver part 1 of the note.", "A short recap."]:
        assert text in html, text
    assert "fail (1 issue)" in html and "pass (no violation found)" in html
    assert "mechanical verdict" in html and "model verdict" in html
    assert BADGE.findall(html) == ["passed after re-render · uncalibrated verifier", "warning"]  # a scripted verifier, never calibrated
    calls = ModelCall.objects.filter(run_id=trace["run"]["id"])
    for call in calls:
        assert f"/calls/{call.pk}/context/" in html
    assert html.count("what this call was given") == calls.count()
    for event in RunEvent.objects.filter(run_id=trace["run"]["id"]):
        assert event.at.isoformat(timespec="microseconds") in html
    assert "step_released" in html and "run_completed" in html


def test_it_shows_the_topology_per_role(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["Only step."], "verifier": [PASS]}})
    html = page(auditor_client, trace["run"]["id"])
    topology = html.split('id="topology"')[1].split("</section>")[0]
    assert re.search(r"<td>planner</td><td>scripted</td><td>scripted</td><td>high</td>", topology)
    assert re.search(r"<td>verifier</td><td>scripted</td><td>scripted</td><td>low</td>", topology)


def test_it_shows_a_halted_run_with_its_reasons_and_unreleased_steps(auditor_client, tmp_path):
    trace = run_task(tmp_path, {
        1: {"executor": ["Step one."], "verifier": [PASS]},
        2: {"executor": ["Step two, never shown to the user."], "verifier": [{"error": "timeout"}, {"error": "http_500"}]},
        3: {"executor": ["Step three."], "verifier": [PASS]},
    })
    assert trace["run"]["status"] == "halted"
    html = page(auditor_client, trace["run"]["id"])
    assert trace["run"]["halt_reason"] in html
    assert BADGE.findall(html) == ["passed · uncalibrated verifier", "halted", "not released"]
    assert "Halted: the verifier gave no parseable verdict" in html
    assert "no parseable verdict" in html and "timeout" in html and "http_500" in html
    # The auditor sees the halted draft as an attempt, never as released content.
    step2 = html.split('id="step-2"')[1].split("</article>")[0]
    assert "Step two, never shown to the user." in step2 and "Released content" not in step2
    assert "run_halted" in html


def test_it_shows_a_failed_run_without_a_brief(auditor_client, tmp_path):
    trace = run_task(tmp_path, {}, planner=["not a brief", "still not"])
    html = page(auditor_client, trace["run"]["id"])
    assert "No brief" in html and "run_failed" in html and "planner_rejected" in html


def test_its_badges_never_claim_the_content_is_verified_or_true(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["One."], "verifier": [PASS]},
                                2: {"executor": ["Two.", "Two again."], "verifier": [fail(), PASS]},
                                3: {"executor": ["Three.", "Three again."], "verifier": [fail(), fail()]}})
    html = page(auditor_client, trace["run"]["id"])
    badges = BADGE.findall(html)
    assert badges == ["passed · uncalibrated verifier", "passed after re-render · uncalibrated verifier", "warning"]
    assert not any(word in b.lower() for b in badges for word in ("verified", "true", "correct"))
    assert "verified" not in html.lower()


def test_it_escapes_model_made_and_user_typed_text(auditor_client, tmp_path):
    attack = "<script>alert('draft')</script><img src=x onerror=alert(1)>"
    trace = run_task(tmp_path, {1: {"executor": [attack], "verifier": [
        fail(detail="<b>bold issue</b>"), PASS]}}, task="Task <script>alert('task')</script>",
        summarizer=["<script>alert('recap')</script>"])
    html = page(auditor_client, trace["run"]["id"])
    assert "<script>alert(" not in html and "<img src=x" not in html and "<b>bold issue</b>" not in html
    assert "&lt;script&gt;alert(&#x27;draft&#x27;)&lt;/script&gt;" in html
    assert "&lt;b&gt;bold issue&lt;/b&gt;" in html
    listing = auditor_client.get("/w/acme/audit/").content.decode()
    assert "<script>alert(" not in listing and "Task &lt;script&gt;" in listing


def test_it_shows_a_failed_call_s_error_in_the_calls_table(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": [{"error": "http_429"}], "verifier": [PASS]}})
    html = page(auditor_client, trace["run"]["id"])
    calls = html.split('id="calls"')[1].split("</section>")[0]
    assert "http_429" in calls


def test_it_shows_a_running_run_s_unsettled_steps_as_pending(auditor_client, acme):
    run = Run.objects.create(workspace=acme, task="Still going", topology={}, status=Run.RUNNING,
                             brief=brief(2))
    for s in brief(2)["steps"]:
        Step.objects.create(run=run, index=s["index"], title=s["title"], content_spec=s["content_spec"])
    html = page(auditor_client, run.pk)
    assert BADGE.findall(html) == ["pending", "pending"]
    assert "not finished" in html


def test_the_recap_is_shown_with_its_mechanical_findings(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["Managers approve access."], "verifier": [PASS]}},
                     summarizer=["The note also meets ISO/IEC 27001:2022 A.8.99 <b>fully</b>."])
    assert [f["type"] for f in trace["summary_findings"]] == ["invented_citation"]
    html = page(auditor_client, trace["run"]["id"])
    recap = html[html.index('<section id="summary">'):html.index('<section id="calls">')]
    assert 'id="recap-findings"' in recap and "1 problem" in recap
    assert "invented_citation" in recap and "A.8.99" in recap
    assert "<b>fully</b>" not in recap and "&lt;b&gt;fully&lt;/b&gt;" in recap


def test_a_recap_without_findings_says_none_were_found(auditor_client, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["Managers approve access."], "verifier": [PASS]}})
    html = page(auditor_client, trace["run"]["id"])
    recap = html[html.index('<section id="summary">'):html.index('<section id="calls">')]
    assert 'id="recap-findings"' not in recap and "no problem found" in recap
