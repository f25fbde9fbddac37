"""The calibration reports page: admins only, reports side by side as server-drawn SVG, the false share
of labelled issues beside them, JSON and CSV exports, and starting or resuming a report from the page."""
from __future__ import annotations

import csv
import io
import re
import time

import pytest

from beyond_site.calibration.models import CalibrationReport, IssueLabel
from beyond_site.calibration.labels import label_issue, raised_issues
from beyond_site.runs.models import Run
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.scripting import PASS
from tests.site.audit_support import run_task
from tests.site.calibration_support import FLAG, calibrate, verifier_script
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def two_reports(acme, tmp_path) -> list[CalibrationReport]:
    """One verifier that flags everything, one that flags nothing, on the same 16 drafts."""
    flagging, _ = calibrate("--provider", f"scripted:{verifier_script(tmp_path, FLAG, name='flag.json')}",
                            "--drafts", "16")
    passing, _ = calibrate("--provider", f"scripted:{verifier_script(tmp_path, PASS, name='pass.json')}",
                           "--drafts", "16")
    return [CalibrationReport.objects.get(pk=r["report"]["id"]) for r in (flagging, passing)]


def chart(page: str, chart_id: str) -> str:
    match = re.search(rf'<figure class="cal-figure" id="{chart_id}">(.*?)</figure>', page, re.S)
    assert match, f"no chart {chart_id}"
    return match[1]


def test_the_page_draws_two_reports_side_by_side(people, two_reports):
    flagging, passing = two_reports
    response = client_for(people["admin"]).get("/w/acme/calibration/")
    assert response.status_code == 200
    page = response.content.decode()
    clean = chart(page, "chart-clean")
    assert "<svg" in clean and 'role="img"' in clean
    # one bar per report and contract, with its interval whisker, the reports next to each other
    rows = re.findall(r'<g class="cal-row cal-series-(\w+)">\s*<text class="cal-label"[^>]*>([^<]*)</text>', clean)
    assert rows == [("narrow", f"#{passing.pk} scripted:scripted"), ("narrow", f"#{flagging.pk} scripted:scripted"),
                    ("widened", f"#{passing.pk} scripted:scripted"), ("widened", f"#{flagging.pk} scripted:scripted")]
    widths = [float(w) for w in re.findall(r'<rect class="cal-bar" x="250" y="[\d.]+" width="([\d.]+)"', clean)]
    assert widths == [0.0, 380.0, 0.0, 380.0]              # 0% and 100% of the plot's 380 px
    assert clean.count('class="cal-ci"') == 4 * 3
    assert "8/8 · 100.0%" in clean and "0/8 · 0.0%" in clean
    recall = chart(page, "chart-recall")
    assert "contradicted judgment" in recall and "removed requirement" in recall
    assert "chart-unparseable" in page
    assert "<th>#%d</th>" % flagging.pk in page and "<th>#%d</th>" % passing.pk in page


def test_the_page_obeys_the_content_security_policy(people, two_reports):
    response = client_for(people["admin"]).get("/w/acme/calibration/")
    page = response.content.decode()
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert " style=" not in page and "<style" not in page
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", page))
    assert "calibration.css" in page


def test_the_reports_to_compare_are_chosen_on_the_page(people, two_reports):
    flagging, passing = two_reports
    page = client_for(people["admin"]).get(f"/w/acme/calibration/?r={flagging.pk}").content.decode()
    clean = chart(page, "chart-clean")
    assert f"#{flagging.pk} scripted" in clean and f"#{passing.pk} scripted" not in clean


@pytest.mark.parametrize("role, status", [("member", 403), ("auditor", 403), ("stranger", 404)])
def test_only_admins_see_the_page_and_the_exports(people, two_reports, role, status):
    client = client_for(people[role])
    report = two_reports[0].pk
    for url in ("/w/acme/calibration/", f"/w/acme/calibration/{report}.json", f"/w/acme/calibration/{report}.csv"):
        assert client.get(url).status_code == status, url
    for url in ("/w/acme/calibration/start/", f"/w/acme/calibration/{report}/resume/"):
        assert client.post(url, {"contract": "narrow"}).status_code == status, url
    assert CalibrationReport.objects.count() == 2


def test_a_report_of_another_workspace_is_404(people, two_reports, globex):
    Membership.objects.create(user=people["admin"], workspace=globex, role=Membership.ADMIN)
    client = client_for(people["admin"])
    assert client.get(f"/w/globex/calibration/{two_reports[0].pk}.json").status_code == 404
    assert f"#{two_reports[0].pk}" not in client.get("/w/globex/calibration/").content.decode()


def test_the_json_export_has_the_figures_and_every_call(people, two_reports):
    report = two_reports[0]
    response = client_for(people["admin"]).get(f"/w/acme/calibration/{report.pk}.json")
    assert response["Content-Disposition"] == f'attachment; filename="beyond-calibration-acme-{report.pk}.json"'
    data = response.json()
    assert data["contracts"] == report.report["contracts"] and data["report"]["id"] == report.pk
    assert len(data["results"]) == 32 and {r["contract"] for r in data["results"]} == {"narrow", "widened"}
    assert all(r["kind"] and r["verdict"]["pass"] is False for r in data["results"])


