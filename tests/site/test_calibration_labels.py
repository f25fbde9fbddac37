"""Live labels: auditors and admins mark each issue a verifier model raised as real or false, on the
run's audit page; labels are append-only, the latest one counts, and the false share is per
verifier model and issue type, by month."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from django.test import Client

from pipeline.calibration import wilson
from beyond_site.calibration.labels import LabelRefused, false_share, label_issue, raised_issues
from beyond_site.calibration.models import IssueLabel
from beyond_site.runs.models import AppendOnlyError, Run, Verdict
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.scripting import PASS
from tests.site.audit_support import run_task
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db(transaction=True)

TWO_ISSUES = json.dumps({"pass": False, "issues": [
    {"type": "invented_citation", "detail": "Cites ISO 9001.", "quote": "ISO 9001 clause 7"},
    {"type": "step_contract", "detail": "No review frequency.", "quote": ""}]})


@pytest.fixture
def run(acme, tmp_path) -> Run:
    """Step 1: two issues, then a pass after the re-render; step 2: one issue twice (a warning)."""
    trace = run_task(tmp_path, {1: {"executor": ["First try.", "Second try."], "verifier": [TWO_ISSUES, PASS]},
                                2: {"executor": ["Two.", "Two again."],
                                    "verifier": [scripting.fail("Missing owner."), scripting.fail("Still no owner.")]}})
    return Run.objects.get(pk=trace["run"]["id"])


def test_it_lists_every_issue_the_verifier_model_raised_in_document_order(run):
    issues = raised_issues(run)
    assert [(i.step, i.attempt, i.index, i.issue["type"]) for i in issues] == [
        (1, 1, 0, "invented_citation"), (1, 1, 1, "step_contract"), (2, 1, 0, "step_contract"),
        (2, 2, 0, "step_contract")]
    assert all(i.verdict.source == Verdict.MODEL and i.current is None for i in issues)


def test_labels_are_append_only_and_the_latest_supersedes(run, people):
    first = raised_issues(run)[0]
    real = label_issue(run, first.verdict.pk, 0, "real", "  It does cite ISO 9001. ", people["auditor"])
    false = label_issue(run, first.verdict.pk, 0, "false", "ISO 9001 is approved after all.", people["admin"])
    assert real.note == "It does cite ISO 9001." and real.verifier == "scripted:scripted"
    assert real.issue_type == "invented_citation" and real.raised_at == first.verdict.created_at
    again = raised_issues(run)[0]
    assert again.current == false and again.history == [real, false]
    real.note = "changed"
    with pytest.raises(AppendOnlyError):
        real.save()
    with pytest.raises(AppendOnlyError):
        false.delete()
    assert IssueLabel.objects.count() == 2
    assert false_share(run.workspace)["by_verifier"]["scripted:scripted"]["overall"]["labelled"] == 1


def test_a_label_must_name_an_issue_of_this_run(run, people, tmp_path):
    verdict = raised_issues(run)[0].verdict
    with pytest.raises(LabelRefused):
        label_issue(run, verdict.pk, 2, "false", "", people["auditor"])          # it raised two issues
    with pytest.raises(LabelRefused):
        label_issue(run, verdict.pk, 0, "maybe", "", people["auditor"])
    mechanical = Verdict.objects.filter(attempt__step__run=run, source=Verdict.MECHANICAL).first()
    with pytest.raises(LabelRefused):
        label_issue(run, mechanical.pk, 0, "false", "", people["auditor"])
    other = run_task(tmp_path, {1: {"executor": ["x"], "verifier": [scripting.fail(), PASS]}}, task="Other")
    other_verdict = raised_issues(Run.objects.get(pk=other["run"]["id"]))[0].verdict
    with pytest.raises(LabelRefused):
        label_issue(run, other_verdict.pk, 0, "false", "", people["auditor"])
    assert not IssueLabel.objects.exists()


def test_the_false_share_is_per_verifier_and_type_by_month(run, people):
    issues = raised_issues(run)

    def label(item, verdict_label, verifier, month):
        IssueLabel.objects.create(workspace=run.workspace, run=run, verdict=item.verdict, issue_index=item.index,
                                  issue_type=item.issue["type"], verifier=verifier, label=verdict_label,
                                  raised_at=datetime(2026, month, 15, tzinfo=timezone.utc),
                                  labelled_by=people["auditor"])

    label(issues[0], "real", "openrouter:a", 1)     # superseded below: not counted
    label(issues[0], "false", "openrouter:a", 1)
    label(issues[1], "real", "openrouter:a", 1)
    label(issues[2], "false", "openrouter:a", 2)
    label(issues[3], "real", "openai:b", 2)
    shares = false_share(run.workspace)
    assert shares["labelled"] == 4
    a = shares["by_verifier"]["openrouter:a"]
    lo, hi = wilson(2, 3)
    assert a["overall"] == {"labelled": 3, "false": 2, "n": 3, "rate": 0.6667, "ci95": [round(lo, 4), round(hi, 4)]}
    assert {m: (s["labelled"], s["false"]) for m, s in a["months"].items()} == {"2026-01": (2, 1), "2026-02": (1, 1)}
    assert shares["by_verifier"]["openai:b"]["overall"]["rate"] == 0.0
    by_type = {kind: (s["overall"]["labelled"], s["overall"]["false"]) for kind, s in shares["by_type"].items()}
    assert by_type == {"invented_citation": (1, 1), "step_contract": (3, 1)}


def label_url(run) -> str:
    return f"/w/{run.workspace.slug}/calibration/runs/{run.pk}/labels/"


def post_label(client, run, item, label="false", note="Not a violation."):
    return client.post(label_url(run), {"verdict": item.verdict.pk, "issue": item.index, "label": label, "note": note})


def test_an_auditor_labels_from_the_run_page_and_is_sent_back_to_it(run, people):
    client = client_for(people["auditor"])
    page = client.get(f"/w/acme/audit/runs/{run.pk}/").content.decode()
    assert 'id="issue-labels"' in page and page.count('class="cal-label-form"') == 4
    item = raised_issues(run)[1]
    response = post_label(client, run, item)
    assert response.status_code == 302
    assert response["Location"] == f"/w/acme/audit/runs/{run.pk}/#issue-{item.verdict.pk}-1"
    saved = IssueLabel.objects.get()
    assert (saved.label, saved.note, saved.labelled_by, saved.issue_index) == ("false", "Not a violation.",
                                                                               people["auditor"], 1)
    page = client.get(f"/w/acme/audit/runs/{run.pk}/").content.decode()
    assert f'data-issue="{item.verdict.pk}-1" data-label="false"' in page and "Not a violation." in page


def test_an_admin_labels_too_and_a_member_only_reads(run, people):
    item = raised_issues(run)[0]
    assert post_label(client_for(people["admin"]), run, item, "real").status_code == 302
    member = client_for(people["member"])
    assert post_label(member, run, item).status_code == 403
    page = member.get(f"/w/acme/audit/runs/{run.pk}/").content.decode()
    assert 'data-label="real"' in page and "cal-label-form" not in page
    assert IssueLabel.objects.count() == 1


def test_strangers_and_other_workspaces_get_404(run, people, globex, tmp_path):
    item = raised_issues(run)[0]
    assert post_label(client_for(people["stranger"]), run, item).status_code == 404
    Membership.objects.create(user=people["stranger"], workspace=globex, role=Membership.AUDITOR)
    stranger = client_for(people["stranger"])
    response = stranger.post(f"/w/globex/calibration/runs/{run.pk}/labels/",
                             {"verdict": item.verdict.pk, "issue": 0, "label": "false"})
    assert response.status_code == 404
    assert Client().post(label_url(run), {})["Location"].startswith("/accounts/login/")
    assert not IssueLabel.objects.exists()


def test_a_bad_label_is_refused_with_a_message_and_get_is_not_allowed(run, people):
    client = client_for(people["auditor"])
    item = raised_issues(run)[0]
    response = post_label(client, run, item, label="maybe")
    assert response.status_code == 302 and response["Location"].endswith("#issue-labels")
    response = client.post(label_url(run), {"verdict": item.verdict.pk, "issue": 7, "label": "false"}, follow=True)
    assert "this run&#x27;s verifier raised no such issue" in response.content.decode()
    assert client.get(label_url(run)).status_code == 405
    assert not IssueLabel.objects.exists()
