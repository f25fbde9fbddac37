"""The calibration reports a run's trust status is read from (runs/trust.py, which decides what
matches and what the figures say): the completed reports of a workspace whose verifier has the
run's verifier's provider and model, newest first (the endpoint is matched by runs/trust.py)."""
from __future__ import annotations

from collections.abc import Iterator

from beyond_site.calibration.models import CalibrationReport
from beyond_site.runs.trust import StoredReport, use_reports

FIRST = 5


def completed_reports(workspace_id: int, provider: str, model: str) -> Iterator[StoredReport]:
    """Read lazily: a run needs the latest report, and the rest only while none meets a requirement."""
    rows = (CalibrationReport.objects.filter(workspace_id=workspace_id, status=CalibrationReport.COMPLETED,
                                             topology__verifier__provider=provider, topology__verifier__model=model)
            .order_by("-finished_at", "-id").values_list("id", "topology", "finished_at", "report"))
    # A few rows first (the reader usually stops at the first), then the rest in one query if it
    # reads on; no cursor left open behind a reader that stopped.
    first = list(rows[:FIRST])
    yield from (StoredReport(*row) for row in first)
    if len(first) == FIRST:
        yield from (StoredReport(*row) for row in rows[FIRST:])


use_reports(completed_reports)
