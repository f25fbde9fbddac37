"""Calibrations started from the reports page, as background work (runs/jobs.py): on a worker in the
scaled mode, on the web server's loop otherwise; the same code as `beyond_calibrate`
(calibrating.py). A report whose runner died meanwhile shows as interrupted and can be resumed."""
from __future__ import annotations

from channels.db import database_sync_to_async
from beyond_site.calibration.calibrating import calibrate, claim_report, queued_reports
from beyond_site.runs import jobs
from beyond_site.runs.jobs import Job

CALIBRATE_TASK = "beyond.calibrate"


@jobs.task(CALIBRATE_TASK, queue=jobs.CALIBRATION_QUEUE, pending=queued_reports,
           lock=lambda report_id: f"calibration-{report_id}")
async def calibrate_job(job: Job, report_id: int) -> str:
    if not await database_sync_to_async(claim_report, thread_sensitive=False)(report_id, job.owner):
        return "taken"  # running elsewhere, or finished meanwhile
    report = await calibrate(report_id, job.owner)
    return report.status