def test_the_csv_export_has_a_row_per_measure(people, two_reports):
    report = two_reports[0]
    response = client_for(people["admin"]).get(f"/w/acme/calibration/{report.pk}.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    flagged = [r for r in rows if r["measure"] == "clean_flagged" and r["contract"] == "narrow"]
    assert flagged == [{"report": str(report.pk), "verifier": "scripted:scripted", "contract": "narrow",
                        "measure": "clean_flagged", "type": "", "n": "8", "count": "8", "rate": "1.0",
                        "ci95_low": "0.6756", "ci95_high": "1.0", "value": ""}]
    caught = {r["type"] for r in rows if r["measure"] == "violation_caught" and r["contract"] == "widened"}
    assert caught == set(report.report["contracts"]["widened"]["violations"])
    assert any(r["contract"] == "citation_gate" for r in rows)


def test_the_false_share_of_labelled_issues_is_shown_beside_the_reports(people, tmp_path):
    trace = run_task(tmp_path, {1: {"executor": ["One.", "One again."], "verifier": [scripting.fail(), PASS]},
                                2: {"executor": ["Two.", "Two again."], "verifier": [scripting.fail(), PASS]}})
    run = Run.objects.get(pk=trace["run"]["id"])
    first, second = raised_issues(run)
    label_issue(run, first.verdict.pk, 0, "false", "", people["auditor"])
    label_issue(run, second.verdict.pk, 0, "real", "", people["auditor"])
    page = client_for(people["admin"]).get("/w/acme/calibration/").content.decode()
    by_model = chart(page, "chart-labels-by-verifier")
    assert "scripted:scripted" in by_model and "1/2 false" in by_model
    assert "2 issues labelled." in page
    assert IssueLabel.objects.count() == 2


def wait_for(report_id: int, status: str, timeout: float = 30.0) -> CalibrationReport:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        report = CalibrationReport.objects.get(pk=report_id)
        if report.status == status:
            return report
        time.sleep(0.1)
    raise AssertionError(f"report {report_id} is {report.status}, not {status}")


def test_an_admin_starts_a_calibration_from_the_page(people, acme, tmp_path, server_loop):
    role = {"provider": "scripted", "path": str(verifier_script(tmp_path, FLAG))}
    acme.topology = {r: role for r in ("planner", "executor", "verifier", "summarizer")}
    acme.save()
    client = client_for(people["admin"])
    response = client.post("/w/acme/calibration/start/", {"contract": "narrow", "drafts": "10"})
    assert response.status_code == 302
    report = wait_for(CalibrationReport.objects.get().pk, "completed")
    assert report.created_by == people["admin"] and report.contracts == ["narrow"]
    assert report.report["contracts"]["narrow"]["clean"]["rate"] == 1.0 and report.results.count() == 10
    page = client.get("/w/acme/calibration/").content.decode()
    assert f'id="report-{report.pk}" data-status="completed"' in page


def test_a_stopped_report_is_resumed_from_the_page(people, acme, tmp_path, server_loop):
    path = verifier_script(tmp_path, PASS)
    first, _ = calibrate("--provider", f"scripted:{path}", "--drafts", "10", "--max-calls", "3")
    report = CalibrationReport.objects.get(pk=first["report"]["id"])
    page = client_for(people["admin"]).get("/w/acme/calibration/").content.decode()
    assert f"/w/acme/calibration/{report.pk}/resume/" in page
    client_for(people["admin"]).post(f"/w/acme/calibration/{report.pk}/resume/")
    report = wait_for(report.pk, "completed")
    assert report.results.count() == 20 and report.options["max_calls"] is None


def test_a_running_report_shows_its_progress_and_time_left(people, two_reports, settings):
    from datetime import timedelta
    from django.utils import timezone
    running = CalibrationReport.objects.filter(pk=two_reports[0].pk)
    running.update(status="running", lease_owner="elsewhere:1:0.0",
                   lease_expires_at=timezone.now() + timedelta(seconds=settings.BEYOND_RUN_LEASE_S),
                   progress={"done": 40, "total": 160, "calls": 40, "cost_usd": 0.0, "left_s": 3000.0})
    page = client_for(people["admin"]).get("/w/acme/calibration/").content.decode()
    row = re.search(rf'<tr id="report-{two_reports[0].pk}".*?</tr>', page, re.S)[0]
    assert "40/160 done, about 50 min left" in row
    running.update(progress={"done": 150, "total": 160, "calls": 150, "cost_usd": 0.0, "left_s": 5400.0 + 120})
    row = re.search(rf'<tr id="report-{two_reports[0].pk}".*?</tr>', client_for(people["admin"]).get(
        "/w/acme/calibration/").content.decode(), re.S)[0]
    assert "150/160 done, about 1 h 32 min left" in row
