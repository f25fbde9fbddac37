"""The scaled mode's job engine (procrastinate) as the rest of the site sees it: whether it is on,
and the job that executes a run. The tasks themselves are in `tasks.py`; docs/operations.md,
"Scaled mode", says how the pieces fit.
"""
from __future__ import annotations

from django.apps import apps
from django.conf import settings
from procrastinate.contrib.django import app

ENGINE_APP = "procrastinate.contrib.django"
RUN_TASK = "beyond.execute_run"
REAP_TASK = "beyond.reap_interrupted_runs"
CHAIN_CHECK_TASK = "beyond.check_record_chains"
#: Runs and housekeeping have queues of their own, each served by its own worker inside every
#: `beyond_worker`, so reaping never waits for a free run slot.
RUNS_QUEUE = "runs"
HOUSEKEEPING_QUEUE = "housekeeping"
#: The periodic check of the record (runs/chain.py) has its own worker too: a long verification
#: never delays reaping.
AUDIT_QUEUE = "audit"


def engine_enabled() -> bool:
    """True in the scaled mode: runs are executed by `beyond_worker` processes, not the web server."""
    return not settings.BEYOND_RUN_IN_PROCESS and apps.is_installed(ENGINE_APP)


def run_lock(run_id: int) -> str:
    return f"run-{run_id}"


def run_job(run_id: int):
    """The job that executes `run_id`, ready to `.defer(run_id=...)` (or `.defer_async`).

    Its lock lets no two jobs of one run execute at once, its queueing lock lets no second one
    wait in the queue; the run's own claim (`services.claim_run`) makes any duplicate a no-op.
    Deferred through the web process's Django connection, the job is part of the caller's
    transaction: it exists exactly when the run row does.
    """
    return app.configure_task(RUN_TASK, queue=RUNS_QUEUE, lock=run_lock(run_id), queueing_lock=run_lock(run_id))
