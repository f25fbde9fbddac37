"""`beyond_calibrate` on a real model: a report under both contracts, with the unparseable rate and
the catch rates, saved as it goes. A small sample (docs/calibration.md has the figures of a full
one); what the model judged is not asserted, only that every figure is there and adds up."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from beyond_site.calibration.models import CalibrationReport, CalibrationResult
from beyond_site.workspaces.models import Membership
from tests import scripting
from tests.realmodel.rules import MODEL, topology
from tests.site.chat_support import client_for

pytestmark = pytest.mark.django_db(transaction=True)

DRAFTS = 4


def test_a_calibration_of_the_real_verifier_under_both_contracts(workspace, model_server, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    roles = topology(model_server)
    roles["verifier"]["max_tokens"] = 160
    calibrated = dict(roles["verifier"])
    call_command("beyond_calibrate", "--workspace", "acme", "--topology", json.dumps(roles), "--contract", "both",
                 "--drafts", str(DRAFTS), "--workspace-drafts", "0", "--json", stdout=out, stderr=err)
    document = json.loads(out.getvalue())
    assert set(document["contracts"]) == {"narrow", "widened"}
    for contract in document["contracts"].values():
        clean, unparseable = contract["clean"], contract["unparseable"]
        caught = sum(v["n"] for v in contract["violations"].values())
        assert unparseable["n"] + clean["n"] + caught == DRAFTS  # every draft asked once, and counted once
        assert 0 <= unparseable["rate"] <= 1
        if clean["n"]:
            assert 0 <= clean["rate"] <= 1 and clean["ci95"][0] <= clean["rate"] <= clean["ci95"][1]
        for violation in contract["violations"].values():
            assert 0 <= violation["caught"] <= violation["n"]
    report = CalibrationReport.objects.get()
    assert report.status == CalibrationReport.COMPLETED and MODEL in report.verifier
    results = CalibrationResult.objects.filter(report=report)
    assert results.count() == 2 * DRAFTS
    progress = [line for line in err.getvalue().splitlines() if line.startswith("calibrating: ")]
    assert progress[-1].startswith(f"calibrating: {2 * DRAFTS}/{2 * DRAFTS} done") and "left" in progress[-1]
    _the_page_shows_the_reports_figures(workspace, report, document)

    # The next run on that verifier records the report as its trust status (the planner here is
    # scripted to decline, so the run ends at once: the status is taken when a run starts).
    script = scripting.write(tmp_path, {"planner": [json.dumps(scripting.declined_brief())]})
    scripted = {"provider": "scripted", "path": str(script)}
    # The verifier exactly as calibrated: a report holds for the settings it was taken with.
    roles = {"planner": scripted, "executor": scripted, "summarizer": scripted, "verifier": calibrated}
    out = io.StringIO()
    call_command("beyond_run", "--workspace", "acme", "--json", "--task", "Translate the policy into French",
                 "--topology", json.dumps(roles), stdout=out)
    trust = json.loads(out.getvalue())["run"]["verifier_trust"]
    assert trust["report"] == report.pk and trust["calibrated_at"]
    assert trust["unparseable_rate"] == pytest.approx(document["contracts"]["narrow"]["unparseable"]["rate"])


def _the_page_shows_the_reports_figures(workspace, report, document):
    """The Calibration page, as an admin reads it, gives the figures the command printed."""
    from django.contrib.auth import get_user_model
    admin = get_user_model().objects.create_user("ada", password="x" * 12)
    Membership.objects.create(user=admin, workspace=workspace, role=Membership.ADMIN)
    page = client_for(admin).get(f"/w/acme/calibration/?r={report.pk}").content.decode()
    narrow = document["contracts"]["narrow"]
    row = page.split(f'<tr id="report-{report.pk}"')[1].split("</tr>")[0]
    assert "completed" in row and f"{narrow['clean']['flagged']}/{narrow['clean']['n']}" in row
    for name, contract in document["contracts"].items():
        shown = f"<th scope=\"row\">{name}: unparseable</th><td>{contract['unparseable']['n']}/{contract['drafts']}</td>"
        assert shown in page
        issues = contract["issues"]
        assert (f"<th scope=\"row\">{name}: issues false / raised</th><td>{issues['false']}/{issues['raised']}</td>"
                in page)
