"""The scaled mode's tasks on the job engine (procrastinate): executing a run, and reaping.

Loaded by the engine's Django app (it imports every app's `tasks` module), which is installed only
when the database is PostgreSQL (beyond_site/settings.py). docs/operations.md, "Scaled mode",
says what each guarantee rests on.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import DatabaseError
from procrastinate import RetryStrategy, exceptions
from procrastinate.contrib.django import app
from procrastinate.contrib.django.models import ProcrastinateJob
from procrastinate.jobs import Status

from beyond_site.lib.db import db
from beyond_site.runs import chain, reaping
from beyond_site.runs.jobs import (AUDIT_QUEUE, CHAIN_CHECK_TASK, HOUSEKEEPING_QUEUE, REAP_TASK, RUN_TASK, RUNS_QUEUE,
                                   run_job, run_lock)
from beyond_site.runs.models import Run
from beyond_site.runs.runners import job_of, job_owner
from beyond_site.runs.services import claim_run, execute_run, ring_reaped

log = logging.getLogger("beyond.worker")


@app.task(name=RUN_TASK, queue=RUNS_QUEUE, pass_context=True,
          # Only a database error before the claim is worth another try: after it, execute_run
          # ends the run itself, and a second job would find it claimed.
          retry=RetryStrategy(max_attempts=5, exponential_wait=1, retry_exceptions={DatabaseError}))
async def execute_run_job(context, run_id: int) -> str:
    owner = job_owner(context.job.id)
    if not await db(claim_run)(run_id, owner, with_lease=False):
        return "not queued"  # finished, cancelled while queued, or taken by a duplicate job: nothing to do
    return await execute_run(run_id, owner, keep_lease=False)


@app.periodic(cron=f"* * * * * */{settings.BEYOND_REAP_EVERY_S}", periodic_id="reaper")
@app.task(name=REAP_TASK, queue=HOUSEKEEPING_QUEUE, queueing_lock=REAP_TASK)
async def reap_interrupted_runs_job(timestamp: int) -> int:
    reaped = await reap_interrupted_runs()
    if reaped:
        log.info("runs failed as interrupted: %s", reaped)
    return len(reaped)


# Every few minutes the job asks whether a check is due: the interval itself is
# BEYOND_CHAIN_CHECK_EVERY_S, counted from the last recorded check whoever ran it.
@app.periodic(cron="*/5 * * * *", periodic_id="chain-check")
@app.task(name=CHAIN_CHECK_TASK, queue=AUDIT_QUEUE, queueing_lock=CHAIN_CHECK_TASK)
async def check_record_chains_job(timestamp: int) -> bool:
    return await db(chain.check_if_due, lane="background")()


async def reap_interrupted_runs() -> list[int]:
    """Fail every run whose runner is known dead, ring their pages, and give queued runs that lost
    their job a new one. Returns the runs failed."""
    reaped = await _reap_jobs_of_dead_workers()
    for check in (_interrupt_runs_of_ended_jobs, reaping.reap_stale_runs, reaping.fail_runs_of_gone_runners):
        reaped += await db(check)()
    await ring_reaped(reaped)
    for run_id in await db(_queued_runs_without_a_job)():
        try:
            await run_job(run_id).defer_async(run_id=run_id)
        except exceptions.AlreadyEnqueued:  # deferred meanwhile: that job will run it
            pass
    return reaped


async def _reap_jobs_of_dead_workers() -> list[int]:
    """The engine's stalled-job detection: jobs whose worker sent no heartbeat for
    BEYOND_WORKER_STALLED_S. A run such a job had claimed is failed; one it had not yet claimed
    is queued again; the job itself is closed, which frees the run's lock."""
    stalled = await app.job_manager.get_stalled_jobs(
        task_name=RUN_TASK, seconds_since_heartbeat=settings.BEYOND_WORKER_STALLED_S)
    reaped = []
    for job in stalled:
        try:
            if await _reap_stalled(job):
                reaped.append(job.task_kwargs["run_id"])
        except Exception:  # e.g. the job finished meanwhile: the next pass sees the truth again
            log.warning("could not reap stalled job %s", job.id, exc_info=True)
    return reaped


async def _reap_stalled(job) -> bool:
    run_id = job.task_kwargs.get("run_id")
    state = await db(Run.objects.filter(pk=run_id).values_list("status", "lease_owner").first)()
    if state and state[0] == Run.QUEUED:
        await app.job_manager.retry_job(job)
        return False
    failed = False
    if state and state[0] == Run.RUNNING and job_of(state[1]) == job.id:
        failed = await db(reaping.interrupt_run)(run_id, state[1], reaping.WORKER_SILENT)
    await app.job_manager.finish_job_by_id_async(job.id, status=Status.FAILED, delete_job=False)
    return failed


def _interrupt_runs_of_ended_jobs() -> list[int]:
    """Runs still running under a job the engine no longer has in progress (it ended, failed or
    was deleted without finishing the run): nobody is executing them."""
    running = dict(Run.objects.filter(status=Run.RUNNING, lease_owner__contains="/job-").values_list("pk", "lease_owner"))
    in_progress = set(ProcrastinateJob.objects.filter(
        id__in=[job_of(owner) for owner in running.values()], status="doing").values_list("id", flat=True))
    return [pk for pk, owner in running.items()
            if job_of(owner) not in in_progress and reaping.interrupt_run(pk, owner, reaping.JOB_ENDED)]


def _queued_runs_without_a_job() -> list[int]:
    queued = list(Run.objects.filter(status=Run.QUEUED).values_list("pk", flat=True)[:500])
    held = set(ProcrastinateJob.objects.filter(lock__in=[run_lock(pk) for pk in queued], status__in=("todo", "doing"))
               .values_list("lock", flat=True))
    return [pk for pk in queued if run_lock(pk) not in held]
