"""The calibration reports page, for the workspace's admins: the reports side by side, the false
share of the issues auditors labelled, starting or resuming a report, and the JSON and CSV exports.

Every view starts from `require_membership(..., ADMIN)`: 404 for non-members, 403 for members and
auditors.
"""
from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from pipeline import badges
from pipeline.calibration import CONTRACTS
from pipeline.calibration.offline import sentence as offline_figures
from pipeline.providers.registry import reads_with_a_language_model
from pipeline.topology import Topology, TopologyError
from beyond_site.lib.downloads import attachment
from beyond_site.calibration.calibrating import create_report, interrupted, requeue
from beyond_site.calibration.tasks import CALIBRATE_TASK
from beyond_site.runs.command_options import describe
from beyond_site.calibration.charts import time_left
from beyond_site.calibration.figures import (comparison_charts, comparison_table, csv_text, label_charts,
                                             report_document, short_label)
from beyond_site.calibration.forms import StartForm
from beyond_site.calibration.labels import false_share
from beyond_site.calibration.models import CalibrationReport
from beyond_site.runs import jobs
from beyond_site.workspaces.configuration import resolve_topology
from beyond_site.runs.trust import Requirement, sentence as trust_sentence, trust_status
from beyond_site.runs.verification import recorded_checker
from beyond_site.workspaces.access import ADMIN, require_membership

LISTED = 100
COMPARED_BY_DEFAULT = 3


def _page_url(slug: str) -> str:
    return reverse("calibration:reports", args=[slug])


def _report(request, slug: str, report_id: int) -> CalibrationReport:
    membership = require_membership(request, slug, ADMIN)
    return get_object_or_404(CalibrationReport.objects.select_related("workspace", "created_by"), pk=report_id,
                             workspace=membership.workspace)


def _workspace_topology(workspace) -> Topology | None:
    """The topology a run started now would use; None when it cannot be read (its runs then fail
    on their own, and this page says nothing of it)."""
    try:
        return resolve_topology(workspace)
    except TopologyError:
        return None


def _trust_now(workspace, topology: Topology | None) -> dict:
    """What a run started now would record of its verifier, in words, and the workspace's
    requirement with whether a report meets it (runs/trust.py)."""
    if topology is None:
        return {}
    requirement = Requirement.of(workspace.calibration_requirement)
    status = trust_status(workspace.pk, topology.as_json(), requirement)
    met_by = (status.get("requirement") or {}).get("met_by")
    return {"text": trust_sentence(status), "requirement": requirement.describe() if requirement else "",
            "met_by": met_by, "held": requirement is not None and status["language_model"]}


def _compared(reports: list[CalibrationReport], chosen: list[str]) -> list[CalibrationReport]:
    """The reports asked for (`?r=ID&r=ID`), else the latest ones with figures."""
    if chosen:
        return [r for r in reports if str(r.pk) in chosen]
    return [r for r in reports if r.report][:COMPARED_BY_DEFAULT]


@require_safe
@login_required
def reports_page(request, slug: str):
    membership = require_membership(request, slug, ADMIN)
    workspace = membership.workspace
    reports = list(CalibrationReport.objects.filter(workspace=workspace).select_related("created_by")[:LISTED])
    compared = _compared(reports, request.GET.getlist("r"))
    shares = false_share(workspace)
    topology = _workspace_topology(workspace)
    return render(request, "calibration/reports.html", {
        "workspace": workspace, "membership": membership, "start_form": StartForm(),
        "verifier": describe(topology) if topology else None, "trust": _trust_now(workspace, topology),
        # Who checks this workspace's runs, in words (a verifier that is not a language model, as
        # its provider declares), with what the offline checks catch.
        "mechanical_verifier": topology is not None and not reads_with_a_language_model(topology.verifier.provider),
        "offline_figures": offline_figures(),
        "rows": [{"report": r, "label": short_label(r), "interrupted": interrupted(r),
                  "compared": r in compared, "left": time_left((r.progress or {}).get("left_s")),
                  "mechanical": recorded_checker(r.topology) == badges.MECHANICAL} for r in reports],
        "running": any(r.status == CalibrationReport.RUNNING and not interrupted(r) for r in reports),
        "compared": compared, "charts": comparison_charts(compared), "table": comparison_table(compared),
        "shares": shares, "label_charts": label_charts(shares) if shares["labelled"] else [],
    })


@require_POST
@login_required
def start(request, slug: str):
    membership = require_membership(request, slug, ADMIN)
    workspace = membership.workspace
    form = StartForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The calibration was not started: " + "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
        return redirect(_page_url(slug))
    if any(not interrupted(r) for r in CalibrationReport.objects.filter(workspace=workspace,
                                                                         status=CalibrationReport.RUNNING)):
        messages.error(request, "A calibration of this workspace is running: wait for it to end.")
        return redirect(_page_url(slug))
    try:
        topology = resolve_topology(workspace)
    except TopologyError as exc:
        messages.error(request, f"The workspace's models cannot be used: {exc}")
        return redirect(_page_url(slug))
    contract = form.cleaned_data["contract"]
    cost = form.cleaned_data["max_cost"]
    report = create_report(workspace, topology, contracts=CONTRACTS if contract == "both" else (contract,),
                           drafts=form.cleaned_data["drafts"], max_calls=form.cleaned_data["max_calls"],
                           max_cost_usd=float(cost) if cost is not None else None, user=request.user)
    jobs.defer(CALIBRATE_TASK, report_id=report.pk)
    messages.success(request, f"Calibration report {report.pk} started. Reload this page to follow it.")
    return redirect(_page_url(slug))


@require_POST
@login_required
def resume(request, slug: str, report_id: int):
    report = _report(request, slug, report_id)
    if requeue(report):
        jobs.defer(CALIBRATE_TASK, report_id=report.pk)
        messages.success(request, f"Calibration report {report.pk} resumed. Reload this page to follow it.")
    else:
        messages.error(request, f"Calibration report {report.pk} cannot be resumed now ({report.status}).")
    return redirect(_page_url(slug))



@require_safe
@login_required
def report_json(request, slug: str, report_id: int):
    report = _report(request, slug, report_id)
    return attachment(json.dumps(report_document(report, results=True), indent=2, ensure_ascii=False),
                       "application/json", f"beyond-calibration-{slug}-{report.pk}.json")


@require_safe
@login_required
def report_csv(request, slug: str, report_id: int):
    report = _report(request, slug, report_id)
    return attachment(csv_text(report), "text/csv; charset=utf-8", f"beyond-calibration-{slug}-{report.pk}.csv")
