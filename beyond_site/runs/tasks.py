"""The background work of runs and of the record, registered with the job interface (`jobs.py`):
executing a run, failing the runs of dead runners, the periodic check of the record, and reading
an uploaded file (the workspaces app's work: it cannot register itself, being below this one).

Loaded in every process: by the job engine's Django app in the scaled mode (it imports every
app's `tasks` module), by the runtime otherwise (beyond_site/runtime). docs/operations.md,
"Scaled mode", says what each guarantee rests on.
"""
from __future__ import annotations

import logging

from channels.db import database_sync_to_async
from django.apps import apps
from django.conf import settings
from django.db import DatabaseError
from procrastinate import RetryStrategy, exceptions
from procrastinate.jobs import Status

from beyond_site.lib.runners import job_of
from beyond_site.runs import chain, jobs, reaping
from beyond_site.runs.jobs import Job
from beyond_site.runs.models import Run
from beyond_site.runs.queue import RUN_TASK, claim_run
from beyond_site.runs.runner import execute_run, ring_reaped, starting_if_claimed_here
from beyond_site.workspaces import reading

log = logging.getLogger("beyond.worker")

REAP_TASK = "beyond.reap_interrupted_runs"
CHAIN_CHECK_TASK = "beyond.check_record_chains"
READ_FILE_TASK = reading.READ_TASK


def _queued_runs() -> list[dict]:
    return [{"run_id": pk} for pk in Run.objects.filter(status=Run.QUEUED).order_by("created_at", "id")
            .values_list("pk", flat=True)[:500]]


@jobs.task(RUN_TASK, queue=jobs.RUNS_QUEUE, prepare=starting_if_claimed_here, pending=_queued_runs,
           lock=lambda run_id: f"run-{run_id}",
           # Only a database error before the claim is worth another try: after it, execute_run
           # ends the run itself, and a second job would find it claimed.
           retry=RetryStrategy(max_attempts=5, exponential_wait=1, retry_exceptions={DatabaseError}))
async def execute_run_job(job: Job, run_id: int) -> str:
    """Execute the run: one this process claimed as it created it (`job.prepared`, read at the
    commit), else a queued one, claimed here first."""
    start = job.prepared
    if start is None and not await database_sync_to_async(claim_run)(run_id, job.owner, leased=job.leased):
        return "not queued"  # finished, cancelled while queued, or taken by a duplicate job: nothing to do
    return await execute_run(run_id, job.owner, keep_lease=job.leased, start=start)


@jobs.task(REAP_TASK, queue=jobs.HOUSEKEEPING_QUEUE, periodic=f"* * * * * */{settings.BEYOND_REAP_EVERY_S}")
async def reap_interrupted_runs_job(job: Job) -> int:
    reaped = await reap_interrupted_runs()
    if reaped:
        log.info("runs failed as interrupted: %s", reaped)
    return len(reaped)


# Every few minutes the job asks whether a check is due: the interval itself is
# BEYOND_CHAIN_CHECK_EVERY_S, counted from the last recorded check whoever ran it.
@jobs.task(CHAIN_CHECK_TASK, queue=jobs.AUDIT_QUEUE, periodic="*/5 * * * *")
async def check_record_chains_job(job: Job) -> bool:
    return await database_sync_to_async(chain.check_if_due, thread_sensitive=False)()


@jobs.task(READ_FILE_TASK, queue=jobs.FILES_QUEUE, pending=reading.pending, reap=reading.reap_abandoned,
           share_key=reading.share_key, lock=lambda document_id, member=None: f"file-{document_id}")
def read_file_job(job: Job, document_id: int, member: int | None = None) -> str:
    return reading.read_document(document_id, job.owner).status


async def reap_interrupted_runs() -> list[int]:
    """The scaled mode's housekeeping: fail every run whose runner is known dead, ring their pages,
    give queued runs that lost their job a new one, and mark the other abandoned work. Returns
    the runs failed."""
    reaped = await _reap_jobs_of_dead_workers()
    for check in (_interrupt_runs_of_ended_jobs, reaping.reap_stale_runs, reaping.fail_runs_of_gone_runners):
        reaped += await database_sync_to_async(check)()
    await ring_reaped(reaped)
    for run_id in await database_sync_to_async(_queued_runs_without_a_job)():
        try:
            await jobs.engine_job(RUN_TASK, run_id=run_id).defer_async(run_id=run_id)
        except exceptions.AlreadyEnqueued:  # deferred meanwhile: that job will run it
            pass
    await database_sync_to_async(jobs.reap_abandoned)()
    return reaped


async def _reap_jobs_of_dead_workers() -> list[int]:
    """The engine's stalled-job detection: jobs whose worker sent no heartbeat for
    BEYOND_WORKER_STALLED_S. A run such a job had claimed is failed; one it had not yet claimed
    is queued again; the job itself is closed, which frees the run's lock."""
    stalled = await jobs.engine.job_manager.get_stalled_jobs(
        task_name=RUN_TASK, seconds_since_heartbeat=settings.BEYOND_WORKER_STALLED_S)
    reaped = []
    for stalled_job in stalled:
        try:
            if await _reap_stalled(stalled_job):
                reaped.append(stalled_job.task_kwargs["run_id"])
        except Exception:  # e.g. the job finished meanwhile: the next pass sees the truth again
            log.warning("could not reap stalled job %s", stalled_job.id, exc_info=True)
    return reaped


async def _reap_stalled(stalled_job) -> bool:
    run_id = stalled_job.task_kwargs.get("run_id")
    state = await database_sync_to_async(Run.objects.filter(pk=run_id).values_list("status", "lease_owner").first)()
    if state and state[0] == Run.QUEUED:
        await jobs.engine.job_manager.retry_job(stalled_job)
        return False
    failed = False
    if state and state[0] == Run.RUNNING and job_of(state[1]) == stalled_job.id:
        failed = await database_sync_to_async(reaping.interrupt_run)(run_id, state[1], reaping.WORKER_SILENT)
    await jobs.engine.job_manager.finish_job_by_id_async(stalled_job.id, status=Status.FAILED, delete_job=False)
    return failed


def _interrupt_runs_of_ended_jobs() -> list[int]:
    """Runs still running under a job the engine no longer has in progress (it ended, failed or
    was deleted without finishing the run): nobody is executing them."""
    running = dict(Run.objects.filter(status=Run.RUNNING, lease_owner__contains="/job-").values_list("pk", "lease_owner"))
    in_progress = set(_engine_jobs().objects.filter(
        id__in=[job_of(owner) for owner in running.values()], status="doing").values_list("id", flat=True))
    return [pk for pk, owner in running.items()
            if job_of(owner) not in in_progress and reaping.interrupt_run(pk, owner, reaping.JOB_ENDED)]


def _queued_runs_without_a_job() -> list[int]:
    queued = [kwargs["run_id"] for kwargs in _queued_runs()]
    held = set(_engine_jobs().objects.filter(lock__in=[f"run-{pk}" for pk in queued], status__in=("todo", "doing"))
               .values_list("lock", flat=True))
    return [pk for pk in queued if f"run-{pk}" not in held]


def _engine_jobs():
    """The job engine's table of jobs (its app, hence its models, exist on PostgreSQL only)."""
    return apps.get_model("procrastinate", "ProcrastinateJob")
