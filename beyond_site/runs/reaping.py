"""Failing runs whose runner died: never releasing anything, always saying why.

A run is failed as interrupted only while it is still running under the very owner found dead
(a conditional UPDATE hands it to the reaper first), so a runner that is alive after all, or that
finished meanwhile, is never touched. The steps it released stay released; every other step stays
unreleased, on the record. The job engine's part (dead workers, ended jobs) is in `tasks.py`.
"""
from __future__ import annotations


from django.db import transaction
from django.utils import timezone

from pipeline import events as ev
from pipeline.events import Event
from beyond_site.runs.models import Run
from beyond_site.runs.recorder import EventRecorder
from beyond_site.lib.runners import HOST, runner_gone

REAPER = "reaper"
#: Why a run was interrupted, in the words recorded as its reason (after "interrupted: ").
RUNNER_RESTARTED = "the server or worker executing it restarted"
LEASE_EXPIRED = "the runner stopped renewing its claim"
WORKER_SILENT = "the worker executing it stopped (no heartbeat)"
JOB_ENDED = "the worker's job ended before the run did"


def interrupted(why: str) -> str:
    return f"interrupted: {why}; unreleased steps were not released"


def interrupt_run(run_id: int, owner: str, why: str) -> bool:
    """Fail `run_id` as interrupted if it is still running under `owner`; True if it was."""
    with transaction.atomic():
        taken = Run.objects.filter(pk=run_id, status=Run.RUNNING, lease_owner=owner).update(
            lease_owner=REAPER, lease_expires_at=None)
        if taken != 1:
            return False
        EventRecorder(Run.objects.get(pk=run_id), owner=REAPER).record(Event(ev.RunFailed(reason=interrupted(why))))
    return True


def reap_stale_runs() -> list[int]:
    """Fail the runs whose lease ran out (runners outside the job engine that died unseen)."""
    stale = Run.objects.filter(status=Run.RUNNING, lease_expires_at__lt=timezone.now())
    return [pk for pk, owner in stale.values_list("pk", "lease_owner") if interrupt_run(pk, owner, LEASE_EXPIRED)]


def fail_runs_of_gone_runners() -> list[int]:
    """Fail the runs of runners of this machine that no longer exist, such as this very server or
    worker before it restarted. Runners elsewhere, or alive, are left alone (runners.runner_gone)."""
    running = Run.objects.filter(status=Run.RUNNING, lease_owner__startswith=f"{HOST}:")
    return [pk for pk, owner in running.values_list("pk", "lease_owner")
            if runner_gone(owner) and interrupt_run(pk, owner, RUNNER_RESTARTED)]
