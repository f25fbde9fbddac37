"""The exports' background task (exports/jobs.py), registered with the job interface."""
from __future__ import annotations

from beyond_site.exports import jobs as export_jobs
from beyond_site.runs import jobs
from beyond_site.runs.jobs import Job


@jobs.task(export_jobs.RENDER_TASK, queue=jobs.EXPORTS_QUEUE, pending=export_jobs.pending,
           reap=export_jobs.reap_abandoned, share_key=lambda export_id, member=None: member,
           lock=lambda export_id, member=None: f"export-{export_id}")
def render_export_job(job: Job, export_id: int, member: int | None = None) -> str:
    return export_jobs.render(export_id, job.owner)
