"""The workspace's settings and its calibration reports are on the tamper-evident record (issue 49's
review, finding 10): an SQL edit that clears the calibration requirement, or that changes a
completed report's figures, is named by `beyond_audit verify`, and a report changed or made outside
the application counts for no run."""
from __future__ import annotations

import pytest

from beyond_site.calibration.models import CalibrationReport
from beyond_site.runs.chain import verify_workspace
from beyond_site.runs.queue import start_run
from beyond_site.runs.trust import CalibrationRequired
from beyond_site.workspaces import configuration
from beyond_site.workspaces.models import Workspace
from pipeline.topology import parse_shorthand
from tests.site.audit_support import sql, verify
from tests.site.test_verifier_trust import GEMMA, report, require

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def small_reports(settings):
    settings.BEYOND_CALIBRATION_MIN_DRAFTS = 20
    settings.BEYOND_RUN_IN_PROCESS = False


def test_a_requirement_cleared_outside_the_application_is_named_and_one_changed_in_it_is_not(acme):
    assert verify_workspace(acme).changes == []
    require(acme, max_clean_flagged=0.2)
    require(acme, max_clean_flagged=0.1)  # two logged changes: the last one holds
    assert verify_workspace(acme).changes == []
    sql("UPDATE workspaces_workspace SET calibration_requirement = NULL WHERE id = %s", [acme.pk])
    problems = verify_workspace(acme).changes
    assert problems and "calibration requirement is not what change" in problems[0]
    # Put right in the app (a logged change), the record holds again.
    configuration.set_calibration_requirement(Workspace.objects.get(pk=acme.pk), {"max_clean_flagged": 0.3})
    assert verify_workspace(acme).changes == []


def test_a_requirement_set_outside_the_application_is_named_too(acme):
    sql("UPDATE workspaces_workspace SET calibration_requirement = %s WHERE id = %s",
        ['{"max_clean_flagged": 1}', acme.pk])
    assert any("calibration requirement" in p for p in verify_workspace(acme).changes)


def test_a_topology_changed_outside_the_application_is_named(acme):
    configuration.set_topology(acme, {role: {"provider": "offline"} for role in
                                      ("planner", "executor", "verifier", "summarizer")}, operator=True)
    assert verify_workspace(acme).changes == []
    sql("UPDATE workspaces_workspace SET topology = %s WHERE id = %s",
        ['{"verifier": {"provider": "scripted", "path": "x.json"}}', acme.pk])
    assert any("topology" in p for p in verify_workspace(acme).changes)


def test_a_report_changed_after_it_completed_counts_for_nothing_and_is_named(acme, bob):
    require(acme, max_clean_flagged=0.2)
    bad = report(acme, clean=(20, 20))  # flagged every faithful draft: the gate refuses
    with pytest.raises(CalibrationRequired):
        start_run(acme, "Draft a policy", user=bob, topology=parse_shorthand(GEMMA))
    sql("UPDATE calibration_calibrationreport SET report = %s WHERE id = %s",
        ['{"contracts": {"narrow": {"clean": {"n": 20, "rate": 0.0, "flagged": 0, "ci95": [0, 0.1]}, '
         '"violations": {}, "unparseable": {"n": 0, "rate": 0.0}}}}', bad.pk])
    with pytest.raises(CalibrationRequired) as refused:  # the edited report is no report
        start_run(acme, "Draft a policy", user=bob, topology=parse_shorthand(GEMMA))
    assert "never been calibrated" in refused.value.message
    problems = verify_workspace(acme).changes
    assert any(f"calibration report {bad.pk} does not match" in p for p in problems)
    code, out = verify("--workspace", "acme")
    assert code == 1 and f"calibration report {bad.pk}" in out


def test_a_report_made_outside_the_application_counts_for_nothing_and_is_named(acme, bob):
    require(acme, max_clean_flagged=0.2)
    made = report(acme, clean=(0, 20), status=CalibrationReport.STOPPED)  # not logged: it never completed
    sql("UPDATE calibration_calibrationreport SET status = %s WHERE id = %s", [CalibrationReport.COMPLETED, made.pk])
    with pytest.raises(CalibrationRequired):
        start_run(acme, "Draft a policy", user=bob, topology=parse_shorthand(GEMMA))
    assert any(f"calibration report {made.pk} is on no change log entry" in p for p in verify_workspace(acme).changes)
    good = report(acme, days_ago=0, clean=(0, 20))  # one completed in the app counts
    run, created = start_run(acme, "Draft a policy", user=bob, topology=parse_shorthand(GEMMA))
    assert created and run.verifier_trust["requirement"]["met_by"] == good.pk
