"""The calibration reports a run's trust status is read from (runs/trust.py, which decides what
matches and what the figures say): the completed reports of a workspace whose verifier has the
run's verifier's provider and model, newest first (the endpoint is matched by runs/trust.py)."""
from __future__ import annotations

from beyond_site.calibration.models import CalibrationReport
from beyond_site.runs.trust import StoredReport, use_reports


def completed_reports(workspace_id: int, provider: str, model: str) -> list[StoredReport]:
    rows = (CalibrationReport.objects.filter(workspace_id=workspace_id, status=CalibrationReport.COMPLETED,
                                             topology__verifier__provider=provider, topology__verifier__model=model)
            .order_by("-finished_at", "-id").values_list("id", "topology", "finished_at", "report"))
    return [StoredReport(id=pk, topology=topology, finished_at=finished, figures=figures)
            for pk, topology, finished, figures in rows]


use_reports(completed_reports)
