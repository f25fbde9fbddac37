"""The calibration reports a run's trust status is read from (runs/trust.py, which decides what
matches and what the figures say): the completed reports of a workspace whose verifier has the
run's verifier's provider and model, newest first (the endpoint and settings are matched by
runs/trust.py).

A report is on the workspace's tamper-evident change log from the moment it completes: the log
entry holds a fingerprint of what the report says (its verifier's settings, its figures, when it
finished). A report whose row no longer matches its fingerprint, or that was never logged (made
outside the application), counts for nothing in a trust status, and `beyond_audit verify` names it.
"""
from __future__ import annotations

from collections.abc import Iterator

from django.db import transaction

from beyond_site.calibration.models import CalibrationReport
from beyond_site.lib.chaining import content_hash
from beyond_site.runs.chain import also_verify
from beyond_site.runs.trust import StoredReport, use_reports
from beyond_site.workspaces.changelog import record_change
from beyond_site.workspaces.models import Workspace, WorkspaceEvent

FIRST = 5
COMPLETED_ACTION = "calibration_report_completed"


def fingerprint(topology: dict, figures: dict | None, finished_at) -> str:
    return content_hash({"topology": topology, "figures": figures, "finished_at": finished_at})


def log_completed(report: CalibrationReport, user=None) -> None:
    """Put a report that has just completed on its workspace's change log (in the transaction that
    completed it)."""
    record_change(report.workspace, user, COMPLETED_ACTION, report=report.pk,
                  fingerprint=fingerprint(report.topology, report.report, report.finished_at))


def _logged(workspace_id: int) -> dict[int, str]:
    """{report id: its logged fingerprint} of the workspace (the latest entry of each)."""
    rows = (WorkspaceEvent.objects.filter(workspace_id=workspace_id, action=COMPLETED_ACTION)
            .order_by("seq").values_list("detail", flat=True))
    return {detail.get("report"): detail.get("fingerprint") for detail in rows}


def completed_reports(workspace_id: int, provider: str, model: str) -> Iterator[StoredReport]:
    """Read lazily: a run needs the latest report with its settings, and the rest only while none
    has them."""
    rows = (CalibrationReport.objects.filter(workspace_id=workspace_id, status=CalibrationReport.COMPLETED,
                                             topology__verifier__provider=provider, topology__verifier__model=model)
            .order_by("-finished_at", "-id").values_list("id", "topology", "finished_at", "report"))
    # A few rows first (the reader usually stops at the first), then the rest in one query if it
    # reads on; no cursor left open behind a reader that stopped.
    first = list(rows[:FIRST])
    if not first:
        return
    logged = _logged(workspace_id)

    def stored(row) -> StoredReport:
        pk, topology, finished_at, figures = row
        return StoredReport(pk, topology, finished_at, figures,
                            intact=logged.get(pk) == fingerprint(topology, figures, finished_at))
    yield from (stored(row) for row in first)
    if len(first) == FIRST:
        yield from (stored(row) for row in rows[FIRST:])


def report_problems(workspace: Workspace) -> list[str]:
    """The workspace's completed reports that are not as they completed, for `beyond_audit verify`."""
    logged, problems = _logged(workspace.pk), []
    rows = (CalibrationReport.objects.filter(workspace=workspace, status=CalibrationReport.COMPLETED)
            .order_by("id").values_list("id", "topology", "finished_at", "report"))
    for pk, topology, finished_at, figures in rows.iterator(chunk_size=200):
        if pk not in logged:
            problems.append(f"calibration report {pk} is on no change log entry: it was not completed by Beyond "
                            "(or completed before reports were logged), and counts for no run")
        elif logged[pk] != fingerprint(topology, figures, finished_at):
            problems.append(f"calibration report {pk} does not match what was logged when it completed: its "
                            "figures, verifier settings or date were changed after")
    return problems


def complete(report_id: int, update) -> bool:
    """Run `update()` (the row's completing write; True when it wrote) and log the report, as one."""
    with transaction.atomic():
        if not update():
            return False
        log_completed(CalibrationReport.objects.select_related("workspace").get(pk=report_id))
        return True


use_reports(completed_reports)
also_verify(report_problems)
